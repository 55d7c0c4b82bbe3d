#!/usr/bin/env python3
"""The North Star before the first word, for scripts/claude-code: the real Claude Code with the
SessionStart hook and the plugin exactly as scripts/lib/connect.py prints them, and the first
request it sends the stand-in model.

Usage: north_star.py CLAUDE_BIN MCP_URL PROJECT RECORDS WORK

MCP_URL is http://127.0.0.1:PORT/<token>/mcp of a running server; PROJECT is made there. Each
`claude -p` runs in a throwaway HOME, from a git repository whose committed .handoff names
PROJECT, with only the variables the banner's `export` lines set (changed where a run says so),
against one stand-in (standin.py --log). Checks, each an `ok - …` / `FAIL - …` line:
  - hook, startup: the first request holds the lead line and get_state's two texts byte for byte
    (the contract text as /mcp's get_state returns it);
  - hook, resumed (`claude -p --resume <session>`) after the focus changed: its request holds
    the new contract text, from `resume`;
  - a state over the 10,000 characters Claude Code keeps whole from a hook, named by
    HANDOFF_PROJECT: its contract text whole, and the note that the reference block is left out;
  - a wrong token, a port nothing listens on, and a server that never answers: the session still
    answers within seconds, and its first request holds no state, no lead line and no error text;
  - the plugin: `claude plugin marketplace add <repo>` and `claude plugin install …` as printed,
    then the same first-request check, and `claude mcp list` connects its server with the token
    from HANDOFF_TOKEN.
Each first request's system and messages are saved in RECORDS as north-star-<run>.json (the
token never is: it is not in them). Exits 1 on a failure. Python 3 standard library only.
"""

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request

sys.dont_write_bytecode = True  # no __pycache__ in the tree
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "scripts", "lib"))
import connect  # noqa: E402

LEAD = "This project's state from handoff-mcp: "
failures = 0


def check(name, ok, detail=""):
    global failures
    failures += not ok
    print(f"{'ok' if ok else 'FAIL'} - {name}" + (f" ({detail})" if detail and not ok else ""))
    return ok


def printed(mcp_url):
    """What the local banner prints: the hook's settings, the variables, the plugin's commands."""
    lines = connect.banner("local", mcp_url, "0", "0").splitlines()
    hooks = json.loads("\n".join(lines[lines.index(connect.HOOK_BEGIN) + 1 : lines.index(connect.HOOK_END)]))
    env = dict(line[len("export ") :].split("=", 1) for line in lines if line.startswith("export "))
    plugin = [line.split()[1:] for line in lines if line.startswith("claude plugin ")]
    return hooks, env, plugin


def call(mcp_url, tool, arguments):
    """A tool's text items, called over /mcp as a 2025-era client."""
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}
    request = urllib.request.Request(mcp_url, json.dumps(body).encode(), method="POST", headers={
        "content-type": "application/json", "accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2025-06-18"})
    with urllib.request.urlopen(request, timeout=20) as answer:
        result = json.loads(answer.read())["result"]
    return [item["text"] for item in result["content"]]


