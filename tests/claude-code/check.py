#!/usr/bin/env python3
"""Checks on what real clients showed, for scripts/claude-code. Prints `ok - …` / `FAIL - …` lines
and exits 1 if any check failed.

  check.py records DIR TRANSPORT...
      Reads DIR/<transport>-<run>.json (the stand-in model's record of every tool_result Claude
      Code handed it) and DIR/<transport>-<run>.rc (claude's exit status) for runs A, B and C,
      checks them against the scenario, and prints B's get_state and A's set_focus exactly as the
      model was shown them.
  check.py bridge NAME PROJECT COMMAND...
      Runs COMMAND (a stdio MCP bridge such as mcp-remote) and sends it initialize, tools/list
      and a get_state of PROJECT as Claude Desktop would, each answer awaited for a bounded time.
"""

import json
import os
import re
import select
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import scenario  # noqa: E402
from scenario import FOCUS_LINE, NO_FOCUS_LINE, NORTH_STAR_LINE, TASKS, text_blocks  # noqa: E402

TOOLS = ["add_task", "complete_task", "get_state", "search", "set_focus", "set_north_star"]
failures = 0


def check(name, ok):
    global failures
    failures += not ok
    print(f"{'ok' if ok else 'FAIL'} - {name}")
    return ok


def one_text(result):
    """The text of a result shown as exactly one text block, else None (a JSON string is not one)."""
    content = result.get("content")
    if isinstance(content, list) and len(content) == 1 and content[0].get("type") == "text":
        return content[0]["text"]
    return None


def show(title, result):
    """Prints a result exactly as the model got it: each text block verbatim, or the raw content."""
    content = result.get("content")
    blocks = content if isinstance(content, list) else [{"type": "string", "text": content}]
    print(f"--- {title}, as shown to the model: {len(blocks)} block(s), is_error={result.get('is_error')}")
    for number, block in enumerate(blocks, 1):
        print(f"[block {number}, {block.get('type')}]")
        print(block.get("text", json.dumps(block, ensure_ascii=False)))
    print("---")


def load(folder, transport, run):
    try:
        with open(os.path.join(folder, f"{transport}-{run}.json"), encoding="utf-8") as f:
            record = json.load(f)
        with open(os.path.join(folder, f"{transport}-{run}.rc")) as f:
            record["rc"] = int(f.read().strip() or -1)
    except (OSError, ValueError) as err:
        record = {"rc": -1, "results": [], "problems": [f"no record: {err}"]}
    return record


def step(record, number):
    results = record.get("results", [])
    return results[number] if number < len(results) else {}


def ran(tag, record, steps):
    check(
        f"{tag}: claude -p exited 0 and the model was handed all {steps} tool results, then ended its turn"
        + (f" (stand-in: {'; '.join(record.get('problems', []))})" if record.get("problems") else ""),
        record.get("rc") == 0 and record.get("finished") and len(record.get("results", [])) == steps,
    )


def ends_with_head(tag, result, focus_line):
    text = one_text(result)
    check(
        f"{tag}: shown as one text block ending with the current 🎯 and ▶ lines",
        text is not None and not result.get("is_error") and text.split("\n")[-2:] == [NORTH_STAR_LINE, focus_line],
    )


