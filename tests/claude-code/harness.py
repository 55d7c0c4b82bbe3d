"""What the hooks' checks share (north_star.py, stop_hook.py, hook_paths.py): the `ok - …` lines,
the server's tools and state.txt over plain HTTP, ports and a server that never answers, the
stand-in model (standin.py --log) and real `claude -p` sessions in throwaway homes, each told
apart in the stand-in's log by a tag in its prompt so that sessions can run in parallel, and
the text a SessionStart hook put in a request. Python 3 standard library only.
"""

import concurrent.futures
import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
HOOKS = os.path.join(ROOT, "plugins", "handoff", "hooks")
# What the hooks print, as docs/clients.md quotes it: the lead line's start, the fence lines'
# starts, the warning line's start, the note after a cut state, and the Stop hook's request.
LEAD = "Project {project}'s state from handoff-mcp, read as this session started, is below between the two lines that hold "
BEGIN = "--- begin handoff-mcp state "
END = "--- end handoff-mcp state "
WARNING = "handoff-mcp's SessionStart hook did not read "
NOT_ABOVE = "Not above, so that this stays within the 10,000 characters Claude Code passes on whole from a hook: "
NUDGE = "This session changed the repository, and project "
# Claude Code 2.1.332 passes a hook's output on whole up to this many UTF-16 code units.
CLAUDE_HOOK_LIMIT = 10_000


def entry(main):
    """Exits with MAIN's status; a crash is a failure that names itself, never a silent pass."""
    try:
        sys.exit(main())
    except Exception as err:
        print(f"FAIL - {os.path.basename(sys.argv[0])} ran to the end ({err!r})")
        sys.exit(1)


def git_repo(repo, project=None):
    """A git repository at REPO with one commit; its committed .handoff names PROJECT if given."""
    os.makedirs(repo, exist_ok=True)
    if project:
        with open(os.path.join(repo, ".handoff"), "w") as f:
            f.write(project + "\n")
    subprocess.run(["git", "init", "-q", repo], check=True)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--allow-empty", "-m", "the project's name")
    return repo


def git(repo, *args):
    subprocess.run(["git", "-C", repo, "-c", "user.email=t@example.invalid", "-c", "user.name=t", *args],
                   check=True, capture_output=True)


def nudge(project):
    """The request the Stop hook sends, as docs/clients.md quotes it."""
    return (f"{NUDGE}{project}'s handoff state (its focus and tasks in handoff-mcp) has not been written since the "
            "session started. Before you stop, please bring it up to date for the next session: set_focus if the "
            "focus has moved, add_task for work left to do later, complete_task for tasks this session finished "
            "(get_state lists them with their task_id). If none of that needs to change, say so in one line and stop.")


class Checks:
    """`ok - NAME` / `FAIL - NAME (detail)` lines, printed in the order the checks were made
    however many threads made them."""

    def __init__(self):
        self.lines, self.failures, self.lock = [], 0, threading.Lock()

    def __call__(self, name, ok, detail=""):
        with self.lock:
            self.failures += not ok
            self.lines.append(f"{'ok' if ok else 'FAIL'} - {name}" + (f" ({detail})" if detail and not ok else ""))
        return ok

    def note(self, text):
        with self.lock:
            self.lines.append(f"  ({text})")

    def flush(self):
        with self.lock:
            for line in self.lines:
                print(line, flush=True)
            self.lines = []


def job(function, *args):
    """FUNCTION(checks, *ARGS) as a job for run_jobs, named after FUNCTION."""
    def run(checks):
        return function(checks, *args)
    run.__name__ = function.__name__
    return run


def run_jobs(jobs, workers=3):
    """Runs each job (a function of one Checks) on a pool, and prints each job's lines in the
    order of JOBS once all have run; the number of failures. A job that raises fails by name."""
    checks = [Checks() for _ in jobs]

    def timed(job, c):
        started = time.monotonic()
        try:
            return job(c)
        finally:
            c.note(f"{job.__name__}: {time.monotonic() - started:.1f} s")

    results = parallel([lambda job=job, c=c: timed(job, c) for job, c in zip(jobs, checks)], workers)
    failures = 0
    for job, c, result in zip(jobs, checks, results):
        if isinstance(result, Exception):
            c(f"{job.__name__} ran to the end ({result!r})", False)
        c.flush()
        failures += c.failures
    return failures


def parallel(jobs, workers=3):
    """Runs each job (a function of no arguments) on a pool; their results, in order. A job that
    raises gives its exception as its result, so the caller can fail it by name."""
    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        futures = [pool.submit(job) for job in jobs]
    results = []
    for future in futures:
        try:
            results.append(future.result())
        except Exception as err:  # reported by the caller as a failed check
            results.append(err)
    return results


def call(mcp_url, tool, arguments, token=None):
    """A tool's text items, called over /mcp as a 2025-era client."""
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream",
               "mcp-protocol-version": "2025-06-18"}
    if token:
        headers["authorization"] = f"Bearer {token}"
    request = urllib.request.Request(mcp_url, json.dumps(body).encode(), method="POST", headers=headers)
    with urllib.request.urlopen(request, timeout=20) as answer:
        result = json.loads(answer.read())["result"]
    return [item["text"] for item in result["content"]]


def tools_list(mcp_url):
    """tools/list's tools by name, as the server lists them."""
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    request = urllib.request.Request(mcp_url, json.dumps(body).encode(), method="POST", headers={
        "content-type": "application/json", "accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2025-06-18"})
    with urllib.request.urlopen(request, timeout=20) as answer:
        return {tool["name"]: tool for tool in json.loads(answer.read())["result"]["tools"]}


