// The human view in a real browser: headless Chromium (Debian's) driven by playwright-core against
// a running handoff-mcp. Usage: node tests/browser/check.js http://127.0.0.1:PORT/<token> OUT_DIR
// (scripts/browser sets PLAYWRIGHT_CORE and CHROMIUM_BIN). It opens the list and a project, submits
// every form and checks each change through MCP get_state (raw JSON-RPC); it presses Enter in each
// text field (a textarea keeps the line break, a task row's evidence submits that row alone) and
// saves forms unchanged (no history event); it stores hostile strings
// and checks that no element or dialog comes of them; it checks the security headers and that
// posts from other origins are refused; it shares a project as its owner does on its page (a
// read-only token made, selected whole by a click and copied, used, listed, revoked and then
// refused; a label too long and a wrong id refused; the project deleted); it iframes the MCP
// Apps card in a test host that speaks the extension's postMessage protocol. It measures the
// layout a person sees at 1280×900, 375×740 and 320 px (the North Star in view and large, the
// focus card in view on a laptop, no sideways scrolling) and runs axe-core (AXE_CORE, injected
// with the page's CSP bypassed in a context of its own) on the list, project, search, consent,
// Connected clients and sharing pages in light and dark.
// Screenshots go to OUT_DIR. Prints one line per check and `browser: N passed, M failed`; exits 1
// on a failure. Shares no code with the server.
"use strict";
const { launch } = require("../../scripts/lib/chromium.js");
const fs = require("node:fs");
const path = require("node:path");

const base = process.argv[2];
const out = process.argv[3];
const origin = new URL(base).origin;
const suffix = Math.random().toString(16).slice(2, 10);
const project = `web-${suffix}`;
const hostile = `web-${suffix}-x`;
const CARD = "ui://handoff-mcp/state-card.html";
const HEADERS = {
  "content-type": "text/html; charset=utf-8",
  "content-security-policy":
    "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
  "referrer-policy": "same-origin",
  "cache-control": "no-store",
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
};
const XSS = {
  northStar: "<img src=x onerror=alert(1)>",
  focus: '"><script>alert(2)</script>',
  why: "</textarea><iframe srcdoc=x></iframe>",
  task: "<svg onload=alert(3)>",
};

let passed = 0;
let failed = 0;
function check(name, ok, detail) {
  if (ok) passed++;
  else failed++;
  console.log(`${ok ? "ok" : "FAIL"} - ${name}${ok || detail === undefined ? "" : `: ${detail}`}`);
}

let rpcId = 0;
/// A JSON-RPC request to `url` (the /mcp under the page's token unless told), with `bearer` in
/// Authorization when given: its HTTP response.
const mcpPost = (method, params, url = `${base}/mcp`, bearer = undefined) =>
  fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2025-11-25",
      ...(bearer && { authorization: `Bearer ${bearer}` }),
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: ++rpcId, method, params }),
    signal: AbortSignal.timeout(10000),
  });
async function rpc(method, params, ...at) {
  const body = await (await mcpPost(method, params, ...at)).json();
  if (body.error) throw new Error(`${method}: ${JSON.stringify(body.error)}`);
  return body.result;
}
const call = (name, args, ...at) => rpc("tools/call", { name, arguments: args }, ...at);
const stateTexts = async (id) => (await call("get_state", { project_id: id })).content.map((c) => c.text);
const history = async (id) => (await rpc("resources/read", { uri: `handoff://projects/${id}/history` })).contents[0].text;

/// Submits a form of the current page by doing `act` to the element `selector` (a click, or a
/// key such as Enter), and returns [the POST's response, the page's final response]; then opens
/// every disclosure of the page it lands on, unless `open` is false.
async function submitBy(page, selector, act = (s) => page.click(s), open = true) {
  const posted = page.waitForResponse((r) => r.request().method() === "POST", { timeout: 10000 });
  const landed = page.waitForNavigation({ timeout: 10000 });
  await Promise.all([posted, landed, act(selector)]);
  if (open) await openAll(page);
  return [await posted, await landed];
}

/// Opens every disclosure of the page, as a person would to reach the forms behind them.
const openAll = (page) => page.evaluate(() => document.querySelectorAll("details").forEach((d) => (d.open = true)));

/// The layout a person sees at the page's viewport: whether the North Star (the h1) and the
/// focus card are wholly in view without scrolling, the h1's size over the body text's, and
/// whether anything is wider than the screen.
const layout = (page) =>
  page.evaluate(() => {
    const inView = (e) => !!e && e.getBoundingClientRect().bottom <= innerHeight && e.getBoundingClientRect().top >= 0;
    const size = (e) => parseFloat(getComputedStyle(e).fontSize);
    const h1 = document.querySelector("h1");
    return {
      northStar: inView(h1),
      ratio: size(h1) / size(document.body),
      focus: inView(document.querySelector("section.c")),
      sideways: document.documentElement.scrollWidth > innerWidth,
      width: document.documentElement.scrollWidth,
    };
  });

