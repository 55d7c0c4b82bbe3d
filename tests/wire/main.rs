//! Native wire tests: raw JSON-RPC in, exact JSON or text out, SQLite loaded from migrations/.

mod golden;
mod support;

mod bad_input;
mod catalog;
mod credentials;
mod export;
mod faults;
mod handshake;
mod http_rules;
mod limits;
mod memory;
mod oauth;
mod oauth_clients;
mod oauth_tokens;
mod readme;
mod search;
mod sse;
mod state_txt;
mod stateless;
mod store;
mod tidy;
mod tools;
mod upgrade;
mod web;