def state_txt(origin, token, path):
    """GET ORIGIN+PATH with the bearer token: (status, headers with lower-case names, body)."""
    request = urllib.request.Request(origin + path, headers={"authorization": f"Bearer {token}"})
    try:
        with urllib.request.urlopen(request, timeout=20) as answer:
            return answer.status, {k.lower(): v for k, v in answer.headers.items()}, answer.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, {k.lower(): v for k, v in err.headers.items()}, err.read().decode()


def unused_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def silent_server():
    """A socket that takes connections and never answers (closed when the process ends)."""
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(16)
    return silent


def utf16_len(text):
    return len(text.encode("utf-16-le")) // 2


class Standin:
    """One stand-in model for every session of a checker; its log tells each session apart."""

    def __init__(self, work, name):
        self.log = os.path.join(work, f"{name}-requests.jsonl")
        port_file = os.path.join(work, f"{name}-port")
        self.process = subprocess.Popen(
            [sys.executable, os.path.join(HERE, "standin.py"), "--run", "A", "--project", "none",
             "--record", os.path.join(work, f"{name}-standin.json"), "--port-file", port_file,
             "--lifetime", "300", "--log", self.log], stderr=subprocess.DEVNULL)
        for _ in range(100):
            if os.path.exists(port_file):
                break
            time.sleep(0.1)
        with open(port_file) as f:
            self.port = f.read().strip()

    def requests(self, tag):
        """The Messages requests, in order, whose conversation holds TAG (a session's prompt)."""
        if not os.path.exists(self.log):
            return []
        with open(self.log, encoding="utf-8") as f:
            lines = [line for line in f if tag in line]
        return [json.loads(line) for line in lines]

    def stop(self):
        self.process.kill()
        self.process.wait()


class Claude:
    """Real `claude` runs against a stand-in, each in a throwaway HOME."""

    def __init__(self, binary, standin, work):
        self.binary, self.standin, self.work = binary, standin, work

    def home(self, name, settings=None):
        home = os.path.join(self.work, name)
        os.makedirs(os.path.join(home, ".claude"), exist_ok=True)
        if settings is not None:
            with open(os.path.join(home, ".claude", "settings.json"), "w", encoding="utf-8") as f:
                json.dump(settings, f)
        return home

    def env(self, home, variables):
        """Only what Claude Code needs, the stand-in, and VARIABLES (the hooks' settings); the
        hooks' session files go under the home's own cache."""
        return {"PATH": os.environ["PATH"], "HOME": home, "CLAUDE_CONFIG_DIR": os.path.join(home, ".claude"),
                "LANG": "C.UTF-8", "CI": "true", "DISABLE_AUTOUPDATER": "1", "DISABLE_TELEMETRY": "1",
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "ANTHROPIC_API_KEY": "stand-in",
                "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{self.standin.port}", **variables}

    def run(self, cwd, env, tag, *args):
        """claude ARGS…; (exit status, stdout, seconds, the requests whose conversation holds
        TAG, which the prompt in ARGS carries)."""
        started = time.monotonic()
        done = subprocess.run([self.binary, *args], cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=90)
        took = time.monotonic() - started
        return done.returncode, done.stdout, took, self.standin.requests(tag) if tag else []


def session_id(stdout):
    """The session id of a `claude -p --output-format json` run, or ''."""
    return answer(stdout).get("session_id", "")


def session_result(stdout):
    """The result text of a `claude -p --output-format json` run, or ''."""
    return answer(stdout).get("result", "")


def answer(stdout):
    try:
        return json.loads(stdout or "{}")
    except ValueError:
        return {}


def strings(value):
    """Every string inside a JSON value, unescaped, so a text is found as the model reads it."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings(item)


def context(request):
    """Everything a request puts before the model but its tool definitions: system and messages."""
    if request is None:
        return ""
    return "\n".join(strings({"system": request.get("system"), "messages": request.get("messages")}))


def hook_outputs(request, source):
    """Each text a SessionStart hook of SOURCE (startup, resume, clear, compact) put in the
    request, from its first character to the end of its last line of ours: the end line that
    holds the begin line's marker and the note after it, else the first line alone (a warning)."""
    prefix = f"SessionStart:{source} hook success: "
    text, found, at = context(request), [], 0
    while (at := text.find(prefix, at)) != -1:
        at += len(prefix)
        lines = text[at:].split("\n")
        begin = lines[1] if len(lines) > 1 else ""
        marker = begin[len(BEGIN) : -len(" ---")] if begin.startswith(BEGIN) and begin.endswith(" ---") else None
        end = f"{END}{marker} ---"
        if marker is None or end not in lines:
            found.append(lines[0])
            continue
        stop = lines.index(end) + 1
        if stop < len(lines) and lines[stop].startswith(NOT_ABOVE):
            stop += 1
        found.append("\n".join(lines[:stop]))
    return found


def fence(output):
    """(lead line, marker, fenced lines, lines after the end line) of one hook output, or None."""
    lines = output.split("\n")
    if len(lines) < 3 or not lines[1].startswith(BEGIN) or not lines[1].endswith(" ---"):
        return None
    marker = lines[1][len(BEGIN) : -len(" ---")]
    end_line = f"{END}{marker} ---"
    if end_line not in lines:
        return None
    at = lines.index(end_line)
    return lines[0], marker, lines[2:at], lines[at + 1 :]


def save(records, name, request):
    with open(os.path.join(records, f"{name}.json"), "w", encoding="utf-8") as f:
        json.dump({"system": request.get("system"), "messages": request.get("messages")} if request else None,
                  f, ensure_ascii=False, indent=1)