/// axe-core's source, read at the first audit.
let axeSource;
/// axe-core's WCAG 2.0 and 2.1 A and AA rules on `url` in light and dark, in `page` (its CSP
/// bypassed so the rules can be injected); `prepare` reaches the page when a GET cannot (a
/// form's answer). The page is reached once and its colour scheme switched under it, which
/// Chromium applies at once; each check also asks that the dark page's background is not the
/// light one's, so a scheme that did not switch fails.
async function axe(page, name, url, prepare) {
  axeSource ??= fs.readFileSync(process.env.AXE_CORE, "utf8");
  await page.emulateMedia({ colorScheme: "light" });
  if (prepare) await prepare(page);
  else await page.goto(url);
  await openAll(page);
  await page.addScriptTag({ content: axeSource });
  const backgrounds = [];
  for (const scheme of ["light", "dark"]) {
    await page.emulateMedia({ colorScheme: scheme });
    backgrounds.push(await page.evaluate(() => getComputedStyle(document.body).backgroundColor));
    const result = await page.evaluate(() => axe.run(document, { runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"] } }));
    const found = result.violations.map((v) => `${v.id} (${v.nodes.length}): ${v.nodes.slice(0, 2).map((n) => n.target.join(" ")).join(", ")}`);
    console.log(`axe ${name} ${scheme}: ${result.violations.length} violations, ${result.passes.length} rules passed`);
    const switched = backgrounds.length === 1 || backgrounds[0] !== backgrounds[1];
    check(`axe-core finds no WCAG 2.1 A/AA violation on the ${name} page (${scheme})`, result.violations.length === 0 && switched, found.concat(switched ? [] : [`the background stayed ${backgrounds[1]}`]).join("; "));
  }
}

/// Posts a form of `fields` to `action` from a page of another site and from an opaque (data:)
/// one, as a person would by its button, and checks that each post gets 403.
async function foreignPosts(page, what, action, fields) {
  const inputs = Object.entries(fields).map(([name, value]) => `<input name=${name} value="${value}">`);
  const forged = `<form method=post action="${action}">${inputs.join("")}<button>go</button></form>`;
  await page.route("http://evil.example/", (r) => r.fulfill({ contentType: "text/html", body: forged }));
  for (const [where, url] of [["another origin", "http://evil.example/"], ["an opaque origin (Origin: null)", `data:text/html,${encodeURIComponent(forged)}`]]) {
    await page.goto(url);
    const [foreign] = await Promise.all([page.waitForResponse((r) => r.request().method() === "POST"), page.click("button")]);
    const origin = await foreign.request().headerValue("origin");
    check(`${what} from ${where} gets 403 (Origin ${origin})`, foreign.status() === 403, foreign.status());
  }
  await page.unroute("http://evil.example/");
}

/// Submits the form of `tool` on the current page by its button.
const submit = (page, tool) => submitBy(page, `form[data-tool=${tool}] button`);

const VERIFIER = "browser-check-verifier-0123456789abcdefghijklmnop";
/// An authorization request a registered loopback client makes: the URL of its consent page.
async function authorizeUrl() {
  const registered = await fetch(`${origin}/register`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ client_name: "Browser check", redirect_uris: ["http://127.0.0.1:9/callback"], token_endpoint_auth_method: "none" }),
  });
  const { client_id } = await registered.json();
  const query = new URLSearchParams({
    response_type: "code",
    client_id,
    redirect_uri: "http://127.0.0.1:9/callback",
    code_challenge: require("node:crypto").createHash("sha256").update(VERIFIER).digest("base64url"),
    code_challenge_method: "S256",
    state: "s",
    resource: `${origin}/mcp`,
  });
  return `${origin}/authorize?${query}`;
}

