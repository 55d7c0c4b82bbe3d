//! One parsed JSON-RPC body in, one reply out: lane choice (2026-07-28 stateless vs 2025-era),
//! the modern header and version checks, method routing and tool calls. This is the only place
//! errors become JSON-RPC errors. No HTTP parsing (http.rs) and no SQL (store.rs) here.

use serde_json::{json, Value as Json};

use crate::jsonrpc::{self, Message, RpcError};
use crate::prompts::{self, PromptError};
use crate::protocol::version::{self, Era};
use crate::protocol::{self, Cache, META_CLIENT_CAPABILITIES, META_PROTOCOL_VERSION};
use crate::resources::{self, ResourceError};
use crate::store::Sql;
use crate::tools::{self, NewId};

/// Most messages in one 2025-03-26 batch: each may be a D1 round trip inside one request.
pub const MAX_BATCH: usize = 100;

/// The request headers dispatch needs, already looked up (names are case-insensitive on the wire).
#[derive(Debug, Default, Clone)]
pub struct McpHeaders {
    pub protocol_version: Option<String>,
    pub method: Option<String>,
    pub name: Option<String>,
}

/// What to send back.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// A JSON body with its HTTP status.
    Json { status: u16, body: Json },
    /// 202 with no body: notifications and posted responses.
    Accepted,
}

/// A reply plus a diagnostic for the operator's log (never sent to the client).
#[derive(Debug, Clone, PartialEq)]
pub struct Handled {
    pub reply: Reply,
    pub diagnostic: Option<String>,
}

impl From<Reply> for Handled {
    fn from(reply: Reply) -> Self {
        Handled {
            reply,
            diagnostic: None,
        }
    }
}

pub struct Ctx<'a, S: Sql, I: NewId> {
    pub db: &'a S,
    pub ids: &'a I,
    pub headers: &'a McpHeaders,
}

pub fn parse_error() -> Reply {
    error_reply(
        &Json::Null,
        RpcError::new(
            jsonrpc::PARSE_ERROR,
            "Parse error: the body is not JSON",
            400,
        ),
    )
}

fn error_reply(id: &Json, error: RpcError) -> Reply {
    Reply::Json {
        status: error.http_status,
        body: error.to_json(id),
    }
}

fn invalid_request(id: Json, why: &str) -> Reply {
    error_reply(
        &id,
        RpcError::new(
            jsonrpc::INVALID_REQUEST,
            format!("Invalid Request: {why}"),
            400,
        ),
    )
}

/// Handles one POSTed body (an object, or a 2025-03-26 batch array).
pub async fn handle(body: &Json, ctx: &Ctx<'_, impl Sql, impl NewId>) -> Handled {
    match body {
        Json::Array(items) => handle_batch(items, ctx).await,
        single => handle_one(single, ctx).await,
    }
}

async fn handle_batch(items: &[Json], ctx: &Ctx<'_, impl Sql, impl NewId>) -> Handled {
    if items.is_empty() {
        return invalid_request(Json::Null, "an empty batch").into();
    }
    if items.len() > MAX_BATCH {
        let why = format!("a batch holds at most {MAX_BATCH} messages");
        return invalid_request(Json::Null, &why).into();
    }
    if items
        .iter()
        .any(|m| modern_claim(m).is_some() || jsonrpc::classify(m).is_err())
    {
        return invalid_request(
            Json::Null,
            "a batch must hold only valid 2025-03-26 messages",
        )
        .into();
    }
    let era = match legacy_era(ctx.headers) {
        Ok(era) => era,
        Err(error) => return error_reply(&Json::Null, error).into(),
    };
    if !version::allows_batches(era) {
        return invalid_request(
            Json::Null,
            "JSON-RPC batches were removed in protocol 2025-06-18",
        )
        .into();
    }
    let mut responses = Vec::new();
    let mut diagnostic = None;
    for item in items {
        let handled = handle_one(item, ctx).await;
        diagnostic = diagnostic.or(handled.diagnostic);
        if let Reply::Json { body, .. } = handled.reply {
            responses.push(body);
        }
    }
    let reply = if responses.is_empty() {
        Reply::Accepted
    } else {
        Reply::Json {
            status: 200,
            body: Json::Array(responses),
        }
    };
    Handled { reply, diagnostic }
}

