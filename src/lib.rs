//! handoff-mcp: a remote MCP server that keeps one project pointed at its North Star across
//! chat generations. The core below is pure and host-testable; `worker` is the Workers shell.
//! Modules in rustfmt's (alphabetical) order; ARCHITECTURE.md's code map gives the reading order.

pub mod base64;
pub mod config;
pub mod context;
pub mod crypto;
pub mod dispatch;
pub mod error;
pub mod export;
pub mod form;
pub mod heap;
pub mod html;
pub mod http;
pub mod invisible;
pub mod json_read;
pub mod json_write;
pub mod jsonrpc;
pub mod model;
pub mod oauth;
pub mod owner;
pub mod plain;
pub mod prompts;
pub mod protocol;
pub mod render;
pub mod resources;
pub mod route;
pub mod scope;
pub mod seal;
pub mod sharing;
/// SQLite behind the store, for tests, bench and fuzzing (never in the Worker).
#[cfg(feature = "sqlite")]
pub mod sqlite;
pub mod sse;
pub mod store;
pub mod streamable;
pub mod tools;
pub mod web;

#[cfg(target_arch = "wasm32")]
mod worker;
