// The official TypeScript MCP SDK as an OAuth client of a running handoff-mcp.
// Usage: node tests/oauth-clients/ts_sdk.js BASE_URL NAME   (scripts/oauth-clients runs it)
// Environment: MCP_SDK (the installed @modelcontextprotocol/sdk folder), OAUTH_TEST_AUTH_TOKEN.
//
// The SDK's StreamableHTTPClientTransport with an `authProvider` (its OAuthClientProvider
// interface, implemented here in memory) does what a real client does: it meets the 401,
// discovers the metadata, registers dynamically (a client_secret_basic client), sends the person
// to the consent page, exchanges the code with PKCE (`finishAuth`), and refreshes by itself when
// the server says the access token expired. Only the person is played: `redirectToAuthorization`
// walks the consent page with plain HTTP form posts carrying the issuer's Origin, pastes the full
// token and chooses one project of its own (reach=project). Then the grant is revoked on the
// connected clients page, and the client's next call must be refused. Prints one `ok - …` /
// `not ok - …` line per check; exits 1 on a failure. Shares no code with the server.
"use strict";
const crypto = require("node:crypto");
const path = require("node:path");
const sdk = process.env.MCP_SDK;
const { Client } = require(path.join(sdk, "dist/cjs/client/index.js"));
const { StreamableHTTPClientTransport } = require(path.join(sdk, "dist/cjs/client/streamableHttp.js"));
const { UnauthorizedError } = require(path.join(sdk, "dist/cjs/client/auth.js"));

const base = process.argv[2].replace(/\/$/, "");
const name = process.argv[3];
const authToken = process.env.OAUTH_TEST_AUTH_TOKEN;
const origin = new URL(base).origin;
const label = "typescript-sdk";
const project = `oc-ts-${name.split(" ").pop()}`;
// Never listened on: the person's redirect is read from the 303 itself.
const redirectUrl = "http://127.0.0.1:9/oauth/callback";

let failed = 0;
function check(what, ok, detail) {
  if (!ok) failed++;
  console.log(`${ok ? "ok" : "not ok"} - ${label}: ${what}${ok || detail === undefined ? "" : `: ${JSON.stringify(detail)}`}`);
}

/// One request, no redirect followed: { status, headers, body }.
async function request(url, init = {}) {
  const res = await fetch(url, { redirect: "manual", signal: AbortSignal.timeout(20000), ...init });
  return { status: res.status, headers: res.headers, body: await res.text() };
}
const postForm = (url, fields) =>
  request(url, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded", origin }, body: new URLSearchParams(fields).toString() });
const unescape = (s) => s.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, "&");

/// The fields a browser submits from the page's one form: hidden inputs, checked radios, the
/// first option of a select; and which options the select offers.
function formOf(page) {
  const fields = {};
  const options = [];
  for (const m of page.matchAll(/<input ([^>]*)>/g)) {
    const attr = (a) => (m[1].match(new RegExp(`(?:^| )${a}=(?:"([^"]*)"|([^ >]*))`)) || []).slice(1).find((v) => v !== undefined);
    const type = attr("type");
    if (type === "hidden" || (type === "radio" && / checked(?: |$)/.test(m[1]))) fields[attr("name")] = unescape(attr("value") ?? "");
  }
  const select = page.match(/<select name=project[^>]*>(.*?)<\/select>/s);
  if (select) for (const m of select[1].matchAll(/<option value="([^"]*)"/g)) options.push(unescape(m[1]));
  return { fields, options, textProject: /<input [^>]*name=project(?: |>)/.test(page) && !/type=hidden name=project/.test(page) };
}

/// The person: opens the authorization URL, pastes the full token, chooses this client's project.
async function approve(url) {
  const c = { url };
  const step1 = await request(url);
  c.step1 = step1.status;
  c.named = step1.body.includes(name);
  const step2 = await postForm(url, { token: authToken });
  c.step2 = step2.status;
  const form = formOf(step2.body);
  c.offered = form.options.includes(project) || form.textProject;
  const allow = await postForm(url, { ...form.fields, reach: "project", project, access: "write", decision: "allow" });
  c.allow = allow.status;
  c.location = allow.headers.get("location") || "";
  const q = new URL(c.location, base).searchParams;
  c.code = q.get("code");
  c.state = q.get("state");
  c.iss = q.get("iss");
  return c;
}

