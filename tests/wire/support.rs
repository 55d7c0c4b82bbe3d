//! The test harness: the core's HTTP entry over an in-memory SQLite loaded from migrations/,
//! driven with raw JSON-RPC strings. Tests compare JSON or text; they pin no internal API
//! beyond `route::plan`/`route::serve`, `Config`, the request context and the `Sql` trait.

use std::cell::{Cell, RefCell};
use std::ops::Deref;

use handoff_mcp::auth::oauth::Fetched;
use handoff_mcp::auth::scope::{Credential, Scope};
use handoff_mcp::config::{Config, ALLOWED_ORIGINS_VAR, AUTH_TOKEN_VAR};
use handoff_mcp::context::{Caller, Ctx};
use handoff_mcp::http::Headers;
use handoff_mcp::store::{LocalFuture, Rows, Sql, Stmt, StoreError};
use serde_json::{json, Value as Json};

pub use handoff_mcp::sqlite::block_on;

pub const STATELESS: &str = "2026-07-28";
/// The pinned clock of every test server: 2026-12-01 08:00 UTC.
pub const NOW_MS: i64 = 1_796_112_000_000;

/// The shared SQLite adapter (`handoff_mcp::sqlite`), counting round trips and able to break,
/// behind the fault injector (`faults`), which runs each batch through the D1 adapter's retry
/// and fails none until a test plans faults.
pub struct Sqlite {
    pub faults: handoff_mcp::sqlite::Faulty,
    /// How many round trips (batches) the core made.
    pub batches: Cell<usize>,
    /// When set, every batch fails as a broken database would.
    pub broken: Cell<bool>,
    /// The text of every statement the core sent, in order.
    pub sent: RefCell<Vec<&'static str>>,
}

/// `s.db.conn` reads the connection, for direct SQL in tests.
impl Deref for Sqlite {
    type Target = handoff_mcp::sqlite::Sqlite;

    fn deref(&self) -> &Self::Target {
        &self.faults.db
    }
}

impl Sqlite {
    /// Brought to the current schema through the ledger, as the Worker does (a test checks
    /// that the crate's migration list is exactly migrations/).
    pub fn migrated() -> Sqlite {
        Sqlite::wrap(handoff_mcp::sqlite::Sqlite::migrated())
    }

    /// Counts and breaks batches on top of an adapter.
    pub fn wrap(inner: handoff_mcp::sqlite::Sqlite) -> Sqlite {
        Sqlite {
            faults: handoff_mcp::sqlite::Faulty::new(inner),
            batches: Cell::new(0),
            broken: Cell::new(false),
            sent: RefCell::new(Vec::new()),
        }
    }

    /// The one text value a query selects, read straight from SQLite: what is stored, verbatim.
    pub fn stored(&self, sql: &str) -> String {
        self.conn.query_row(sql, [], |r| r.get(0)).unwrap()
    }

    /// Every row of every table, for "nothing was written" checks.
    pub fn dump(&self) -> String {
        let mut out = String::new();
        for table in ["project", "focus", "task", "event"] {
            let mut stmt = self
                .conn
                .prepare(&format!("SELECT * FROM {table} ORDER BY rowid"))
                .unwrap();
            let n = stmt.column_count();
            let rows = stmt
                .query_map([], |r| {
                    Ok((0..n)
                        .map(|i| format!("{:?}", r.get::<_, rusqlite::types::Value>(i).unwrap()))
                        .collect::<Vec<_>>()
                        .join("|"))
                })
                .unwrap();
            for row in rows {
                out.push_str(&format!("{table}: {}\n", row.unwrap()));
            }
        }
        out
    }
}

impl Sql for Sqlite {
    fn batch(&self, stmts: Vec<Stmt>) -> LocalFuture<'_, Rows> {
        self.batches.set(self.batches.get() + 1);
        self.sent
            .borrow_mut()
            .extend(stmts.iter().map(|stmt| stmt.query.sql));
        if self.broken.get() {
            return Box::pin(std::future::ready(Err(StoreError::Backend(
                "D1_ERROR: no such table: project (SQL SELECT …)".into(),
            ))));
        }
        self.faults.batch(stmts)
    }
}

pub const TOKEN: &str = "test-token";
/// The origin the test server's own pages are served from.
pub const ORIGIN: &str = "https://handoff.example";

