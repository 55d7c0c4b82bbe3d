"""What to paste into each Claude client, for a local or a deployed handoff-mcp.

scripts/dev (and scripts/dev --print) and scripts/deploy print this banner; nothing else writes
client instructions, so the two cannot drift apart. Python 3 standard library only.

The banner is read by people and by a test that runs its lines against a real server, so two
parts have a fixed shape:
  - the Claude Code command is alone on a line that starts with `claude mcp add `;
  - the claude_desktop_config.json text is one JSON object between the lines DESKTOP_BEGIN and
    DESKTOP_END;
  - the Claude Code SessionStart hook is one JSON object between HOOK_BEGIN and HOOK_END, the
    variables it reads are `export NAME=value` lines, the plugin's commands are lines that start
    with `claude plugin `, and the claude.ai Project sentence is the line that starts with
    PROJECT_SENTENCE.

Usage: connect.py local|deployed MCP_URL MCP_REMOTE_VERSION MCP_REMOTE_NODE [STATE_DIR]
"""

import json
import os
import sys

DESKTOP_BEGIN = "--- BEGIN claude_desktop_config.json ---"
DESKTOP_END = "--- END claude_desktop_config.json ---"
HOOK_BEGIN = "--- BEGIN Claude Code settings.json hooks ---"
HOOK_END = "--- END Claude Code settings.json hooks ---"
PROJECT_SENTENCE = "At the start of every chat, call get_state for project "
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# The hook's one source: the plugin runs this file, and the settings hook is its lines.
HOOK_SCRIPT = os.path.join(ROOT, "plugins", "handoff", "hooks", "session-start.sh")
# The name the server is registered under in both clients.
SERVER_NAME = "handoff"


def claude_code_line(mcp_url):
    # User scope: the same handoff server in every folder Claude Code is started from.
    return f"claude mcp add --transport http --scope user {SERVER_NAME} {mcp_url}"


def claude_code_header_line(mcp_url):
    """The same server with the token in an Authorization header instead of the URL, so it stays
    out of the URL (and out of `claude mcp list`)."""
    origin, _, rest = mcp_url.partition("://")
    host, _, path = rest.partition("/")
    token = path[: -len("/mcp")] if path.endswith("/mcp") else path
    return (
        f"claude mcp add --transport http --scope user {SERVER_NAME} {origin}://{host}/mcp "
        f'--header "Authorization: Bearer {token}"'
    )


def desktop_config(mcp_url, mcp_remote_version):
    """claude_desktop_config.json with the one entry: Claude Desktop starts mcp-remote (a local
    stdio server) through npx, and mcp-remote forwards to the HTTP endpoint. The version is
    pinned so a new mcp-remote release cannot change what runs; `-y` lets npx fetch it without
    asking, since Claude Desktop gives it no terminal. http-only: the endpoint is Streamable HTTP,
    so the bridge never falls back to the legacy SSE transport."""
    args = ["-y", f"mcp-remote@{mcp_remote_version}", mcp_url, "--transport", "http-only"]
    return {"mcpServers": {SERVER_NAME: {"command": "npx", "args": args}}}


def hook_command():
    """The hook script's lines without its comments, as one command: settings.json runs it
    without the repository, and the plugin runs the file itself, so the two cannot differ."""
    with open(HOOK_SCRIPT, encoding="utf-8") as f:
        lines = [line for line in f.read().splitlines() if line.strip() and not line.startswith("#")]
    return "\n".join(lines)


def hook_settings():
    """The settings.json `hooks` entry: the hook on every way a session starts, so a cleared or
    compacted session gets the state back; within 10 s (the script gives up after about 5)."""
    hook = {"type": "command", "command": hook_command(), "timeout": 10}
    return {"hooks": {"SessionStart": [{"matcher": "startup|resume|clear|compact", "hooks": [hook]}]}}


