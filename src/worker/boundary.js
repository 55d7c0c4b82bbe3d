// The shell's crossings between wasm and the runtime that happen on every request, each done
// here in one call where doing it from Rust through wasm-bindgen would be one call per property,
// header, parameter and result (BENCHMARKS.md has the profile that counted them). Only data moves
// here: nothing in this file reads a header's meaning, builds SQL or decides a reply; the core
// does all of that. `src/worker/mod.rs`, `d1.rs` and `drive.rs` declare these imports.

// The request's method, URL and headers as one text: "method\nurl\nname\nvalue\n…". The Fetch
// standard forbids CR, LF and NUL in a method, a serialized URL and any header name or value, so
// the line breaks delimit exactly. Names come lower-cased and repeated headers joined with ", ",
// as iterating Headers gives them.
export function requestHead(request) {
  const parts = [request.method, request.url];
  for (const [name, value] of request.headers) {
    parts.push(name, value);
  }
  return parts.join("\n");
}

// The reply: its status, its headers as "name\nvalue\n…" (the shell refuses a line break in
// either before it gets here), and its body, a view into wasm memory that is copied before any
// further wasm code can move it. The headers go to Response as a list of pairs, so the runtime
// builds one Headers object, not a second one to copy from.
export function newResponse(status, head, body) {
  const lines = head.length === 0 ? [] : head.split("\n");
  const headers = [];
  for (let i = 0; i + 1 < lines.length; i += 2) {
    headers.push([lines[i], lines[i + 1]]);
  }
  return new Response(body.slice(), { status, headers });
}

// The isolate's prepared statements, by the index `prepare` returned: preparing hands the SQL
// text over, hundreds of bytes, while `bind` returns a new statement and leaves this one as it was.
const prepared = [];

export function prepare(db, sql) {
  prepared.push(db.prepare(sql));
  return prepared.length - 1;
}

// Runs statements as one round trip and resolves to their rows as one JSON text, one array per
// statement: `spec` is the JSON text `[[index, param, …], …]` of prepared statements and their
// parameters (numbers, strings, null, which JSON carries exactly). One statement goes alone, since
// it needs no batch wrapper; D1 runs a batch atomically. A statement that returns no rows gives [].
export function run(db, spec) {
  const statements = JSON.parse(spec).map(([index, ...params]) => prepared[index].bind(...params));
  const results = statements.length === 1 ? statements[0].all().then((one) => [one]) : db.batch(statements);
  return results.then((all) => JSON.stringify(all.map((result) => result.results ?? [])));
}

// Drives a request's Rust future (src/worker/drive.rs): settles `promise`, hands its outcome to
// `step(id, value, ok)`, and does the same with each promise `step` returns, until it returns the
// Response. One call into wasm per settled promise, where wasm-bindgen's executor made two
// closures, a microtask and several calls for each.
export function chain(promise, id, step) {
  const next = (value, ok) => {
    const result = step(id, value, ok);
    return result instanceof Response ? result : result.then((v) => next(v, true), (e) => next(e, false));
  };
  return promise.then((v) => next(v, true), (e) => next(e, false));
}
