// mcp-remote (the stdio bridge Claude Desktop users run) as an OAuth client of a running
// handoff-mcp, with headless Chromium as the person's browser.
// Usage: node tests/oauth-clients/mcp_remote.js BASE_URL NAME OUT_DIR   (scripts/oauth-clients runs it)
// Environment: MCP_REMOTE_JS, PLAYWRIGHT_CORE, CHROMIUM_BIN, OAUTH_TEST_AUTH_TOKEN,
// OAUTH_TEST_PROJECT_TOKEN, OAUTH_TEST_WORK (a throwaway folder: mcp-remote's HOME and token cache).
//
// mcp-remote is started on `BASE_URL/mcp` with no credential and `--transport http-only`; it
// meets the 401 and does the whole dance itself: discovery, dynamic registration (its client
// name set with --static-oauth-client-metadata, so the test can find its row), PKCE, and a
// loopback callback server on a port given on its command line. It opens "the browser" through
// xdg-open, which runs $BROWSER: here a one-line script that writes the URL to a file, which
// Chromium then opens. In Chromium the test is the person: it presses Enter on a wrong token
// (the page again, with its sentence), pastes the project token, presses Continue and Allow (screenshots of both steps go to OUT_DIR), and lands on mcp-remote's callback
// page. Then JSON-RPC over mcp-remote's stdio: initialize, tools/list, set_north_star and
// get_state with no project_id; get_state again after the access token expired (mcp-remote must
// refresh by itself: its stored refresh token changes); Revoke pressed in Chromium on the
// connected clients page; and the next call must be refused (mcp-remote asks for the browser
// again, or answers an error). Prints one `ok - …` / `not ok - …` line per check; exits 1 on a
// failure. Shares no code with the server.
"use strict";
const { spawn } = require("node:child_process");
const fs = require("node:fs");
const net = require("node:net");
const path = require("node:path");
const { launch } = require("../../scripts/lib/chromium.js");

const base = process.argv[2].replace(/\/$/, "");
const name = process.argv[3];
const out = process.argv[4];
const work = process.env.OAUTH_TEST_WORK;
const authToken = process.env.OAUTH_TEST_AUTH_TOKEN;
const projectToken = process.env.OAUTH_TEST_PROJECT_TOKEN;
const label = "mcp-remote";

let failed = 0;
function check(what, ok, detail) {
  if (!ok) failed++;
  console.log(`${ok ? "ok" : "not ok"} - ${label}: ${what}${ok || detail === undefined ? "" : `: ${JSON.stringify(detail)}`}`);
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/// A TCP port on 127.0.0.1 that nothing listens on right now.
const freePort = () => new Promise((resolve, reject) => {
  const s = net.createServer().listen(0, "127.0.0.1", () => {
    const { port } = s.address();
    s.close(() => resolve(port));
  });
  s.on("error", reject);
});

/// mcp-remote over stdio: one JSON-RPC message per line each way.
class Bridge {
  constructor(args, env, stderrFile) {
    this.proc = spawn(process.execPath, args, { env, stdio: ["pipe", "pipe", fs.openSync(stderrFile, "a")] });
    this.waiting = new Map();
    this.exited = false;
    this.proc.on("exit", () => {
      this.exited = true;
      for (const resolve of this.waiting.values()) resolve({ exited: true });
    });
    let buffer = "";
    this.proc.stdout.on("data", (chunk) => {
      buffer += chunk;
      let nl;
      while ((nl = buffer.indexOf("\n")) >= 0) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        let message;
        try {
          message = JSON.parse(line);
        } catch {
          continue;
        }
        const resolve = this.waiting.get(message.id);
        if (resolve) {
          this.waiting.delete(message.id);
          resolve(message);
        }
      }
    });
    this.id = 0;
  }
  send(message) {
    if (!this.exited) this.proc.stdin.write(`${JSON.stringify(message)}\n`);
  }
  /// The reply to one request, `{ timedOut: true }` after `ms`, or `{ exited: true }`.
  call(method, params, ms = 30000) {
    const id = ++this.id;
    return new Promise((resolve) => {
      if (this.exited) return resolve({ exited: true });
      const timer = setTimeout(() => {
        this.waiting.delete(id);
        resolve({ timedOut: true });
      }, ms);
      this.waiting.set(id, (m) => {
        clearTimeout(timer);
        resolve(m);
      });
      this.send({ jsonrpc: "2.0", id, method, params });
    });
  }
  async stop() {
    if (this.exited) return;
    this.proc.kill("SIGTERM");
    for (let i = 0; i < 50 && !this.exited; i++) await sleep(100);
    if (!this.exited) this.proc.kill("SIGKILL");
  }
}

/// The URLs mcp-remote has asked the browser to open so far (written by the $BROWSER script).
const opened = (file) => (fs.existsSync(file) ? fs.readFileSync(file, "utf8").split("\n").filter(Boolean) : []);
async function waitFor(predicate, ms) {
  for (const end = Date.now() + ms; Date.now() < end; await sleep(100)) {
    const value = predicate();
    if (value) return value;
  }
  return predicate();
}

