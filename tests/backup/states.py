"""Every project's state as a running handoff-mcp serves it, as one JSON object on stdout:
{project_id: {"text": get_state's text, "structured": its structuredContent, "search": the
search tool's text for the first 30 characters of its North Star, in that project}}, so a
restore must bring back the search index too.

A black box over HTTP JSON-RPC, like the smoke client: resources/list (every page) names the
projects, tools/call get_state reads each. tests/backup/run compares two of these.
Usage: states.py http://127.0.0.1:PORT/<token>/mcp
"""

import json
import sys
import urllib.request

PROTOCOL = "2025-06-18"


def rpc(url, method, params, request_id):
    body = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}).encode()
    request = urllib.request.Request(url, data=body, method="POST", headers={
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": PROTOCOL,
    })
    with urllib.request.urlopen(request, timeout=30) as response:
        reply = json.load(response)
    if "error" in reply:
        raise SystemExit(f"{method}: {reply['error']}")
    return reply["result"]


def main(url):
    projects, cursor, n = [], None, 0
    while True:
        n += 1
        page = rpc(url, "resources/list", {"cursor": cursor} if cursor else {}, n)
        prefix, suffix = "handoff://projects/", "/state"
        projects += [r["uri"][len(prefix) : -len(suffix)] for r in page["resources"]]
        cursor = page.get("nextCursor")
        if not cursor:
            break
    states = {}
    for project in projects:
        n += 1
        result = rpc(url, "tools/call", {"name": "get_state", "arguments": {"project_id": project}}, n)
        states[project] = {"text": result["content"][0]["text"], "structured": result.get("structuredContent")}
        north_star = states[project]["text"].split("\n", 1)[0].removeprefix("🎯 NORTH STAR: ")[:30]
        n += 1
        found = rpc(url, "tools/call", {"name": "search", "arguments": {"query": north_star or "x", "project_id": project}}, n)
        states[project]["search"] = found["content"][0]["text"]
    json.dump(states, sys.stdout, ensure_ascii=False, sort_keys=True, indent=1)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    main(sys.argv[1])
