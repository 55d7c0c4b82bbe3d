// The D1 floor for scripts/bench: a Worker whose only work per request is one trivial D1 query,
// so handoff-mcp's figures can be read as ratios to the price of one D1 round trip under the
// same `wrangler dev`. Not deployed, not bundled with anything, no package.json.
export default {
  async fetch(request, env) {
    // Without D1, as handoff-mcp's /healthz, so scripts/coldstart can see the isolate answer
    // before its first query.
    if (new URL(request.url).pathname === "/healthz") {
      return new Response("ok");
    }
    // The body is read and dropped, so the floor pays for the same upload as an MCP call.
    await request.arrayBuffer();
    const row = await env.DB.prepare("SELECT 1 AS one").first();
    return new Response(JSON.stringify(row), {
      headers: { "content-type": "application/json" },
    });
  },
};
