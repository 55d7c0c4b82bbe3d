//! JSON in: a request body read as a tree of `Node`s that borrows its strings from the body.
//! serde_json does the reading (its grammar, its errors, its nesting limit of 128); this file
//! only decides what the tree is made of. No writing here (json_write.rs writes every reply), and
//! nothing that knows JSON-RPC or MCP.
//!
//! It exists for speed, and costs bytes. A `serde_json::Value` copies every key and string of a
//! request into an allocation of its own and every object into a B-tree, then frees them all;
//! here a string without escapes is a slice of the body and an object is a list of its members
//! in the order they came. Measured when it replaced `Value` (`6c64426`, 2026-12-03,
//! docs/benchmarks-history.md, "The eighth pass"): natively 3.6–9 % fewer instructions per request (get_state
//! 220,945 → 211,093, set_focus ×0.910, tools/list ×0.964, `scripts/instructions`), the request
//! body's row of the Worker's profile 16 → 12 µs per get_state, and the wasm 3.5 KB gzip larger
//! (141,567 → 145,099 bytes): `Value`'s reader left the wasm, but this reader's visitors, its
//! borrowed key path and its conversions to `Value` are larger.
//!
//! What it keeps of `Value`'s meaning: a key given twice reads as its last value, as `Value`'s
//! map keeps it; numbers are `serde_json::Number`s read as `Value` reads them.

use std::borrow::Cow;
use std::fmt;

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Number, Value as Json};

/// One JSON value of a request body.
#[derive(Debug, Clone, PartialEq)]
pub enum Node<'a> {
    Null,
    Bool(bool),
    Number(Number),
    String(Cow<'a, str>),
    Array(Vec<Node<'a>>),
    /// The members in the order the body gives them, a repeated key included.
    Object(Vec<(Cow<'a, str>, Node<'a>)>),
}

impl<'a> Node<'a> {
    /// Reads one JSON text (whitespace around it allowed, nothing after it). The bytes are
    /// checked as UTF-8 once, whole (JSON text is UTF-8, and serde_json would refuse any other
    /// byte as well), so serde_json reads a `str` and checks no string of it again.
    pub fn parse(text: &'a [u8]) -> Result<Node<'a>, serde_json::Error> {
        let text = std::str::from_utf8(text)
            .map_err(|_| <serde_json::Error as serde::de::Error>::custom("not UTF-8"))?;
        serde_json::from_str(text)
    }

    /// The member `key` of an object (its last, if the body repeats it); `None` for anything
    /// but an object.
    pub fn get(&self, key: &str) -> Option<&Node<'a>> {
        match self {
            Node::Object(members) => members.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Node::String(s) => Some(s),
            _ => None,
        }
    }

    pub fn is_null(&self) -> bool {
        matches!(self, Node::Null)
    }

    pub fn is_object(&self) -> bool {
        matches!(self, Node::Object(_))
    }

    pub fn is_array(&self) -> bool {
        matches!(self, Node::Array(_))
    }

    pub fn is_string(&self) -> bool {
        matches!(self, Node::String(_))
    }

    /// A number that is an integer within i64 or u64 (what `Value::is_i64 || is_u64` says).
    pub fn is_integer(&self) -> bool {
        matches!(self, Node::Number(n) if n.is_i64() || n.is_u64())
    }

    /// A scalar as a `serde_json::Value`, for the little of a request a reply carries back (an
    /// id, which is a string or a number); an array or an object is none of that, and `Null`.
    /// (Scalars only: the recursive copy cost the Worker 2.8 KB of code for ids it never sees.)
    pub fn to_json(&self) -> Json {
        match self {
            Node::Bool(b) => Json::Bool(*b),
            Node::Number(n) => Json::Number(n.clone()),
            Node::String(s) => Json::String(s.as_ref().to_owned()),
            Node::Null | Node::Array(_) | Node::Object(_) => Json::Null,
        }
    }

    /// The whole tree as a `serde_json::Value`, for tests that compare trees.
    #[cfg(test)]
    pub(crate) fn to_value(&self) -> Json {
        match self {
            Node::Array(items) => Json::Array(items.iter().map(Node::to_value).collect()),
            Node::Object(members) => Json::Object(
                members
                    .iter()
                    .map(|(k, v)| (k.as_ref().to_owned(), v.to_value()))
                    .collect(),
            ),
            scalar => scalar.to_json(),
        }
    }

    /// The same tree owning all of its strings, to outlive the body it was read from (the
    /// HTTP+SSE stream answers after the POST that carried the message has been answered).
    pub fn into_owned(self) -> Node<'static> {
        let owned = |s: Cow<'a, str>| Cow::Owned(s.into_owned());
        match self {
            Node::Null => Node::Null,
            Node::Bool(b) => Node::Bool(b),
            Node::Number(n) => Node::Number(n),
            Node::String(s) => Node::String(owned(s)),
            Node::Array(items) => Node::Array(items.into_iter().map(Node::into_owned).collect()),
            Node::Object(members) => Node::Object(
                members
                    .into_iter()
                    .map(|(k, v)| (owned(k), v.into_owned()))
                    .collect(),
            ),
        }
    }
}

impl<'de> Deserialize<'de> for Node<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(NodeVisitor)
    }
}

struct NodeVisitor;