async function main() {
  fs.mkdirSync(out, { recursive: true });
  await call("set_north_star", { project_id: project, text: "Ship the human view 🎯 of handoff-mcp" });
  await call("set_focus", { project_id: project, statement: "本丸: the project page", why: "people glance at it" });
  await call("add_task", { project_id: project, body: "Remove the debug logging 🧹", kind: "cleanup" });
  await call("add_task", { project_id: project, body: "Note the D1 batch limits", kind: "record" });
  await call("add_task", { project_id: project, body: "Drop the old fixtures", kind: "cleanup" });

  const browser = await launch();
  try {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    context.setDefaultTimeout(10000);
    // axe-core's page, in a context whose CSP lets the rules in; the pages' own CSP stays on in
    // `context`. One page serves every audit, which spares a new page's cost each time.
    const auditContext = await browser.newContext({ viewport: { width: 1280, height: 900 }, bypassCSP: true });
    auditContext.setDefaultTimeout(10000);
    const audit = await auditContext.newPage();
    const page = await context.newPage();
    let dialogs = 0;
    page.on("dialog", (d) => {
      dialogs++;
      d.dismiss().catch(() => {});
    });

    // The list, and its headers exactly.
    const list = await page.goto(`${base}/`);
    const headers = list.headers();
    check("the list answers 200", list.status() === 200, list.status());
    for (const [name, value] of Object.entries(HEADERS)) check(`header ${name}: ${value}`, headers[name] === value, headers[name]);
    const row = page.locator("li", { has: page.locator(`a[href="./projects/${project}"]`) });
    const rowText = await row.innerText();
    check("the list shows the project's North Star, focus, age, open count and last change", rowText.includes("🎯 Ship the human view 🎯 of handoff-mcp") && rowText.includes("▶ 本丸: the project page") && /focus set (just now|\d+ min ago)/.test(rowText) && /3 deferred open · last change (just now|\d+ min ago)/.test(rowText), rowText);
    check("the list leads with the newest change", (await page.locator("li h2 a").first().getAttribute("href")) === `./projects/${project}`);
    check("the page holds no token", !(await page.content()).includes(new URL(base).pathname.slice(1)));

    // The project page, reached by its link, shows what the model sees.
    await Promise.all([page.waitForNavigation(), row.locator("a").click()]);
    check("the link leads to the project page", page.url() === `${base}/projects/${project}`, page.url());
    const model = await stateTexts(project);
    const pres = await page.$$eval("pre", (els) => els.map((e) => e.textContent));
    // The reference block's opening line break joins the two items for clients that glue them;
    // the page shows each in its own block.
    const shown = [model[0], model[1].replace(/^\n/, "")];
    check("the page shows get_state's two texts as the model gets them", model[1].startsWith("\nReference data") && JSON.stringify(pres.slice(0, 2)) === JSON.stringify(shown), JSON.stringify(pres));
    const events = (await history(project)).split("\n").length - 1;
    const entries = await page.$$eval("ol > li", (els) => els.map((e) => e.innerText));
    check("the history is a list with an entry per event, each with its time and who made it", entries.length === events && entries.every((e) => / UTC · .+ · by /.test(e)), JSON.stringify(entries));
    for (const [w, h] of [[1280, 900], [375, 740]]) {
      await page.setViewportSize({ width: w, height: h });
      const seen = await layout(page);
      check(`at ${w}×${h} the North Star is in view without scrolling, at least 1.5× the body text`, seen.northStar && seen.ratio >= 1.5, JSON.stringify(seen));
      if (w === 1280) check(`at ${w}×${h} the focus card is in view`, seen.focus, JSON.stringify(seen));
      else check(`at ${w} px nothing scrolls sideways`, !seen.sideways, JSON.stringify(seen));
      await page.screenshot({ path: path.join(out, `project-${w}.png`) });
    }
    await page.setViewportSize({ width: 1280, height: 900 });
    await openAll(page);
    const labels = await page.$$eval("input:not([type=hidden]), textarea, select", (els) => els.filter((e) => !e.labels || e.labels.length === 0).map((e) => e.name));
    check("every field has a real <label>", labels.length === 0, labels.join(","));
    await page.screenshot({ path: path.join(out, "project-desktop.png"), fullPage: true });
    // A radio button's target is the label around it: a press anywhere on it chooses it.
    const small = await page.$$eval("button, summary, input:not([type=hidden]), select, textarea, nav a", (els) =>
      els
        .map((e) => (e.type === "radio" && e.parentElement.tagName === "LABEL" ? e.parentElement : e))
        .map((e) => [e.tagName, e.getBoundingClientRect()])
        .filter(([, r]) => r.height < 44 || (r.width < 44 && r.width > 0))
        .map(([t, r]) => `${t} ${r.width}×${r.height}`),
    );
    check("every control is at least 44×44 px", small.length === 0, small.join(", "));

    // Each form is its tool. A textarea keeps the line breaks typed into it: Enter there is a
    // line break and posts nothing.
    const posts = [];
    page.on("request", (r) => {
      if (r.method() === "POST") posts.push(r.postData());
    });
    /// Types `lines` into the empty field `selector`, pressing Enter between them, and checks
    /// that no Enter posted anything and the field holds the lines.
    async function typeLines(selector, lines) {
      const sent = posts.length;
      await page.fill(selector, "");
      await page.focus(selector);
      for (const [i, line] of lines.entries()) {
        if (i) await page.keyboard.press("Enter");
        if (line) await page.keyboard.type(line);
      }
      const value = await page.inputValue(selector);
      check(`Enter in ${selector} is a line break and posts nothing`, posts.length === sent && value === lines.join("\n"), `${posts.length - sent} posts, ${JSON.stringify(value)}`);
    }
    /// get_state's text with every run of white space as one space, as a line of it shows a
    /// multi-line text.
    const flat = (text) => text.replace(/\s+/g, " ");

    const northStar = ["Ship the human view of handoff-mcp,", "tested in a browser"];
    await typeLines("#ns", northStar);
    let [posted, landed] = await submit(page, "set_north_star");
    const sent = await posted.request().allHeaders();
    check("a form posts with our own Origin under referrer policy same-origin", sent.origin === origin && sent["sec-fetch-site"] === "same-origin", `origin=${sent.origin} sec-fetch-site=${sent["sec-fetch-site"]}`);
    check("set_north_star: 303 back to the page", posted.status() === 303 && landed.status() === 200 && page.url() === `${base}/projects/${project}`, `${posted.status()} ${page.url()}`);
    check("set_north_star: a line break is sent as CR LF", posted.request().postData().includes("%2C%0D%0Atested"), posted.request().postData());
    check("set_north_star: get_state shows it", flat((await stateTexts(project))[0]).startsWith(`🎯 NORTH STAR: ${northStar.join(" ")} `));
    check("set_north_star: the page shows it again with its line break", (await page.inputValue("#ns")) === northStar.join("\n"), await page.inputValue("#ns"));

    const focus = { "#fs": ["Write the browser test", "for every form"], "#fw": ["the pages must work for real", "", "with JavaScript off"], "#fd": ["scripts/test passes", ""] };
    for (const [selector, lines] of Object.entries(focus)) await typeLines(selector, lines);
    [posted] = await submit(page, "set_focus");
    const afterFocus = (await stateTexts(project)).map(flat);
    check("set_focus: get_state shows the focus and its exit criterion", posted.status() === 303 && afterFocus[0].includes("▶ 本丸（今やる1つ）: Write the browser test for every form（理由: the pages must work for real with JavaScript off）") && afterFocus[1].includes("scripts/test passes"), afterFocus.join("\n"));
    for (const [selector, lines] of Object.entries(focus)) {
      const value = await page.inputValue(selector);
      check(`set_focus: ${selector} comes back as typed, line breaks included`, value === lines.join("\n"), JSON.stringify(value));
    }

    // Saving a form unchanged is no change: the history gains no event.
    const unchanged = await history(project);
    for (const tool of ["set_north_star", "set_focus"]) {
      [posted] = await submit(page, tool);
      check(`${tool}: saved unchanged, 303 and no event in the history`, posted.status() === 303 && (await history(project)) === unchanged, await history(project));
    }

    const task = ["Screenshot for the README 📸", "at 375 px too"];
    await typeLines("#tb", task);
    await page.selectOption("#tk", "record");
    [posted] = await submit(page, "add_task");
    check("add_task: get_state lists the new task", posted.status() === 303 && flat((await stateTexts(project))[0]).includes(`[record] ${task.join(" ")}`));
    await call("add_task", { project_id: project, body: task.join("\n"), kind: "record" });
    const screenshots = (await stateTexts(project))[1].split("\n").filter((l) => l.includes("Screenshot"));
    check("add_task: the same body over MCP is the same task", screenshots.length === 1, screenshots.join("\n"));

    // Each task row is its own form: Enter in a row's evidence field completes that row's task
    // and no other, with that row's evidence, whatever is typed in the other rows.
    const taskId = async (body) => (await stateTexts(project))[1].split("\n").find((l) => l.includes(body)).match(/task_id=(\S+)/)[1];
    const taskIdOf = {};
    for (const body of ["Remove the debug logging", "Note the D1 batch limits", "Drop the old fixtures"]) taskIdOf[body] = await taskId(body);
    const rowForm = (body) => `form[data-tool=complete_task]:has(input[name=task_id][value="${taskIdOf[body]}"])`;
    for (const [body, evidence] of [["Note the D1 batch limits", "pressed Enter in its row"], ["Drop the old fixtures", "pressed Enter in the next row"]]) {
      await page.fill(`${rowForm("Remove the debug logging")} input[name=evidence]`, "typed in another row");
      await page.fill(`${rowForm(body)} input[name=evidence]`, evidence);
      [posted] = await submitBy(page, `${rowForm(body)} input[name=evidence]`, (s) => page.press(s, "Enter"));
      const form = new URLSearchParams(posted.request().postData());
      const after = (await stateTexts(project))[0];
      check(`complete_task: Enter in the evidence of "${body}" posts that row alone`, JSON.stringify([...form]) === JSON.stringify([["task_id", taskIdOf[body]], ["evidence", evidence]]), posted.request().postData());
      check(`complete_task: Enter completes "${body}" and no other task`, posted.status() === 303 && !after.includes(body) && after.includes("Remove the debug logging"), after);
    }
    await page.fill(`${rowForm("Remove the debug logging")} input[name=evidence]`, "checked in the browser");
    [posted] = await submitBy(page, `${rowForm("Remove the debug logging")} button`);
    const afterComplete = (await stateTexts(project))[0];
    check("complete_task: its button completes its own task", posted.status() === 303 && !afterComplete.includes("Remove the debug logging") && afterComplete.includes("Screenshot for the README") && (await page.locator("li:has(form[data-tool=complete_task])", { hasText: "Remove the debug logging" }).count()) === 0, afterComplete);
    const log = await history(project);
    check(
      "the history attributes the form writes to web, each completion with its row's evidence",
      log.includes("cleanup task completed: Remove the debug logging 🧹 — evidence: checked in the browser — by owner (web)") &&
        log.includes("record task completed: Note the D1 batch limits — evidence: pressed Enter in its row — by owner (web)") &&
        log.includes("cleanup task completed: Drop the old fixtures — evidence: pressed Enter in the next row — by owner (web)") &&
        log.includes("focus set: Write the browser test") &&
        log.split("\n").filter((l) => l.endsWith("— by owner (web)")).length === 5,
      log,
    );
    check("the history shows the focus changes as entries", (await page.locator("ol > li", { hasText: "Focus set" }).count()) === 2);

    // The search box: its page shows the search tool's own text, for this project and for all.
    await page.fill("#sq", "debug logging");
    await Promise.all([page.waitForNavigation(), page.click("form[data-tool=search] button")]);
    const searched = await page.locator("#records").textContent();
    const tool = (await call("search", { query: "debug logging", project_id: project })).content[0].text;
    check("the project's search box leads to its search page", page.url() === `${base}/projects/${project}/search?query=debug+logging&kind=`, page.url());
    check("the search page shows the search tool's text", searched === tool && tool.includes("cleanup task completed: Remove the debug logging 🧹 — evidence: checked in the browser — by owner (web)"), `${searched}\n---\n${tool}`);
    await page.goto(`${base}/`);
    await page.fill("#sq", "Screenshot for the README");
    await page.selectOption("#sk", "record");
    await Promise.all([page.waitForNavigation(), page.click("form[data-tool=search] button")]);
    const everywhere = (await call("search", { query: "Screenshot for the README", kind: "record" })).content[0].text;
    check("the list's search box searches every project", (await page.locator("#records").textContent()) === everywhere && everywhere.includes(`  ${project}  record task open, task_id=`), everywhere);

    // The download: the project's export document, as the project page links it.
    await page.goto(`${base}/projects/${project}`);
    await openAll(page);
    const [download] = await Promise.all([page.waitForEvent("download"), page.click("a[href$='export.json']")]);
    const exported = JSON.parse(fs.readFileSync(await download.path(), "utf8"));
    check("Export (JSON) downloads the project's document", download.suggestedFilename() === `${project}.handoff.json` && exported.format === "handoff-mcp project" && exported.version === 1 && exported.project.id === project && exported.tasks.length === 4, `${download.suggestedFilename()} ${JSON.stringify(exported).slice(0, 200)}`);
    check("the document holds the full history with clients", exported.history.some((e) => e.what === "completed" && e.value === "Remove the debug logging 🧹" && e.note === "checked in the browser" && e.client === "owner (web)") && exported.history.length === (await history(project)).split("\n").length - 1, JSON.stringify(exported.history).slice(0, 300));
    const markdown = await (await fetch(`${base}/projects/${project}/export.md`)).text();
    check("Export (Markdown) reads the same project", markdown.startsWith(`# ${project}\n`) && markdown.includes("\n- record: Screenshot for the README 📸 at 375 px too (task_id "), markdown.slice(0, 300));
    await page.goto(`${base}/projects/${project}`);
    await openAll(page);

    // A refusal shows the tool's own sentence and writes nothing.
    const before = await stateTexts(project);
    await page.fill("#fs", "   ");
    [posted] = await submit(page, "set_focus");
    const refused = await page.locator("#refused").innerText();
    check("a refused form shows the tool's sentence (422)", posted.status() === 422 && refused.startsWith("Invalid arguments for set_focus: statement is empty;"), `${posted.status()} ${refused}`);
    check("a refused form writes nothing", JSON.stringify(await stateTexts(project)) === JSON.stringify(before));
    await page.goto(`${base}/projects/${project}`);
    await openAll(page);

    // Phone width.
    await page.setViewportSize({ width: 375, height: 812 });
    await page.screenshot({ path: path.join(out, "project-phone.png"), fullPage: true });
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth);
    check("readable at 375 px: nothing wider than the screen", overflow <= 375, overflow);
    await page.setViewportSize({ width: 320, height: 640 });
    const narrow = await layout(page);
    check("at 320 px nothing scrolls sideways, the forms open", !narrow.sideways, JSON.stringify(narrow));
    await page.setViewportSize({ width: 375, height: 812 });
    await page.goto(`${base}/`);
    await page.screenshot({ path: path.join(out, "list-phone.png"), fullPage: true });
    for (const width of [375, 320]) {
      await page.setViewportSize({ width, height: 640 });
      const list = await layout(page);
      check(`the list at ${width} px: nothing scrolls sideways`, !list.sideways, JSON.stringify(list));
    }
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.screenshot({ path: path.join(out, "list-desktop.png"), fullPage: true });

    // Hostile stored strings stay characters: no element, no handler, no dialog.
    await call("set_north_star", { project_id: hostile, text: XSS.northStar });
    await call("set_focus", { project_id: hostile, statement: XSS.focus, why: XSS.why });
    await call("add_task", { project_id: hostile, body: XSS.task, kind: "cleanup" });
    for (const url of [`${base}/`, `${base}/projects/${hostile}`]) {
      await page.goto(url);
      await page.waitForTimeout(300);
      const found = await page.evaluate(() => ({
        elements: document.querySelectorAll("img, script, iframe, object, embed").length,
        handlers: [...document.querySelectorAll("*")].filter((e) => [...e.attributes].some((a) => a.name.startsWith("on"))).length,
        text: document.body.innerText,
      }));
      const shown = [XSS.northStar, XSS.focus].concat(url.endsWith(hostile) ? [XSS.why, XSS.task] : []);
      check(`hostile strings on ${url.replace(base, "")} make no element or handler`, found.elements === 0 && found.handlers === 0, JSON.stringify(found).slice(0, 200));
      check(`hostile strings on ${url.replace(base, "")} show as their characters`, shown.every((s) => found.text.includes(s)), shown.filter((s) => !found.text.includes(s)).join(" | "));
    }
    const textarea = await page.inputValue("#fw");
    check("a hostile value refills its field verbatim", textarea === XSS.why, textarea);


    // Posts from other origins: a page on another site, and an opaque (data:) one.
    const beforeForeign = await stateTexts(project);
    await foreignPosts(page, "a post", `${base}/projects/${project}/set_north_star`, { text: "forged" });
    check("posts from other origins wrote nothing", JSON.stringify(await stateTexts(project)) === JSON.stringify(beforeForeign));

    await sharing(context, page, audit);

    // The MCP Apps card in a test host that speaks the extension's protocol.
    const tools = (await rpc("tools/list", {})).tools;
    const uri = tools.find((t) => t.name === "get_state")._meta?.ui?.resourceUri;
    check("get_state names its card (_meta.ui.resourceUri)", uri === CARD, uri);
    const resource = (await rpc("resources/read", { uri: CARD })).contents[0];
    check("the card is text/html;profile=mcp-app", resource.mimeType === "text/html;profile=mcp-app", resource.mimeType);
    const host = fs.readFileSync(path.join(__dirname, "host.html"), "utf8");
    await page.route("http://host.test/", (r) =>
      r.fulfill({ contentType: "text/html", body: host, headers: { "content-security-policy": "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; media-src 'self' data:; connect-src 'none'; object-src 'none'" } }),
    );
    for (const [id, expected] of [
      [project, { ns: "🎯 Ship the human view of handoff-mcp, tested in a browser", tasks: 1 }],
      [hostile, { ns: `🎯 ${XSS.northStar}`, tasks: 1 }],
    ]) {
      const args = { project_id: id };
      const result = await call("get_state", args);
      await page.goto("http://host.test/");
      const messages = await page.evaluate(([html, result, args]) => window.run(html, result, args), [resource.text, result, args]);
      const frame = page.frames().find((f) => f !== page.mainFrame());
      const card = await frame.evaluate(() => ({
        ns: document.getElementById("ns")?.textContent,
        fo: document.getElementById("fo")?.textContent,
        tasks: document.querySelectorAll("li").length,
        elements: document.querySelectorAll("img, iframe, object, embed").length,
        scripts: document.scripts.length,
        project: document.getElementById("p").textContent,
      }));
      const methods = messages.map((m) => m.method || `response ${m.id}`);
      const init = messages[0];
      check(`card ${id}: ui/initialize first (protocol 2026-01-26), initialized, then size-changed`, init.method === "ui/initialize" && init.params.protocolVersion === "2026-01-26" && typeof init.params.appInfo?.name === "string" && methods[1] === "ui/notifications/initialized" && methods.includes("ui/notifications/size-changed"), methods.join(","));
      check(`card ${id}: drawn from the tool result's text`, card.ns === expected.ns && card.fo.startsWith("▶ ") && card.tasks === expected.tasks && card.project === id, JSON.stringify(card));
      check(`card ${id}: no element from stored strings (only the card's own script)`, card.elements === 0 && card.scripts === 1, JSON.stringify(card));
      check(`card ${id}: answers ui/resource-teardown`, messages.some((m) => m.id === 99 && m.result && !m.method), methods.join(","));
      if (id === project) await page.screenshot({ path: path.join(out, "card.png") });
    }
    const leading = "\n\nStarts with two line breaks";
    await call("set_north_star", { project_id: hostile, text: leading });
    await page.goto(`${base}/projects/${hostile}`);
    const ns = await page.inputValue("#ns");
    check("a North Star's own leading line breaks survive in its textarea", ns === leading, JSON.stringify(ns));
    check("no dialog was opened", dialogs === 0, dialogs);

    // axe-core on every kind of page, in light and dark, in a context whose CSP lets it in.
    try {
      await axe(audit, "list", `${base}/`);
      await axe(audit, "project", `${base}/projects/${project}`);
      await axe(audit, "search results", `${base}/projects/${project}/search?query=debug&kind=`);
      await axe(audit, "Connected clients", `${base}/clients`);
      // The pages a person is refused on, each with its way to the troubleshooting guide.
      for (const [name, url, link] of [
        ["refused (no such project)", `${base}/projects/no-such-project`, "/help"],
        ["This connection cannot be made", `${origin}/authorize?client_id=hmc.forged&response_type=code`, "/help#this-connection-cannot-be-made"],
      ]) {
        await axe(audit, name, url);
        const links = await audit.locator(`a[href="${link}"]`).count();
        check(`the ${name} page links to Troubleshooting (${link})`, links === 1, links);
        for (const [width, scheme] of [[1280, "light"], [375, "dark"]]) {
          await audit.setViewportSize({ width, height: 800 });
          await audit.emulateMedia({ colorScheme: scheme });
          await audit.screenshot({ path: path.join(out, `${name.split(" ")[0].toLowerCase()}-${width}-${scheme}.png`), fullPage: true });
        }
        await audit.setViewportSize({ width: 1280, height: 800 });
      }
      const consent = await authorizeUrl();
      await axe(audit, "consent", consent);
      await axe(audit, "consent (second step)", consent, async (p) => {
        await p.goto(consent);
        await p.fill("#token", new URL(base).pathname.slice(1));
        await Promise.all([p.waitForNavigation(), p.click("button")]);
      });
      // A client connected through that consent, so the clients page has a row and its Revoke.
      const connect = await auditContext.newPage();
      await connect.route("http://127.0.0.1:9/**", (r) => r.abort());
      await connect.goto(consent);
      await connect.fill("#token", new URL(base).pathname.slice(1));
      await Promise.all([connect.waitForNavigation(), connect.click("button")]);
      const [callback] = await Promise.all([connect.waitForRequest((r) => r.url().startsWith("http://127.0.0.1:9/")), connect.click("button[value=allow]")]);
      const code = new URL(callback.url()).searchParams.get("code");
      const exchanged = await fetch(`${origin}/token`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ grant_type: "authorization_code", code, redirect_uri: "http://127.0.0.1:9/callback", client_id: new URL(consent).searchParams.get("client_id"), code_verifier: VERIFIER, resource: `${origin}/mcp` }),
      });
      check("a client connects through the consent page", exchanged.status === 200, `${exchanged.status} ${await exchanged.text()}`);
      await connect.close();
      await axe(audit, "Connected clients (one connected)", `${base}/clients`);
    } finally {
      await auditContext.close();
    }
  } finally {
    await browser.close();
  }
}

