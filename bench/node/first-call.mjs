// The Worker's first get_state in a fresh Node process (scripts/coldstart, "V8's lazy
// compilation of the first get_state"): the bundle as built, D1 played by node:sqlite over a
// database file, one request through the entry's `fetch`. Prints "=== first" and "=== second"
// around the first two requests, so the lines V8 prints under --trace-wasm-compilation-times
// can be told apart, then one JSON line of times in ms.
//
//   node --no-warnings --import ./register.mjs first-call.mjs BUILD_DIR DB_FILE [--seed]
//
// --seed sets up the project the bench seeds (a North Star, a focus, deferred tasks) through
// the Worker itself, which applies the migrations to an empty file first.
import { DatabaseSync } from "node:sqlite";

const [buildDir, dbFile, seed] = process.argv.slice(2);
const db = new DatabaseSync(dbFile);

// D1's binding, as far as the Worker uses it; the class names are what workers-rs checks.
class D1PreparedStatement {
  constructor(sql, params = []) {
    this.sql = sql;
    this.params = params;
  }
  bind(...params) {
    return new D1PreparedStatement(this.sql, params);
  }
  rows() {
    return db.prepare(this.sql).all(...this.params);
  }
  async raw() {
    return this.rows().map((row) => Object.values(row));
  }
}
class D1Database {
  prepare(sql) {
    return new D1PreparedStatement(sql);
  }
  async batch(statements) {
    db.exec("BEGIN");
    try {
      const results = statements.map((s) => ({ results: s.rows(), success: true, meta: {} }));
      db.exec("COMMIT");
      return results;
    } catch (e) {
      db.exec("ROLLBACK");
      throw e;
    }
  }
}

const token = "node-first-call-0000000000000000000000";
const env = {
  DB: new D1Database(),
  AUTH_TOKEN: token,
  FAILED_CREDENTIALS: { limit: async () => ({ success: true }) },
};
const ctx = { waitUntil() {}, passThroughOnException() {} };
const project = "bench-state";

function call(name, args) {
  const _meta = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": { name: "node-first-call", version: "1" },
  };
  const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args, _meta } });
  return new Request(`http://127.0.0.1/${token}/mcp`, {
    method: "POST",
    body,
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": "tools/call",
      "mcp-name": name,
    },
  });
}

async function send(request) {
  const response = await handler.fetch(request, env, ctx);
  const text = await response.text();
  if (response.status !== 200 || text.includes('"isError":true')) {
    throw new Error(`${response.status} ${text.slice(0, 300)}`);
  }
  return text;
}

// workerd's global; the bundle adds a listener.
globalThis.addEventListener ??= () => {};
const handler = (await import(`${buildDir}/index.js`)).default;

if (seed === "--seed") {
  await send(call("set_north_star", { project_id: project, text: "Keep every chat pointed at one goal" }));
  await send(call("set_focus", { project_id: project, statement: "The first call", why: "Most calls meet a fresh isolate" }));
  for (let n = 0; n < 8; n++) {
    await send(call("add_task", { project_id: project, kind: "cleanup", body: `Deferred task ${n}` }));
  }
  process.exit(0);
}

// Node makes its fetch classes on first use: made before the clock starts.
const first = call("get_state", { project_id: project });
const second = call("get_state", { project_id: project });
console.log("=== first");
let t = performance.now();
await send(first);
const firstMs = performance.now() - t;
console.log("=== second");
t = performance.now();
await send(second);
const secondMs = performance.now() - t;
console.log(JSON.stringify({ first_ms: firstMs, second_ms: secondMs }));