class Provider {
  constructor() {
    this.saved = [];
    this.info = undefined;
    this.verifier = undefined;
    this.consents = [];
    this.redirects = [];
  }
  get redirectUrl() { return redirectUrl; }
  get clientMetadata() {
    return { client_name: name, redirect_uris: [redirectUrl], grant_types: ["authorization_code", "refresh_token"], response_types: ["code"], token_endpoint_auth_method: "client_secret_basic" };
  }
  clientInformation() { return this.info; }
  saveClientInformation(info) { this.info = info; }
  state() {
    this.sentState = crypto.randomUUID();
    return this.sentState;
  }
  tokens() { return this.current; }
  saveTokens(tokens) {
    this.current = tokens;
    this.saved.push(tokens);
  }
  saveCodeVerifier(v) { this.verifier = v; }
  codeVerifier() { return this.verifier; }
  // What the SDK asks a provider to forget when the server refuses it (a refused refresh: the tokens).
  invalidateCredentials(scope) {
    if (scope === "all" || scope === "client") this.info = undefined;
    if (scope === "all" || scope === "tokens") this.current = undefined;
    if (scope === "all" || scope === "verifier") this.verifier = undefined;
  }
  async redirectToAuthorization(url) {
    this.redirects.push(String(url));
    // Once the grant is revoked the person does not come back: the flow stops at the redirect.
    if (this.consents.length === 0) this.consents.push(await approve(String(url)));
  }
}

