"""The official Python MCP SDK as an OAuth client of a running handoff-mcp.

Usage: python_sdk.py BASE_URL dcr|cimd NAME   (the venv's python; scripts/oauth-clients runs it)
Environment: OAUTH_TEST_AUTH_TOKEN (a token reaching every project), OAUTH_TEST_PROJECT_TOKEN
(a read-write project token).

The SDK's own `OAuthClientProvider`, on an httpx2 client handed to `streamable_http_client`,
does everything a real client does: it meets the 401, discovers the metadata, registers (`dcr`:
RFC 7591, with the project token pasted on the consent page) or names itself by a client ID
metadata document (`cimd`: served here on a loopback port, the full token pasted and one new
project chosen), exchanges the code with PKCE, and refreshes by itself once the access token has
expired. Only the person is played: `redirect_handler` walks the consent page with plain HTTP
form posts (consent.py) and `callback_handler` hands back the code, state and iss of the redirect
it ended in. Then the grant is revoked on the connected clients page, and the client's next call
must be refused. Prints one `ok - …` / `not ok - …` line per check; exits 1 on a failure.
"""

import http.server
import json
import os
import sys
import threading
import traceback
import urllib.parse

import anyio
import httpx2
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

import consent

failures = 0


def check(name, ok, detail=None):
    global failures
    failures += 0 if ok else 1
    print(f"{'ok' if ok else 'not ok'} - {name}{'' if ok or detail is None else f': {detail}'}", flush=True)


class Refused(Exception):
    """Raised by the redirect handler once the grant is revoked: the person does not come back."""


class Storage:
    """The SDK's TokenStorage, in memory, keeping every token set it was handed."""

    def __init__(self):
        self.tokens: list[OAuthToken] = []
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self):
        return self.tokens[-1] if self.tokens else None

    async def set_tokens(self, tokens):
        self.tokens.append(tokens)

    async def get_client_info(self):
        return self.client

    async def set_client_info(self, client_info):
        self.client = client_info


def serve_document(name, redirect_uri):
    """A client ID metadata document on a loopback port: (its URL, how many GETs it answered)."""
    fetched = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            if self.path != "/oauth/client.json":
                self.send_error(404)
                return
            fetched.append(self.headers.get("user-agent"))
            body = json.dumps({"client_id": url, "client_name": name, "redirect_uris": [redirect_uri],
                               "grant_types": ["authorization_code", "refresh_token"],
                               "response_types": ["code"], "token_endpoint_auth_method": "none"}).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    url = f"http://127.0.0.1:{server.server_address[1]}/oauth/client.json"
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return url, fetched


def text_of(result):
    return "\n".join(c.text for c in result.content if getattr(c, "type", None) == "text")


