"""A stand-in for the part of the Cloudflare API that wrangler 4.164 calls during scripts/deploy,
so the real wrangler can run the whole deploy offline (CLOUDFLARE_API_BASE_URL points here).

It keeps what a real account would keep (databases, the migration ledger, Workers, secrets) and
counts every request, so a test can ask what a run created or replaced: GET /__state. Each
database is also an SQLite database that every /query runs in (so the migrations wrangler sends
make the real schema and `wrangler d1 execute --remote` writes real rows), and its export
endpoint answers as D1's does for `wrangler d1 export --remote`: polled until complete, then a
download URL on this server serving the named tables as SQL (refused, as D1 refuses it, when a
virtual table would be in it). GET /__rows/<database id> gives every row of every ordinary table,
for a test to compare a restored copy with.
The shapes of its answers are those of api.cloudflare.com/client/v4 ({success, errors, messages,
result}); the outputs in samples/ were recorded from wrangler 4.164 talking to it (tests/deploy/record).
Any other endpoint answers a Cloudflare-style 404, and is listed in /__state's "unknown".

Usage: fake_cloudflare.py PORT_FILE [--two-accounts] [--no-subdomain]
  binds a free loopback port and writes it to PORT_FILE. The flags make the account of two
  samples (tests/deploy/record): a login that reaches a second account, and an account without
  a workers.dev subdomain.
"""

import json
import re
import sqlite3
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ACCOUNT = "7c5dae5552338874e5053f2534d2767a"
OTHER_ACCOUNT = {"id": "0f9e8d7c6b5a49382716051a2b3c4d5e", "name": "Team Handoff", "type": "standard",
                 "settings": {"enforce_twofactor": True}, "created_on": "2025-06-07T08:09:10.111213Z"}
SUBDOMAIN = "jane-doe"
V4 = "/client/v4"
A = f"{V4}/accounts/{ACCOUNT}"

state = {"dbs": [], "applied": {}, "workers": [], "secrets": {}, "requests": [], "unknown": [], "sql_errors": [],
         "exports": []}
origin = ""  # this server's own origin, for the download URLs of exports (set in main)
sqlite = {}  # database id -> its SQLite connection (not part of /__state)
downloads = {}  # download path -> the SQL it serves
lock = threading.Lock()
two_accounts = "--two-accounts" in sys.argv[2:]
no_subdomain = "--no-subdomain" in sys.argv[2:]


def ok(result, info=None):
    body = {"success": True, "errors": [], "messages": [], "result": result}
    if info is not None:
        body["result_info"] = info
    return 200, body


def err(status, code, message):
    return status, {"success": False, "errors": [{"code": code, "message": message}], "messages": [], "result": None}


def page(items):
    return ok(items, {"page": 1, "per_page": 20, "count": len(items), "total_count": len(items), "total_pages": 1})


def now():
    return time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime())


def database(db_id):
    if db_id not in sqlite:
        sqlite[db_id] = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
    return sqlite[db_id]


def run_sql(db_id, sql):
    """Runs one request's SQL in the database's SQLite, as D1 runs it: the rows of a SELECT; a
    failure is kept in sql_errors (wrangler's ledger handling below does not depend on it)."""
    with lock:
        db = database(db_id)
        try:
            if re.match(r"(?is)\s*(SELECT|PRAGMA)\b", sql) and ";" not in sql.strip().rstrip(";"):
                cursor = db.execute(sql)
                names = [c[0] for c in cursor.description or []]
                return [dict(zip(names, row)) for row in cursor.fetchall()]
            db.executescript(sql)
        except sqlite3.Error as e:
            state["sql_errors"].append(f"{e}: {sql[:200]}")
        return []


def quote(value):
    """A value as D1's export writes it in an INSERT."""
    if value is None:
        return "NULL"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, bytes):
        return "X'" + value.hex().upper() + "'"
    return "'" + value.replace("'", "''") + "'"