async function rpcFull(method, params) {
  const res = await request(`${base}/mcp`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-11-25", authorization: `Bearer ${authToken}` },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  return { status: res.status, body: JSON.parse(res.body || "{}") };
}

async function grantRows() {
  const page = (await request(`${base}/${authToken}/clients`)).body;
  return page.split("<li>").slice(1).map((item) => {
    item = item.split("</li>")[0];
    return { text: unescape(item), action: (item.match(/action="([^"]*)"/) || [])[1] };
  });
}

const textOf = (result) => (result.content || []).filter((c) => c.type === "text").map((c) => c.text).join("\n");
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function main() {
  const made = await rpcFull("tools/call", { name: "set_north_star", arguments: { project_id: project, text: `made for ${name}` } });
  check(`set-up: project ${project} created with the full token`, made.status === 200 && !made.body.result?.isError, made.body);

  // Every response the SDK's fetch got: [method, path, status, grant_type of a /token post, client authentication].
  const seen = [];
  const countingFetch = async (url, init = {}) => {
    const res = await fetch(url, init);
    const u = new URL(String(url instanceof Request ? url.url : url));
    const grant = u.pathname === "/token" && init.body ? new URLSearchParams(String(init.body)).get("grant_type") : null;
    // How the client authenticated there: basic (an Authorization header), post (a secret in the form) or none.
    const how = /^Basic /.test(new Headers(init.headers).get("authorization") || "") ? "basic" : /(^|&)client_secret=/.test(String(init.body || "")) ? "post" : "none";
    seen.push([init.method || "GET", u.pathname, res.status, grant, how]);
    return res;
  };
  const count = (p, status, grant) => seen.filter(([, sp, ss, sg]) => sp === p && (status === undefined || ss === status) && (grant === undefined || sg === grant)).length;

  const provider = new Provider();
  const mcpUrl = new URL(`${base}/mcp`);
  const newTransport = () => new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider, fetch: countingFetch });
  let client = new Client({ name, version: "0.0.1" });
  let transport = newTransport();
  let first;
  try {
    await client.connect(transport);
    first = "connected without authorizing";
  } catch (err) {
    first = err;
  }
  check("connect met 401, discovered the server's metadata, registered, sent the person to the consent page, and stopped with UnauthorizedError",
    first instanceof UnauthorizedError && seen[0]?.[1] === "/mcp" && seen[0]?.[2] === 401 && count("/.well-known/oauth-authorization-server", 200) >= 1 && count("/register", 201) === 1 && provider.redirects.length === 1,
    { first: String(first), seen });
  check("registered as a client_secret_basic client with a secret", provider.info?.token_endpoint_auth_method === "client_secret_basic" && !!provider.info?.client_secret, provider.info);
  const c = provider.consents[0] || {};
  check("the consent page named the client, took the full token and offered its project (200, 200, 303 to the redirect URI with code, iss and the state the SDK sent)",
    c.named && c.offered && c.step1 === 200 && c.step2 === 200 && c.allow === 303 && c.location.startsWith(`${redirectUrl}?`) && !!(c.code && c.iss) && c.state === provider.sentState, c);

  await transport.finishAuth(c.code || "");
  check("finishAuth exchanged the code at /token (authorization_code, 200, the secret in HTTP Basic)", count("/token", 200, "authorization_code") === 1 && provider.saved.length === 1 && seen.filter(([, p]) => p === "/token").every((s) => s[4] === "basic"), seen);
  const lifetime = provider.saved[0]?.expires_in;
  await client.close().catch(() => {});

  client = new Client({ name, version: "0.0.1" });
  transport = newTransport();
  await client.connect(transport);
  const tools = (await client.listTools()).tools;
  const getState = tools.find((t) => t.name === "get_state");
  check("tools/list through the grant shows get_state's project_id as optional", !!getState && !(getState.inputSchema.required || []).includes("project_id"), getState?.inputSchema);
  const wrote = await client.callTool({ name: "set_north_star", arguments: { text: `Prove OAuth with ${name}` } });
  check("set_north_star with no project_id writes the chosen project", !wrote.isError && textOf(wrote).includes(`"${project}"`), textOf(wrote));
  let state = await client.callTool({ name: "get_state", arguments: {} });
  check("get_state with no project_id: the text starts with '🎯 NORTH STAR:'", !state.isError && textOf(state).startsWith("🎯 NORTH STAR:"), textOf(state).slice(0, 120));
  const page = (await request(`${base}/${authToken}/projects/${project}`)).body;
  check(`the history says the write was by the client (by ${name} (OAuth))`, page.includes(`by ${name} (OAuth)`));

  if (!lifetime || lifetime > 30) {
    check("the access token lives at most 30 s (start the server with OAUTH_ACCESS_SECONDS=5)", false, lifetime);
    return;
  }
  await sleep((lifetime + 1.5) * 1000);
  const mark = seen.length;
  state = await client.callTool({ name: "get_state", arguments: {} });
  const refreshed = seen.slice(mark);
  check(`get_state after the access token's ${lifetime} s: 401, the SDK refreshed by itself (refresh_token grant with HTTP Basic, 200), and the call succeeded`,
    !state.isError && textOf(state).startsWith("🎯 NORTH STAR:") && refreshed.some(([, p, s]) => p === "/mcp" && s === 401) && refreshed.some(([, p, s, g, how]) => p === "/token" && s === 200 && g === "refresh_token" && how === "basic"),
    refreshed);
  check("the refresh rotated the refresh token (the stored one changed)", provider.saved.length >= 2 && provider.saved.at(-1).refresh_token && provider.saved.at(-1).refresh_token !== provider.saved[0].refresh_token);

  const mine = (await grantRows()).filter((r) => r.text.includes(`<b>${name}</b>`) && r.action);
  const revoked = mine.length === 1 ? await postForm(`${base}/${authToken}/${mine[0].action}`, {}) : { status: null };
  check("Revoke pressed on the client's one row of /<token>/clients (303)", mine.length === 1 && revoked.status === 303, { rows: mine.length, status: revoked.status });
  check("the grant is no longer listed", !(await grantRows()).some((r) => r.text.includes(`<b>${name}</b>`)));
  const before = seen.length;
  let outcome;
  try {
    outcome = await client.callTool({ name: "get_state", arguments: {} }, undefined, { timeout: 30000 });
  } catch (err) {
    outcome = err;
  }
  const after = seen.slice(before);
  check("after the revocation the next call is refused (401 on /mcp or 400 on /token), the SDK sends the person to authorize again, and the call fails with UnauthorizedError",
    outcome instanceof UnauthorizedError && after.some(([, p, s]) => (p === "/mcp" && s === 401) || (p === "/token" && s === 400)) && provider.redirects.length === 2,
    { outcome: String(outcome), after, redirects: provider.redirects.length });
  await client.close().catch(() => {});
}

main()
  .catch((err) => check(`ran to the end (${err && err.stack ? err.stack.split("\n").slice(0, 3).join(" ") : err})`, false))
  .finally(() => process.exit(failed ? 1 : 0));
