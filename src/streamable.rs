//! Stateless Streamable HTTP, for both eras: one POSTed JSON-RPC body in, its reply out (a JSON
//! response, or 202 for a notification). The rules before the body (credential, Origin,
//! method, content type, size) are `route`'s and `http`'s; the messages are `dispatch`'s. No
//! session and no stream: this server keeps nothing between requests.

use crate::context::Ctx;
use crate::dispatch;
use crate::http::{self, Headers, Response};

/// Serves a planned /mcp (or POST /sse) body, whose size `route::serve` has checked.
pub async fn serve(headers: &Headers, body: &[u8], ctx: &Ctx<'_>) -> Response {
    let body = match http::parse_json(body) {
        Ok(body) => body,
        Err(refusal) => return refusal,
    };
    http::from_handled(dispatch::handle(&body, &http::mcp_headers(headers), ctx).await)
}
