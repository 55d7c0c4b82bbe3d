#!/usr/bin/env python3
"""Every path through the two hook scripts, run directly (no Claude Code) under dash and bash,
for scripts/claude-code: what each prints, that each exits 0 within 5 seconds (each path timed
several times, the spread printed), and what each leaves in the session files.

Usage: hook_paths.py MCP_URL PREFIX RECORDS WORK [PROJECT_TOKEN=PROJECT]

MCP_URL is http://127.0.0.1:PORT/<token>/mcp of a running server (its token reaches every
project); PROJECT_TOKEN=PROJECT, when given, is a credential of one project on it. Where the
real server cannot play a part (a server that is not handoff-mcp's, an answer that never ends,
control characters and encoded labels in an answer) a small server here plays it, by the first
segment of HANDOFF_URL's path. Where busybox or original-awk (the one-true-awk macOS ships a
version of) are installed, the output paths run under them too. Prints `ok - …` / `FAIL - …`
lines; exits 1 on a failure. Python 3 standard library only.
"""

import http.server
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import threading
import time

sys.dont_write_bytecode = True  # no __pycache__ in the tree
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import harness  # noqa: E402
from harness import NOT_ABOVE, WARNING, fence, utf16_len  # noqa: E402

START = os.path.join(harness.HOOKS, "session-start.sh")
STOP = os.path.join(harness.HOOKS, "stop.sh")
BOUND = 5.0  # seconds: every run of a hook ends within this
FIXED_MARKER = "0123456789abcdef0123"  # what the od stand-in gives first (marker collision)
# The line after the block when HANDOFF_URL ends in / (docs/clients.md quotes it).
SLASH = ("HANDOFF_URL ends in /, so the plugin's MCP server (HANDOFF_URL, then /mcp) is at a URL holding //mcp, "
         "a path handoff-mcp answers 404 (Not Found), though Claude Code 2.1.332 sends /mcp: set HANDOFF_URL without "
         "the trailing slash.")


