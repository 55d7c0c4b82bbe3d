#!/usr/bin/env python3
"""The plugin from a git URL, for scripts/claude-code: the real Claude Code adds this repository
as a marketplace by its git URL and installs the plugin, as the README's lines say, then takes
an update and removes both, as the README's "Updating" and docs/uninstall.md say.

Usage: marketplace.py CLAUDE_BIN WORK

The repository is a git repository made in WORK from this checkout's marketplace files as they
are in the working tree (.claude-plugin/ and plugins/handoff/), served over git's smart HTTP on a
loopback port (`git http-backend`): Claude Code 2.1.332 takes a git URL as `https://…` or
`http://…` ending in `.git` (or `user@host:path`), refuses `file://`, and clones shallow, which
git's plain "dumb" HTTP cannot serve. Claude Code runs in a throwaway HOME with no network but
that port. Checks, each an `ok - …` / `FAIL - …`:
  - `claude plugin marketplace add <git URL>` then `claude plugin install handoff@handoff-mcp`:
    the plugin installed and enabled at plugin.json's version, its server ${HANDOFF_URL}/mcp;
  - a new commit moving the version: `claude plugin marketplace update handoff-mcp`, then
    `claude plugin update handoff@handoff-mcp` installs it;
  - `claude plugin uninstall handoff@handoff-mcp` and `claude plugin marketplace remove
    handoff-mcp`: neither listed any more.
Python 3 standard library, git and Claude Code only; about two seconds.
"""

import http.server
import json
import os
import shutil
import subprocess
import sys
import threading

sys.dont_write_bytecode = True  # no __pycache__ in the tree
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import harness  # noqa: E402

ROOT = harness.ROOT
MANIFEST = os.path.join("plugins", "handoff", ".claude-plugin", "plugin.json")


def smart_http(projects):
    """A loopback server of git's smart HTTP for the bare repositories in PROJECTS: each request
    is handed to `git http-backend` as a CGI request. Returns (server, port)."""
    backend = os.path.join(subprocess.run(["git", "--exec-path"], capture_output=True, text=True,
                                          check=True).stdout.strip(), "git-http-backend")

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def serve(self):
            path, _, query = self.path.partition("?")
            body = self.rfile.read(int(self.headers.get("content-length") or 0))
            env = dict(os.environ, GIT_PROJECT_ROOT=projects, GIT_HTTP_EXPORT_ALL="1", PATH_INFO=path,
                       QUERY_STRING=query, REQUEST_METHOD=self.command, REMOTE_ADDR="127.0.0.1",
                       CONTENT_TYPE=self.headers.get("content-type", ""), CONTENT_LENGTH=str(len(body)),
                       GIT_PROTOCOL=self.headers.get("git-protocol", ""),
                       HTTP_CONTENT_ENCODING=self.headers.get("content-encoding", ""))
            out = subprocess.run([backend], input=body, env=env, capture_output=True).stdout
            head, _, rest = out.partition(b"\r\n\r\n")
            status, headers = 200, []
            for line in head.decode("latin-1").split("\r\n"):
                name, _, value = line.partition(":")
                if name.lower() == "status":
                    status = int(value.split()[0])
                elif name:
                    headers.append((name, value.strip()))
            self.send_response(status)
            for name, value in headers:
                self.send_header(name, value)
            self.send_header("content-length", str(len(rest)))
            self.end_headers()
            self.wfile.write(rest)

        do_GET = do_POST = serve

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, server.server_address[1]


def version_of(tree):
    with open(os.path.join(tree, MANIFEST), encoding="utf-8") as f:
        return json.load(f)["version"]


def main():
    claude, work = sys.argv[1:3]
    check = harness.Checks()
    source, projects = os.path.join(work, "source"), os.path.join(work, "git")
    for part in (".claude-plugin", os.path.join("plugins", "handoff")):
        shutil.copytree(os.path.join(ROOT, part), os.path.join(source, part))
    harness.git_repo(source)
    os.makedirs(projects)
    bare = os.path.join(projects, "handoff-mcp.git")
    subprocess.run(["git", "clone", "-q", "--bare", source, bare], check=True)
    subprocess.run(["git", "-C", bare, "config", "http.receivepack", "false"], check=True)
    server, port = smart_http(projects)
    url = f"http://127.0.0.1:{port}/handoff-mcp.git"
    home = os.path.join(work, "home")
    os.makedirs(os.path.join(home, ".claude"))
    env = {"PATH": os.environ["PATH"], "HOME": home, "CLAUDE_CONFIG_DIR": os.path.join(home, ".claude"),
           "LANG": "C.UTF-8", "CI": "true", "DISABLE_AUTOUPDATER": "1", "DISABLE_TELEMETRY": "1",
           "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}

    def claude_run(*args):
        run = subprocess.run([claude, *args], cwd=home, env=env, stdin=subprocess.DEVNULL,
                             capture_output=True, text=True, timeout=120)
        return run.returncode, (run.stdout + run.stderr).strip()

    def listed(*args):
        rc, out = claude_run(*args, "--json")
        try:
            return json.loads(out[out.index("["):]) if rc == 0 else None
        except ValueError:
            return None

    def plugin():
        return next((p for p in listed("plugin", "list") or [] if p.get("id") == "handoff@handoff-mcp"), None)

    try:
        rc, out = claude_run("plugin", "marketplace", "add", url)
        check("claude plugin marketplace add <git URL> (http://…/handoff-mcp.git, served by git http-backend)",
              rc == 0, out[-300:])
        rc, out = claude_run("plugin", "install", "handoff@handoff-mcp")
        check("claude plugin install handoff@handoff-mcp", rc == 0, out[-300:])
        installed = plugin() or {}
        version = version_of(ROOT)
        check(f"the plugin is installed and enabled at plugin.json's version {version}, its server ${{HANDOFF_URL}}/mcp",
              installed.get("version") == version and installed.get("enabled") is True
              and installed.get("mcpServers", {}).get("handoff", {}).get("url") == "${HANDOFF_URL}/mcp", installed)

        # A release: a commit that moves the plugin's version.
        with open(os.path.join(source, MANIFEST), encoding="utf-8") as f:
            manifest = json.load(f)
        manifest["version"] = f"{version}-next"
        with open(os.path.join(source, MANIFEST), "w", encoding="utf-8") as f:
            json.dump(manifest, f, indent=2)
        harness.git(source, "commit", "-q", "-am", "the next release")
        harness.git(source, "push", "-q", bare, "HEAD")
        rc, out = claude_run("plugin", "marketplace", "update", "handoff-mcp")
        check("claude plugin marketplace update handoff-mcp", rc == 0, out[-300:])
        rc, out = claude_run("plugin", "update", "handoff@handoff-mcp")
        updated = plugin() or {}
        check(f"claude plugin update handoff@handoff-mcp: {version} to the new commit's {version}-next",
              rc == 0 and updated.get("version") == f"{version}-next", (out[-300:], updated.get("version")))

        rc, out = claude_run("plugin", "uninstall", "handoff@handoff-mcp")
        check("claude plugin uninstall handoff@handoff-mcp: no longer listed", rc == 0 and plugin() is None, out[-300:])
        rc, out = claude_run("plugin", "marketplace", "remove", "handoff-mcp")
        markets = listed("plugin", "marketplace", "list")
        check("claude plugin marketplace remove handoff-mcp: no longer listed",
              rc == 0 and markets is not None and all(m.get("name") != "handoff-mcp" for m in markets),
              (out[-300:], markets))
    finally:
        server.shutdown()
    check.flush()
    return 1 if check.failures else 0


if __name__ == "__main__":
    harness.entry(main)
