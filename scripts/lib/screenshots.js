// The README's screenshots (scripts/screenshots): writes a demo project over MCP (raw JSON-RPC),
// then saves its page at a laptop's and a phone's size, light and dark, into OUT_DIR.
// Usage: node scripts/lib/screenshots.js http://127.0.0.1:PORT/<token> OUT_DIR
"use strict";
const { chromium } = require(process.env.PLAYWRIGHT_CORE);
const path = require("node:path");

const [base, out] = process.argv.slice(2);
const project = "handoff-mcp";
let id = 0;
async function call(name, args) {
  const res = await fetch(`${base}/mcp`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-11-25" },
    body: JSON.stringify({ jsonrpc: "2.0", id: ++id, method: "tools/call", params: { name, arguments: { project_id: project, ...args } } }),
  });
  const body = await res.json();
  if (body.error || body.result.isError) throw new Error(`${name}: ${JSON.stringify(body)}`);
  return body.result.content[0].text;
}

async function main() {
  await call("set_north_star", { text: "Every chat picks up where the last one left off: one North Star, one focus, nothing lost" });
  await call("set_focus", { statement: "Ship the web view", why: "the page was written for developers", done_when: "the browser phase passes" });
  await call("set_focus", { statement: "A project page a person would rather look at", why: "people open it on a phone between meetings", done_when: "axe-core finds nothing in light and dark" });
  const add = async (body, kind) => (await call("add_task", { body, kind })).match(/task_id=(\S+)/)?.[1];
  const done = await add("Remove the SVG timeline", "cleanup");
  await add("Drop the old screenshot from docs/", "cleanup");
  await add("Note why the list orders by the newest change", "record");
  await add("日本語の長い行が折り返されることを確かめる", "record");
  const state = await (await fetch(`${base}/mcp`, { method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-11-25" }, body: JSON.stringify({ jsonrpc: "2.0", id: ++id, method: "tools/call", params: { name: "get_state", arguments: { project_id: project } } }) })).json();
  const task = state.result.content[1].text.split("\n").find((l) => l.includes("Remove the SVG timeline"))?.match(/task_id=(\S+)/)?.[1] || done;
  if (task) await call("complete_task", { task_id: task, evidence: "https://github.com/example/handoff-mcp/pull/44" });

  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_BIN, headless: true, args: ["--no-sandbox", "--disable-gpu"] });
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
