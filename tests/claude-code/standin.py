#!/usr/bin/env python3
"""A stand-in for the Anthropic Messages API, for running the real Claude Code CLI offline.

Usage: standin.py --run A|B|C --project ID --record FILE --port-file FILE [--lifetime SECONDS] [--log FILE]

Serves POST /v1/messages (streaming and not) and /v1/messages/count_tokens on 127.0.0.1 at a
free port, written to --port-file. The main agent loop is the request whose `tools` offer
mcp__handoff__get_state: each of its turns is answered with the next scripted tool_use of the
run (scenario.steps), and after the last one with a closing text and end_turn. A session whose
newest prompt holds `stand-in steps: STEP | STEP …` is played from those steps instead (`play`),
whatever its tools: the hooks' checks (tests/claude-code/north_star.py, stop_hook.py) run many
such sessions in parallel against one stand-in. Claude Code's request for a compaction summary gets a summary;
any other request (side requests: titles, probes) gets a short text answer.

--record is rewritten after every main-loop request with every tool_result the model was
handed, its content blocks exactly as Claude Code sent them, so the checks read what the
model saw, not what the server sent. --log appends every Messages request's whole body, one JSON
line each in arrival order, for the checks of what a session's first request holds (the
SessionStart hook's context). Python 3 standard library only; exits after --lifetime.
"""

import argparse
import http.server
import json
import os
import secrets
import sys
import threading

sys.dont_write_bytecode = True  # no __pycache__ in the tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import scenario  # noqa: E402

MARKER_TOOL = "mcp__handoff__get_state"
PREFIX = "mcp__handoff__"
CLOSING_TEXT = "Done: every scripted step has run."
STEPS = "stand-in steps:"
# What the played model answers once a Stop hook has sent Claude back (its reason arrives as
# "Stop hook feedback:"), and what it summarises a compaction with.
AFTER_STOP_HOOK = "Nothing more to update: the focus and the tasks stay as they are."
STOP_FEEDBACK = "Stop hook feedback:"
SUMMARY_REQUEST = "Please provide your summary"
SUMMARY = "<analysis>A short scripted session.</analysis>\n<summary>The stand-in said hello.</summary>"


def new_id(kind):
    return f"{kind}_01{secrets.token_hex(11)}"


class Model:
    """The scripted model of one run and what it has been shown."""

    def __init__(self, run, project, record):
        self.steps = scenario.steps(run, project)
        self.record_path = record
        self.lock = threading.Lock()
        self.issued = {}  # tool_use id -> (step, tool, input) for every tool_use we answered with
        self.record = {
            "run": run,
            "project_id": project,
            "main_requests": 0,
            "side_requests": [],
            "tools_offered": [],
            "results": [],
            "finished": False,
            "problems": [],
        }

    def answer(self, path, body):
        """(status, message or error body) for one request."""
        tools = body.get("tools") or []
        texts = list(user_texts(body.get("messages") or []))
        if texts and SUMMARY_REQUEST in texts[-1]:
            return text_message(body, SUMMARY)
        if any(STEPS in text for text in texts):
            return play(body)
        if not any(tool.get("name") == MARKER_TOOL for tool in tools):
            with self.lock:
                self.record["side_requests"].append({"path": path, "model": body.get("model"), "tools": len(tools)})
                self.save()
            return text_message(body, "OK.")
        with self.lock:
            self.record["main_requests"] += 1
            self.record["tools_offered"] = [
                {"name": t["name"], "description": t.get("description", "")} for t in tools if t.get("name", "").startswith(PREFIX)
            ]
            seen = self.results(body.get("messages") or [])
            self.record["results"] = seen
            reply = self.next_step(body, seen)
            self.save()
            return reply

    def results(self, messages):
        """Every tool_result in the conversation that answers one of our tool_uses, in order."""
        seen = []
        for message in messages:
            if message.get("role") != "user" or not isinstance(message.get("content"), list):
                continue
            for block in message["content"]:
                if block.get("type") != "tool_result" or block.get("tool_use_id") not in self.issued:
                    continue
                step, tool, tool_input = self.issued[block["tool_use_id"]]
                seen.append(
                    {
                        "step": step,
                        "tool": tool,
                        "input": tool_input,
                        "is_error": bool(block.get("is_error", False)),
                        "content": block.get("content"),
                    }
                )
        return seen

    def next_step(self, body, seen):
        if len(seen) >= len(self.steps):
            self.record["finished"] = True
            return text_message(body, CLOSING_TEXT)
        call = self.steps[len(seen)](seen)
        if call is None:
            problem = f"step {len(seen)} could not be computed from what the model was shown"
            if problem not in self.record["problems"]:
                self.record["problems"].append(problem)
            return text_message(body, "Stopping: " + problem)
        tool, tool_input = call
        use_id = new_id("toolu")
        self.issued[use_id] = (len(seen), tool, tool_input)
        block = {"type": "tool_use", "id": use_id, "name": PREFIX + tool, "input": tool_input}
        return message(body, [block], "tool_use")

    def save(self):
        tmp = self.record_path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as out:
            json.dump(self.record, out, ensure_ascii=False, indent=1)
        os.replace(tmp, self.record_path)


