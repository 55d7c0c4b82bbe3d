//! JSON-RPC 2.0: message shapes and ids. Knows nothing of MCP methods, and no error code (the
//! code table is `error.rs`).
//! An id is echoed exactly as it came (0 is a valid id); `null` is used only when no id can be read.

use serde_json::{Map, Value as Json};

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

pub fn success(id: &Json, result: Json) -> Json {
    response(id, "result", result)
}

/// A response object, its outcome moved in. `json!` would copy a value it is handed, string by
/// string and map by map (it serializes the value into a new one), and a tool's result holds
/// the whole text the model reads.
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
        id: &'a Json,
        method: &'a str,
        params: Option<&'a Json>,
    },
    Notification {
        method: &'a str,
        params: Option<&'a Json>,
    },
    /// A response (result or error) posted by the client: accepted and ignored.
    Response,
}

/// Classifies one message. On failure returns the id to echo (if one could be read).
pub fn classify(value: &Json) -> Result<Message<'_>, Json> {
    let Some(obj) = value.as_object() else {
        return Err(Json::Null);
    };
    let id = obj.get("id");
    let readable_id = id
        .filter(|id| is_valid_id(id))
        .cloned()
        .unwrap_or(Json::Null);
    if obj.get("jsonrpc").and_then(Json::as_str) != Some("2.0") {
        return Err(readable_id);
    }
    let params = obj.get("params");
    if params.is_some_and(|p| !p.is_object() && !p.is_array()) {
        return Err(readable_id);
    }
    match (obj.get("method"), id) {
        (Some(Json::String(method)), None) => Ok(Message::Notification { method, params }),
        (Some(Json::String(method)), Some(id)) if is_valid_id(id) => {
            Ok(Message::Request { id, method, params })
        }
        (None, Some(id))
            if is_valid_id(id) && (obj.contains_key("result") || obj.contains_key("error")) =>
        {
            Ok(Message::Response)
        }
        _ => Err(readable_id),
    }
}

/// MCP ids are strings or integers, never null. An integer outside i64/u64 or a fraction would
/// come back as a float in another spelling, so the client could not match the reply; it is
/// refused instead of echoed wrong.
fn is_valid_id(id: &Json) -> bool {
    id.is_string() || id.is_i64() || id.is_u64()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn zero_is_a_valid_id() {
        let msg = json!({"jsonrpc": "2.0", "id": 0, "method": "ping"});
        assert_eq!(
            classify(&msg),
            Ok(Message::Request {
                id: &json!(0),
                method: "ping",
                params: None
            })
        );
    }

    #[test]
    fn null_id_and_wrong_version_are_invalid() {
        assert_eq!(
            classify(&json!({"jsonrpc": "2.0", "id": null, "method": "ping"})),
            Err(Json::Null)
        );
        assert_eq!(
            classify(&json!({"jsonrpc": "1.0", "id": 7, "method": "ping"})),
            Err(json!(7))
        );
        assert_eq!(
            classify(&json!({"jsonrpc": "2.0", "id": 7, "method": 5})),
            Err(json!(7))
        );
        assert_eq!(
            classify(&json!({"jsonrpc": "2.0", "id": 7, "method": "x", "params": 3})),
            Err(json!(7))
        );
    }

    #[test]
    fn fractions_and_out_of_range_integers_are_not_ids() {
        for id in [json!(1.5), json!(1.0), json!(-0.0), json!(1e29)] {
            let msg = json!({"jsonrpc": "2.0", "id": id, "method": "ping"});
            assert_eq!(classify(&msg), Err(Json::Null), "{id}");
        }
        let msg = json!({"jsonrpc": "2.0", "id": u64::MAX, "method": "ping"});
        assert!(classify(&msg).is_ok());
    }

    #[test]
    fn posted_responses_are_recognised() {
        assert_eq!(
            classify(&json!({"jsonrpc": "2.0", "id": "a", "result": {}})),
            Ok(Message::Response)
        );
    }
}
