// The D1 floor for scripts/bench: a Worker whose only work per request is one D1 query, so
// handoff-mcp's figures can be read as ratios to the price of one D1 round trip under the same
// `wrangler dev`. Not deployed, not bundled with anything, no package.json.
//
// POST / runs `SELECT 1`: the one-query floor. POST /statement runs the one statement its JSON
// body names ({"sql", "params"}), bound and read with raw() as handoff-mcp's D1 adapter does:
// the bench sends it the statement get_state or add_task sends, captured from the core, so a
// tool can also be compared with the same D1 work done by a Worker that does nothing else.
// POST /batch runs a JSON array of such statements as one D1 batch: the bench seeds the
// floor's database with the batches the tools ran (scripts/bench applies the migrations).
export default {
  async fetch(request, env) {
    const path = new URL(request.url).pathname;
    // Without D1, as handoff-mcp's /healthz: scripts/bench and scripts/profile wait on it.
    // scripts/coldstart never sends it: every request of its kinds (POST /<token>/mcp, GET
    // /<token>/sse, POST /<token>/sse/message, GET /<token>/projects/<id>) falls through to the
    // one query below, so each kind's first call has a floor.
    if (path === "/healthz") {
      return new Response("ok");
    }
    if (path === "/statement") {
      const { sql, params } = await request.json();
      return json(await env.DB.prepare(sql).bind(...params).raw());
    }
    if (path === "/batch") {
      const all = await request.json();
      await env.DB.batch(all.map(({ sql, params }) => env.DB.prepare(sql).bind(...params)));
      return json({ ok: true });
    }
    // The body is read and dropped, so the floor pays for the same upload as an MCP call.
    await request.arrayBuffer();
    return json(await env.DB.prepare("SELECT 1 AS one").first());
  },
};

function json(value) {
  return new Response(JSON.stringify(value), {
    headers: { "content-type": "application/json" },
  });
}
