//! JSON-RPC 2.0: message shapes and ids. Knows nothing of MCP methods, and no error code (the
//! code table is `error.rs`).
//! An id is echoed exactly as it came (0 is a valid id); `null` is used only when no id can be read.

use serde_json::{Map, Value as Json};

use crate::json_read::Node;
use crate::json_write;

/// A JSON-RPC error response. The code and message come from `error::Error`, the only place
/// that knows the code table.
pub fn error(id: &Json, code: i64, message: String, data: Option<Json>) -> Json {
    let mut error = Map::new();
    error.insert("code".into(), code.into());
    error.insert("message".into(), message.into());
    if let Some(data) = data {
        error.insert("data".into(), data);
    }
    response(id, "error", Json::Object(error))
}

/// A success response, written as JSON text from the start: the members before `result`, then
/// the result's value, appended by whoever computes it into `result()` (so a result as long as
/// the model's text is written once, not built and then copied), then the closing brace. The
/// members are in the order `json_write::to_text` writes a response object's (serde_json's map sorts
/// its keys).
pub struct Success {
    text: String,
}

impl Success {
    pub fn new(id: &Json) -> Success {
        let mut out = String::from("{\"id\":");
        json_write::push_value(&mut out, id);
        out.push_str(",\"jsonrpc\":\"2.0\",\"result\":");
        Success { text: out }
    }

    /// The text to append the result's JSON value to, once.
    pub fn result(&mut self) -> &mut String {
        &mut self.text
    }

    pub fn finish(mut self) -> String {
        self.text.push('}');
        self.text
    }
}

/// A response object, its outcome moved in (`json!` would copy it, string by string).
fn response(id: &Json, outcome: &str, value: Json) -> Json {
    let mut response = Map::new();
    response.insert("jsonrpc".into(), "2.0".into());
    response.insert("id".into(), id.clone());
    response.insert(outcome.into(), value);
    Json::Object(response)
}

/// What one parsed JSON value is, as JSON-RPC sees it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Message<'a> {
    Request {
        id: &'a Node<'a>,
        method: &'a str,
        params: Option<&'a Node<'a>>,
    },
    Notification {
        method: &'a str,
        params: Option<&'a Node<'a>>,
    },
    /// A response (result or error) posted by the client: accepted and ignored.
    Response,
}

/// Classifies one message. On failure returns the id to echo (if one could be read).
pub fn classify<'a>(value: &'a Node<'a>) -> Result<Message<'a>, Json> {
    if !value.is_object() {
        return Err(Json::Null);
    }
    let id = value.get("id");
    let readable_id = id
        .filter(|id| is_valid_id(id))
        .map_or(Json::Null, Node::to_json);
    if value.get("jsonrpc").and_then(Node::as_str) != Some("2.0") {
        return Err(readable_id);
    }
    let params = value.get("params");
    if params.is_some_and(|p| !p.is_object() && !p.is_array()) {
        return Err(readable_id);
    }
    match (value.get("method"), id) {
        (Some(Node::String(method)), None) => Ok(Message::Notification { method, params }),
        (Some(Node::String(method)), Some(id)) if is_valid_id(id) => {
            Ok(Message::Request { id, method, params })
        }
        (None, Some(id))
            if is_valid_id(id)
                && (value.get("result").is_some() || value.get("error").is_some()) =>
        {
            Ok(Message::Response)
        }
        _ => Err(readable_id),
    }
}

/// MCP ids are strings or integers, never null. An integer outside i64/u64 or a fraction would
/// come back as a float in another spelling, so the client could not match the reply; it is
/// refused instead of echoed wrong.
fn is_valid_id(id: &Node) -> bool {
    id.is_string() || id.is_integer()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// What `classify` says of `value`, with a request's id and params as `Value`s.
    fn classified(value: Json) -> Result<(Option<Json>, String, Option<Json>), Json> {
        let text = value.to_string();
        let node = Node::parse(text.as_bytes()).expect("JSON");
        Ok(match classify(&node)? {
            Message::Request { id, method, params } => (
                Some(id.to_json()),
                method.to_owned(),
                params.map(Node::to_value),
            ),
            Message::Notification { method, params } => {
                (None, method.to_owned(), params.map(Node::to_value))
            }
            Message::Response => (None, "(a response)".into(), None),
        })
    }

    #[test]
    fn a_success_is_the_text_of_its_response_object() {
        for id in [json!(0), json!(-7), json!("a\"b"), json!(null), json!(1.5)] {
            for result in [
                json!({}),
                json!({"content": [{"text": "x\ny", "type": "text"}]}),
            ] {
                let mut success = Success::new(&id);
                json_write::push_value(success.result(), &result);
                assert_eq!(
                    success.finish(),
                    json_write::to_text(&response(&id, "result", result)),
                );
            }
        }
    }

    #[test]
    fn zero_is_a_valid_id() {
        let msg = json!({"jsonrpc": "2.0", "id": 0, "method": "ping"});
        assert_eq!(classified(msg), Ok((Some(json!(0)), "ping".into(), None)));
    }

    #[test]
    fn null_id_and_wrong_version_are_invalid() {
        assert_eq!(
            classified(json!({"jsonrpc": "2.0", "id": null, "method": "ping"})),
            Err(Json::Null)
        );
        assert_eq!(
            classified(json!({"jsonrpc": "1.0", "id": 7, "method": "ping"})),
            Err(json!(7))
        );
        assert_eq!(
            classified(json!({"jsonrpc": "2.0", "id": 7, "method": 5})),
            Err(json!(7))
        );
        assert_eq!(
            classified(json!({"jsonrpc": "2.0", "id": 7, "method": "x", "params": 3})),
            Err(json!(7))
        );
    }

    #[test]
    fn fractions_and_out_of_range_integers_are_not_ids() {
        for id in [json!(1.5), json!(1.0), json!(-0.0), json!(1e29)] {
            let msg = json!({"jsonrpc": "2.0", "id": id, "method": "ping"});
            assert_eq!(classified(msg), Err(Json::Null), "{id}");
        }
        let msg = json!({"jsonrpc": "2.0", "id": u64::MAX, "method": "ping"});
        assert!(classified(msg).is_ok());
    }

    #[test]
    fn posted_responses_are_recognised() {
        assert_eq!(
            classified(json!({"jsonrpc": "2.0", "id": "a", "result": {}})),
            Ok((None, "(a response)".into(), None))
        );
    }
}
