//! handoff-mcp: a remote MCP server that keeps one project pointed at its North Star across
//! chat generations. The core below is pure and host-testable; `worker` is the Workers shell.
//! Modules in reading order, from the domain out to the wire.

pub mod config;
pub mod dispatch;
pub mod http;
pub mod jsonrpc;
pub mod model;
pub mod prompts;
pub mod protocol;
pub mod render;
pub mod resources;
pub mod sse;

/// SQLite behind the store, for tests, bench and fuzzing (never in the Worker).
#[cfg(feature = "sqlite")]
pub mod sqlite;
pub mod store;
pub mod tools;

#[cfg(target_arch = "wasm32")]
mod worker;