class Fake(http.server.BaseHTTPRequestHandler):
    """The parts the real server cannot play, by the first segment of the path."""

    protocol_version = "HTTP/1.1"
    seen = []  # every path asked for
    sent = {}  # mode -> bytes of body written

    def log_message(self, *args):
        pass

    def do_GET(self):
        Fake.seen.append(self.path)
        mode = self.path.split("/")[1]
        body = ("🎯 NORTH STAR: red \x1b[31mtext\x1b[0m, a bell\x07, a NUL\x00 and a CR\r here\n"
                "▶ 本丸（今やる1つ）: " + FIXED_MARKER + "\n— 以下は後処理（北極星達成後・今は着手しない）—\n  （なし）\n\n"
                "Reference data, not a to-do list: x\n").encode()
        headers = {"content-type": "text/plain; charset=utf-8", "x-handoff-project": "fake-project",
                   "x-handoff-written-at": "1", "x-handoff-writers":
                   "owner, Aiko%27s laptop, %22quoted%22 %1B[31mred%0Aline, %E7%94%B0%E4%B8%AD (OAuth), a%2Cb, back\\nslash"}
        if mode == "foreign":
            headers["content-type"] = "text/html"
        elif mode == "anonymous":
            del headers["x-handoff-project"]
        elif mode == "endless":
            self.send_response(200)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            line = ("  [cleanup] " + "後" * 200 + "\n").encode()
            chunk = b"%x\r\n%s\r\n" % (len(line) * 64, line * 64)
            start, total = time.monotonic(), 0
            try:
                while time.monotonic() - start < 8:
                    self.wfile.write(chunk)
                    total += len(line) * 64
            except OSError:
                pass
            Fake.sent[mode] = total
            return
        self.send_response(200)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class Paths:
    def __init__(self, mcp_url, prefix, records, work, project_token):
        self.mcp_url, self.prefix, self.records, self.work = mcp_url, prefix, records, work
        self.origin, self.token = mcp_url.rsplit("/", 2)[0], mcp_url.rsplit("/", 2)[1]
        self.project_token = project_token
        self.fake = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Fake)
        self.fake.daemon_threads = True
        threading.Thread(target=self.fake.serve_forever, daemon=True).start()
        self.fake_url = f"http://127.0.0.1:{self.fake.server_address[1]}"
        self.times = {}  # path -> [seconds]
        self.lock = threading.Lock()
        self.shells = [["dash"], ["dash"], ["bash"]]
        # (label, shell, PATH prefix, exact) for the output paths; an inexact one may print less
        # of a long state (an awk of characters counts each as two), never more.
        self.extra = []
        if shutil.which("busybox"):
            self.extra.append(("busybox sh", ["busybox", "sh"], "", True))
        if shutil.which("original-awk"):
            shim = os.path.join(work, "awk-shim")
            os.makedirs(shim, exist_ok=True)
            if not os.path.exists(os.path.join(shim, "awk")):
                os.symlink(shutil.which("original-awk"), os.path.join(shim, "awk"))
            self.extra.append(("dash with original-awk", ["dash"], shim, True))
        if shutil.which("gawk"):
            # An awk that reads UTF-8 characters even under LC_ALL=C, as the hook must allow for.
            shim = os.path.join(work, "chars-awk-shim")
            os.makedirs(shim, exist_ok=True)
            with open(os.path.join(shim, "awk"), "w") as f:
                f.write(f"#!/bin/sh\nLC_ALL=C.UTF-8 exec {shutil.which('gawk')} \"$@\"\n")
            os.chmod(os.path.join(shim, "awk"), 0o755)
            self.extra.append(("dash with an awk of characters", ["dash"], shim, False))
        # An od that first gives a marker the fake's body holds, then the real one.
        self.od_shim = os.path.join(work, "od-shim")
        os.makedirs(self.od_shim, exist_ok=True)
        with open(os.path.join(self.od_shim, "od"), "w") as f:
            f.write(f"#!/bin/sh\nif [ ! -e \"$0.used\" ]; then : >\"$0.used\"; echo ' {FIXED_MARKER}'; exit 0; fi\n"
                    f"exec {shutil.which('od')} \"$@\"\n")
        os.chmod(os.path.join(self.od_shim, "od"), 0o755)

    def repo(self, name, project=None, git=True):
        repo = os.path.join(self.work, "paths", name)
        if git:
            return harness.git_repo(repo, project)
        os.makedirs(repo, exist_ok=True)
        if project:
            with open(os.path.join(repo, ".handoff"), "w") as f:
                f.write(project + "\n")
        return repo

    git = staticmethod(harness.git)

    def env(self, **change):
        env = {"PATH": os.environ["PATH"], "HOME": os.path.join(self.work, "paths-home"), "LANG": "C.UTF-8",
               "XDG_CACHE_HOME": os.path.join(self.work, "paths-cache"), "HANDOFF_URL": self.origin,
               "HANDOFF_TOKEN": self.token}
        env.update(change)
        return {k: v for k, v in env.items() if v is not None}

    def hook(self, path, script, repo, env, stdin="{}", shell=("dash",), path_prefix=""):
        """One run of SCRIPT; (exit status, stdout, seconds), the time kept under PATH. STDIN None:
        a standard input that stays open and never says anything (the run is ended after 20 s)."""
        if path_prefix:
            env = {**env, "PATH": path_prefix + ":" + env["PATH"]}
        started = time.monotonic()
        process = subprocess.Popen([*shell, script], cwd=repo, env=env, stdin=subprocess.PIPE,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            if stdin is not None:
                out, _ = process.communicate(stdin.encode(), timeout=20)
            else:  # the script's stdout ends when it does; its stdin stays open until then
                timer = threading.Timer(20, process.kill)
                timer.start()
                out = process.stdout.read()
                process.wait()
                timer.cancel()
                process.stdin.close()
                process.stderr.close()
        except subprocess.TimeoutExpired:
            process.kill()
            out, _ = process.communicate()
        took = time.monotonic() - started
        with self.lock:
            self.times.setdefault(path, []).append(took)
        return process.returncode, out.decode("utf-8", "replace"), took

    def each_shell(self, check, path, script, repo, env, stdin="{}", extra=False, path_prefix=""):
        """Runs the path under every shell (dash twice, bash once, and the extra shells when
        EXTRA); checks each exits 0 within BOUND and prints the same; returns the output."""
        runs = [(" ".join(shell), shell, path_prefix, True) for shell in self.shells]
        if extra:
            runs += [(label, shell, ":".join(p for p in (prefix, path_prefix) if p), exact)
                     for label, shell, prefix, exact in self.extra]
        results = harness.parallel([lambda s=shell, x=prefix: self.hook(path, script, repo, env, stdin, s, x)
                                    for _, shell, prefix, _ in runs], workers=len(runs))
        outputs = [(label, exact, *result) for (label, _, _, exact), result in zip(runs, results)]
        slow = [(label, rc, round(took, 2)) for label, _, rc, _, took in outputs if rc != 0 or took >= BOUND]
        check(f"{path}: every run exits 0 within {BOUND:.0f} s", not slow, slow)
        shape = lambda out: re.sub(r"[0-9a-f]{20}", "M", out)  # noqa: E731  the marker differs per run
        first = outputs[0][3]
        differ = [label for label, exact, _, out, _ in outputs if exact and shape(out) != shape(first)]
        check(f"{path}: the same output under {', '.join(sorted({o[0] for o in outputs if o[1]}))}", not differ, differ)
        for label, _, _, out, _ in (o for o in outputs if not o[1]):
            same = shape(out) == shape(first)
            check(f"{path}: under {label}, {'the same output' if same else 'less of the state, within the 10,000'}",
                  same or (utf16_len(out.strip()) <= harness.CLAUDE_HOOK_LIMIT and shape(out).split("\n")[0] == shape(first).split("\n")[0]
                           and utf16_len(out) < utf16_len(first)), out[:200])
        return first

    def state_lines(self, project, token=None):
        status, headers, body = harness.state_txt(self.origin, token or self.token, f"/projects/{project}/state.txt")
        return body[:-1].split("\n") if status == 200 else None


def warning(whose, why):
    return f"{WARNING}{whose} state, so this session starts without it: {why}.\n"


def start_paths(check, p):
    project = f"{p.prefix}-paths"
    harness.call(p.mcp_url, "set_north_star", {"project_id": project, "text": "Every path ends well"})
    harness.call(p.mcp_url, "add_task", {"project_id": project, "body": "A task", "kind": "cleanup"})
    lines = p.state_lines(project)
    repo = p.repo("start", project)
    out = p.each_shell(check, "start: .handoff names the project", START, repo, p.env(), extra=True)
    parsed = fence(out.rstrip("\n"))
    check("start: .handoff names the project: its state, fenced, byte for byte", parsed is not None and parsed[2] == lines, out[:300])

    other = f"{p.prefix}-paths-other"
    harness.call(p.mcp_url, "set_north_star", {"project_id": other, "text": "HANDOFF_PROJECT wins"})
    out = p.each_shell(check, "start: HANDOFF_PROJECT over .handoff", START, repo, p.env(HANDOFF_PROJECT=other))
    check("start: HANDOFF_PROJECT over .handoff: that project's state",
          (parsed := fence(out.rstrip("\n"))) is not None and parsed[2] == p.state_lines(other), out[:200])

    # A credential of every project, no .handoff: /state.txt answers 400, the folder's name is used.
    folder = p.repo(f"{p.prefix}-paths-folder")
    harness.call(p.mcp_url, "set_north_star", {"project_id": f"{p.prefix}-paths-folder", "text": "named by its folder"})
    out = p.each_shell(check, "start: every project's credential, no .handoff (400, then the folder)", START, folder, p.env())
    check("start: every project's credential, no .handoff: the folder's project",
          (parsed := fence(out.rstrip("\n"))) is not None and parsed[2] == p.state_lines(f"{p.prefix}-paths-folder"), out[:200])
    if p.project_token:
        token, solo = p.project_token.split("=", 1)
        harness.call(p.mcp_url, "set_north_star", {"project_id": solo, "text": "a credential of one project"})
        out = p.each_shell(check, "start: one project's credential, no .handoff (/state.txt)", START, p.repo("solo"),
                           p.env(HANDOFF_TOKEN=token))
        check(f"start: one project's credential, no .handoff: /state.txt gives {solo}'s state",
              (parsed := fence(out.rstrip("\n"))) is not None and parsed[2] == p.state_lines(solo, token)
              and f"Project {solo}'s state" in parsed[0], out[:200])
    else:
        check.note("no PROJECT_TOKEN=PROJECT given: the one-project route (/state.txt) is not run against the server")

    dead = f"http://127.0.0.1:{harness.unused_port()}"
    silent = harness.silent_server()
    quiet = f"http://127.0.0.1:{silent.getsockname()[1]}"
    mine = f"project {project}'s"
    cases = [
        ("both variables missing", {"HANDOFF_URL": None, "HANDOFF_TOKEN": None}, mine,
         "HANDOFF_URL and HANDOFF_TOKEN are not set in Claude Code's environment"),
        ("HANDOFF_URL missing", {"HANDOFF_URL": None}, mine, "HANDOFF_URL is not set in Claude Code's environment"),
        ("HANDOFF_TOKEN missing", {"HANDOFF_TOKEN": ""}, mine, "HANDOFF_TOKEN is not set in Claude Code's environment"),
        ("a token with a line break", {"HANDOFF_TOKEN": "a\nX-Injected: 1"}, mine,
         "HANDOFF_TOKEN holds a character outside printable ASCII, which no token has"),
        ("http:// to another host", {"HANDOFF_URL": "http://example.com"}, mine,
         "HANDOFF_URL is refused: http:// is allowed only to this machine (127.0.0.0/8, localhost, [::1]); example.com needs https://"),
        ("http:// to a name that starts like loopback", {"HANDOFF_URL": "http://127.0.0.1.example.com"}, mine,
         "HANDOFF_URL is refused: http:// is allowed only to this machine (127.0.0.0/8, localhost, [::1]); "
         "127.0.0.1.example.com needs https://"),
        ("a user name before the host", {"HANDOFF_URL": "http://127.0.0.1@example.com"}, mine,
         "HANDOFF_URL is refused: it holds a character outside a plain server address"),
        ("another scheme", {"HANDOFF_URL": "ftp://127.0.0.1"}, mine,
         "HANDOFF_URL is refused: it must start with https:// (or http:// for this machine's loopback)"),
        ("a wrong token", {"HANDOFF_TOKEN": "wrong-token"}, mine, f"the server at {p.origin} refused HANDOFF_TOKEN (401)"),
        ("a project the server lacks", {"HANDOFF_PROJECT": f"{p.prefix}-none"}, f"project {p.prefix}-none's",
         f"the server at {p.origin} has no project {p.prefix}-none, or HANDOFF_TOKEN does not reach it (404)"),
        ("HANDOFF_PROJECT not an id", {"HANDOFF_PROJECT": "../etc"}, "the project's",
         "HANDOFF_PROJECT does not hold a project id (1-64 ASCII letters, digits, '.', '_' or '-', starting with a letter or digit)"),
        ("no server", {"HANDOFF_URL": dead}, mine, f"the server at {dead} was not reached (connection refused)"),
        ("a server that never answers", {"HANDOFF_URL": quiet}, mine, f"the server at {quiet} did not answer within 3 seconds"),
        ("an answer that is not text/plain", {"HANDOFF_URL": p.fake_url + "/foreign"}, mine,
         f"the answer from {p.fake_url} is not a handoff-mcp server's (not text/plain)"),
        ("an answer without x-handoff-project", {"HANDOFF_URL": p.fake_url + "/anonymous"}, mine,
         f"the answer from {p.fake_url} is not a handoff-mcp server's (no x-handoff-project header)"),
    ]

    def one(name, change, whose, why):
        c = harness.Checks()
        out = p.each_shell(c, f"start: {name}", START, repo, p.env(**change))
        c(f"start: {name}: the one line: {warning(whose, why).strip()}", out == warning(whose, why), out[:300])
        return c

    for result in harness.parallel([lambda case=case: one(*case) for case in cases], workers=4):
        if isinstance(result, Exception):
            check(f"start: a warning path ran ({result!r})", False)
        else:
            check.lines += result.lines
            check.failures += result.failures
    silent.close()
    for host in ("localhost", "127.0.0.1", "[::1]", "127.1.2.3"):
        port = p.origin.rsplit(":", 1)[1]
        out = p.hook(f"start: http://{host}:PORT is allowed", START, repo, p.env(HANDOFF_URL=f"http://{host}:{port}"))[1]
        check(f"start: http://{host}:PORT is not refused", "is refused" not in out and out.endswith("\n"), out[:200])

    # A trailing slash: the state is read all the same, and one line after the block says why the
    # plugin's server (HANDOFF_URL, then /mcp) would not connect.
    for ending in ("/", "//"):
        out = p.each_shell(check, f"start: HANDOFF_URL ending in {ending}", START, repo, p.env(HANDOFF_URL=p.origin + ending))
        parsed = fence(out.rstrip("\n"))
        check(f"start: HANDOFF_URL ending in {ending}: the state, fenced, byte for byte, then the one line about the slash",
              parsed is not None and parsed[2] == lines and parsed[3] == [SLASH], out[-300:])

    # .handoff that is not a plain file: refused at once, and nothing read through it is sent.
    secret = os.path.join(p.work, "paths-secret")
    with open(secret, "w") as f:
        f.write("leaked-secret-line\n")
    for name, make, why in (
        ("a link to /dev/zero", lambda f: os.symlink("/dev/zero", f),
         ".handoff at the repository root is a symbolic link, and the hook reads it only as a regular file"),
        ("a link to a secret file", lambda f: os.symlink(secret, f),
         ".handoff at the repository root is a symbolic link, and the hook reads it only as a regular file"),
        ("a FIFO", os.mkfifo, ".handoff at the repository root is not a regular file"),
        ("a first line that is no project id", lambda f: open(f, "w").write("not a valid id!\n"),
         ".handoff does not hold a project id (1-64 ASCII letters, digits, '.', '_' or '-', starting with a letter or digit)"),
    ):
        odd = p.repo(f"odd-{len(name)}", git=True)
        make(os.path.join(odd, ".handoff"))
        Fake.seen.clear()
        out = p.each_shell(check, f"start: .handoff is {name}", START, odd, p.env(HANDOFF_URL=p.fake_url + "/log"))
        check(f"start: .handoff is {name}: the one line, and no request sent",
              out == warning("the project's", why) and Fake.seen == [], (out[:200], Fake.seen))

    # The fake's answer: control characters, encoded labels, a marker the body holds.
    out = p.each_shell(check, "start: controls and encoded labels in the answer", START, repo,
                       p.env(HANDOFF_URL=p.fake_url + "/escapes"), extra=True)
    controls = sorted({hex(ord(c)) for c in out if ord(c) < 32 and c not in "\n\t"} | ({"0x7f"} if "\x7f" in out else set()))
    check("start: no control character but line feed and tab in the output (ESC, BEL, NUL, CR removed)", controls == [], controls)
    parsed = fence(out.rstrip("\n"))
    check("start: the labels percent-decoded, each in quotes, without their quotes and controls",
          parsed is not None and '("owner", "Aiko\'s laptop", "quoted [31mredline", "田中 (OAuth)", "a,b", "back\\nslash")' in parsed[0],
          parsed[0] if parsed else out[:200])
    rc, out, _ = p.hook("start: a marker the state holds", START, repo,
                        p.env(HANDOFF_URL=p.fake_url + "/escapes", PATH=p.od_shim + ":" + os.environ["PATH"]))
    parsed = fence(out.rstrip("\n"))
    check("start: a marker the state holds is never used: another is made (the od stand-in gave one the body holds)",
          rc == 0 and parsed is not None and parsed[1] != FIXED_MARKER and FIXED_MARKER in "\n".join(parsed[2])
          and os.path.exists(os.path.join(p.od_shim, "od.used")), out[:300])

    # A ~/.curlrc that would change the request (-q keeps it out), and a standard input that never
    # ends (the watchdog stops the run at 4 s and says so).
    curl_home = os.path.join(p.work, "paths-curlrc-home")
    os.makedirs(curl_home, exist_ok=True)
    with open(os.path.join(curl_home, ".curlrc"), "w") as f:
        f.write('header = "Authorization: Bearer wrong-token"\nmax-filesize = 1\n')
    out = p.each_shell(check, "start: a ~/.curlrc that would change the request", START, repo, p.env(HOME=curl_home))
    check("start: a ~/.curlrc that would change the request: curl does not read it (-q), the state arrives",
          (parsed := fence(out.rstrip("\n"))) is not None and parsed[2] == lines, out[:200])

    out = p.each_shell(check, "start: an answer that never ends", START, repo, p.env(HANDOFF_URL=p.fake_url + "/endless"))
    # Reading stops at the cap, so curl ends then, long before its 3 s: 2 s allows for a busy machine.
    slowest = max(p.times["start: an answer that never ends"])
    check(f"start: an answer that never ends: no more read than the cap (the slowest run {slowest:.2f} s, curl's limit 3 s)",
          slowest < 2.0)
    parsed = fence(out.rstrip("\n"))
    check("start: an answer that never ends: at most 128 KiB read, the output within Claude Code's 10,000, and said so",
          parsed is not None and utf16_len(out.strip()) <= harness.CLAUDE_HOOK_LIMIT
          and "; the contract's task lines after the first " in parsed[3][0]
          and ", past the 128 KiB read of a longer answer. get_state returns the whole state." in parsed[3][0], out[-300:])


def never_ends(check, p):
    """A standard input that stays open and never ends: the watchdog stops each hook at 4 s."""
    repo = p.repo("never-ends", f"{p.prefix}-paths")
    started, stopped = harness.parallel(
        [lambda: p.each_shell(check, "start: a standard input that never ends", START, repo, p.env(), stdin=None),
         lambda: p.each_shell(check, "stop: a standard input that never ends", STOP, repo, p.env(), stdin=None)], workers=2)
    check("start: a standard input that never ends: stopped at 4 s, with the one line",
          started == warning("the project's", "it ran out of its 4 seconds"), str(started)[:200])
    check("stop: a standard input that never ends: stopped at 4 s, nothing printed", stopped == "", str(stopped)[:200])


def emoji_limits(check, p):
    """A state of emoji (two UTF-16 units each) at every limit, under every shell and awk."""
    project = f"{p.prefix}-paths-emoji"
    harness.call(p.mcp_url, "set_north_star", {"project_id": project, "text": "🎯" * 1000})
    harness.call(p.mcp_url, "set_focus", {"project_id": project, "statement": "😀" * 1000, "why": "😀" * 1000})
    for number in range(30):
        harness.call(p.mcp_url, "add_task", {"project_id": project, "kind": "cleanup", "body": f"{number:02d}" + "😀" * 248})
    out = p.each_shell(check, "start: a state of emoji at every limit", START, p.repo("emoji", project), p.env(), extra=True)
    check(f"start: a state of emoji at every limit: {utf16_len(out.strip())} UTF-16 units, within Claude Code's 10,000",
          0 < utf16_len(out.strip()) <= harness.CLAUDE_HOOK_LIMIT and fence(out.rstrip("\n")) is not None)


def limit_paths(check, p):
    """A state with every text at its limit, written so that the server shows each character as
    \\u{…} (zero-width spaces): lines far longer than the output may be; each is cut."""
    project = f"{p.prefix}-paths-escaped"
    zwsp = "\u200b"
    harness.call(p.mcp_url, "set_north_star", {"project_id": project, "text": "a" + zwsp * 999})
    harness.call(p.mcp_url, "set_focus", {"project_id": project, "statement": "b" + zwsp * 999, "why": "c" + zwsp * 999})
    for number in range(30):
        harness.call(p.mcp_url, "add_task", {"project_id": project, "kind": "cleanup", "body": f"{number:02d}" + zwsp * 248})
    lines = p.state_lines(project)
    out = p.each_shell(check, "start: a state of \\u{200B} at every limit", START, p.repo("escaped", project), p.env(), extra=True)
    parsed = fence(out.rstrip("\n"))
    if not check("start: a state of \\u{200B} at every limit: fenced, with a note", parsed is not None and len(parsed[3]) == 1,
                 out[:200]):
        return
    _, _, fenced, (note,) = parsed
    escaped = "\\u{200B}" in lines[0]
    shown = "\\u{200B}" if escaped else "itself"
    check.note(f"the server shows U+200B as {shown}: its 🎯 line is {utf16_len(lines[0])} characters")
    check("start: a state of \\u{200B} at every limit: within Claude Code's 10,000 characters",
          utf16_len(out.strip()) <= harness.CLAUDE_HOOK_LIMIT, utf16_len(out.strip()))
    # Cut only when the three lines together cannot fit: each over 2,500 characters is cut there.
    head = sum(utf16_len(line) + 1 for line in lines[:3])
    long = [number for number in (1, 2) if head > harness.CLAUDE_HOOK_LIMIT and utf16_len(lines[number - 1]) > 2500]
    cuts = [f"line {n} is cut to 2500 of its {utf16_len(lines[n - 1])} characters (ending in …)" for n in long]
    check(f"start: {'each 🎯/▶ line over 2,500 characters is cut there' if long else 'the 🎯/▶ lines fit, whole'}, "
          "and the note says what is not there",
          all(utf16_len(fenced[n]) == 2500 and fenced[n].endswith("…") and lines[n].startswith(fenced[n][:-1])
              if n + 1 in long else fenced[n] == lines[n] for n in range(3)) and note.startswith(NOT_ABOVE)
          and note.endswith(f"; of the contract, {'; '.join(cuts)}. get_state returns the whole state." if cuts
                            else "task lines. get_state returns the whole state."), note)


def stop_paths(check, p):
    project = f"{p.prefix}-stop"
    harness.call(p.mcp_url, "set_north_star", {"project_id": project, "text": "A session ends with the state written"})

    def session(name, git=True, change=None):
        """A repository and a session of NAME's own, started by session-start.sh."""
        repo = p.repo(f"stop-{name}", project, git=git)
        sid = f"paths-{name}-{os.urandom(4).hex()}"
        stdin = json.dumps({"session_id": sid, "source": "startup"})
        p.hook("stop: (session-start for the baseline)", START, repo, p.env(**(change or {})), stdin)
        return repo, sid

    def stop(repo, sid, active=False, **change):
        return json.dumps({"session_id": sid, "stop_hook_active": active}), p.env(**change)

    def path(name, expect_ask, repo, sid, active=False, **change):
        stdin, env = stop(repo, sid, active, **change)
        out = p.each_shell(check, f"stop: {name}", STOP, repo, env, stdin) if not expect_ask else None
        if expect_ask:
            # The first run asks and records it; the runs after it must not (once per session).
            rc, out, _ = p.hook(f"stop: {name}", STOP, repo, env, stdin)
            again = p.each_shell(check, f"stop: {name}, asked already", STOP, repo, env, stdin)
            check(f"stop: {name}: asks, once: {{\"decision\":\"block\",\"reason\":…}}, then nothing",
                  rc == 0 and out == json.dumps({"decision": "block", "reason": harness.nudge(project)}, separators=(",", ":"),
                                                ensure_ascii=False) + "\n" and again == "", (out[:200], again))
        else:
            check(f"stop: {name}: prints nothing", out == "", out[:200])

    repo, sid = session("edit")
    with open(os.path.join(repo, "notes.txt"), "w") as f:
        f.write("a change\n")
    path("HANDOFF_STOP=off", False, repo, sid, HANDOFF_STOP="off")
    path("stop_hook_active", False, repo, sid, active=True)
    path("no baseline for the session", False, repo, "paths-unknown-session")
    p.hook("stop: (session-start with an id that is not one)", START, repo, p.env(),
           json.dumps({"session_id": "../../escape", "source": "startup"}))
    path("a session id that is not one", False, repo, "../../escape")
    path("the server not reached", False, repo, sid, HANDOFF_URL=f"http://127.0.0.1:{harness.unused_port()}")
    # A resume (or a compaction) runs session-start again: the first baseline stays.
    p.hook("stop: (session-start on resume)", START, repo, p.env(), json.dumps({"session_id": sid, "source": "resume"}))
    path("an untracked file, after a resume", True, repo, sid)

    repo, sid = session("unchanged")
    path("nothing changed", False, repo, sid)
    repo, sid = session("written")
    with open(os.path.join(repo, "notes.txt"), "w") as f:
        f.write("a change\n")
    harness.call(p.mcp_url, "set_focus", {"project_id": project, "statement": f"written ({os.urandom(3).hex()})"})
    path("the state written since the start", False, repo, sid)
    repo, sid = session("no-git", git=False)
    with open(os.path.join(repo, "notes.txt"), "w") as f:
        f.write("a change\n")
    path("no git repository", False, repo, sid)
    repo, sid = session("committed")
    with open(os.path.join(repo, "notes.txt"), "w") as f:
        f.write("a change\n")
    p.git(repo, "add", "-A")
    p.git(repo, "commit", "-q", "-m", "committed in the session")
    path("a commit, the tree clean", True, repo, sid)
    # A file changed before the session and changed again in it.
    repo = p.repo("stop-dirty", project)
    with open(os.path.join(repo, ".handoff"), "a") as f:
        f.write("# changed before the session\n")
    sid = f"paths-dirty-{os.urandom(4).hex()}"
    p.hook("stop: (session-start for the baseline)", START, repo, p.env(), json.dumps({"session_id": sid}))
    path("a dirty tree left as it was", False, repo, sid)
    # The same lines added and removed (a --stat would not see it): only the content differs.
    with open(os.path.join(repo, ".handoff")) as f:
        text = f.read()
    with open(os.path.join(repo, ".handoff"), "w") as f:
        f.write(text.replace("# changed before the session", "# changed within the session"))
    path("a file changed before the session, changed again", True, repo, sid)
    check("stop: nothing written outside the sessions folder for an id that is not one",
          not os.path.exists(os.path.join(p.work, "escape")) and not os.path.exists(os.path.join(p.work, "paths-cache", "escape")))


def main():
    mcp_url, prefix, records, work = sys.argv[1:5]
    p = Paths(mcp_url, prefix, records, work, sys.argv[5] if len(sys.argv) > 5 else "")
    failures = harness.run_jobs([harness.job(start_paths, p), harness.job(limit_paths, p), harness.job(emoji_limits, p),
                                harness.job(stop_paths, p), harness.job(never_ends, p)], workers=4)
    timing = harness.Checks()
    for path, times in sorted(p.times.items()):
        timing.note(f"{path}: {len(times)} runs, {min(times) * 1000:.0f} / {statistics.median(times) * 1000:.0f} / "
                    f"{max(times) * 1000:.0f} ms (min / median / max)")
    every = [t for times in p.times.values() for t in times]
    timing(f"every run of a hook on every path ended within {BOUND:.0f} s ({len(every)} runs, the longest "
           f"{max(every):.2f} s)", bool(every) and max(every) < BOUND)
    timing.flush()
    with open(os.path.join(records, "hook-paths-times.json"), "w") as f:
        json.dump(p.times, f, indent=1)
    p.fake.shutdown()
    return 1 if failures or timing.failures else 0


if __name__ == "__main__":
    harness.entry(main)