async def run(base, mode, name):
    auth_token = os.environ["OAUTH_TEST_AUTH_TOKEN"]
    project_token = os.environ["OAUTH_TEST_PROJECT_TOKEN"]
    # The redirect URI is never listened on: the person's redirect is read from the 303 itself.
    redirect_uri = "http://127.0.0.1:9/oauth/callback"
    label = f"python-sdk {mode}"

    # A project of its own for the full token's one-project grant, chosen on the consent page.
    chosen = None
    if mode == "cimd":
        chosen = "oc-py-" + name.rsplit(" ", 1)[-1]
        status, reply = consent.rpc(base, auth_token, "tools/call",
                                    {"name": "set_north_star", "arguments": {"project_id": chosen, "text": f"made for {name}"}})
        check(f"{label}: set-up: project {chosen} created with the full token", status == 200 and not reply.get("result", {}).get("isError"), reply)

    pasted = auth_token if mode == "cimd" else project_token
    consents: list[consent.Consent] = []
    redirects = []

    async def redirect_handler(authorization_url):
        redirects.append(authorization_url)
        if len(consents) >= 1:
            raise Refused("asked to authorize again")
        consents.append(await anyio.to_thread.run_sync(consent.approve, authorization_url, pasted, name, chosen))

    async def callback_handler():
        c = consents[-1]
        return AuthorizationCodeResult(code=c.code or "", state=c.state, iss=c.iss)

    metadata = OAuthClientMetadata(client_name=name, redirect_uris=[redirect_uri],
                                   grant_types=["authorization_code", "refresh_token"], response_types=["code"],
                                   token_endpoint_auth_method="none" if mode == "cimd" else "client_secret_post")
    storage = Storage()
    provider = OAuthClientProvider(server_url=f"{base}/mcp", client_metadata=metadata, storage=storage,
                                   redirect_handler=redirect_handler, callback_handler=callback_handler)
    fetched = []
    if mode == "cimd":
        document_url, fetched = serve_document(name, redirect_uri)
        # The SDK takes only an https URL here (its check follows the draft); the server takes
        # http on loopback in development (OAUTH_LOOPBACK_CLIENTS=1). The provider is given the
        # URL after that constructor check, in the field the constructor would have set.
        provider.context.client_metadata_url = document_url

    # Every response the SDK's HTTP client got: (method, path, status, grant_type of a /token post,
    # how the client authenticated there: basic, post (a secret in the form) or none).
    seen = []

    async def on_response(response):
        request = response.request
        grant = how = None
        if request.url.path == "/token":
            form = urllib.parse.parse_qs(request.content.decode())
            grant = form.get("grant_type", [None])[0]
            how = ("basic" if request.headers.get("authorization", "").startswith("Basic ")
                   else "post" if "client_secret" in form else "none")
        seen.append((request.method, request.url.path, response.status_code, grant, how))

    def count(path, status=None, grant=None, how=None):
        return sum(1 for _, p, s, g, h in seen
                   if p == path and (status is None or s == status) and (grant is None or g == grant) and (how is None or h == how))

    # The token endpoint authentication the client registered with, or a metadata document client's none.
    how = "none" if mode == "cimd" else "post"

    async def session(client):
        """Everything up to the revocation; returns how many responses came before the next call."""
        c = consents[0] if consents else consent.Consent()
        check(f"{label}: the first request met 401 and the SDK discovered the server's metadata",
              seen[:1] == [("POST", "/mcp", 401, None, None)] and count("/.well-known/oauth-authorization-server", 200) >= 1,
              seen[:4])
        if mode == "dcr":
            check(f"{label}: registered itself at /register (201, a client_secret_post client with a secret)",
                  count("/register", 201) == 1 and storage.client is not None and bool(storage.client.client_secret),
                  seen)
        else:
            check(f"{label}: named itself by its client ID metadata document (no /register), which the server fetched",
                  count("/register") == 0 and storage.client is not None and storage.client.client_id == document_url
                  and len(fetched) >= 1, (seen, len(fetched)))
        check(f"{label}: the consent page named the client and took the pasted token (200, 200, 303 to the redirect URI with code, state and iss)",
              c.named and (c.step1, c.step2, c.allow) == (200, 200, 303) and c.location.startswith(redirect_uri + "?")
              and bool(c.code and c.state and c.iss), vars(c))
        check(f"{label}: a one-project grant ({'the full token, reach=project chosen' if chosen else 'the project token'})",
              c.project is not None and (chosen is None or c.project == chosen), c.project)
        check(f"{label}: the code was exchanged at /token with its PKCE verifier (authorization_code, 200, client authentication {how})",
              count("/token", 200, "authorization_code", how) == 1 and len(storage.tokens) == 1, seen)
        lifetime = storage.tokens[0].expires_in if storage.tokens else None

        tools = (await client.list_tools()).tools
        get_state = next((t for t in tools if t.name == "get_state"), None)
        check(f"{label}: tools/list through the grant shows get_state's project_id as optional",
              get_state is not None and "project_id" not in (get_state.input_schema.get("required") or []),
              get_state and get_state.input_schema)
        wrote = await client.call_tool("set_north_star", {"text": f"Prove OAuth with {name}"})
        check(f"{label}: set_north_star with no project_id writes the granted project", not wrote.is_error, text_of(wrote))
        state = await client.call_tool("get_state", {})
        check(f"{label}: get_state with no project_id: the text starts with '🎯 NORTH STAR:'",
              not state.is_error and text_of(state).startswith("🎯 NORTH STAR:"), text_of(state)[:120])
        check(f"{label}: the history says the write was by the client (by {name} (OAuth))",
              c.project is not None and consent.history_names(base, auth_token, c.project, name))

        if not lifetime or lifetime > 30:
            check(f"{label}: the access token lives at most 30 s (start the server with OAUTH_ACCESS_SECONDS=5)", False, lifetime)
            return None
        await anyio.sleep(lifetime + 1.5)
        state = await client.call_tool("get_state", {})
        check(f"{label}: get_state after the access token's {lifetime} s: the SDK refreshed by itself (refresh_token grant, client authentication {how}, 200) and the call succeeded",
              not state.is_error and text_of(state).startswith("🎯 NORTH STAR:") and count("/token", 200, "refresh_token", how) >= 1, seen[-4:])
        check(f"{label}: the refresh rotated the refresh token (the stored one changed)",
              len(storage.tokens) >= 2 and storage.tokens[-1].refresh_token not in (None, storage.tokens[0].refresh_token))

        rows, status = await anyio.to_thread.run_sync(consent.revoke, base, auth_token, name)
        check(f"{label}: Revoke pressed on the client's one row of /<token>/clients (303)", (rows, status) == (1, 303), (rows, status))
        check(f"{label}: the grant is no longer listed", not await anyio.to_thread.run_sync(consent.still_listed, base, auth_token, name))
        return len(seen)

    # The refused call's error ends the transport's task group, so it leaves the `async with`
    # as an exception group: caught out here, and only once the grant is revoked.
    before = None
    outcome = None
    try:
        async with httpx2.AsyncClient(auth=provider, event_hooks={"response": [on_response]}, timeout=30) as http_client:
            async with Client(streamable_http_client(f"{base}/mcp", http_client=http_client)) as client:
                before = await session(client)
                if before is None:
                    return
                with anyio.fail_after(30):
                    outcome = await client.call_tool("get_state", {})
    except Exception as err:  # noqa: BLE001 (what the SDK raises is its business; it must raise)
        if before is None:
            raise
        outcome = err
    after = seen[before:]
    refused = [s for s in after if (s[1], s[2]) in (("/mcp", 401), ("/token", 400))]
    asked = isinstance(outcome, Refused) or (isinstance(outcome, BaseExceptionGroup) and outcome.subgroup(Refused) is not None)
    check(f"{label}: after the revocation the next call is refused (401 on /mcp or 400 on /token), the SDK asks the person to authorize again, and the call fails",
          asked and bool(refused) and len(redirects) == 2, (repr(outcome)[:200], after, len(redirects)))


def main():
    base, mode, name = sys.argv[1].rstrip("/"), sys.argv[2], sys.argv[3]
    try:
        anyio.run(run, base, mode, name)
    except BaseException as err:  # a crash is one more failed check, never a silent zero count
        traceback.print_exc(file=sys.stderr)
        check(f"python-sdk {mode}: ran to the end ({err!r})"[:300], False)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
