"""Reading what wrangler 4.164 prints, and the one edit scripts/deploy makes to wrangler.toml.

Every function here takes text and returns data, so tests/deploy/run checks them on output
recorded from the real wrangler (tests/deploy/samples/). scripts/deploy calls them through the
command line below. Python 3 standard library only.

The formats, from wrangler 4.164's source (wrangler-dist/cli.js); 4.86 printed the same:
  whoami --json      a JSON object (4-space indent), or {"loggedIn":false} and exit 1
  d1 list --json     a JSON array of {uuid, name, ...} (2-space indent)
  d1 create NAME     "✅ Successfully created DB ..." then a TOML snippet with database_id = "…"
  secret list        a JSON array of {name, type} (its default --format json)
  deploy             "Deployed NAME triggers (… sec)" followed by one indented line per target,
                     the workers.dev one as https://NAME.SUBDOMAIN.workers.dev
Colour codes are stripped first: wrangler adds them when it thinks it has a terminal.

Usage (each prints one result line, or a reason on stderr and exits 1):
  wrangler_out.py whoami FILE             in ACCOUNTS | out
  wrangler_out.py accounts FILE           one "ID<TAB>NAME" line per account
  wrangler_out.py d1-config CONFIG        NAME<TAB>ID (ID empty while it is the placeholder)
  wrangler_out.py d1-plan CONFIG FILE     keep ID | adopt ID | create NAME | foreign ID
  wrangler_out.py d1-created-id FILE      ID
  wrangler_out.py set-d1-id CONFIG ID     written | unchanged
  wrangler_out.py has-secret NAME FILE    yes | no
  wrangler_out.py deploy-url FILE         https://….workers.dev
  wrangler_out.py worker-name CONFIG      NAME
"""

import json
import re
import sys

# The id wrangler.toml ships with: "no database created yet".
PLACEHOLDER_ID = "00000000-0000-0000-0000-000000000000"
# The D1 binding the Worker reads (src/config.rs D1_BINDING).
D1_BINDING = "DB"

ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"


class ParseError(Exception):
    """wrangler printed something these functions do not recognise."""


def strip_ansi(text):
    return ANSI.sub("", text)


def first_json(text, opener):
    """The first JSON value starting with `opener` ("{" or "["), wherever it starts: wrangler may
    print a banner or a blank line before it."""
    text = strip_ansi(text)
    decoder = json.JSONDecoder()
    start = text.find(opener)
    while start != -1:
        try:
            value, _ = decoder.raw_decode(text, start)
            return value
        except json.JSONDecodeError:
            start = text.find(opener, start + 1)
    raise ParseError(f"no JSON {'object' if opener == '{' else 'array'} in the output")


def parse_whoami(text):
    """{"logged_in": bool, "email": str|None, "accounts": [(id, name)]} from `whoami --json`."""
    data = first_json(text, "{")
    if not data.get("loggedIn"):
        return {"logged_in": False, "email": None, "accounts": []}
    accounts = [(a["id"], a.get("name", "")) for a in data.get("accounts", [])]
    return {"logged_in": True, "email": data.get("email"), "accounts": accounts}


def parse_d1_list(text):
    """[(uuid, name)] from `d1 list --json`."""
    return [(db["uuid"], db["name"]) for db in first_json(text, "[")]


def parse_d1_created_id(text):
    """The new database's id from `d1 create`: the snippet is TOML for a wrangler.toml project
    (database_id = "…") and JSON for a wrangler.json one ("database_id": "…")."""
    found = re.search(r'database_id"?\s*[=:]\s*"(' + UUID + ')"', strip_ansi(text))
    if not found:
        raise ParseError("no database_id in the output of wrangler d1 create")
    return found.group(1)


def parse_secret_names(text):
    """The names from `secret list` (JSON)."""
    return [s["name"] for s in first_json(text, "[")]


def parse_deploy_url(text):
    """The workers.dev URL among the targets listed after "Deployed NAME triggers"."""
    lines = strip_ansi(text).splitlines()
    for i, line in enumerate(lines):
        if re.match(r"Deployed \S+ triggers", line.strip()):
            for target in lines[i + 1 :]:
                target = target.strip()
                if not target.startswith("https://"):
                    break
                if re.fullmatch(r"https://[a-z0-9-]+\.[a-z0-9-]+\.workers\.dev", target):
                    return target
    raise ParseError("no workers.dev URL after 'Deployed … triggers' in the output of wrangler deploy")


