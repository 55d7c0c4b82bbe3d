#!/usr/bin/env python3
"""The state written at the end, for scripts/claude-code: the real Claude Code with the Stop hook
as scripts/lib/connect.py prints it (and once through the plugin), and what the stand-in model is
sent at the end of each reply.

Usage: stop_hook.py CLAUDE_BIN MCP_URL PROJECT RECORDS WORK

Each session has a git repository and a project of its own, so sessions run in parallel; the
stand-in plays each from the steps in its prompt (standin.py, `stand-in steps:`): Claude Code's
Write tool edits a file, a handoff tool writes the state. Checks, each an `ok - …` / `FAIL - …`:
  - a session that edits a file and writes no state is asked once, in the hook's words, and the
    stand-in's next turn ends it; resumed, edited again, it is not asked again;
  - a session that edits a file and writes the state (set_focus) is not asked;
  - a session that changes nothing is not asked, and
  - HANDOFF_STOP=off: not asked;
  - that session, resumed where the server cannot be reached (HANDOFF_URL on a port nothing
    listens on), edits a file and is not asked.
(north_star.py runs the plugin's Stop hook, through hooks.json.)
The last request of each is saved in RECORDS as stop-<session>.json. Exits 1 on a failure.
Python 3 standard library only.
"""

import json
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the tree
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import harness  # noqa: E402
import standin  # noqa: E402
from north_star import printed  # noqa: E402

FEEDBACK = "Stop hook feedback:"


class Case:
    def __init__(self, claude, mcp_url, prefix, records, work):
        self.mcp_url, self.prefix, self.records, self.work = mcp_url, prefix, records, work
        self.hooks, self.variables, self.plugin = printed(mcp_url)
        self.standin = harness.Standin(work, "stop")
        self.claude = harness.Claude(claude, self.standin, work)
        self.home = self.claude.home("home-stop", self.hooks)

    def session(self, name):
        """A project and a git repository (one commit) of NAME's own."""
        project = f"{self.prefix}-{name}"
        harness.call(self.mcp_url, "set_north_star", {"project_id": project, "text": "A session ends with the state written"})
        repo = harness.git_repo(os.path.join(self.work, f"repo-{name}"), project)
        return project, repo

    def run(self, repo, tag, steps, *args, env=None, home=None):
        """One `claude -p` whose prompt carries TAG and STEPS; (exit status, result, the last
        request of this run, its session id)."""
        prompt = f"Work. {tag}" + (f" {standin.STEPS} {steps}" if steps else "")
        environment = self.claude.env(home or self.home, {**self.variables, **(env or {})})
        config = json.dumps({"mcpServers": {"handoff": {"type": "http", "url": self.mcp_url}}})
        rc, out, took, sent = self.claude.run(
            repo, environment, tag, "-p", prompt, "--output-format", "json", "--tools", "Write",
            "--allowedTools", "Write,mcp__handoff__set_focus", "--mcp-config", config, "--strict-mcp-config", *args)
        return rc, harness.session_result(out), sent[-1] if sent else None, harness.session_id(out), took

    def save(self, name, request):
        harness.save(self.records, f"stop-{name}", request)


def asked(request):
    """The Stop hook feedback texts the request holds, each once."""
    return [text for text in harness.strings((request or {}).get("messages")) if FEEDBACK in text]


def edited(check, case):
    project, repo = case.session("edit")
    rc, result, last, session, took = case.run(repo, "[edit]", f"write {repo}/notes.txt the first change")
    case.save("edit", last)
    feedback = asked(last)
    check(f"edits a file, writes no state: claude -p answers ({took:.1f} s)", rc == 0, f"exit {rc}")
    check("… asked exactly once, in the hook's words", len(feedback) == 1 and f"{FEEDBACK}\n{harness.nudge(project)}" in feedback[0],
          feedback)
    check("… and the stand-in's next turn ends the session", result == standin.AFTER_STOP_HOOK, result)
    rc, result, last, _, _ = case.run(repo, "[edit-again]", f"write {repo}/more.txt a second change", "--resume", session)
    case.save("edit-again", last)
    check("resumed and edited again: not asked a second time in the session",
          rc == 0 and len(asked(last)) == 1 and result == standin.CLOSING_TEXT, (result, len(asked(last))))


def wrote(check, case):
    project, repo = case.session("write")
    focus = json.dumps({"project_id": project, "statement": "the state is written before the end"})
    rc, result, last, _, _ = case.run(repo, "[write]", f"write {repo}/notes.txt a change | mcp set_focus {focus}")
    case.save("write", last)
    wrote_it = any("the state is written before the end" in text for text in harness.strings((last or {}).get("messages")))
    check("edits a file and writes the state (set_focus): not asked",
          rc == 0 and wrote_it and asked(last) == [] and result == standin.CLOSING_TEXT, (result, asked(last)))


def switched_off(check, case):
    _, repo = case.session("off")
    rc, result, last, _, _ = case.run(repo, "[off]", f"write {repo}/notes.txt a change", env={"HANDOFF_STOP": "off"})
    case.save("off", last)
    check("HANDOFF_STOP=off: edits a file, writes no state, not asked",
          rc == 0 and asked(last) == [] and result == standin.CLOSING_TEXT, (result, asked(last)))


def unchanged_then_unreachable(check, case):
    """A session that changes nothing; resumed where the server cannot be reached, it edits."""
    _, repo = case.session("nothing")
    rc, result, last, session, _ = case.run(repo, "[nothing]", "")
    case.save("nothing", last)
    check("changes nothing: not asked", rc == 0 and asked(last) == [] and result == standin.CLOSING_TEXT, (result, asked(last)))
    dead = f"http://127.0.0.1:{harness.unused_port()}"
    rc, result, last, _, _ = case.run(repo, "[unreachable]", f"write {repo}/notes.txt a change", "--resume", session,
                                      env={"HANDOFF_URL": dead})
    case.save("unreachable", last)
    check("the server not reached at the end (resumed with HANDOFF_URL on a dead port): edits a file, not asked",
          rc == 0 and asked(last) == [] and result == standin.CLOSING_TEXT, (result, asked(last)))


def main():
    claude, mcp_url, prefix, records, work = sys.argv[1:6]
    case = Case(claude, mcp_url, prefix, records, work)
    try:
        jobs = [harness.job(edited, case), harness.job(wrote, case), harness.job(switched_off, case),
                harness.job(unchanged_then_unreachable, case)]
        failures = harness.run_jobs(jobs, workers=3)
    finally:
        case.standin.stop()
    return 1 if failures else 0


if __name__ == "__main__":
    harness.entry(main)