def check_records(folder, transports):
    for t in transports:
        a, b, c = (load(folder, t, run) for run in "ABC")
        project = a.get("project_id", "?")

        ran(f"{t} A", a, 5)
        offered = {tool["name"]: tool["description"] for tool in a.get("tools_offered", [])}
        check(f"{t} A: the model was offered exactly the six handoff tools", sorted(offered) == [f"mcp__handoff__{n}" for n in TOOLS])
        check(
            f"{t} A: get_state's description as the model read it ends with the fixed instruction",
            offered.get("mcp__handoff__get_state", "").rstrip().endswith(scenario.DESCRIPTION_TAIL),
        )
        ends_with_head(f"{t} A set_north_star", step(a, 0), NO_FOCUS_LINE)
        ends_with_head(f"{t} A set_focus", step(a, 1), FOCUS_LINE)
        ids = {}
        for number, (kind, _body) in enumerate(TASKS, 2):
            result = step(a, number)
            ends_with_head(f"{t} A add_task {kind}", result, FOCUS_LINE)
            first = (one_text(result) or "").split("\n")[0]
            found = re.search(rf'Added {kind} task (\S+) to project "{re.escape(project)}"\.', first)
            ids[kind] = found.group(1) if found else None
            check(f'{t} A add_task {kind}: the model read "Added {kind} task <id> to project …" first', found is not None)

        ran(f"{t} B", b, 2)
        state = step(b, 0)
        shown = text_blocks(state.get("content")) if isinstance(state.get("content"), list) else []
        deferred = [(ids[kind], kind, body) for kind, body in TASKS if kind != "main"]
        check(f"{t} B get_state: shown as two text blocks, not an error", len(shown) == 2 and not state.get("is_error"))
        check(
            f"{t} B get_state: the first block is the contract text exactly",
            shown[:1] == [scenario.contract([(kind, body) for _, kind, body in deferred])],
        )
        check(
            f"{t} B get_state: the second block is the reference block exactly, with the ids A was shown",
            None not in ids.values() and shown[1:2] == [scenario.reference(deferred, shown[1] if len(shown) > 1 else None)],
        )
        done = step(b, 1)
        task_id = done.get("input", {}).get("task_id")
        check(
            f"{t} B complete_task: called with the id read from B's own get_state, the cleanup id A was shown",
            task_id is not None and task_id == ids["cleanup"] and task_id == scenario.reference_id(state, "cleanup"),
        )
        check(
            f"{t} B complete_task: shown as a success naming that task",
            not done.get("is_error", True) and (one_text(done) or "").startswith(f"Completed cleanup task {task_id} "),
        )
        ends_with_head(f"{t} B complete_task", done, FOCUS_LINE)

        ran(f"{t} C", c, 3)
        state = step(c, 0)
        record_task = [(ids["record"], "record", dict(TASKS)["record"])]
        shown = text_blocks(state.get("content")) if isinstance(state.get("content"), list) else []
        check(
            f"{t} C get_state: the model sees only the record task under 後処理 (contract text exactly)",
            not state.get("is_error") and shown[:1] == [scenario.contract([("record", dict(TASKS)["record"])])],
        )
        check(f"{t} C get_state: the reference block lists only the record task", shown[1:] == [scenario.reference(record_task, shown[1] if len(shown) > 1 else None)])
        missing = step(c, 1)
        check(
            f"{t} C get_state of an unwritten project: shown as a tool error that says to call set_north_star",
            missing.get("is_error") is True and "set_north_star" in "\n".join(text_blocks(missing.get("content"))),
        )
        found = step(c, 2)
        check(
            f"{t} C search: one text block, the completed cleanup task as a record, not a task to do",
            not found.get("is_error", True) and scenario.search_found(project, one_text(found)),
        )

        show(f"{t} B get_state", step(b, 0))
        show(f"{t} A set_focus", step(a, 1))


class Bridge:
    """A stdio MCP peer: one JSON-RPC message per line each way."""

    def __init__(self, command, stderr):
        self.proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr)

    def send(self, message):
        try:
            self.proc.stdin.write((json.dumps(message) + "\n").encode())
            self.proc.stdin.flush()
        except OSError:
            pass  # the bridge has exited; the awaited answer then never comes, and its check fails

    def call(self, id, method, params, seconds=20):
        """The response to one request, or {} when none came within `seconds`."""
        self.send({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            if not select.select([self.proc.stdout], [], [], left)[0]:
                break
            line = self.proc.stdout.readline()
            if not line:
                break
            try:
                message = json.loads(line)
            except ValueError:
                continue
            if message.get("id") == id:
                return message
        return {}

    def close(self):
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def check_bridge(name, project, command):
    bridge = Bridge(command, open(os.environ.get("BRIDGE_STDERR", os.devnull), "ab"))
    try:
        init = bridge.call(1, "initialize", {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "claude-ai", "version": "0.1.0"},
        }).get("result", {})
        check(f"{name}: initialize answered with the server's name and a protocol version",
              bool(init.get("serverInfo", {}).get("name")) and bool(init.get("protocolVersion")))
        bridge.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        tools = bridge.call(2, "tools/list", {}).get("result", {}).get("tools", [])
        check(f"{name}: tools/list names the six tools", sorted(tool.get("name") for tool in tools) == TOOLS)
        state = bridge.call(3, "tools/call", {"name": "get_state", "arguments": {"project_id": project}}).get("result", {})
        texts = text_blocks(state.get("content"))
        check(f"{name}: get_state returns the project's contract text as the first text item",
              not state.get("isError") and texts[:1] == [scenario.contract([("record", dict(TASKS)["record"])])])
    finally:
        bridge.close()


def main():
    try:
        if len(sys.argv) >= 3 and sys.argv[1] == "records":
            check_records(sys.argv[2], sys.argv[3:])
        elif len(sys.argv) >= 5 and sys.argv[1] == "bridge":
            check_bridge(sys.argv[2], sys.argv[3], sys.argv[4:])
        else:
            sys.exit(__doc__)
    except Exception as err:  # a crash is one more failed check, never a silent zero count
        check(f"check.py {' '.join(sys.argv[1:3])} ran to the end ({err!r})", False)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