/// A server: config, database and a deterministic id source.
pub struct Server {
    pub db: Sqlite,
    pub config: Config,
    next_id: Cell<u32>,
    /// Where requests go and the Authorization header they carry, if any: `/test-token/mcp`
    /// and none, until a test says otherwise with `credential`.
    via: RefCell<(String, Option<String>)>,
    /// The server clock, UTC ms; starts at `NOW_MS`, tests move it.
    pub now: Cell<i64>,
    /// What fetching each client metadata document comes to (URL → answer), for OAuth.
    pub documents: RefCell<Vec<(String, Fetched)>>,
}

/// What came back over "HTTP".
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(&'static str, String)>,
    pub body: String,
}

impl Reply {
    pub fn json(&self) -> Json {
        serde_json::from_str(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {:?}", self.body))
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

impl Server {
    pub fn new() -> Server {
        Server::on(Sqlite::migrated())
    }

    /// A server over an existing database.
    pub fn on(db: Sqlite) -> Server {
        Server::configured(db, &[(AUTH_TOKEN_VAR, TOKEN)])
    }

    /// A server configured from these variables (ALLOWED_ORIGINS is https://app.example unless
    /// given), as the Worker reads its env.
    pub fn with_vars(vars: &[(&str, &str)]) -> Server {
        Server::configured(Sqlite::migrated(), vars)
    }

    fn configured(db: Sqlite, vars: &[(&str, &str)]) -> Server {
        let config = Config::from_lookup(|name| {
            let given = vars.iter().find(|(k, _)| *k == name).map(|(_, v)| *v);
            if name == ALLOWED_ORIGINS_VAR {
                return Some(given.unwrap_or("https://app.example").to_owned());
            }
            given.map(str::to_owned)
        });
        Server {
            db,
            config,
            next_id: Cell::new(0),
            via: RefCell::new((format!("/{TOKEN}/mcp"), None)),
            now: Cell::new(NOW_MS),
            documents: RefCell::new(Vec::new()),
        }
    }

    /// Sends the requests that follow to `path`, with this Authorization header if any.
    pub fn credential(&self, path: &str, authorization: Option<&str>) {
        *self.via.borrow_mut() = (path.to_owned(), authorization.map(str::to_owned));
    }

    /// The request context: this server's SQLite, `task-N` ids and the pinned clock.
    pub fn with_ctx<T>(&self, user_agent: Option<&str>, f: impl FnOnce(&Ctx<'_>) -> T) -> T {
        let new_id = || {
            self.next_id.set(self.next_id.get() + 1);
            format!("task-{}", self.next_id.get())
        };
        let now = || self.now.get();
        f(&Ctx {
            db: &self.db,
            ids: &new_id,
            clock: &now,
            caller: Caller::new(user_agent, Credential::token(Scope::All)),
            focus_stale_days: 7,
        })
    }

    /// Raw request to the MCP endpoint, planned like the Worker plans it (which also replaces
    /// the context's scope with the one the credential grants).
    pub fn request(&self, method: &str, headers: &[(&str, &str)], body: &[u8]) -> Reply {
        let (path, authorization) = self.via.borrow().clone();
        let mut all = headers.to_vec();
        if let Some(authorization) = &authorization {
            all.push(("Authorization", authorization));
        }
        self.request_to(method, &path, &all, body)
    }

    /// Raw request to any path, with exactly these headers.
    pub fn request_to(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> Reply {
        let headers = Headers::new(headers.iter().copied());
        let res = self.with_ctx(headers.get("user-agent"), |ctx| {
            handoff_mcp::sqlite::serve_mcp(&self.config, method, path, &headers, body, ctx)
        });
        Reply {
            status: res.status,
            headers: res.headers,
            body: res.body,
        }
    }

    /// Raw request to any path (a query after `?`), planned and served like the Worker does,
    /// as if the request URL's origin were `ORIGIN`.
    pub fn http(&self, method: &str, target: &str, headers: &[(&str, &str)], body: &[u8]) -> Reply {
        self.http_counted(method, target, headers, body).0
    }

    /// `http`, and whether the Worker would count the answer as a wrong token from the client's
    /// address (a denied credential, a wrong token pasted on the consent page). Client metadata
    /// documents come from `documents`.
    pub fn http_counted(
        &self,
        method: &str,
        target: &str,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> (Reply, bool) {
        let headers = Headers::new(headers.iter().copied());
        let (path, query) = match target.split_once('?') {
            Some((path, query)) => (path, Some(query)),
            None => (target, None),
        };
        let req = handoff_mcp::http::Request {
            method,
            path,
            query,
            headers: &headers,
            own_origin: ORIGIN,
            now_ms: self.now.get(),
        };
        let documents = self.documents.borrow();
        let documents: Vec<(&str, Fetched)> = documents
            .iter()
            .map(|(url, fetched)| (url.as_str(), fetched.clone()))
            .collect();
        let (res, counted) = self.with_ctx(headers.get("user-agent"), |ctx| {
            handoff_mcp::sqlite::serve_fetching(&req, &self.config, body, ctx, &documents)
        });
        let reply = Reply {
            status: res.status,
            headers: res.headers,
            body: res.body,
        };
        (reply, counted)
    }

    /// POST a JSON body with the given extra headers (Content-Type is added).
    pub fn post(&self, headers: &[(&str, &str)], body: &str) -> Reply {
        let mut all = vec![
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
        ];
        all.extend_from_slice(headers);
        self.request("POST", &all, body.as_bytes())
    }

    /// A well-formed 2026-07-28 request; returns the whole reply.
    pub fn stateless(&self, id: Json, method: &str, mut params: Json) -> Reply {
        params["_meta"] = meta();
        let name = params
            .get("name")
            .or_else(|| params.get("uri"))
            .and_then(Json::as_str)
            .map(str::to_owned);
        let body =
            json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string();
        let mut headers = vec![("MCP-Protocol-Version", STATELESS), ("Mcp-Method", method)];
        if let Some(name) = &name {
            headers.push(("Mcp-Name", name.as_str()));
        }
        self.post(&headers, &body)
    }

    /// A 2025-era request with the given MCP-Protocol-Version header.
    pub fn handshake(&self, version: &str, id: Json, method: &str, params: Json) -> Reply {
        let body =
            json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string();
        self.post(&[("MCP-Protocol-Version", version)], &body)
    }

    /// tools/call in the stateless era; returns the result object (panics on a JSON-RPC error).
    pub fn call(&self, tool: &str, arguments: Json) -> Json {
        let reply = self.stateless(
            json!(1),
            "tools/call",
            json!({"name": tool, "arguments": arguments}),
        );
        assert_eq!(reply.status, 200, "{}", reply.body);
        let body = reply.json();
        assert!(body.get("error").is_none(), "{body}");
        body["result"].clone()
    }

    /// The text of a successful tool call.
    pub fn ok(&self, tool: &str, arguments: Json) -> Json {
        let result = self.call(tool, arguments);
        assert_eq!(result["isError"], false, "{result}");
        result
    }

    /// The sentence of a failed tool call.
    pub fn err(&self, tool: &str, arguments: Json) -> String {
        let result = self.call(tool, arguments);
        assert_eq!(result["isError"], true, "{result}");
        assert!(result.get("structuredContent").is_none(), "{result}");
        result["content"][0]["text"].as_str().unwrap().to_owned()
    }

    /// The text of a resource, read in the stateless era (panics on a JSON-RPC error).
    pub fn read(&self, uri: &str) -> String {
        let reply = self.stateless(json!(1), "resources/read", json!({"uri": uri}));
        let body = reply.json();
        assert!(body.get("error").is_none(), "{body}");
        body["result"]["contents"][0]["text"]
            .as_str()
            .unwrap()
            .to_owned()
    }

    /// get_state's first text item: the contract text.
    pub fn state_text(&self, project_id: &str) -> String {
        self.state_texts(project_id).swap_remove(0)
    }

    /// get_state's text items: the contract text, then the reference block, and nothing else.
    pub fn state_texts(&self, project_id: &str) -> Vec<String> {
        let result = self.ok("get_state", json!({"project_id": project_id}));
        let texts = texts(&result);
        assert_eq!(texts.len(), 2, "{result}");
        texts
    }
}

/// The text items of a tool result, in order. A result must carry text items only: no
/// structuredContent (it would replace the text in front of the model) and no other type.
pub fn texts(result: &Json) -> Vec<String> {
    assert!(result.get("structuredContent").is_none(), "{result}");
    result["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|item| {
            assert_eq!(item["type"], "text", "{result}");
            item["text"].as_str().unwrap().to_owned()
        })
        .collect()
}

/// The one text item of a write's result.
pub fn text(result: &Json) -> String {
    let mut texts = texts(result);
    assert_eq!(texts.len(), 1, "{result}");
    texts.swap_remove(0)
}

pub fn meta() -> Json {
    json!({
        "io.modelcontextprotocol/protocolVersion": STATELESS,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "wire-test", "version": "0"},
    })
}

pub fn server_meta() -> Json {
    json!({"io.modelcontextprotocol/serverInfo": {"name": "handoff-mcp", "version": env!("CARGO_PKG_VERSION")}})
}