def dump(db_id, tables):
    """The SQL D1's export makes of the named tables (every table when none is named): a table's
    CREATE, then one INSERT per row. A virtual table is refused, as D1 refuses it."""
    with lock:
        db = database(db_id)
        known = {name: sql for name, sql in db.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'")}
        names = tables or [n for n in known if not n.startswith("sqlite_")]
        if any((known.get(n) or "").upper().startswith("CREATE VIRTUAL TABLE") for n in names):
            return None
        out = ["PRAGMA defer_foreign_keys=TRUE;"]
        for name in names:
            if name not in known:
                continue
            out.append(known[name] + ";")
            cursor = db.execute(f'SELECT * FROM "{name}"')
            columns = ",".join(c[0] for c in cursor.description)
            for row in cursor.fetchall():
                out.append(f'INSERT INTO "{name}" ({columns}) VALUES({",".join(quote(v) for v in row)});')
        return "\n".join(out)


def all_rows(db_id):
    """Every row of every ordinary table, each a {column: value} object, for /__rows."""
    with lock:
        db = database(db_id)
        names = [n for (n,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND sql NOT LIKE "
                                          "'CREATE VIRTUAL TABLE%' AND name NOT LIKE 'sqlite_%' ORDER BY name")]
        # The search index's own shadow tables (event_text_data and the like) are the index, not data.
        names = [n for n in names if not re.search(r"_text_(data|idx|content|docsize|config)$", n)]
        out = {}
        for name in names:
            cursor = db.execute(f'SELECT * FROM "{name}" ORDER BY rowid')
            columns = [c[0] for c in cursor.description]
            out[name] = [dict(zip(columns, row)) for row in cursor.fetchall()]
        return out


def export(db_id, body):
    """D1's export, polled: the first call starts it and names a bookmark, the next one with that
    bookmark finds it complete with a download URL (valid on this server only)."""
    request = json.loads(body)
    options = request.get("dump_options") or {}
    state["exports"].append({"tables": options.get("tables") or [], "bookmark": request.get("current_bookmark")})
    if not request.get("current_bookmark"):
        return ok({"success": True, "type": "export", "at_bookmark": "00000001-00000001-00004f7a-fake",
                   "status": "active", "messages": ["Generating export"]})
    sql = dump(db_id, options.get("tables") or [])
    if sql is None:
        return ok({"success": False, "type": "export", "at_bookmark": request["current_bookmark"], "status": "error",
                   "error": "cannot export databases with Virtual Tables (fts5)", "messages": []})
    path = f"/__download/{uuid.uuid4().hex}.sql"
    downloads[path] = sql
    return ok({"success": True, "type": "export", "at_bookmark": request["current_bookmark"], "status": "complete",
               "messages": ["Uploaded part 1"], "result": {"filename": path[12:], "signed_url": f"{origin}{path}"}})


def query(db_id, sql):
    """D1 /query: the SQL runs in the database's SQLite; the migration ledger wrangler reads is
    answered from what it wrote, as recorded in samples/."""
    found = run_sql(db_id, sql)
    applied = state["applied"].setdefault(db_id, [])
    # wrangler 4.164 quotes the table's name ("d1_migrations"); 4.86 did not.
    applied += re.findall(r"INSERT INTO \"?d1_migrations\"? \(name\)\s*values \('([^']+)'\)", sql)
    rows = []
    if re.search(r"FROM \"?d1_migrations\"?", sql):
        rows = [{"id": i + 1, "name": n, "applied_at": "2026-12-01 09:20:00"} for i, n in enumerate(applied)]
    else:
        rows = found
    meta = {"served_by": "v3-prod", "duration": 0.3, "changes": 0, "last_row_id": 0, "changed_db": False,
            "size_after": 16384, "rows_read": 0, "rows_written": 0}
    return ok([{"results": rows, "success": True, "meta": meta}])


def route(method, path, body):
    if path == f"{V4}/user/tokens/verify":
        return ok({"id": "ed17574386854bf78a67040be0a770b0", "status": "active"})
    if path == f"{V4}/user":
        return ok({"id": "f1a2b3c4", "email": "jane@example.com"})
    if path == f"{V4}/accounts":
        return page([{"id": ACCOUNT, "name": "Jane@example.com's Account", "type": "standard",
                      "settings": {"enforce_twofactor": False}, "created_on": "2024-03-02T10:11:12.131415Z"}]
                    + ([OTHER_ACCOUNT] if two_accounts else []))
    if path == f"{V4}/memberships":  # what wrangler picks the account from
        return page([{"id": "4b1d6e0f5a3c4e2d9b8a7c6f5e4d3c2b", "status": "accepted",
                      "account": {"id": ACCOUNT, "name": "Jane@example.com's Account"},
                      "roles": ["Super Administrator - All Privileges"]}]
                    + ([{"id": "9a8b7c6d5e4f4a3b2c1d0e9f8a7b6c5d", "status": "accepted",
                         "account": {"id": OTHER_ACCOUNT["id"], "name": OTHER_ACCOUNT["name"]},
                         "roles": ["Administrator"]}] if two_accounts else []))
    if path == f"{A}/d1/database":
        if method == "POST":
            name = json.loads(body)["name"]
            if any(db["name"] == name for db in state["dbs"]):
                return err(400, 7502, "A database with that name already exists")
            db = {"uuid": str(uuid.uuid4()), "name": name, "version": "production", "num_tables": 0,
                  "file_size": 0, "created_at": now(), "created_in_region": "WEUR", "jurisdiction": None}
            state["dbs"].append(db)
            return ok(db)
        return page(state["dbs"])
    m = re.fullmatch(rf"{A}/d1/database/({'[0-9a-f-]{36}'})(/query|/raw|/export)?", path)
    if m:
        db = next((d for d in state["dbs"] if d["uuid"] == m.group(1)), None)
        if db is None:
            return err(404, 7404, "The database could not be found")
        if m.group(2) == "/export":
            return export(db["uuid"], body)
        return query(db["uuid"], json.loads(body).get("sql", "")) if m.group(2) else ok(db)
    if path == f"{A}/workers/subdomain":
        if no_subdomain:
            return err(404, 10007, "This subdomain does not exist.")
        return ok({"subdomain": SUBDOMAIN})
    if path == f"{A}/workers/scripts" and method == "GET":
        return ok([{"id": w, "migration_tag": "v1"} for w in state["workers"]])
    m = re.fullmatch(rf"{A}/workers/(scripts|services|workers)/([\w-]+)(/.*)?", path)
    if m:
        return worker(method, m.group(1), m.group(2), m.group(3) or "", body)
    return None


def worker(method, kind, name, rest, body):
    exists = name in state["workers"]
    version = {"id": str(uuid.uuid4()), "number": len(state["requests"]), "startup_time_ms": 11,
               "metadata": {"author_email": "jane@example.com", "source": "wrangler", "created_on": now()},
               "resources": {"script": {"etag": "f00d", "handlers": ["fetch"]}, "bindings": []}}
    if rest == "" and method == "PUT":  # the first upload creates the Worker
        state["workers"].append(name)
        return ok({"id": name, "etag": "e5c0e2f5", "startup_time_ms": 11, "deployment_id": version["id"],
                   "has_modules": True, "migration_tag": "v1", "tag": "5a6f3c1be1f54b4e9c0a1f2e3d4c5b6a"})
    if not exists:
        return err(404, 10090 if kind == "services" else 10007, "This Worker does not exist on your account.")
    if kind == "workers" and rest == "" and method == "GET":  # wrangler 4.164 reads the workers.dev state here
        return ok({"id": name, "name": name, "created_on": now(), "updated_on": now(), "logpush": False,
                   "observability": {"enabled": False}, "tags": [], "tail_consumers": [],
                   "subdomain": {"enabled": True, "previews_enabled": True}})
    if kind == "services" and rest == "":
        return ok({"id": name, "default_environment": {"environment": "production", "script": {
            "id": name, "tag": "5a6f3c1be1f54b4e9c0a1f2e3d4c5b6a", "tags": [], "last_deployed_from": "wrangler"}}})
    if rest == "/versions" and method == "POST":
        return ok(version)
    if rest == "/deployments":
        deployment = {"id": str(uuid.uuid4()), "source": "wrangler", "strategy": "percentage", "created_on": now(),
                      "versions": [{"version_id": version["id"], "percentage": 100}]}
        return ok(deployment if method == "POST" else {"deployments": [deployment]})
    if rest == "/settings" and method == "GET":  # what wrangler looks at before provisioning bindings
        return ok({"bindings": [], "compatibility_date": "2026-11-17", "compatibility_flags": [], "logpush": False,
                   "observability": {"enabled": False}, "tags": [], "tail_consumers": []})
    if rest == "/script-settings":
        return ok({"logpush": False, "tail_consumers": None, "observability": {"enabled": False}, "tags": []})
    if rest == "/subdomain":
        return ok({"enabled": True, "previews_enabled": True})
    if rest == "/secrets":
        secrets = state["secrets"].setdefault(name, {})
        if method == "PUT":
            secret = json.loads(body)
            secrets[secret["name"]] = secret["text"]
            return ok({"name": secret["name"], "type": secret["type"]})
        return ok([{"name": n, "type": "secret_text"} for n in secrets])
    return None


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def answer(self):
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length) if length else b""
        path = self.path.split("?")[0]
        if path in downloads:  # the download URL of an export: plain SQL, not the API's JSON
            data = downloads[path].encode()
            self.send_response(200)
            self.send_header("content-type", "application/sql")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        if path == "/__state":
            status, out = 200, state
        elif path.startswith("/__rows/"):
            status, out = 200, all_rows(path[len("/__rows/"):])
        else:
            state["requests"].append(f"{self.command} {path}")
            found = route(self.command, path, body)
            if found is None:
                state["unknown"].append(f"{self.command} {path}")
                found = err(404, 7003, f"Could not route to {path}, perhaps your object identifier is invalid?")
            status, out = found
        data = json.dumps(out).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = answer


def main():
    global origin
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    origin = f"http://127.0.0.1:{server.server_address[1]}"
    with open(sys.argv[1], "w") as f:
        f.write(str(server.server_address[1]))
    server.serve_forever()


if __name__ == "__main__":
    main()