def north_star_lines(mcp_url):
    """How every Claude Code session starts with the state in its context: the variables, the
    hook or the plugin, and the project's name."""
    origin, _, rest = mcp_url.partition("://")
    host, _, path = rest.partition("/")
    token = path[: -len("/mcp")] if path.endswith("/mcp") else path
    return [
        "  Every Claude Code session starts from the North Star: a SessionStart hook reads the",
        "  project's state (GET /projects/<id>/state.txt) into the session's context before the first",
        "  prompt, on startup, resume, /clear and compaction. The token stays out of every committed",
        "  file: put these in your shell profile (or in .claude/settings.local.json's \"env\"):",
        f"export HANDOFF_URL={origin}://{host}",
        f"export HANDOFF_TOKEN={token}",
        "  The project is HANDOFF_PROJECT if set, else the first line of a committed .handoff file at",
        "  the repository root, else the repository folder's name. Then merge this into",
        "  ~/.claude/settings.json (every repository) or a repository's .claude/settings.json:",
        HOOK_BEGIN,
        json.dumps(hook_settings(), indent=2),
        HOOK_END,
        "  Or, in place of both the `claude mcp add` line and the hook, the plugin in this repository",
        "  (the same variables; it reads them when Claude Code starts):",
        f"claude plugin marketplace add {ROOT}",
        "claude plugin install handoff@handoff-mcp",
        "  The hook needs sh and curl (macOS, Linux; on Windows, the Git Bash Claude Code runs hooks",
        "  with). It never stops a session: on any failure it prints one line to stderr and no state.",
    ]


def plain_url(mcp_url):
    """The MCP endpoint without the token: where OAuth clients connect."""
    origin, _, rest = mcp_url.partition("://")
    host = rest.partition("/")[0]
    return f"{origin}://{host}/mcp"


def sse_url(mcp_url):
    return mcp_url[: -len("/mcp")] + "/sse" if mcp_url.endswith("/mcp") else mcp_url


def banner(kind, mcp_url, mcp_remote_version, mcp_remote_node, state_dir=None):
    desktop = json.dumps(desktop_config(mcp_url, mcp_remote_version), indent=2)
    if kind == "local":
        origin = mcp_url.split("/", 3)[:3]
        head = [
            f"  handoff-mcp, local: {'/'.join(origin)} (local D1 in {state_dir or '.wrangler/state'})",
            f"  MCP endpoint: {mcp_url}",
        ]
        code_note = "  Claude Code (it reaches this machine's loopback). Run this, then `claude mcp list` shows"
        desktop_title = "  Claude Desktop, this local server: put this in claude_desktop_config.json"
        remote = [
            "  claude.ai, Claude Desktop's Settings > Connectors and the Claude mobile apps connect from",
            "  Anthropic's servers, not from this machine: a 127.0.0.1 URL cannot work there. They need",
            "  the public https URL that scripts/deploy prints.",
        ]
    else:
        head = [f"  handoff-mcp, deployed. MCP endpoint (the token in it is the only credential):", f"  {mcp_url}"]
        code_note = "  Claude Code. Run this, then `claude mcp list` shows"
        desktop_title = "  Claude Desktop without a connector (optional): claude_desktop_config.json"
        remote = [
            "  claude.ai and Claude Desktop: Settings > Connectors > Add custom connector, URL",
            f"  {plain_url(mcp_url)} (no token, no OAuth fields). Connecting opens this server's page:",
            "  paste your AUTH_TOKEN (or a project token) there and choose what the connector may reach;",
            "  Connected clients on the projects page lists and revokes it. (The endpoint above, with the",
            "  token in it, works as a connector URL too.) The Claude mobile apps use the connectors of",
            "  your claude.ai account; add it there once.",
        ]
    lines = [
        "",
        *head,
        "",
        code_note,
        f"  `{SERVER_NAME}: … (HTTP) - ✔ Connected`:",
        claude_code_line(mcp_url),
        "  or, with the token in a header rather than in the URL:",
        "  " + claude_code_header_line(mcp_url),
        "",
        *north_star_lines(mcp_url),
        "",
        desktop_title,
        "  (Settings > Developer > Edit Config; merge the entry into an existing \"mcpServers\"),",
        "  then restart Claude Desktop. It runs the mcp-remote bridge through npx, which needs",
        f"  Node {mcp_remote_node} or later on the PATH Claude Desktop starts programs with.",
        DESKTOP_BEGIN,
        desktop,
        DESKTOP_END,
        "",
        *remote,
        "",
        "  claude.ai and Claude Desktop run no hook: so that each chat starts from the North Star, put",
        "  this sentence, with the project's id, in a Project's instructions (Project > Instructions):",
        f"  {PROJECT_SENTENCE}<project id>, and read it before anything else.",
        "",
        "  Any other MCP client: Streamable HTTP at the MCP endpoint; a client that speaks only the",
        f"  legacy HTTP+SSE transport (2024-11-05) uses {sse_url(mcp_url)}",
        "",
    ]
    return "\n".join(lines)


def main(argv):
    if len(argv) not in (5, 6) or argv[1] not in ("local", "deployed"):
        sys.stderr.write(__doc__)
        return 2
    sys.stdout.write(banner(argv[1], argv[2], argv[3], argv[4], argv[5] if len(argv) == 6 else None))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