impl<'de> Visitor<'de> for NodeVisitor {
    type Value = Node<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, b: bool) -> Result<Node<'de>, E> {
        Ok(Node::Bool(b))
    }

    fn visit_i64<E>(self, n: i64) -> Result<Node<'de>, E> {
        Ok(Node::Number(n.into()))
    }

    fn visit_u64<E>(self, n: u64) -> Result<Node<'de>, E> {
        Ok(Node::Number(n.into()))
    }

    /// As `Value` reads it: a float JSON can spell but f64 cannot hold does not reach here
    /// (serde_json refuses it), and a non-finite one reads as null.
    fn visit_f64<E>(self, n: f64) -> Result<Node<'de>, E> {
        Ok(Number::from_f64(n).map_or(Node::Null, Node::Number))
    }

    fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Node<'de>, E> {
        Ok(Node::String(Cow::Borrowed(s)))
    }

    /// A string with an escape, unescaped into a buffer that does not last.
    fn visit_str<E>(self, s: &str) -> Result<Node<'de>, E> {
        Ok(Node::String(Cow::Owned(s.to_owned())))
    }

    fn visit_unit<E>(self) -> Result<Node<'de>, E> {
        Ok(Node::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node<'de>, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Node::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node<'de>, A::Error> {
        let mut members = Vec::new();
        while let Some(Key(key)) = map.next_key()? {
            members.push((key, map.next_value()?));
        }
        Ok(Node::Object(members))
    }
}

/// An object's key, borrowed from the body unless it holds an escape.
struct Key<'a>(Cow<'a, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_str(KeyVisitor)
    }
}

struct KeyVisitor;

impl<'de> Visitor<'de> for KeyVisitor {
    type Value = Key<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string key")
    }

    fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Key<'de>, E> {
        Ok(Key(Cow::Borrowed(s)))
    }

    fn visit_str<E>(self, s: &str) -> Result<Key<'de>, E> {
        Ok(Key(Cow::Owned(s.to_owned())))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn parse(text: &str) -> Node<'_> {
        Node::parse(text.as_bytes()).unwrap()
    }

    /// Every JSON text reads as the `Value` serde_json reads from it (compared as `Value`s: a
    /// `Value`'s object is sorted by key, a node's keeps the body's order).
    #[test]
    fn reads_what_value_reads() {
        for text in [
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"get_state","arguments":{"project_id":"p"}}}"#,
            r#"[1,-2,3.5,1e300,18446744073709551615,-9223372036854775808,true,false,null,"",[],{}]"#,
            r#" {"a\"b":"c\nd","\u00e9":"\ud83d\ude00 日本語","nested":[[{"x":[]}]]} "#,
            "0",
            "\"only\"",
        ] {
            let value: Json = serde_json::from_str(text).unwrap();
            let node = parse(text);
            assert_eq!(node.to_value(), value, "{text}");
            assert_eq!(node.clone().into_owned(), node, "{text}");
        }
    }

    #[test]
    fn strings_without_escapes_are_borrowed_and_with_them_owned() {
        let node = parse(r#"{"plain":"text","esc\u0061ped":"a\tb"}"#);
        let Node::Object(members) = &node else {
            panic!("{node:?}")
        };
        let borrowed = |c: &Cow<str>| matches!(c, Cow::Borrowed(_));
        assert!(borrowed(&members[0].0) && matches!(&members[0].1, Node::String(s) if borrowed(s)));
        assert!(
            !borrowed(&members[1].0) && matches!(&members[1].1, Node::String(s) if !borrowed(s))
        );
        assert_eq!(node.get("escaped").and_then(Node::as_str), Some("a\tb"));
        let owned = node.into_owned();
        let Node::Object(members) = &owned else {
            panic!()
        };
        assert!(
            !borrowed(&members[0].0) && matches!(&members[0].1, Node::String(s) if !borrowed(s))
        );
    }

    #[test]
    fn a_repeated_key_reads_as_its_last_value_as_in_value() {
        let text = r#"{"id":1,"id":"two","x":null}"#;
        let node = parse(text);
        let value: Json = serde_json::from_str(text).unwrap();
        assert_eq!(node.get("id").map(Node::to_json), value.get("id").cloned());
        assert_eq!(node.get("id").and_then(Node::as_str), Some("two"));
        assert_eq!(node.get("x"), Some(&Node::Null));
        assert_eq!(node.get("y"), None);
        assert_eq!(parse("[1]").get("0"), None);
        assert_eq!(parse("\"id\"").get("id"), None);
    }

    #[test]
    fn refuses_what_value_refuses() {
        let deep = format!("{}{}", "[".repeat(129), "]".repeat(129));
        for text in [
            "",
            "{",
            "{\"a\":1,}",
            "[1] x",
            "{1:2}",
            "1e400",
            "\"\\ud800\"x",
            "nul",
            &deep,
        ] {
            assert!(serde_json::from_str::<Json>(text).is_err(), "{text}");
            assert!(Node::parse(text.as_bytes()).is_err(), "{text}");
        }
        for bytes in [
            &b"\"\xff\""[..],
            b"\xff",
            b"{\"a\":\"\xc3\"}",
            b"\"\xed\xa0\x80\"",
        ] {
            assert!(Node::parse(bytes).is_err(), "{bytes:?}");
        }
    }

    #[test]
    fn predicates() {
        let cases = [
            (json!(null), "null"),
            (json!(true), "bool"),
            (json!(-3), "int"),
            (json!(u64::MAX), "int"),
            (json!(1.5), "float"),
            (json!("s"), "string"),
            (json!([]), "array"),
            (json!({}), "object"),
        ];
        for (value, kind) in cases {
            let text = value.to_string();
            let node = parse(&text);
            assert_eq!(node.is_null(), kind == "null", "{value}");
            assert_eq!(node.is_integer(), kind == "int", "{value}");
            assert_eq!(node.is_string(), kind == "string", "{value}");
            assert_eq!(node.as_str().is_some(), kind == "string", "{value}");
            assert_eq!(node.is_array(), kind == "array", "{value}");
            assert_eq!(node.is_object(), kind == "object", "{value}");
        }
    }
}