/// The `_meta` protocol-version claim of a message, if it makes one.
fn modern_claim(message: &Json) -> Option<&Json> {
    message
        .get("params")?
        .get("_meta")?
        .get(META_PROTOCOL_VERSION)
}

async fn handle_one(value: &Json, ctx: &Ctx<'_, impl Sql, impl NewId>) -> Handled {
    let message = match jsonrpc::classify(value) {
        Ok(message) => message,
        Err(id) => return invalid_request(id, "not a JSON-RPC 2.0 request or notification").into(),
    };
    let (id, method, params) = match message {
        Message::Response => return Reply::Accepted.into(),
        Message::Notification { method, params } => (None, method, params),
        Message::Request { id, method, params } => (Some(id), method, params),
    };
    let header_version = ctx.headers.protocol_version.as_deref().map(trim);
    let claim = modern_claim(value);
    if method == "initialize" && claim.is_none() {
        if let Some(v) = header_version.filter(|v| version::is_modern_claim(v)) {
            let error = RpcError::new(
                jsonrpc::HEADER_MISMATCH,
                format!("initialize is the 2025-era handshake, but MCP-Protocol-Version is {v}"),
                400,
            );
            return error_reply(id.unwrap_or(&Json::Null), error).into();
        }
    }
    let result = if claim.is_some() {
        modern(id, method, params, ctx).await
    } else if header_version.is_some_and(version::is_modern_claim) {
        Err(RpcError::new(
            jsonrpc::INVALID_PARAMS,
            format!(
                "params._meta must carry {META_PROTOCOL_VERSION} and {META_CLIENT_CAPABILITIES}"
            ),
            400,
        ))
    } else {
        legacy(id, method, params, ctx).await
    };
    match (id, result) {
        (None, Ok(_)) => Reply::Accepted.into(),
        (Some(id), Ok(Some(done))) => Handled {
            reply: Reply::Json {
                status: 200,
                body: jsonrpc::success(id, done.result),
            },
            diagnostic: done.diagnostic,
        },
        (Some(_), Ok(None)) => Reply::Accepted.into(),
        (id, Err(error)) => {
            let diagnostic = (error.code == jsonrpc::INTERNAL_ERROR).then(|| error.message.clone());
            let error = if error.code == jsonrpc::INTERNAL_ERROR {
                public_internal(error)
            } else {
                error
            };
            match id {
                Some(id) => Handled {
                    reply: error_reply(id, error),
                    diagnostic,
                },
                // A refused notification gets the status and an error without an id.
                None => Handled {
                    reply: error_reply(&Json::Null, error),
                    diagnostic,
                },
            }
        }
    }
}

/// A successful method result, plus a diagnostic for the log (a tool's storage failure).
struct Done {
    result: Json,
    diagnostic: Option<String>,
}

impl Done {
    fn new(result: Json) -> Self {
        Done {
            result,
            diagnostic: None,
        }
    }
}