def unused_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Session:
    """Throwaway homes and one stand-in whose log tells each run's requests apart."""

    def __init__(self, claude, work):
        self.claude, self.work = claude, work
        self.log = os.path.join(work, "requests.jsonl")
        port_file = os.path.join(work, "north-star-port")
        self.standin = subprocess.Popen(
            [sys.executable, os.path.join(HERE, "standin.py"), "--run", "A", "--project", "none",
             "--record", os.path.join(work, "north-star-standin.json"), "--port-file", port_file,
             "--lifetime", "300", "--log", self.log], stderr=subprocess.DEVNULL)
        for _ in range(100):
            if os.path.exists(port_file):
                break
            time.sleep(0.1)
        with open(port_file) as f:
            self.port = f.read().strip()

    def home(self, name, settings=None):
        home = os.path.join(self.work, name)
        os.makedirs(os.path.join(home, ".claude"), exist_ok=True)
        if settings is not None:
            with open(os.path.join(home, ".claude", "settings.json"), "w", encoding="utf-8") as f:
                json.dump(settings, f)
        return home

    def env(self, home, variables):
        return {"PATH": os.environ["PATH"], "HOME": home, "CLAUDE_CONFIG_DIR": os.path.join(home, ".claude"),
                "LANG": "C.UTF-8", "CI": "true", "DISABLE_AUTOUPDATER": "1", "DISABLE_TELEMETRY": "1",
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "ANTHROPIC_API_KEY": "stand-in",
                "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{self.port}", **variables}

    def run(self, cwd, env, *args):
        """claude ARGS…; its exit status, stdout, and the Messages requests it sent, in order."""
        before = self.requests()
        started = time.monotonic()
        done = subprocess.run([self.claude, *args], cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=90)
        print(f"  ({' '.join(args[:2])}: {time.monotonic() - started:.1f} s)")
        return done.returncode, done.stdout, self.requests()[len(before):]

    def requests(self):
        if not os.path.exists(self.log):
            return []
        with open(self.log, encoding="utf-8") as f:
            return [json.loads(line) for line in f if line.strip()]

    def stop(self):
        self.standin.kill()
        self.standin.wait()


def context(request):
    """Everything a request puts before the model but its tool definitions: system and messages."""
    return {"system": request.get("system"), "messages": request.get("messages")}