/// mcp-remote's stored tokens for this server (one tokens file in its config folder).
function storedTokens(configDir) {
  const dir = path.join(configDir, "mcp-remote-v1");
  const files = fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => f.endsWith("_tokens.json")) : [];
  return files.length === 1 ? JSON.parse(fs.readFileSync(path.join(dir, files[0]), "utf8")) : undefined;
}

const textOf = (reply) => (reply.result?.content || []).filter((c) => c.type === "text").map((c) => c.text).join("\n");

async function main() {
  fs.mkdirSync(out, { recursive: true });
  const home = path.join(work, "home");
  const configDir = path.join(work, "mcp-auth");
  const urlsFile = path.join(work, "browser-urls");
  const opener = path.join(work, "browser");
  fs.mkdirSync(home, { recursive: true });
  // What xdg-open runs as the browser: it only hands the URL to the test's Chromium. On macOS
  // mcp-remote's opener runs `open URL` from PATH instead, so there the same script is `open`.
  fs.writeFileSync(opener, `#!/bin/sh\nprintf '%s\\n' "$1" >>'${urlsFile}'\n`, { mode: 0o755 });
  let PATH = process.env.PATH;
  if (process.platform === "darwin") {
    fs.mkdirSync(path.join(work, "open"), { recursive: true });
    fs.writeFileSync(path.join(work, "open", "open"), fs.readFileSync(opener), { mode: 0o755 });
    PATH = `${path.join(work, "open")}:${PATH}`;
  }
  const callbackPort = await freePort();
  const env = { PATH, HOME: home, MCP_REMOTE_CONFIG_DIR: configDir, BROWSER: opener, LANG: "C.UTF-8" };
  const args = [process.env.MCP_REMOTE_JS, `${base}/mcp`, String(callbackPort), "--transport", "http-only",
    "--static-oauth-client-metadata", JSON.stringify({ client_name: name }), "--auth-timeout", "60"];
  // mcp-remote's own log (its stderr) stays with the artefacts.
  const bridgeLog = path.join(out, "mcp-remote-proxy.log");
  const refreshesLogged = () => (fs.readFileSync(bridgeLog, "utf8").match(/Refreshed the access token/g) || []).length;
  const bridge = new Bridge(args, env, bridgeLog);

  const browser = await launch();
  try {
    const context = await browser.newContext({ viewport: { width: 900, height: 800 } });
    context.setDefaultTimeout(15000);
    const page = await context.newPage();

    const [authUrl] = await waitFor(() => opened(urlsFile).length > 0 && opened(urlsFile), 30000) || [];
    const redirect = authUrl ? new URL(authUrl).searchParams.get("redirect_uri") : null;
    check(`met 401 with no credential, registered, and opened the browser (through ${process.platform === "darwin" ? "open" : "xdg-open and $BROWSER"}) on the authorization URL`,
      !!authUrl && authUrl.startsWith(`${base}/authorize?`) && [`http://localhost:${callbackPort}/oauth/callback`, `http://127.0.0.1:${callbackPort}/oauth/callback`].includes(redirect),
      { authUrl, exited: bridge.exited });
    if (!authUrl) return;

    // The person: step 1, paste the project token, Continue.
    const first = await page.goto(authUrl);
    const intro = await page.locator("h1").innerText();
    check("the consent page (step 1) answers 200 and names the client", first.status() === 200 && intro.includes(name), intro);
    // Enter in the token field, as a person submits too: a wrong token first, which must show
    // step 1 again with its sentence and the field empty (a pasted token is never written back).
    const wrongToken = "not-a-token-of-this-server";
    await page.fill("#token", wrongToken);
    const [wrong] = await Promise.all([page.waitForNavigation(), page.press("#token", "Enter")]);
    const wrongPage = await page.content();
    check("Enter in the token field with a wrong token: step 1 again (401) with its sentence, the field empty, the token nowhere in the page",
      wrong.status() === 401 && wrongPage.includes("That is not a token this server accepts.") &&
        (await page.inputValue("#token")) === "" && !wrongPage.includes(wrongToken),
      { status: wrong.status() });
    await page.fill("#token", projectToken);
    await page.screenshot({ path: path.join(out, "consent-step1.png"), fullPage: true });
    const [second] = await Promise.all([page.waitForNavigation(), page.click("button:has-text('Continue')")]);
    const project = await page.locator("input[name=project]").getAttribute("value").catch(() => null);
    const reach = await page.locator("input[name=reach]").getAttribute("value").catch(() => null);
    check("step 2 answers 200 with the project token's one project (hidden reach=project) and read-and-write checked",
      second.status() === 200 && reach === "project" && !!project && (await page.locator("input[name=access][value=write]").isChecked()), { status: second.status(), reach, project });
    await page.screenshot({ path: path.join(out, "consent-step2.png"), fullPage: true });
    // Allow: 303 to mcp-remote's loopback callback, whose page the browser then shows.
    const [landed] = await Promise.all([page.waitForNavigation({ url: /\/oauth\/callback/ }), page.click("button:has-text('Allow')")]);
    const callback = new URL(page.url());
    check("Allow lands on mcp-remote's callback with code, state and iss, and its page says authorization succeeded",
      landed.status() === 200 && !!callback.searchParams.get("code") && !!callback.searchParams.get("state") && callback.searchParams.get("iss") === new URL(base).origin &&
        /Authorization successful/i.test(await page.locator("body").innerText()), { status: landed.status(), url: page.url().replace(/code=[^&]+/, "code=…") });

    const init = await bridge.call("initialize", { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "oauth-clients", version: "0.0.1" } }, 60000);
    check("initialize through mcp-remote answered with the server's name", !!init.result?.serverInfo?.name, init);
    bridge.send({ jsonrpc: "2.0", method: "notifications/initialized" });
    const tokens = await waitFor(() => storedTokens(configDir), 5000);
    check("mcp-remote stored the tokens it got at /token (an access and a refresh token)", !!tokens?.access_token && !!tokens?.refresh_token);
    const tools = (await bridge.call("tools/list", {})).result?.tools || [];
    const getState = tools.find((t) => t.name === "get_state");
    check("tools/list through the grant shows get_state's project_id as optional", !!getState && !(getState.inputSchema.required || []).includes("project_id"), getState?.inputSchema);
    const wrote = await bridge.call("tools/call", { name: "set_north_star", arguments: { text: `Prove OAuth with ${name}` } });
    check("set_north_star with no project_id writes the project token's project", !!wrote.result && !wrote.result.isError && textOf(wrote).includes(`"${project}"`), wrote);
    let state = await bridge.call("tools/call", { name: "get_state", arguments: {} });
    check("get_state with no project_id: the text starts with '🎯 NORTH STAR:'", !!state.result && !state.result.isError && textOf(state).startsWith("🎯 NORTH STAR:"), textOf(state).slice(0, 120) || state);
    const history = await page.goto(`${base}/${authToken}/projects/${project}`);
    check(`the history says the write was by the client (by ${name} (OAuth))`, history.status() === 200 && (await page.locator("body").innerText()).includes(`by ${name} (OAuth)`));

    const lifetime = tokens?.expires_in;
    if (!lifetime || lifetime > 30) {
      check("the access token lives at most 30 s (start the server with OAUTH_ACCESS_SECONDS=5)", false, lifetime);
      return;
    }
    // mcp-remote refreshes whenever less than a minute of the access token is left, so with
    // tokens this short it refreshes before every request; its log says so each time.
    await sleep((lifetime + 1.5) * 1000);
    const logged = refreshesLogged();
    state = await bridge.call("tools/call", { name: "get_state", arguments: {} });
    check(`get_state after the access token's ${lifetime} s succeeds`, !!state.result && !state.result.isError && textOf(state).startsWith("🎯 NORTH STAR:"), state);
    const refreshed = storedTokens(configDir);
    check("mcp-remote refreshed by itself for that call (its log says so, its stored refresh token changed) and asked for no second sign-in",
      refreshesLogged() > logged && !!refreshed?.refresh_token && refreshed.refresh_token !== tokens.refresh_token && opened(urlsFile).length === 1,
      { refreshesLogged: refreshesLogged() - logged, urls: opened(urlsFile).length });

    // Revoke, as a person does: the connected clients page, the client's row, its button.
    await page.goto(`${base}/${authToken}/clients`);
    const row = page.locator("li", { hasText: name });
    const rows = await row.count();
    await page.screenshot({ path: path.join(out, "clients.png"), fullPage: true });
    let revoked = null;
    if (rows === 1) {
      const posted = page.waitForResponse((r) => r.request().method() === "POST", { timeout: 10000 });
      await Promise.all([page.waitForNavigation(), row.locator("button:has-text('Revoke')").click()]);
      revoked = await posted;
    }
    check("Revoke clicked on the client's one row of /<token>/clients (the post carries the page's Origin and gets 303)",
      rows === 1 && revoked?.status() === 303 && revoked?.request().headers().origin === new URL(base).origin, { rows, status: revoked?.status() });
    check("the grant is no longer listed", (await page.locator("li", { hasText: name }).count()) === 0);

    // Refused as soon as mcp-remote answers, or opens the browser again (then it waits for a
    // person who does not come, and its call would hang until --auth-timeout).
    const after = await Promise.race([
      bridge.call("tools/call", { name: "get_state", arguments: {} }, 20000),
      waitFor(() => opened(urlsFile).length > 1, 20000).then((again) => (again ? { browserOpenedAgain: true } : { timedOut: true })),
    ]);
    const again = opened(urlsFile).length;
    check("after the revocation the next call is refused: no result, and mcp-remote asks for the browser again or answers an error",
      !after.result && (again > 1 || !!after.error), { reply: after, browserOpenedAgain: again > 1 });
  } finally {
    await browser.close().catch(() => {});
    await bridge.stop();
  }
}

main()
  .catch((err) => check(`ran to the end (${err && err.stack ? err.stack.split("\n").slice(0, 3).join(" ") : err})`, false))
  .finally(() => process.exit(failed ? 1 : 0));
