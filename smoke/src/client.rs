//! The JSON-RPC client for both protocol eras over Streamable HTTP: envelopes, headers and the rules
//! every response must meet. What a particular result should contain belongs to the checks, not here.

use serde_json::{json, Map, Value};

use crate::http::{self, Reply, Target};

/// The name the server reports in every era.
pub const SERVER_NAME: &str = "handoff-mcp";

/// The `_meta` keys of the stateless era.
pub const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
const META_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";

/// The header both eras use to name their protocol version.
pub const VERSION_HEADER: &str = "MCP-Protocol-Version";
/// The stateless era's routing header, which must repeat the body's method.
pub const METHOD_HEADER: &str = "Mcp-Method";
const NAME_HEADER: &str = "Mcp-Name";

/// The two protocol versions the server speaks on one endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Era {
    /// Stateless: no initialize; every request carries its version and client facts in `_meta`.
    Modern,
    /// Each client opens with initialize and notifications/initialized.
    Legacy,
}

impl Era {
    pub const ALL: [Era; 2] = [Era::Modern, Era::Legacy];

    pub fn version(self) -> &'static str {
        match self {
            Era::Modern => "2026-07-28",
            Era::Legacy => "2025-11-25",
        }
    }
}

/// The client facts both eras send, in `_meta` or in initialize.
pub fn client_info() -> Value {
    json!({"name": "handoff-smoke", "version": "0.1"})
}

/// What the scenario needs from a client, whatever its transport, so that another transport
/// (the legacy HTTP+SSE one) can run the same steps.
pub trait Session {
    /// Sends one request and returns its `result`, once the era's envelope rules have held.
    /// `Value::Null` params means the request carries none of its own.
    fn result(&mut self, method: &str, params: Value) -> Result<Value, String>;
}

/// A JSON-RPC response that met the wire rules: JSON, sessionless, `jsonrpc` 2.0, id echoed,
/// and exactly one of `result` and `error`.
#[derive(Debug, Clone)]
pub struct Response {
    pub reply: Reply,
    pub json: Value,
}

impl Response {
    /// Returns the `error` object after checking the HTTP status and JSON-RPC code it should carry.
    pub fn expect_error(&self, status: u16, code: i64) -> Result<&Value, String> {
        let error = self
            .json
            .get("error")
            .ok_or_else(|| format!("expected a JSON-RPC error, got {}", self.reply.describe()))?;
        if self.reply.status != status || error.get("code").and_then(Value::as_i64) != Some(code) {
            return Err(format!(
                "expected HTTP {status} with error code {code}, got {}",
                self.reply.describe()
            ));
        }
        if !error.get("message").is_some_and(Value::is_string) {
            return Err(format!(
                "error has no string message: {}",
                self.reply.describe()
            ));
        }
        Ok(error)
    }
}

/// One logical MCP client of one era: its own agent, its own id counter.
pub struct Client {
    agent: ureq::Agent,
    endpoint: String,
    /// Sent with every request: the bearer token when the target is reached that way.
    auth: Vec<(&'static str, String)>,
    era: Era,
    last_id: u64,
}

impl Client {
    pub fn new(target: &Target, era: Era) -> Client {
        Client {
            agent: http::agent(),
            endpoint: target.mcp(),
            auth: target.auth(),
            era,
            last_id: 0,
        }
    }

    /// A fresh request id; ids start at 1 so they never collide within one client.
    pub fn next_id(&mut self) -> Value {
        self.last_id += 1;
        json!(self.last_id)
    }

    /// The JSON-RPC envelope this era sends: the stateless era adds its `_meta` to every params.
    /// `id: None` makes a notification.
    pub fn envelope(&self, id: Option<Value>, method: &str, params: Value) -> Value {
        let mut message = Map::new();
        message.insert("jsonrpc".into(), json!("2.0"));
        if let Some(id) = id {
            message.insert("id".into(), id);
        }
        message.insert("method".into(), json!(method));
        let params = match self.era {
            Era::Modern => {
                let mut params = match params {
                    Value::Object(map) => map,
                    _ => Map::new(),
                };
                let mut meta = match params.remove("_meta") {
                    Some(Value::Object(meta)) => meta,
                    _ => Map::new(),
                };
                meta.insert(META_VERSION.into(), json!(Era::Modern.version()));
                meta.insert(META_CAPABILITIES.into(), json!({}));
                meta.insert(META_CLIENT_INFO.into(), client_info());
                params.insert("_meta".into(), Value::Object(meta));
                Value::Object(params)
            }
            Era::Legacy => params,
        };
        if !params.is_null() {
            message.insert("params".into(), params);
        }
        Value::Object(message)
    }

