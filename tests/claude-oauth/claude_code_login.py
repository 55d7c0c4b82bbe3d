"""The real Claude Code CLI's own OAuth flow, `claude mcp login`, against a running handoff-mcp.

Usage: python3 tests/claude-oauth/claude_code_login.py BASE_URL   (scripts/claude-oauth runs it)
Environment: CLAUDE_BIN (the pinned Claude Code binary), OAUTH_TEST_AUTH_TOKEN (a token of every
project), CLAUDE_OAUTH_HOME (a throwaway folder: Claude Code's HOME and config).

Claude Code sees only a throwaway HOME and config, no updater and no telemetry (as
scripts/claude-code runs it). `claude mcp add --transport http` names `BASE_URL/mcp`; `claude mcp
login` needs a terminal, so it runs under `script` (a pseudo-terminal), and opens "the browser"
through `$BROWSER`, here a one-line script that writes the URL to a file. The person is
tests/oauth-clients/consent.py (the token pasted, every project allowed, plain HTTP form posts);
the browser's landing on Claude Code's loopback listener is one GET to the Location. Claude Code
then exchanges the code itself; `claude mcp get` must say it is connected (it calls the server
with the token it stored). Revoke on the Connected clients page ends it: once its access token
has expired, `claude mcp get` says it needs authentication.

Prints one `ok - …` / `not ok - …` line per check; exits 1 on a failure. Only loopback is
connected to. Shares no code with the server.
"""

import json
import os
import subprocess
import sys
import time
import urllib.parse

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "oauth-clients"))
import consent  # noqa: E402

CLAUDE_CODE = "https://claude.ai/oauth/claude-code-client-metadata"
base = sys.argv[1].rstrip("/")
token = os.environ["OAUTH_TEST_AUTH_TOKEN"]
claude = os.environ["CLAUDE_BIN"]
home = os.environ["CLAUDE_OAUTH_HOME"]
results = []


def check(what, ok, detail=None):
    results.append(bool(ok))
    line = f"{'ok' if ok else 'not ok'} - claude mcp login: {what}"
    if not ok and detail is not None:
        line += f": {str(detail)[:400]}"
    print(line, flush=True)


os.makedirs(home, exist_ok=True)
opened = os.path.join(home, "opened-urls")
browser = os.path.join(home, "browser.sh")
with open(browser, "w") as f:
    f.write(f'#!/bin/sh\necho "$1" >> "{opened}"\n')
os.chmod(browser, 0o755)
env = {"PATH": os.environ["PATH"], "HOME": home, "CLAUDE_CONFIG_DIR": os.path.join(home, ".claude"),
       "LANG": "C.UTF-8", "DISABLE_AUTOUPDATER": "1", "DISABLE_TELEMETRY": "1",
       "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "BROWSER": browser}


def claude_run(*args):
    r = subprocess.run([claude, *args], env=env, cwd=home, capture_output=True, text=True, timeout=60)
    return r.returncode, r.stdout + r.stderr


status, said = claude_run("mcp", "add", "--transport", "http", "-s", "user", "handoff", f"{base}/mcp")
check("`claude mcp add --transport http handoff BASE/mcp`", status == 0, said)
# Under a pseudo-terminal, as a person runs it; its screen goes nowhere (the URL is in `opened`).
login = subprocess.Popen(["script", "-qefc", f"{claude} mcp login handoff", "/dev/null"], env=env, cwd=home,
                         stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
url = None
for _ in range(60):
    if os.path.exists(opened) and open(opened).read().strip():
        url = open(opened).read().split()[0]
        break
    if login.poll() is not None:
        break
    time.sleep(0.5)
query = urllib.parse.parse_qs(urllib.parse.urlsplit(url or "").query)
redirect = query.get("redirect_uri", [""])[0]
check("it opened the browser on /authorize with Claude Code's published client id, PKCE S256, the resource "
      "and a loopback callback on an ephemeral port",
      url and url.startswith(f"{base}/authorize?") and query.get("client_id") == [CLAUDE_CODE]
      and query.get("code_challenge_method") == ["S256"] and query.get("resource") == [f"{base}/mcp"]
      and urllib.parse.urlsplit(redirect).hostname in ("localhost", "127.0.0.1"), url)
if url:
    status, _, page = consent.request(url)
    check("the consent page names Claude Code, with no fetch of claude.ai",
          status == 200 and "Connect Claude Code to handoff-mcp" in page, status)
    given = consent.approve(url, token, "Claude Code")
    check("Allow sends the browser to its callback with code and state",
          given.allow == 303 and given.location.startswith(redirect + "?") and given.code
          and given.state == query.get("state", [None])[0], given.allow)
    landed = urllib.parse.urlsplit(given.location)
    status, _, _ = consent.request(f"http://127.0.0.1:{landed.port}{landed.path}?{landed.query}")
    check("the browser lands on Claude Code's listener (200)", status == 200, status)
try:
    login.wait(timeout=40)
except subprocess.TimeoutExpired:
    login.kill()
check("`claude mcp login` ends by itself, authenticated (exit 0)", login.returncode == 0, login.returncode)
status, said = claude_run("mcp", "get", "handoff")
check("`claude mcp get handoff` says Connected (it calls the server with the token it got)",
      status == 0 and "Connected" in said and "Needs authentication" not in said, said)
_, rows = consent.grant_rows(base, token)
mine = [action for text, action in rows if "<b>Claude Code</b>" in text and action]
revoked = [consent.post_form(f"{base}/{token}/{action}", {})[0] for action in mine]
check("Revoke pressed on its row of the Connected clients page", revoked and set(revoked) == {303}, revoked)
# A revoked grant's access token still answers initialize and tools/list, which read nothing,
# until it expires (docs/oauth.md): wait out the one Claude Code holds (this server's live
# OAUTH_ACCESS_SECONDS, a few seconds), so its check must refresh, which Revoke refused.
try:
    with open(os.path.join(home, ".claude", ".credentials.json")) as f:
        held = json.load(f).get("mcpOAuth", {})
    expires = max(v.get("expiresAt", 0) for v in held.values()) / 1000
except (OSError, ValueError):
    expires = 0
time.sleep(min(max(expires - time.time() + 0.5, 0), 10))
status, said = claude_run("mcp", "get", "handoff")
check("after Revoke and its access token's end, `claude mcp get handoff` says it needs authentication "
      "(its refresh was refused)", "Needs authentication" in said, said)
failed = results.count(False)
print(f"# claude_code_login.py: {len(results) - failed} passed, {failed} failed")
sys.exit(1 if failed else 0)