/// The 2026-07-28 lane, in the checklist's order: `_meta` → header vs body → version →
/// Mcp-Method / Mcp-Name → method.
async fn modern(
    id: Option<&Json>,
    method: &str,
    params: Option<&Json>,
    ctx: &Ctx<'_, impl Sql, impl NewId>,
) -> Result<Option<Done>, RpcError> {
    let meta = params.and_then(|p| p.get("_meta"));
    let claimed = meta
        .and_then(|m| m.get(META_PROTOCOL_VERSION))
        .and_then(Json::as_str);
    let capabilities_ok = meta
        .and_then(|m| m.get(META_CLIENT_CAPABILITIES))
        .is_some_and(Json::is_object);
    let (Some(claimed), true) = (claimed, capabilities_ok) else {
        return Err(RpcError::new(
            jsonrpc::INVALID_PARAMS,
            format!(
                "params._meta must carry {META_PROTOCOL_VERSION} (a string) and {META_CLIENT_CAPABILITIES} (an object)"
            ),
            400,
        ));
    };
    if id.is_none() {
        // The stateless revision defines no client notifications over HTTP; accept and ignore.
        return Ok(None);
    }
    match ctx.headers.protocol_version.as_deref().map(trim) {
        Some(h) if h == claimed => {}
        Some(h) => {
            return Err(header_mismatch(format!(
                "MCP-Protocol-Version header {h:?} does not match params._meta {claimed:?}"
            )))
        }
        None => {
            return Err(header_mismatch(
                "the MCP-Protocol-Version header is required".into(),
            ))
        }
    }
    if !version::is_supported_modern(claimed) {
        return Err(RpcError::new(
            jsonrpc::UNSUPPORTED_VERSION,
            "Unsupported protocol version",
            400,
        )
        .with_data(json!({"supported": version::SUPPORTED_MODERN, "requested": claimed})));
    }
    check_header("Mcp-Method", ctx.headers.method.as_deref(), Some(method))?;
    let name_field = match method {
        "tools/call" | "prompts/get" => Some("name"),
        "resources/read" => Some("uri"),
        _ => None,
    };
    if let Some(field) = name_field {
        let body_name = params.and_then(|p| p.get(field)).and_then(Json::as_str);
        check_header("Mcp-Name", ctx.headers.name.as_deref(), body_name)?;
    }
    let era = Era::Modern;
    let result = match method {
        "server/discover" => Done::new(protocol::envelope(
            protocol::discover().clone(),
            era,
            Some(Cache::Static),
        )),
        _ => serve(method, params, era, ctx).await?,
    };
    Ok(Some(result))
}

/// The 2025-era lane: initialize as a pure function, no sessions.
async fn legacy(
    id: Option<&Json>,
    method: &str,
    params: Option<&Json>,
    ctx: &Ctx<'_, impl Sql, impl NewId>,
) -> Result<Option<Done>, RpcError> {
    if method == "initialize" {
        let requested = params
            .and_then(|p| p.get("protocolVersion"))
            .and_then(Json::as_str);
        let negotiated = version::negotiate_legacy(requested);
        return Ok(id.map(|_| Done::new(protocol::initialize(negotiated))));
    }
    let era = legacy_era(ctx.headers)?;
    if id.is_none() {
        return Ok(None);
    }
    let result = match method {
        "ping" => Done::new(json!({})),
        // Accepted and kept nowhere: this server never sends log messages.
        "logging/setLevel" if version::has_logging_set_level(era) => Done::new(json!({})),
        _ => serve(method, params, era, ctx).await?,
    };
    Ok(Some(result))
}

/// The methods both eras share, with their envelope for `era`.
async fn serve(
    method: &str,
    params: Option<&Json>,
    era: Era,
    ctx: &Ctx<'_, impl Sql, impl NewId>,
) -> Result<Done, RpcError> {
    let (result, cache) = match method {
        "tools/list" => (protocol::tools_list().clone(), Some(Cache::Static)),
        "tools/call" => return call_tool(params, era, ctx).await,
        "prompts/list" => (prompts::list(), Some(Cache::Static)),
        "prompts/get" => {
            let name = string_param(params, "name", "prompts/get")?;
            let arguments = params.and_then(|p| p.get("arguments"));
            (
                prompts::get(ctx.db, name, arguments)
                    .await
                    .map_err(prompt_error)?,
                None,
            )
        }
        "resources/templates/list" => (resources::templates(), Some(Cache::Static)),
        "resources/list" => {
            let cursor = params.and_then(|p| p.get("cursor")).and_then(Json::as_str);
            let listed = resources::list(ctx.db, cursor).await;
            (
                listed.map_err(|e| resource_error(e, era))?,
                Some(Cache::Data),
            )
        }
        "resources/read" => {
            let uri = string_param(params, "uri", "resources/read")?;
            let read = resources::read(ctx.db, uri).await;
            (read.map_err(|e| resource_error(e, era))?, Some(Cache::Data))
        }
        _ => {
            return Err(method_not_found(
                method,
                if era == Era::Modern { 404 } else { 200 },
            ))
        }
    };
    Ok(Done::new(protocol::envelope(result, era, cache)))
}