    /// The headers this era sends with a message built by [`Client::envelope`].
    pub fn headers(&self, message: &Value) -> Vec<(&'static str, String)> {
        let method = message["method"].as_str().unwrap_or_default();
        let mut headers = vec![
            ("Content-Type", "application/json".to_string()),
            ("Accept", "application/json, text/event-stream".to_string()),
        ];
        match self.era {
            Era::Modern => {
                headers.push((VERSION_HEADER, Era::Modern.version().to_string()));
                headers.push((METHOD_HEADER, method.to_string()));
                if method == "tools/call" {
                    let name = message["params"]["name"].as_str().unwrap_or_default();
                    headers.push((NAME_HEADER, name.to_string()));
                }
            }
            // Before initialize there is no negotiated version to announce.
            Era::Legacy if method != "initialize" => {
                headers.push((VERSION_HEADER, Era::Legacy.version().to_string()));
            }
            Era::Legacy => {}
        }
        headers
    }

    /// Posts a request exactly as given and checks the wire rules against the id it carries.
    pub fn exchange(
        &self,
        headers: &[(&str, String)],
        message: &Value,
    ) -> Result<Response, String> {
        let reply = self.post(headers, message)?;
        reply.expect_no_session()?;
        if reply.media_type().as_deref() != Some("application/json") {
            return Err(format!(
                "expected an application/json response, got {}",
                reply.describe()
            ));
        }
        let json: Value = match serde_json::from_str(&reply.body) {
            Ok(json) => json,
            Err(err) => return Err(format!("body is not JSON ({err}): {}", reply.describe())),
        };
        let rule = if json.get("jsonrpc") != Some(&json!("2.0")) {
            Some("\"jsonrpc\" is not \"2.0\"")
        } else if json.get("id") != message.get("id") {
            Some("the id is not the request's")
        } else if json.get("result").is_some() == json.get("error").is_some() {
            Some("not exactly one of result and error")
        } else {
            None
        };
        match rule {
            Some(rule) => Err(format!(
                "{rule} (sent id {}): {}",
                message["id"],
                reply.describe()
            )),
            None => Ok(Response { reply, json }),
        }
    }

    /// Sends a request with this era's envelope and headers.
    pub fn request(&mut self, method: &str, params: Value) -> Result<Response, String> {
        let id = self.next_id();
        let message = self.envelope(Some(id), method, params);
        self.exchange(&self.headers(&message), &message)
    }

    /// Sends a notification, which the server must accept with 202 and an empty body.
    pub fn notify(&mut self, method: &str) -> Result<(), String> {
        let message = self.envelope(None, method, Value::Null);
        let reply = self.post(&self.headers(&message), &message)?;
        reply.expect_no_session()?;
        if reply.status == 202 && reply.body.is_empty() {
            Ok(())
        } else {
            Err(format!(
                "expected HTTP 202 with an empty body, got {}",
                reply.describe()
            ))
        }
    }

    fn post(&self, headers: &[(&str, String)], message: &Value) -> Result<Reply, String> {
        let headers = headers
            .iter()
            .chain(&self.auth)
            .map(|(name, value)| (*name, value.as_str()))
            .collect::<Vec<_>>();
        let body = message.to_string();
        http::send(&self.agent, "POST", &self.endpoint, &headers, Some(&body))
    }
}

impl Session for Client {
    fn result(&mut self, method: &str, params: Value) -> Result<Value, String> {
        let response = self.request(method, params)?;
        let Response { reply, json } = response;
        let fail = |rule: &str| Err(format!("{rule}: {}", reply.describe()));
        let result = match json.get("result") {
            Some(result @ Value::Object(_)) if reply.status == 200 => result,
            _ => return fail("expected HTTP 200 with a result object"),
        };
        match self.era {
            Era::Modern if result.get("resultType") != Some(&json!("complete")) => {
                fail("the result lacks \"resultType\":\"complete\"")
            }
            Era::Modern if result["_meta"][META_SERVER_INFO]["name"] != json!(SERVER_NAME) => fail(
                &format!("result._meta serverInfo.name is not {SERVER_NAME:?}"),
            ),
            Era::Legacy if result.get("resultType").is_some() => {
                fail("a legacy result must not carry resultType")
            }
            _ => Ok(result.clone()),
        }
    }
}
