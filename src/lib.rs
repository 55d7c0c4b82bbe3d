//! handoff-mcp: a remote MCP server that keeps one project pointed at its North Star across
//! chat generations. The core below is pure and host-testable; `worker` is the Workers shell.
//! The modules come in bands, from the bottom up (ARCHITECTURE.md, "Bands"): a module imports
//! only from the bands below its own, or from the modules listed before it in its own band, so
//! there is no circle (`tests/wire/tidy.rs` holds it). A request travels down them.

// text: encodings and markup; they know no project.
pub mod base64;
pub mod crypto;
pub mod heap;
pub mod html;
pub mod invisible;
pub mod json_read;
pub mod json_write;

// model: what a project is, and the texts a model reads of it.
pub mod form;
pub mod model;
pub mod render;

// auth: what a credential reaches, what the server seals, the configured tokens, the settings.
pub mod auth;
pub mod config;

// store: SQL and the storage port.
pub mod store;

// mcp: the JSON-RPC envelope, MCP's names, versions and bodies.
pub mod jsonrpc;
pub mod protocol;

// context: a request's context, and everything refused.
pub mod context;
pub mod error;

// tools: what a project offers: the tools, resources, the prompt, the export, sharing.
pub mod export;
pub mod prompts;
pub mod resources;
pub mod sharing;
pub mod tools;

// wire: one JSON-RPC message to its reply, the HTTP types and guards, the credential's check.
pub mod dispatch;
pub mod http;

// surfaces: the transports and pages, and OAuth's endpoints (auth::oauth).
pub mod owner;
pub mod plain;
pub mod sse;
pub mod streamable;
pub mod web;

// route: the path table, the plan, and carrying it out.
pub mod route;

// The shells, outside the bands: SQLite behind the store for tests, bench and fuzzing (never
// in the Worker), and the Worker.
#[cfg(feature = "sqlite")]
pub mod sqlite;
#[cfg(target_arch = "wasm32")]
mod worker;
