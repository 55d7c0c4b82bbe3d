"""Claude's own OAuth clients played exactly as they behave, against a running handoff-mcp.

Usage: python3 tests/claude-oauth/claude.py BASE_URL   (scripts/claude-oauth runs it)
Environment: OAUTH_TEST_AUTH_TOKEN (a token of every project), CLAUDE_OAUTH_ARTEFACTS (a folder
for the token response as served).

claude.ai's connector (the same for Claude Desktop and the mobile apps): its published client
id and callback, never registered, with no route from the server to claude.ai; the 401, both
metadata documents, an authorization request with the resource and no `scope`, the person's
consent (plain HTTP form posts with the Origin a browser sends, tests/oauth-clients/consent.py),
the code at claude.ai's callback, the token exchange, tools; then two refreshes of one refresh
token at once from two addresses (claude.ai refreshes from two egress addresses: here 127.0.0.1
and 127.0.0.2 as the sources of the two connections); and Revoke on the Connected clients page,
after which neither the access token nor the refresh token works.

Claude Code: its published client id, with a callback listener on an ephemeral loopback port,
once on `localhost` and once on `127.0.0.1` (RFC 8252's port-less registration), the browser's
landing on that listener, the exchange and a tool call.

Prints one `ok - …` / `not ok - …` line per check and `claude-oauth: N passed, M failed`; exits
1 on a failure. Only loopback addresses are connected to. Shares no code with the server.
"""

import base64
import hashlib
import http.server
import json
import os
import secrets
import socket
import sys
import threading
import urllib.parse

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "oauth-clients"))
import consent  # noqa: E402  (the person at the browser, shared with scripts/oauth-clients)

CONNECTOR = "https://claude.ai/oauth/mcp-oauth-client-metadata"
CONNECTOR_CALLBACK = "https://claude.ai/api/mcp/auth_callback"
CLAUDE_CODE = "https://claude.ai/oauth/claude-code-client-metadata"
PROJECT = "claude-oauth"

base = sys.argv[1].rstrip("/")
auth_token = os.environ["OAUTH_TEST_AUTH_TOKEN"]
artefacts = os.environ.get("CLAUDE_OAUTH_ARTEFACTS", "target/oauth")
results = []


def check(what, ok, detail=None):
    results.append(bool(ok))
    line = f"{'ok' if ok else 'not ok'} - {what}"
    if not ok and detail is not None:
        line += f": {json.dumps(detail, default=str)[:400]}"
    print(line, flush=True)


request = consent.request


def pkce():
    verifier = secrets.token_urlsafe(48)
    digest = hashlib.sha256(verifier.encode()).digest()
    return verifier, base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def authorization_url(client_id, redirect_uri, challenge, state):
    """The request as Claude's clients send it: the resource, S256, and no scope."""
    query = urllib.parse.urlencode({
        "response_type": "code", "client_id": client_id, "redirect_uri": redirect_uri,
        "code_challenge": challenge, "code_challenge_method": "S256", "state": state,
        "resource": f"{base}/mcp"})
    return f"{base}/authorize?{query}"


def second_source():
    """127.0.0.2 where this machine's loopback answers it (Linux routes all of 127/8 there), else
    127.0.0.1: macOS has only 127.0.0.1 until `sudo ifconfig lo0 alias 127.0.0.2 up`."""
    try:
        with socket.socket() as s:
            s.bind(("127.0.0.2", 0))
        return "127.0.0.2"
    except OSError:
        print("# no 127.0.0.2 on this machine's loopback (on macOS: sudo ifconfig lo0 alias 127.0.0.2 up), so both "
              "refreshes come from 127.0.0.1; the Linux CI makes them from two addresses", flush=True)
        return "127.0.0.1"


def token(fields, source="127.0.0.1"):
    status, headers, body = request(f"{base}/token", "POST", urllib.parse.urlencode(fields),
                                    {"content-type": "application/x-www-form-urlencoded"}, source)
    try:
        return status, headers, json.loads(body)
    except ValueError:
        return status, headers, {"body": body}


def tool(access, name, arguments):
    """A tools/call over /mcp with a bearer access token: (status, the result's first text)."""
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                       "params": {"name": name, "arguments": arguments}})
    status, _, text = request(f"{base}/mcp", "POST", body, {
        "content-type": "application/json", "accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2025-06-18", "authorization": f"Bearer {access}"})
    try:
        content = json.loads(text)["result"]["content"][0]["text"]
    except (ValueError, KeyError, IndexError, TypeError):
        content = text
    return status, content