def user_texts(messages):
    """The text of each user message, in order (its text blocks joined)."""
    for message in messages:
        if message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            yield content
        elif isinstance(content, list):
            yield "".join(block.get("text", "") for block in content if block.get("type") == "text")


def play(body):
    """The next turn of a played session. Its steps are in its newest prompt that holds them:
    `write PATH TEXT` (Claude Code's Write tool) or `mcp TOOL JSON` (a handoff tool). Each tool_result since that prompt is one step
    done; after the last, and after a Stop hook's feedback, a closing text with end_turn."""
    messages = body.get("messages") or []
    start = max(i for i, m in enumerate(messages) if m.get("role") == "user" and STEPS in "".join(user_texts([m])))
    prompt = "".join(user_texts([messages[start]]))
    steps = [step.strip() for step in prompt.split(STEPS, 1)[1].split(" | ") if step.strip()]
    done = sum(1 for m in messages[start + 1 :] if m.get("role") == "user" and isinstance(m.get("content"), list)
               for block in m["content"] if block.get("type") == "tool_result")
    answered = max((i for i, m in enumerate(messages) if m.get("role") == "assistant"), default=-1)
    if any(STOP_FEEDBACK in text for text in user_texts(messages[answered + 1 :])):
        return text_message(body, AFTER_STOP_HOOK)
    if done >= len(steps):
        return text_message(body, CLOSING_TEXT)
    verb, _, rest = steps[done].partition(" ")
    if verb == "write":
        path, _, text = rest.partition(" ")
        block = {"type": "tool_use", "id": new_id("toolu"), "name": "Write", "input": {"file_path": path, "content": text + "\n"}}
    else:
        tool, _, arguments = rest.partition(" ")
        block = {"type": "tool_use", "id": new_id("toolu"), "name": PREFIX + tool, "input": json.loads(arguments)}
    return message(body, [block], "tool_use")


def message(body, content, stop_reason):
    return {
        "id": new_id("msg"),
        "type": "message",
        "role": "assistant",
        "model": body.get("model") or "stand-in",
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 10, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0},
    }


def text_message(body, text):
    return message(body, [{"type": "text", "text": text}], "end_turn")


def sse_events(msg):
    """The Messages API's streaming events for a complete message."""
    start = dict(msg, content=[], stop_reason=None)
    yield "message_start", {"type": "message_start", "message": start}
    for index, block in enumerate(msg["content"]):
        if block["type"] == "text":
            yield "content_block_start", {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}
            delta = {"type": "text_delta", "text": block["text"]}
        else:
            yield "content_block_start", {"type": "content_block_start", "index": index, "content_block": dict(block, input={})}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"], ensure_ascii=False)}
        yield "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
    yield "message_delta", {
        "type": "message_delta",
        "delta": {"stop_reason": msg["stop_reason"], "stop_sequence": None},
        "usage": {"output_tokens": msg["usage"]["output_tokens"]},
    }
    yield "message_stop", {"type": "message_stop"}


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    model = None  # set by main
    log_path = None  # --log: every Messages request's body, one JSON line each, in arrival order

    def log_message(self, fmt, *args):
        pass  # requests the stand-in does not serve are logged by do_GET; the rest are in the record

    def send_json(self, status, payload):
        data = json.dumps(payload, ensure_ascii=False).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("request-id", new_id("req"))
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        sys.stderr.write(f"[standin] answered 404 to {self.command} {self.path}\n")
        self.send_json(404, {"type": "error", "error": {"type": "not_found_error", "message": "stand-in: no such path"}})

    do_HEAD = do_DELETE = do_PUT = do_GET

    def do_POST(self):
        length = int(self.headers.get("content-length") or 0)
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
        except ValueError:
            body = {}
        path = self.path.split("?")[0]
        if self.log_path and path.endswith("/v1/messages"):
            with self.model.lock, open(self.log_path, "a", encoding="utf-8") as out:
                out.write(json.dumps(body, ensure_ascii=False) + "\n")
        if path.endswith("/v1/messages/count_tokens"):
            return self.send_json(200, {"input_tokens": 10})
        if not path.endswith("/v1/messages"):
            return self.do_GET()
        msg = self.model.answer(path, body)
        if not body.get("stream"):
            return self.send_json(200, msg)
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("request-id", new_id("req"))
        self.send_header("connection", "close")
        self.end_headers()
        for event, data in sse_events(msg):
            self.wfile.write(f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode())
        self.wfile.flush()
        self.close_connection = True


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--run", required=True, choices=["A", "B", "C"])
    parser.add_argument("--project", required=True)
    parser.add_argument("--record", required=True)
    parser.add_argument("--port-file", required=True)
    parser.add_argument("--lifetime", type=float, default=300)
    parser.add_argument("--log")
    args = parser.parse_args()
    Handler.log_path = args.log
    Handler.model = Model(args.run, args.project, args.record)
    Handler.model.save()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    with open(args.port_file + ".tmp", "w") as out:
        out.write(str(server.server_address[1]))
    os.replace(args.port_file + ".tmp", args.port_file)
    # Bounded whatever happens to the caller: the server stops itself after --lifetime.
    timer = threading.Timer(args.lifetime, server.shutdown)
    timer.daemon = True
    timer.start()
    server.serve_forever()


if __name__ == "__main__":
    main()
