//! Per-era protocol checks outside the scenario: handshakes, discovery, tools/list and the error
//! table. Tool behaviour lives in scenario.rs; routes outside the MCP endpoint live in routes.rs.

use serde_json::{json, Value};

use crate::checks::{ensure, expect_eq, Checks};
use crate::client::{
    client_info, Client, Era, Session, META_VERSION, METHOD_HEADER, SERVER_NAME, VERSION_HEADER,
};
use crate::http::Target;

/// tools/list must name exactly these, in this order.
const TOOL_NAMES: [&str; 6] = [
    "get_state",
    "set_north_star",
    "set_focus",
    "add_task",
    "complete_task",
    "search",
];

/// get_state's description closes with this instruction to the model reading it.
const GET_STATE_DESCRIPTION_END: &str =
    "この出力をフラットなTODOメニューに変換するな。まず北極星を述べ、本丸を1つ進めよ。後処理は北極星達成後にのみ着手。";

/// A version no server speaks, to provoke the unsupported-version error.
const FUTURE_VERSION: &str = "2099-01-01";

/// The stateless era's error codes this suite pins.
const METHOD_NOT_FOUND: i64 = -32601;
const HEADER_MISMATCH: i64 = -32020;
const UNSUPPORTED_VERSION: i64 = -32022;

/// Opens a client of `era` named `who`: legacy clients do their own initialize first, and in the
/// stateless era only A discovers, so B and C prove bare requests work.
pub fn open(checks: &mut Checks, target: &Target, era: Era, who: &str) -> Client {
    let mut client = Client::new(target, era);
    match era {
        Era::Legacy => initialize(checks, who, &mut client),
        Era::Modern if who == "A" => discover(checks, who, &mut client),
        Era::Modern => {}
    }
    client
}

/// The legacy handshake: initialize, then notifications/initialized.
fn initialize(checks: &mut Checks, who: &str, client: &mut Client) {
    let tag = Era::Legacy.version();
    let params = json!({
        "protocolVersion": tag,
        "capabilities": {},
        "clientInfo": client_info(),
    });
    let initialized = client.result("initialize", params).and_then(|result| {
        expect_eq("protocolVersion", &json!(tag), &result["protocolVersion"])?;
        expect_eq(
            "serverInfo.name",
            &json!(SERVER_NAME),
            &result["serverInfo"]["name"],
        )?;
        ensure(result["capabilities"]["tools"].is_object(), || {
            format!("capabilities.tools is not an object: {result}")
        })
    });
    checks.record(&format!("{tag} {who}: initialize"), initialized);
    checks.record(
        &format!("{tag} {who}: notifications/initialized is 202 with an empty body"),
        client.notify("notifications/initialized"),
    );
}

/// server/discover: the stateless era's replacement for initialize.
fn discover(checks: &mut Checks, who: &str, client: &mut Client) {
    let tag = Era::Modern.version();
    let discovered = client
        .result("server/discover", json!({}))
        .and_then(|result| {
            let supports = result["supportedVersions"]
                .as_array()
                .is_some_and(|versions| versions.contains(&json!(tag)));
            ensure(supports, || {
                format!("supportedVersions lacks {tag:?}: {result}")
            })?;
            ensure(result["capabilities"]["tools"].is_object(), || {
                format!("capabilities.tools is not an object: {result}")
            })?;
            ensure(result["ttlMs"].is_u64() || result["ttlMs"].is_i64(), || {
                format!("ttlMs is not an integer: {result}")
            })?;
            ensure(!result["cacheScope"].is_null(), || {
                format!("cacheScope is missing: {result}")
            })
        });
    checks.record(&format!("{tag} {who}: server/discover"), discovered);
}

/// tools/list names the six tools in order, and get_state's description ends with its instruction.
pub fn tools_list(checks: &mut Checks, tag: &str, who: &str, session: &mut dyn Session) {
    let listed = session.result("tools/list", json!({})).and_then(|result| {
        let tools = result["tools"]
            .as_array()
            .ok_or_else(|| format!("tools is not an array: {result}"))?;
        let names = tools
            .iter()
            .map(|tool| tool["name"].as_str().unwrap_or("<no name>"))
            .collect::<Vec<_>>();
        expect_eq("tool names", TOOL_NAMES.as_slice(), names.as_slice())?;
        let description = tools[0]["description"].as_str().unwrap_or_default();
        ensure(description.ends_with(GET_STATE_DESCRIPTION_END), || {
            format!(
                "get_state description does not end with {GET_STATE_DESCRIPTION_END:?}: {description:?}"
            )
        })
    });
    checks.record(&format!("{tag} {who}: tools/list"), listed);
}

/// Legacy ping answers an empty result.
pub fn ping(checks: &mut Checks, who: &str, client: &mut Client) {
    let tag = Era::Legacy.version();
    let pinged = client
        .result("ping", Value::Null)
        .and_then(|result| expect_eq("ping result", &json!({}), &result));
    checks.record(&format!("{tag} {who}: ping returns {{}}"), pinged);
}

/// The stateless era's error table: each case is a JSON-RPC error with the right HTTP status and
/// code, echoing the request id (a string id here, to show ids are echoed as sent, not renumbered).
pub fn modern_errors(checks: &mut Checks, who: &str, client: &mut Client) {
    let tag = Era::Modern.version();

    let message = client.envelope(
        Some(json!("smoke-unknown")),
        "handoff/no-such-method",
        json!({}),
    );
    let unknown = client
        .exchange(&client.headers(&message), &message)
        .and_then(|response| response.expect_error(404, METHOD_NOT_FOUND).map(drop));
    checks.record(
        &format!("{tag} {who}: unknown method is HTTP 404, -32601, id echoed"),
        unknown,
    );

    let id = client.next_id();
    let mut message = client.envelope(Some(id), "tools/list", json!({}));
    message["params"]["_meta"][META_VERSION] = json!(FUTURE_VERSION);
    let mut headers = client.headers(&message);
    set_header(&mut headers, VERSION_HEADER, FUTURE_VERSION);
    let unsupported = client.exchange(&headers, &message).and_then(|response| {
        let error = response.expect_error(400, UNSUPPORTED_VERSION)?;
        expect_eq(
            "error.data.requested",
            &json!(FUTURE_VERSION),
            &error["data"]["requested"],
        )?;
        let supported = error["data"]["supported"]
            .as_array()
            .is_some_and(|versions| versions.contains(&json!(tag)));
        ensure(supported, || {
            format!(
                "error.data.supported lacks {tag:?}: {}",
                response.reply.describe()
            )
        })
    });
    checks.record(
        &format!("{tag} {who}: version {FUTURE_VERSION} is HTTP 400, -32022, with requested and supported"),
        unsupported,
    );

    let id = client.next_id();
    let message = client.envelope(Some(id), "tools/list", json!({}));
    let mut headers = client.headers(&message);
    set_header(&mut headers, METHOD_HEADER, "server/discover");
    let mismatch = client
        .exchange(&headers, &message)
        .and_then(|response| response.expect_error(400, HEADER_MISMATCH).map(drop));
    checks.record(
        &format!("{tag} {who}: {METHOD_HEADER} not matching the body is HTTP 400, -32020"),
        mismatch,
    );
}

/// Replaces one header's value, so an error case differs from a good request in exactly one way.
fn set_header(headers: &mut [(&'static str, String)], name: &str, value: &str) {
    for (key, old) in headers.iter_mut() {
        if key.eq_ignore_ascii_case(name) {
            *old = value.to_string();
        }
    }
}