def redacted(answer):
    """A token answer with its secrets shortened, for the artefact."""
    return {k: (v[:8] + "…" if k in ("access_token", "refresh_token") and isinstance(v, str) else v)
            for k, v in answer.items()}


def connector():
    label = "claude.ai connector"
    # The 401 and the two metadata documents, as claude.ai reads them.
    status, headers, _ = request(f"{base}/mcp", "POST", json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "claude-ai", "version": "0"}}}),
        {"content-type": "application/json", "accept": "application/json, text/event-stream"})
    check(f"{label}: POST /mcp with no credential answers 401 naming the resource metadata",
          status == 401 and "resource_metadata=" in headers.get("www-authenticate", ""), headers)
    _, _, server = request(f"{base}/.well-known/oauth-authorization-server")
    server = json.loads(server)
    check(f"{label}: the server metadata offers client ID metadata documents with auth method none "
          "(claude.ai uses its client id only then)",
          server.get("client_id_metadata_document_supported") is True
          and "none" in server.get("token_endpoint_auth_methods_supported", []), server)

    verifier, challenge = pkce()
    state = secrets.token_urlsafe(16)
    url = authorization_url(CONNECTOR, CONNECTOR_CALLBACK, challenge, state)
    status, _, page = request(url)
    check(f"{label}: /authorize shows the consent page for Claude's connector with no route to claude.ai",
          status == 200 and "Connect Claude to handoff-mcp" in page
          and "Claude&#39;s connector (claude.ai, Claude Desktop and the Claude mobile apps)" in page,
          {"status": status, "page": page[-600:]})
    given = consent.approve(url, auth_token, "Claude")
    check(f"{label}: the person pastes the token and allows every project, read and write; the browser is sent "
          "to claude.ai's callback with code, state and iss",
          given.allow == 303 and given.location.startswith(CONNECTOR_CALLBACK + "?") and given.code
          and given.state == state and given.iss == base,
          {"allow": given.allow, "location": given.location.split("code=")[0]})
    status, headers, answer = token({
        "grant_type": "authorization_code", "code": given.code or "", "code_verifier": verifier,
        "client_id": CONNECTOR, "redirect_uri": CONNECTOR_CALLBACK, "resource": f"{base}/mcp"})
    os.makedirs(artefacts, exist_ok=True)
    with open(os.path.join(artefacts, "claude-token-response.txt"), "w") as f:
        f.write(f"HTTP {status}\n")
        for name in ("content-type", "cache-control", "pragma", "access-control-allow-origin"):
            f.write(f"{name}: {headers.get(name)}\n")
        f.write("\n" + json.dumps(redacted(answer), indent=2, ensure_ascii=False) + "\n")
    check(f"{label}: /token exchanges the code for an access and a refresh token (no store, expires_in as the "
          "server's OAUTH_ACCESS_SECONDS says)",
          status == 200 and answer.get("token_type") == "Bearer" and isinstance(answer.get("expires_in"), int)
          and answer["expires_in"] > 0 and answer.get("refresh_token") and answer.get("scope") == "handoff:read handoff:write"
          and headers.get("cache-control") == "no-store", redacted(answer))
    access, refresh = answer.get("access_token", ""), answer.get("refresh_token", "")
    status, text = tool(access, "set_north_star", {"project_id": PROJECT, "text": "Connected from claude.ai"})
    check(f"{label}: set_north_star with the access token", status == 200 and PROJECT in text, text)

    # claude.ai refreshes from two egress addresses: one refresh token, twice at once.
    answers = [None, None]
    barrier = threading.Barrier(2)

    def refresh_from(i, source):
        barrier.wait()
        answers[i] = token({"grant_type": "refresh_token", "refresh_token": refresh, "client_id": CONNECTOR}, source)

    sources = ("127.0.0.1", second_source())
    threads = [threading.Thread(target=refresh_from, args=(i, s)) for i, s in enumerate(sources)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    statuses = [a[0] for a in answers]
    nexts = [a[2].get("refresh_token") for a in answers]
    check(f"{label}: two refreshes of one refresh token at once, from {sources[0]} and {sources[1]}, both answered "
          "200 with the same next refresh token", statuses == [200, 200] and nexts[0] and nexts[0] == nexts[1],
          {"statuses": statuses, "same": nexts[0] == nexts[1]})
    works = [tool(a[2].get("access_token", ""), "get_state", {"project_id": PROJECT}) for a in answers]
    check(f"{label}: each answer's access token reads the state",
          all(s == 200 and t.startswith("🎯 NORTH STAR: Connected from claude.ai") for s, t in works), works)
    status, _, after = token({"grant_type": "refresh_token", "refresh_token": nexts[0] or "", "client_id": CONNECTOR})
    check(f"{label}: the grant moves on with the next refresh token", status == 200 and after.get("access_token"), status)
    access, refresh = after.get("access_token", ""), after.get("refresh_token", "")

    page_named, revoked = consent.revoke(base, auth_token, "Claude")
    check(f"{label}: Revoke pressed on the Connected clients page (one row named Claude)",
          page_named == 1 and revoked == 303, {"rows": page_named, "status": revoked})
    status, text = tool(access, "get_state", {"project_id": PROJECT})
    check(f"{label}: after Revoke the access token reads nothing", status != 200 or "NORTH STAR" not in text,
          {"status": status})
    status, _, answer = token({"grant_type": "refresh_token", "refresh_token": refresh, "client_id": CONNECTOR})
    check(f"{label}: after Revoke the refresh token is refused (invalid_grant)",
          status == 400 and answer.get("error") == "invalid_grant", answer)


class Callback(http.server.BaseHTTPRequestHandler):
    """Claude Code's one-shot loopback listener: it keeps the query the browser lands with."""
    landed = None

    def do_GET(self):
        Callback.landed = self.path
        self.send_response(200)
        self.send_header("content-type", "text/plain")
        self.end_headers()
        self.wfile.write(b"Authentication successful. You can close this window.")

    def log_message(self, *args):
        pass


def claude_code(host):
    label = f"Claude Code on {host}"
    listener = http.server.HTTPServer(("127.0.0.1", 0), Callback)
    port = listener.server_address[1]
    threading.Thread(target=listener.handle_request, daemon=True).start()
    callback = f"http://{host}:{port}/callback"
    verifier, challenge = pkce()
    state = secrets.token_urlsafe(16)
    url = authorization_url(CLAUDE_CODE, callback, challenge, state)
    status, _, page = request(url)
    check(f"{label}: /authorize for its published client id and ephemeral port {port} shows the consent page "
          "naming Claude Code, with the sentence of a loopback-only client",
          status == 200 and "Connect Claude Code to handoff-mcp" in page
          and "Claude Code, the command-line tool" in page and "<b>Check first:</b>" in page,
          {"status": status, "page": page[-600:]})
    given = consent.approve(url, auth_token, "Claude Code", project=PROJECT)
    check(f"{label}: Allow sends the browser to {callback} with code, state and iss",
          given.allow == 303 and given.location.startswith(callback + "?") and given.code
          and given.state == state, {"allow": given.allow, "location": given.location.split("code=")[0]})
    # The browser lands on the listener (localhost resolves to it here).
    landed = urllib.parse.urlsplit(given.location)
    status, _, _ = request(f"http://127.0.0.1:{port}{landed.path}?{landed.query}")
    got = urllib.parse.parse_qs(urllib.parse.urlsplit(Callback.landed or "").query)
    check(f"{label}: the listener received the code", status == 200 and got.get("code", [None])[0] == given.code)
    listener.server_close()
    status, _, answer = token({
        "grant_type": "authorization_code", "code": given.code or "", "code_verifier": verifier,
        "client_id": CLAUDE_CODE, "redirect_uri": callback, "resource": f"{base}/mcp"})
    check(f"{label}: /token exchanges the code (redirect_uri with its port)",
          status == 200 and answer.get("access_token") and answer.get("refresh_token"), redacted(answer))
    status, text = tool(answer.get("access_token", ""), "get_state", {"project_id": PROJECT})
    check(f"{label}: get_state with its access token", status == 200 and text.startswith("🎯 NORTH STAR:"), text[:200])


def revoke_all(name):
    """Presses Revoke on every row naming `name`: how many were pressed."""
    _, rows = consent.grant_rows(base, auth_token)
    pressed = 0
    for text, action in rows:
        if f"<b>{name}</b>" in text and action:
            consent.post_form(f"{base}/{auth_token}/{action}", {})
            pressed += 1
    return pressed


connector()
for loopback in ("localhost", "127.0.0.1"):
    claude_code(loopback)
check("Claude Code's grants (its two here among them) revoked on the Connected clients page",
      revoke_all("Claude Code") >= 2)
failed = results.count(False)
print(f"# claude.py: {len(results) - failed} passed, {failed} failed")
sys.exit(1 if failed else 0)