fn string_param<'a>(
    params: Option<&'a Json>,
    field: &str,
    method: &str,
) -> Result<&'a str, RpcError> {
    params
        .and_then(|p| p.get(field))
        .and_then(Json::as_str)
        .ok_or_else(|| {
            RpcError::new(
                jsonrpc::INVALID_PARAMS,
                format!("{method} needs params.{field}, a string"),
                200,
            )
        })
}

fn resource_error(error: ResourceError, era: Era) -> RpcError {
    match error {
        ResourceError::NotFound(uri) => RpcError::new(
            version::resource_not_found_code(era),
            format!(
                "Resource not found: {}; resources/list names each project's state",
                preview(&uri)
            ),
            200,
        )
        .with_data(json!({ "uri": uri })),
        ResourceError::BadCursor => RpcError::new(jsonrpc::INVALID_PARAMS, "Invalid cursor", 200),
        ResourceError::Store(detail) => RpcError::new(jsonrpc::INTERNAL_ERROR, detail, 200),
    }
}

fn prompt_error(error: PromptError) -> RpcError {
    let invalid = |message: String| RpcError::new(jsonrpc::INVALID_PARAMS, message, 200);
    match error {
        PromptError::UnknownPrompt(name) => {
            invalid(format!("Unknown prompt {name:?}; the prompts are: resume"))
        }
        PromptError::BadArgument(sentence) => invalid(sentence),
        PromptError::UnknownProject(id) => invalid(format!(
            "No project {id:?} yet: call the set_north_star tool with this project_id first"
        )),
        PromptError::Store(detail) => RpcError::new(jsonrpc::INTERNAL_ERROR, detail, 200),
    }
}

fn preview(s: &str) -> String {
    s.chars().take(200).collect()
}

/// The legacy era from the MCP-Protocol-Version header: absent means 2025-03-26; an unknown
/// value is refused with 400, as 2025-06-18 and later require.
fn legacy_era(headers: &McpHeaders) -> Result<Era, RpcError> {
    match headers.protocol_version.as_deref().map(trim) {
        None => Ok(Era::Legacy(version::HEADERLESS_LEGACY)),
        Some(v) => version::supported_legacy(v)
            .map(Era::Legacy)
            .ok_or_else(|| {
                RpcError::new(
                    jsonrpc::LEGACY_BAD_REQUEST,
                    format!(
                        "Bad Request: unsupported MCP-Protocol-Version {v:?}; supported: {}",
                        version::SUPPORTED_LEGACY.join(", ")
                    ),
                    400,
                )
            }),
    }
}

async fn call_tool(
    params: Option<&Json>,
    era: Era,
    ctx: &Ctx<'_, impl Sql, impl NewId>,
) -> Result<Done, RpcError> {
    let name = params
        .and_then(|p| p.get("name"))
        .and_then(Json::as_str)
        .ok_or_else(|| {
            RpcError::new(
                jsonrpc::INVALID_PARAMS,
                "tools/call needs params.name, a string",
                200,
            )
        })?;
    let Some(def) = tools::find(name) else {
        let known: Vec<&str> = tools::ALL.iter().map(|t| t.name).collect();
        return Err(RpcError::new(
            jsonrpc::INVALID_PARAMS,
            format!(
                "Unknown tool {:?}; the tools are {}",
                name.chars().take(64).collect::<String>(),
                known.join(", ")
            ),
            200,
        ));
    };
    let arguments = params.and_then(|p| p.get("arguments"));
    if arguments.is_some_and(|a| !a.is_object() && !a.is_null()) {
        return Err(RpcError::new(
            jsonrpc::INVALID_PARAMS,
            "tools/call params.arguments must be an object",
            200,
        ));
    }
    let outcome = match tools::check(def, arguments) {
        Ok(args) => tools::run(def, &args, ctx.db, ctx.ids).await.map_err(|e| {
            RpcError::new(jsonrpc::INTERNAL_ERROR, format!("{}: {e}", def.name), 200)
        })?,
        Err(sentence) => tools::Outcome::error(format!(
            "Invalid arguments for {}: {}. Nothing was written.",
            def.name,
            sentence.trim_end_matches('.')
        )),
    };
    let content: Vec<Json> = outcome
        .texts
        .into_iter()
        .map(|text| json!({"type": "text", "text": text}))
        .collect();
    let result = json!({"content": content, "isError": outcome.is_error});
    Ok(Done::new(protocol::envelope(result, era, None)))
}

