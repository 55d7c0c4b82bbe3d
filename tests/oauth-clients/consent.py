"""The person at the browser, played with plain HTTP, and the server's human view around a grant.

Shared by the Python clients of scripts/oauth-clients (stdlib only, so the SDK under test never
carries these requests): `approve` walks the consent page the way a browser submits its forms
(every form post carries the issuer's Origin, as a browser sends it), `revoke` presses a grant's
Revoke button on `/<token>/clients`, and `history` reads a project's page. Shares no code with the
server.
"""

import html
import html.parser
import http.client
import json
import urllib.parse


class Form(html.parser.HTMLParser):
    """The fields a browser would submit from a page's one form: hidden inputs, checked radios,
    text inputs, the selected (or first) option of each select; and which radios and options
    there are, so a caller can choose among them."""

    def __init__(self, page):
        super().__init__()
        self.fields = {}
        self.radios = {}
        self.options = {}
        self.inputs = {}
        self.buttons = []
        self._select = None
        self.feed(page)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "input":
            kind, name = a.get("type", "text"), a.get("name")
            self.inputs[name] = kind
            if kind == "radio":
                self.radios.setdefault(name, []).append(a.get("value"))
                if "checked" in a:
                    self.fields[name] = a.get("value")
            elif kind in ("hidden", "text"):
                self.fields[name] = a.get("value", "")
        elif tag == "select":
            self._select = a.get("name")
            self.inputs[self._select] = "select"
            self.options[self._select] = []
        elif tag == "option" and self._select:
            self.options[self._select].append(a.get("value"))
            if "selected" in a or self._select not in self.fields:
                self.fields[self._select] = a.get("value")
        elif tag == "button":
            self.buttons.append((a.get("name"), a.get("value")))

    def handle_endtag(self, tag):
        if tag == "select":
            self._select = None


def request(url, method="GET", body=None, headers=None, source=None):
    """One HTTP request, no redirect followed: (status, headers with lower-case names, body).
    `source`: the loopback address the connection comes from, when not the default."""
    u = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=20,
                                      source_address=(source, 0) if source else None)
    try:
        conn.request(method, u.path + ("?" + u.query if u.query else ""), body=body, headers=headers or {})
        r = conn.getresponse()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read().decode()
    finally:
        conn.close()


def origin(url):
    u = urllib.parse.urlsplit(url)
    return f"{u.scheme}://{u.netloc}"


def post_form(url, fields):
    return request(url, "POST", urllib.parse.urlencode(fields),
                   {"content-type": "application/x-www-form-urlencoded", "origin": origin(url)})


class Consent:
    """What happened on the consent page: the pages' statuses, the project granted, the redirect."""

    def __init__(self):
        self.step1 = self.step2 = self.allow = None
        self.project = None
        self.named = False
        self.location = ""
        self.code = self.state = self.iss = None


def approve(authorization_url, token, client_name, project=None):
    """Opens the authorization URL, pastes `token`, and allows one project with read and write:
    `project` when the token reaches every project (reach=project, that project chosen), or the
    project token's own one. Returns a Consent; never raises for a refusal (the caller checks)."""
    c = Consent()
    c.step1, _, page = request(authorization_url)
    c.named = html.escape(client_name) in page
    c.step2, _, page = post_form(authorization_url, {"token": token})
    form = Form(page)
    fields = dict(form.fields)
    if project is not None:
        fields["reach"] = "project"
        if form.inputs.get("project") == "select" and project not in form.options.get("project", []):
            return c  # not offered: the caller's check of c.project fails
        fields["project"] = project
    fields["access"] = "write"
    fields["decision"] = "allow"
    c.project = fields.get("project") if fields.get("reach") == "project" else None
    c.allow, headers, _ = post_form(authorization_url, fields)
    c.location = headers.get("location", "")
    query = urllib.parse.parse_qs(urllib.parse.urlsplit(c.location).query)
    c.code, c.state, c.iss = (query.get(k, [None])[0] for k in ("code", "state", "iss"))
    return c


def grant_rows(base, auth_token):
    """The connected clients page's rows: [(the row's text, its Revoke form's action)]."""
    status, _, page = request(f"{base}/{auth_token}/clients")
    rows = []
    for item in page.split("<li>")[1:]:
        item = item.split("</li>")[0]
        action = item.split('action="', 1)[1].split('"', 1)[0] if 'action="' in item else None
        rows.append((html.unescape(item), action))
    return status, rows


def revoke(base, auth_token, client_name):
    """Presses Revoke on the one row naming `client_name`: (how many rows named it, the POST's status)."""
    _, rows = grant_rows(base, auth_token)
    mine = [action for text, action in rows if f"<b>{client_name}</b>" in text and action]
    if len(mine) != 1:
        return len(mine), None
    status, _, _ = post_form(f"{base}/{auth_token}/{mine[0]}", {})
    return 1, status


def still_listed(base, auth_token, client_name):
    _, rows = grant_rows(base, auth_token)
    return any(f"<b>{client_name}</b>" in text for text, _ in rows)


def history_names(base, auth_token, project, client_name):
    """Whether the project's page attributes an event to the client, as `by <name> (OAuth)`."""
    status, _, page = request(f"{base}/{auth_token}/projects/{urllib.parse.quote(project)}")
    return status == 200 and f"by {html.escape(client_name)} (OAuth)" in page


def rpc(base, auth_token, method, params):
    """A raw JSON-RPC call with the full token in the Authorization header, for set-up only."""
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
    status, _, text = request(f"{base}/mcp", "POST", body, {
        "content-type": "application/json", "accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2025-11-25", "authorization": f"Bearer {auth_token}"})
    return status, json.loads(text) if text else {}
