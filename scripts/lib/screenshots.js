// The README's screenshots (scripts/screenshots): writes a demo project over MCP (raw JSON-RPC),
// then saves its page at a laptop's and a phone's size, light and dark, into OUT_DIR.
// Usage: node scripts/lib/screenshots.js http://127.0.0.1:PORT/<token> OUT_DIR
"use strict";
const { launch } = require("./chromium.js");
const path = require("node:path");

const [base, out] = process.argv.slice(2);
const project = "handoff-mcp";
let id = 0;
async function rpc(name, args) {
  const res = await fetch(`${base}/mcp`, {
    method: "POST",
    // The product token the history shows as who made each change.
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-11-25", "user-agent": "demo-chat/1.0" },
    body: JSON.stringify({ jsonrpc: "2.0", id: ++id, method: "tools/call", params: { name, arguments: args } }),
  });
  const body = await res.json();
  if (body.error || body.result.isError) throw new Error(`${name}: ${JSON.stringify(body)}`);
  return body.result.content.map((c) => c.text);
}
const call = (name, args) => rpc(name, { project_id: project, ...args });

async function main() {
  await call("set_north_star", { text: "Every chat picks up where the last one left off: one North Star, one focus, nothing lost" });
  await call("set_focus", { statement: "Ship the web view", why: "the page was written for developers", done_when: "the browser phase passes" });
  await call("set_focus", { statement: "A project page a person would rather look at", why: "people open it on a phone between meetings", done_when: "axe-core finds nothing in light and dark" });
  for (const [body, kind] of [
    ["Remove the SVG timeline", "cleanup"],
    ["Drop the old screenshot from docs/", "cleanup"],
    ["Note why the list orders by the newest change", "record"],
    ["日本語の長い行が折り返されることを確かめる", "record"],
  ])
    await call("add_task", { body, kind });
  // The first task completed with a link as its evidence (once: a second run finds it done).
  const line = (await call("get_state", {}))[1].split("\n").find((l) => l.includes("Remove the SVG timeline"));
  const task = line?.match(/task_id=(\S+)/)?.[1];
  if (task) await rpc("complete_task", { task_id: task, evidence: "https://github.com/example/handoff-mcp/pull/44" });

  const browser = await launch();
  try {
    for (const [device, viewport] of [["laptop", { width: 1280, height: 900 }], ["phone", { width: 375, height: 740 }]]) {
      for (const colorScheme of ["light", "dark"]) {
        const context = await browser.newContext({ viewport, colorScheme, deviceScaleFactor: 1 });
        const page = await context.newPage();
        await page.goto(`${base}/projects/${project}`);
        await page.screenshot({ path: path.join(out, `screenshot-project-${device}-${colorScheme}.png`) });
        await context.close();
      }
    }
  } finally {
    await browser.close();
  }
}
main().catch((e) => {
  console.error(e);
  process.exit(1);
});