/// Replaces an internal error's message (which may name SQL or D1 details) with a public one.
fn public_internal(error: RpcError) -> RpcError {
    RpcError::new(
        jsonrpc::INTERNAL_ERROR,
        "Internal error: the database did not complete the request; try again",
        error.http_status,
    )
}

fn method_not_found(method: &str, http_status: u16) -> RpcError {
    RpcError::new(
        jsonrpc::METHOD_NOT_FOUND,
        format!(
            "Method not found: {}",
            method.chars().take(64).collect::<String>()
        ),
        http_status,
    )
}

fn header_mismatch(message: String) -> RpcError {
    RpcError::new(jsonrpc::HEADER_MISMATCH, message, 400)
}

/// Compares a required routing header with the body value. Values are case-sensitive, trimmed of
/// spaces and tabs, and may arrive as `=?base64?…?=`.
fn check_header(header: &str, value: Option<&str>, body: Option<&str>) -> Result<(), RpcError> {
    let Some(raw) = value else {
        return Err(header_mismatch(format!("the {header} header is required")));
    };
    let decoded = decode_header_value(trim(raw)).ok_or_else(|| {
        header_mismatch(format!(
            "the {header} header has a malformed =?base64?…?= value"
        ))
    })?;
    if Some(decoded.as_str()) != body {
        return Err(header_mismatch(format!(
            "the {header} header does not match the request body"
        )));
    }
    Ok(())
}

fn trim(s: &str) -> &str {
    s.trim_matches([' ', '\t'])
}

/// Decodes the `=?base64?…?=` form of a header value; other values pass through.
fn decode_header_value(value: &str) -> Option<String> {
    match value
        .strip_prefix("=?base64?")
        .and_then(|v| v.strip_suffix("?="))
    {
        Some(b64) => String::from_utf8(base64_decode(b64)?).ok(),
        None => Some(value.to_owned()),
    }
}

/// Standard base64 with padding (RFC 4648 §4); `None` on any malformed input.
fn base64_decode(input: &str) -> Option<Vec<u8>> {
    let bytes = input.as_bytes();
    if !bytes.len().is_multiple_of(4) {
        return None;
    }
    let value = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    };
    let mut out = Vec::with_capacity(bytes.len() / 4 * 3);
    for (i, chunk) in bytes.chunks(4).enumerate() {
        let last = i == bytes.len() / 4 - 1;
        let pad = chunk.iter().rev().take_while(|&&c| c == b'=').count();
        if pad > 2 || (pad > 0 && !last) {
            return None;
        }
        let mut n = 0u32;
        for &c in &chunk[..4 - pad] {
            n = (n << 6) | value(c)?;
        }
        n <<= 6 * pad as u32;
        let decoded = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        out.extend_from_slice(&decoded[..3 - pad]);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_header_values() {
        assert_eq!(
            decode_header_value("=?base64?dG9vbHMvY2FsbA==?=").as_deref(),
            Some("tools/call")
        );
        assert_eq!(
            decode_header_value("=?base64?5pel5pys?=").as_deref(),
            Some("日本")
        );
        assert_eq!(decode_header_value("plain").as_deref(), Some("plain"));
        assert_eq!(decode_header_value("=?base64?not*base64?="), None);
        assert_eq!(decode_header_value("=?base64?QQ=A?="), None);
    }
}