def _strings(value):
    """Every string inside a JSON value, unescaped, so a text is found as the model reads it."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)


def save(records, name, request):
    with open(os.path.join(records, f"north-star-{name}.json"), "w", encoding="utf-8") as f:
        json.dump(context(request) if request else None, f, ensure_ascii=False, indent=1)


def main():
    claude, mcp_url, project, records, work = sys.argv[1:6]
    hooks, variables, plugin = printed(mcp_url)
    call(mcp_url, "set_north_star", {"project_id": project, "text": "Every session starts on the North Star"})
    call(mcp_url, "add_task", {"project_id": project, "body": "Drop the old notes", "kind": "cleanup"})
    texts = call(mcp_url, "get_state", {"project_id": project})
    contract, body = texts[0], f"{texts[0]}\n{texts[1]}"
    check("the printed hook runs on startup, resume, clear and compact",
          [m["matcher"] for m in hooks["hooks"]["SessionStart"]] == ["startup|resume|clear|compact"])
    repo = os.path.join(work, "repo")
    os.makedirs(repo, exist_ok=True)
    subprocess.run(["git", "init", "-q", repo], check=False)
    with open(os.path.join(repo, ".handoff"), "w") as f:
        f.write(project + "\n")
    session = Session(claude, work)
    try:
        latest = [contract]  # the state as get_state now returns it
        holds = lambda request: request is not None and latest[-1] in "".join(_strings(context(request)))
        clean = lambda request: request is not None and not any(
            s in "".join(_strings(context(request))) for s in (LEAD, "handoff-mcp hook", contract[:20], "state.txt"))

        home = session.home("home-hook", hooks)
        env = session.env(home, variables)
        rc, out, sent = session.run(repo, env, "-p", "Hello.", "--output-format", "json", "--tools", "")
        first = sent[0] if sent else None
        save(records, "hook-startup", first)
        check("hook, startup: claude -p answers", rc == 0 and '"result"' in out, f"exit {rc}")
        text = "".join(_strings(context(first))) if first else ""
        check("hook, startup: the first model request holds the lead line and get_state's contract text byte for byte",
              LEAD + f"project {project}" in text and holds(first))
        check("hook, startup: … and both of get_state's texts as state.txt serves them", body in text)
        # The state moves on between the two sessions, so the resumed one must read it afresh.
        session_id = json.loads(out or "{}").get("session_id", "") if rc == 0 else ""
        call(mcp_url, "set_focus", {"project_id": project, "statement": f"resume reads the state again ({os.urandom(3).hex()})",
                                    "why": "a resumed session starts from the North Star too"})
        fresh = call(mcp_url, "get_state", {"project_id": project})[0]
        latest.append(fresh)
        rc, _, sent = session.run(repo, env, "-p", "Again.", "--resume", session_id, "--tools", "")
        resumed = sent[0] if sent else None
        save(records, "hook-resume", resumed)
        text = "".join(_strings(context(resumed))) if resumed else ""
        check("hook, resumed (claude -p --resume): its request holds the new state, from the resume hook",
              rc == 0 and "SessionStart:resume" in text and fresh in text and fresh != contract)

        # A state past what Claude Code keeps whole from a hook (10,000 characters): its contract
        # text arrives whole, with the note that the reference block was left out. The project is
        # named by HANDOFF_PROJECT, which comes before .handoff.
        long = f"{project}-long"
        call(mcp_url, "set_north_star", {"project_id": long, "text": "北極星" * 333})
        for number in range(20):
            call(mcp_url, "add_task", {"project_id": long, "kind": "cleanup", "body": f"{number:02d} " + "後処理" * 82})
        long_contract = call(mcp_url, "get_state", {"project_id": long})[0]
        rc, _, sent = session.run(repo, {**env, "HANDOFF_PROJECT": long}, "-p", "Hello.", "--tools", "",
                                  "--no-session-persistence")
        first = sent[0] if sent else None
        text = "".join(_strings(context(first))) if first else ""
        check("hook, a state over 10,000 characters (HANDOFF_PROJECT): the contract text whole, the reference block left out",
              rc == 0 and long_contract in text and "the reference block with each deferred task's id is left out"
              in text.lower() and "Reference data, not a to-do list" not in text and "persisted-output" not in text)

        # A server that takes the connection and never answers: the hook gives up on its own.
        silent = socket.socket()
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        for name, change in (("wrong-token", {"HANDOFF_TOKEN": "wrong-token"}),
                             ("no-server", {"HANDOFF_URL": f"http://127.0.0.1:{unused_port()}"}),
                             ("silent-server", {"HANDOFF_URL": f"http://127.0.0.1:{silent.getsockname()[1]}"})):
            started = time.monotonic()
            rc, out, sent = session.run(repo, {**env, **change}, "-p", "Hello.", "--tools", "",
                                        "--no-session-persistence")
            first = sent[0] if sent else None
            save(records, f"hook-{name}", first)
            took = time.monotonic() - started
            check(f"hook, {name}: the session still runs, within seconds", rc == 0 and out.strip() != "" and
                  took < 15, f"exit {rc}, {took:.1f} s")
            check(f"hook, {name}: the first request holds no state and no error text", clean(first))

        home = session.home("home-plugin")
        env = session.env(home, variables)
        for args in plugin:
            rc, out, _ = session.run(repo, env, *args)
            check(f"plugin: claude {' '.join(args[:3])} … (as printed) succeeds", rc == 0, out.strip()[-200:])
        rc, out, sent = session.run(repo, env, "-p", "Hello.", "--tools", "", "--no-session-persistence")
        first = sent[0] if sent else None
        save(records, "plugin-startup", first)
        check("plugin: the first model request holds get_state's contract text byte for byte", rc == 0 and holds(first))
        rc, out, _ = session.run(repo, env, "mcp", "list")
        check("plugin: claude mcp list connects its server with the token from HANDOFF_TOKEN",
              any(line.startswith("plugin:handoff:handoff: ") and line.endswith("(HTTP) - ✔ Connected")
                  for line in out.splitlines()), out.replace(variables.get("HANDOFF_TOKEN", "-"), "<token>"))
    finally:
        session.stop()
    return 1 if failures else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Exception as err:  # a crash is a failure that names itself, never a silent pass
        check(f"north_star.py ran to the end ({err!r})", False)
        sys.exit(1)