def _d1_block(toml_text):
    """(start, end) of the [[d1_databases]] table whose binding is DB."""
    headers = [m.start() for m in re.finditer(r"(?m)^\s*\[", toml_text)] + [len(toml_text)]
    for start, end in zip(headers, headers[1:]):
        block = toml_text[start:end]
        if re.match(r"\s*\[\[d1_databases\]\]", block) and re.search(
            r'(?m)^\s*binding\s*=\s*"' + D1_BINDING + '"', block
        ):
            return start, end
    raise ParseError(f'wrangler.toml has no [[d1_databases]] table with binding = "{D1_BINDING}"')


def _field(block, key):
    found = re.search(r'(?m)^\s*' + key + r'\s*=\s*"([^"]*)"', block)
    return found.group(1) if found else None


def read_d1_config(toml_text):
    """(database_name, database_id or None while it is the placeholder or absent)."""
    start, end = _d1_block(toml_text)
    block = toml_text[start:end]
    name = _field(block, "database_name")
    if not name:
        raise ParseError("the DB table in wrangler.toml has no database_name")
    db_id = _field(block, "database_id")
    return name, None if db_id in (None, "", PLACEHOLDER_ID) else db_id


def with_d1_id(toml_text, db_id):
    """wrangler.toml with database_id set to db_id, every other byte kept. Only the placeholder
    (or a missing id) is ever replaced: a different real id means another database is already
    configured, and replacing it would point the Worker at other data."""
    if not re.fullmatch(UUID, db_id):
        raise ParseError(f"{db_id!r} is not a D1 database id")
    start, end = _d1_block(toml_text)
    block = toml_text[start:end]
    _, current = read_d1_config(toml_text)
    if current == db_id:
        return toml_text
    if current is not None:
        raise ParseError(f"wrangler.toml already names database {current}; not replacing it with {db_id}")
    line = re.search(r'(?m)^(\s*database_id\s*=\s*)"[^"]*"', block)
    if line:
        block = block[: line.start()] + f'{line.group(1)}"{db_id}"' + block[line.end() :]
    else:
        name_line = re.search(r'(?m)^\s*database_name\s*=.*$', block)
        block = block[: name_line.end()] + f'\ndatabase_id = "{db_id}"' + block[name_line.end() :]
    return toml_text[:start] + block + toml_text[end:]


def plan_d1(name, configured_id, databases):
    """What scripts/deploy does about the database, given wrangler.toml's (name, id) and the
    account's [(uuid, name)]:
      keep ID     wrangler.toml names a database this account has
      adopt ID    no id yet, but the account has a database of that name: use it, create nothing
      create NAME no id yet and no such database
      foreign ID  wrangler.toml names a database this account does not have (another account?)"""
    if configured_id is not None:
        return ("keep" if any(uuid == configured_id for uuid, _ in databases) else "foreign", configured_id)
    for uuid, db_name in databases:
        if db_name == name:
            return "adopt", uuid
    return "create", name


def worker_name(toml_text):
    found = re.search(r'(?m)^name\s*=\s*"([^"]+)"', toml_text)
    if not found:
        raise ParseError("wrangler.toml has no top-level name")
    return found.group(1)


def _read(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def main(argv):
    cmd, args = (argv[1], argv[2:]) if len(argv) > 1 else ("", [])
    try:
        if cmd == "whoami" and len(args) == 1:
            who = parse_whoami(_read(args[0]))
            print(f"in {len(who['accounts'])}" if who["logged_in"] else "out")
        elif cmd == "accounts" and len(args) == 1:
            for account_id, account_name in parse_whoami(_read(args[0]))["accounts"]:
                print(f"{account_id}\t{account_name}")
        elif cmd == "d1-config" and len(args) == 1:
            name, db_id = read_d1_config(_read(args[0]))
            print(f"{name}\t{db_id or ''}")
        elif cmd == "d1-plan" and len(args) == 2:
            name, db_id = read_d1_config(_read(args[0]))
            print(*plan_d1(name, db_id, parse_d1_list(_read(args[1]))))
        elif cmd == "d1-created-id" and len(args) == 1:
            print(parse_d1_created_id(_read(args[0])))
        elif cmd == "set-d1-id" and len(args) == 2:
            before = _read(args[0])
            after = with_d1_id(before, args[1])
            if after != before:
                with open(args[0], "w", encoding="utf-8") as f:
                    f.write(after)
            print("written" if after != before else "unchanged")
        elif cmd == "has-secret" and len(args) == 2:
            print("yes" if args[0] in parse_secret_names(_read(args[1])) else "no")
        elif cmd == "deploy-url" and len(args) == 1:
            print(parse_deploy_url(_read(args[0])))
        elif cmd == "worker-name" and len(args) == 1:
            print(worker_name(_read(args[0])))
        else:
            sys.stderr.write(__doc__)
            return 2
    except (ParseError, KeyError, TypeError, OSError) as e:
        sys.stderr.write(f"wrangler_out {cmd}: {e}\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
