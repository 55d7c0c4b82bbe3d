// The consent page as a person sees it for Claude's two clients, in headless Chromium: claude.ai's
// connector and Claude Code (on an ephemeral loopback port), each its first step (the token
// pasted) and its second (what the client may reach). Allow is not pressed: for the connector it
// would send the browser to claude.ai, and nothing here leaves loopback (every other request is
// aborted before it is made). claude.py allows and exchanges over plain HTTP instead.
// Usage: node tests/claude-oauth/screens.js BASE_URL OUT_DIR   (scripts/claude-oauth runs it)
// Environment: PLAYWRIGHT_CORE, CHROMIUM_BIN, OAUTH_TEST_AUTH_TOKEN.
// Prints one `ok - …` / `not ok - …` line per check; exits 1 on a failure.
"use strict";
const crypto = require("node:crypto");
const path = require("node:path");
const { launch } = require("../../scripts/lib/chromium.js");

const base = process.argv[2].replace(/\/$/, "");
const out = process.argv[3];
const token = process.env.OAUTH_TEST_AUTH_TOKEN;
let failed = 0;
function check(what, ok, detail) {
  if (!ok) failed++;
  console.log(`${ok ? "ok" : "not ok"} - ${what}${ok || detail === undefined ? "" : `: ${JSON.stringify(detail)}`}`);
}

function authorizationUrl(clientId, redirectUri) {
  const challenge = crypto.createHash("sha256").update(crypto.randomBytes(32).toString("base64url")).digest("base64url");
  const query = new URLSearchParams({
    response_type: "code", client_id: clientId, redirect_uri: redirectUri, code_challenge: challenge,
    code_challenge_method: "S256", state: crypto.randomBytes(8).toString("hex"), resource: `${base}/mcp`,
  });
  return `${base}/authorize?${query}`;
}

const clients = [
  ["claude-connector", "Claude", authorizationUrl("https://claude.ai/oauth/mcp-oauth-client-metadata", "https://claude.ai/api/mcp/auth_callback"),
    "Claude's connector (claude.ai, Claude Desktop and the Claude mobile apps)", "claude.ai"],
  ["claude-code", "Claude Code", authorizationUrl("https://claude.ai/oauth/claude-code-client-metadata", "http://localhost:53682/callback"),
    "Claude Code, the command-line tool", "localhost"],
];

(async () => {
  const browser = await launch();
  try {
    const context = await browser.newContext({ viewport: { width: 900, height: 900 } });
    context.setDefaultTimeout(15000);
    const origin = new URL(base).origin;
    let elsewhere = 0;
    await context.route("**/*", (route) => {
      if (new URL(route.request().url()).origin === origin) return route.continue();
      elsewhere++;
      return route.abort();
    });
    const page = await context.newPage();
    for (const [file, name, url, what, host] of clients) {
      const first = await page.goto(url);
      const text = await page.locator("body").innerText();
      check(`screens: ${name}'s consent page (step 1) names it as ${what} and the host the browser goes back to, ${host}`,
        first.status() === 200 && text.includes(`Connect ${name} to handoff-mcp`) && text.includes(what) && text.includes(`goes back to ${host}`),
        { status: first.status(), text: text.slice(0, 300) });
      await page.fill("#token", token);
      await page.screenshot({ path: path.join(out, `${file}-step1.png`), fullPage: true });
      const [second] = await Promise.all([page.waitForNavigation(), page.click("button:has-text('Continue')")]);
      check(`screens: ${name}'s step 2 (what it may reach) answers 200 with Allow and Deny`,
        second.status() === 200 && (await page.locator("button[value=allow]").count()) === 1);
      await page.screenshot({ path: path.join(out, `${file}-step2.png`), fullPage: true });
    }
    check("screens: the pages asked the browser for nothing but the server itself", elsewhere === 0, { elsewhere });
  } finally {
    await browser.close();
  }
  process.exit(failed ? 1 : 0);
})().catch((error) => {
  console.log(`not ok - screens: ${error && error.message}`);
  process.exit(1);
});