/// Sharing a project and taking it back, as its owner does on the project's page (issue 49),
/// reached at loopback's other name (localhost for 127.0.0.1) so that the share block's origin
/// is the one the browser reached and not PUBLIC_URL: a read-only token made with a label of
/// Japanese and an apostrophe, shown once and selected whole by a click (user-select:all, no
/// script), copied with Ctrl+C; the token at work on state.txt and refused a write over MCP;
/// listed, revoked and then refused; a label too long and a wrong id refused with their
/// sentences; posts from other origins refused; the project deleted. axe-core on each page.
async function sharing(context, page, audit) {
  const shared = `web-${suffix}-share`;
  const gone = `web-${suffix}-gone`;
  const label = "Aiko's ノートパソコン";
  const long = "長い名前".repeat(10) + "!";
  for (const id of [shared, gone]) {
    await call("set_north_star", { project_id: id, text: "Share the project 🤝" });
    await call("set_focus", { project_id: id, statement: "本丸: a teammate connects", why: "two people, one state" });
  }
  const reached = new URL(origin);
  if (reached.hostname === "127.0.0.1") reached.hostname = "localhost";
  const home = base.replace(origin, reached.origin);
  const at = `${home}/projects/${shared}`;
  const rows = page.locator("form[data-tool=revoke-token]");
  /// The live tokens the owner's page lists, by their rows' text.
  const listed = async () => (await page.locator("#share li").allTextContents()).join("\n");
  /// Whether the page's sharing disclosure is open.
  const shareOpen = () => page.evaluate(() => document.querySelector("details#share")?.open);
  const selected = () => page.evaluate(() => getSelection().toString());
  /// The refusal's sentence the page shows, if any.
  const refusal = () => page.evaluate(() => document.getElementById("refused")?.innerText ?? "");
  /// What the label field holds, if the page has it.
  const typed = () => page.evaluate(() => document.getElementById("tl")?.value);
  /// Fills the label field of `p` past 40 characters, as a client that does not keep the field's
  /// maxlength would send it.
  const overLimit = async (p) => {
    await p.$eval("#tl", (e) => e.removeAttribute("maxlength"));
    await p.fill("#tl", long);
  };
  /// axe-core on the page that `tool`'s form on project `id`'s page answers with, once `fill`
  /// has filled it (in the audit page, so a form of its own).
  const audited = (name, id, tool, fill) =>
    axe(audit, name, null, async (p) => {
      await p.goto(`${base}/projects/${id}`);
      await openAll(p);
      await fill(p);
      await submit(p, tool);
    });
  /// `shoot` at 375×740 in the dark scheme; then the laptop in light again.
  const phoneDark = async (shoot) => {
    await page.emulateMedia({ colorScheme: "dark" });
    await page.setViewportSize({ width: 375, height: 740 });
    await shoot();
    await page.emulateMedia({ colorScheme: "light" });
    await page.setViewportSize({ width: 1280, height: 900 });
  };

  // Made on the page: the disclosure opened by its summary, the label typed, Read only chosen.
  await page.goto(at);
  check("the sharing disclosure is closed until its summary is pressed", !(await shareOpen()));
  await page.click("summary:text-is('Share this project, or delete it')");
  check("its summary opens it", await shareOpen());
  await page.fill("#tl", "");
  await page.type("#tl", label);
  await page.click("label:text-is('Read only')");
  let [posted] = await submitBy(page, "button:text-is('Make a token')", undefined, false);
  check("Make a token answers 200 with a page of its own", posted.status() === 200 && page.url() === `${at}/tokens` && (await page.locator("h1").innerText()) === `A token for ${label}`, `${posted.status()} ${page.url()}`);
  const token = (await page.locator("#token").textContent()) ?? "";
  const shown = await page.evaluate((t) => ({
    own: [...document.querySelectorAll("body *")].filter((e) => e.textContent.trim() === t).map((e) => e.id),
    outside: document.body.innerText.replace(document.getElementById("share").innerText, "").split(t).length - 1,
  }), token);
  check("the token is shown once, as an element of its own (#token), and elsewhere only inside the share block", /^hpt\.[\w.-]{40,}$/.test(token) && JSON.stringify(shown) === JSON.stringify({ own: ["token"], outside: 1 }), `${token} ${JSON.stringify(shown)}`);

  // Copying with no script: a click (user-select:all) or a triple-click selects the whole token.
  await page.click("#token");
  check("a click on the token selects the whole token and nothing else", (await selected()) === token, JSON.stringify(await selected()));
  await page.click("h1");
  await page.click("#token", { clickCount: 3 });
  check("a triple-click on the token selects the whole token and nothing else", (await selected()) === token, JSON.stringify(await selected()));
  try {
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: reached.origin });
    await page.keyboard.press("Control+C");
    const copied = await page.evaluate(() => navigator.clipboard.readText());
    check("Ctrl+C then copies the token, exactly", copied === token, JSON.stringify(copied));
  } finally {
    await context.clearPermissions();
  }
  const block = await page.locator("#share").textContent();
  const needed = [
    `handoff-mcp: project ${shared}, read only, for ${label}.\n`,
    `  export HANDOFF_URL=${reached.origin}\n  export HANDOFF_TOKEN=${token}\n`,
    ` ${reached.origin}/mcp --header "Authorization: Bearer ${token}"\n`,
    `\n  ${reached.origin}/${token}/mcp\n`,
  ];
  check(`the share block holds the token in its variable line, its header and the connector URL, at ${reached.origin} as the browser reached it`, needed.every((line) => block.includes(line)), needed.filter((line) => !block.includes(line)).join(" | "));
  await page.screenshot({ path: path.join(out, "share-desktop.png"), fullPage: true });
  for (const width of [375, 320]) {
    await page.setViewportSize({ width, height: 740 });
    const seen = await layout(page);
    const fits = await page.$$eval("pre.tok", (els) => els.every((e) => e.scrollWidth <= e.clientWidth));
    check(`the new token's page at ${width} px: nothing scrolls sideways, the token wraps inside its box`, !seen.sideways && fits, JSON.stringify({ ...seen, fits }));
  }
  // At 320 px each command of the share block still starts its own line whole: its indent and
  // its first words on one visual line (a wrap at any space would leave `export` alone, or the
  // indent on a line of its own).
  const starts = ["  export HANDOFF_URL=", "  export HANDOFF_TOKEN=", `  ${reached.origin}/`];
  const split = await page.$eval("#share", (pre, starts) => {
    const node = pre.firstChild;
    return starts.filter((start) => {
      const at = node.textContent.indexOf(`\n${start}`) + 1;
      const range = document.createRange();
      range.setStart(node, at);
      range.setEnd(node, at + start.length);
      return at === 0 || new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size !== 1;
    });
  }, starts);
  check("at 320 px each command of the share block starts its line whole (its indent and first words together)", split.length === 0, JSON.stringify(split));
  await page.click("h1");
  await page.click("#token");
  check("at 320 px, wrapped, a click still selects exactly the token", (await selected()) === token, JSON.stringify(await selected()));
  await phoneDark(() => page.screenshot({ path: path.join(out, "share-phone-dark.png"), fullPage: true }));
  await audited("new token", shared, "share", (p) => p.fill("#tl", "axe-core"));

  // The token at work, as the teammate's client would use it.
  const state = await fetch(`${reached.origin}/state.txt`, { headers: { authorization: `Bearer ${token}` } });
  const owners = await (await fetch(`${base}/projects/${shared}/state.txt`)).text();
  const body = await state.text();
  check("the token reads its project's state.txt (Authorization: Bearer)", state.status === 200 && state.headers.get("x-handoff-project") === shared && body === owners && body.startsWith("🎯 NORTH STAR: Share the project 🤝\n"), `${state.status} ${body.slice(0, 120)}`);
  const connector = `${reached.origin}/${token}/mcp`;
  const initialize = ["initialize", { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "browser-check", version: "1" } }];
  check("the connector URL initializes", (await mcpPost(...initialize, connector)).status === 200);
  const before = await stateTexts(shared);
  const write = await call("set_focus", { statement: "written with a read-only token" }, `${reached.origin}/mcp`, token);
  check("a read-only token's write over MCP is refused and writes nothing", write.isError === true && write.content[0].text.includes("read-only") && JSON.stringify(await stateTexts(shared)) === JSON.stringify(before), JSON.stringify(write));

  // Listed on the owner's page, by its label; revoked by its own button.
  await Promise.all([page.waitForNavigation(), page.click(`nav a:text-is('← Project ${shared}')`)]);
  await page.click("#share summary");
  const row = page.locator("#share li", { hasText: label });
  const rowText = (await row.count()) === 1 ? await row.innerText() : "";
  check("the project's page lists the token by its label, read only, made just now, last used", rowText.startsWith(`${label} read only\n`) && /\nmade just now · last used (just now|\d+ min ago)\nRevoke$/.test(rowText), JSON.stringify(rowText));
  await page.locator("#share").screenshot({ path: path.join(out, "sharing-desktop.png") });
  await phoneDark(() => page.locator("#share").screenshot({ path: path.join(out, "sharing-phone-dark.png") }));
  await axe(audit, "project (sharing open, tokens listed)", `${base}/projects/${shared}`);
  const count = await rows.count();
  [posted] = await submitBy(page, `#share li:has-text("${label}") button:text-is('Revoke')`, undefined, false);
  check("Revoke: 303 back to the project's tokens, the section open, the token gone from the list, the other kept", posted.status() === 303 && page.url() === `${at}#tokens` && (await shareOpen()) && (await row.count()) === 0 && (await rows.count()) === count - 1 && (await listed()).includes("axe-core"), `${posted.status()} ${page.url()} open=${await shareOpen()} ${await listed()}`);
  const after = await fetch(`${reached.origin}/state.txt`, { headers: { authorization: `Bearer ${token}` } });
  check("revoked, the token is refused on state.txt (401)", after.status === 401, after.status);
  const refused = [(await mcpPost(...initialize, `${reached.origin}/mcp`, token)).status, (await mcpPost(...initialize, connector)).status];
  check("revoked, the token is refused on MCP initialize (401), as a header and in the connector URL", JSON.stringify(refused) === "[401,401]", refused);

  // Refusals: the page again with the sentence, the disclosure open, what was typed kept.
  // (Revoke left the section open: its summary is pressed only if it is closed.)
  if (!(await shareOpen())) await page.click("#share summary");
  await page.fill("#tl", "");
  await page.type("#tl", long);
  check("the label field takes no more than 40 characters as typed", (await typed()) === long.slice(0, 40), await typed());
  await overLimit(page);
  [posted] = await submitBy(page, "button:text-is('Make a token')", undefined, false);
  const sentence = await refusal();
  check("a label of 41 characters: 422, the page again with its sentence, sharing open, the label kept", posted.status() === 422 && sentence.startsWith("A label is one line of at most 40 characters (this one: 41,") && sentence.endsWith("Nothing was made.") && (await shareOpen()) && (await typed()) === long, `${posted.status()} ${sentence} ${await typed()}`);
  check("a refused label makes no token", (await rows.count()) === count - 1, await listed());
  await audited("refused label", shared, "share", overLimit);
  await page.fill("#dc", project);
  [posted] = await submitBy(page, "button:text-is('Delete project')", undefined, false);
  const wrong = await refusal();
  check("a wrong id typed to delete: 422, the page again with its sentence, sharing open", posted.status() === 422 && wrong === `To delete project "${shared}", type its id, ${shared}, to confirm (this said "${project}"). Nothing was deleted.` && (await shareOpen()), `${posted.status()} ${wrong}`);
  check("a wrong id deletes nothing", JSON.stringify(await stateTexts(shared)) === JSON.stringify(before));
  await audited("refused delete", shared, "delete", (p) => p.fill("#dc", "not-this-one"));
  await foreignPosts(page, "a share post", `${base}/projects/${shared}/tokens`, { label: "forged", access: "write" });
  await foreignPosts(page, "a delete post", `${base}/projects/${shared}/delete`, { confirm: shared });
  await page.goto(at);
  check("posts from other origins made no token and deleted nothing", (await rows.count()) === count - 1 && !(await listed()).includes("forged") && JSON.stringify(await stateTexts(shared)) === JSON.stringify(before), await listed());

  // Deleted with its id typed: a page says so, the list and get_state no longer know it.
  await page.click("#share summary");
  await page.fill("#dc", shared);
  [posted] = await submitBy(page, "button:text-is('Delete project')");
  check("the id typed: 200, the project is deleted", posted.status() === 200 && (await page.locator("h1").innerText()) === `Project ${shared} is deleted`, `${posted.status()} ${await page.locator("h1").innerText()}`);
  await page.goto(`${home}/`);
  check("the list no longer shows it", (await page.locator(`a[href="./projects/${shared}"]`).count()) === 0 && (await page.locator(`a[href="./projects/${project}"]`).count()) === 1);
  const asked = await call("get_state", { project_id: shared });
  check("get_state says there is no such project", asked.isError === true && asked.content[0].text.startsWith(`No project "${shared}" yet`), JSON.stringify(asked).slice(0, 200));
  await audited("deleted", gone, "delete", (p) => p.fill("#dc", gone));
}

const deadline = setTimeout(() => {
  console.log("FAIL - the browser phase took more than 90 s");
  console.log(`browser: ${passed} passed, ${failed + 1} failed`);
  process.exit(1);
}, 90000);
main()
  .catch((e) => check("the browser phase ran to the end", false, e && e.stack ? e.stack.split("\n").slice(0, 3).join(" ") : String(e)))
  .finally(() => {
    clearTimeout(deadline);
    console.log(`browser: ${passed} passed, ${failed} failed`);
    process.exit(failed ? 1 : 0);
  });
