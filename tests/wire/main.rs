//! Native wire tests: raw JSON-RPC in, exact JSON or text out, SQLite loaded from migrations/.

mod bad_input;
mod catalog;
mod credentials;
mod export;
mod faults;
mod first_chat;
mod golden;
mod handshake;
mod http_rules;
mod limits;
mod memory;
mod oauth;
mod oauth_clients;
mod oauth_tokens;
mod search;
mod sharing;
mod sse;
mod state_txt;
mod stateless;
mod store;
mod support;
mod tidy;
mod tools;
mod upgrade;
mod web;
