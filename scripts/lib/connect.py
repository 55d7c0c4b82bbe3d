"""What to paste into each Claude client, for a local or a deployed handoff-mcp.

scripts/dev (and scripts/dev --print) and scripts/deploy print this banner; nothing else writes
client instructions, so the two cannot drift apart. Python 3 standard library only.

The banner is read by people and by a test that runs its lines against a real server, so two
parts have a fixed shape:
  - the Claude Code command is alone on a line that starts with `claude mcp add `;
  - the claude_desktop_config.json text is one JSON object between the lines DESKTOP_BEGIN and
    DESKTOP_END;
  - the plugin's commands are lines that start with `claude plugin `, the variables its hooks
    read are `export NAME=value` lines, the settings.json hooks for a Claude Code without the
    plugin (SessionStart and Stop, each running its script from this checkout) are one JSON object
    between HOOK_BEGIN and HOOK_END, and the claude.ai Project sentence is the line that starts
    with PROJECT_SENTENCE.

`--short` (scripts/dev's default) prints one screen of it: where the server is, its page, and the
plugin's lines (the variables and the two `claude plugin` commands); the rest is behind
`scripts/dev --print` and in docs/clients.md.

Usage: connect.py [--short] local|deployed MCP_URL MCP_REMOTE_VERSION MCP_REMOTE_NODE [STATE_DIR]
"""

import json
import os
import shlex
import sys

DESKTOP_BEGIN = "--- BEGIN claude_desktop_config.json ---"
DESKTOP_END = "--- END claude_desktop_config.json ---"
HOOK_BEGIN = "--- BEGIN Claude Code settings.json hooks ---"
HOOK_END = "--- END Claude Code settings.json hooks ---"
PROJECT_SENTENCE = "At the start of every chat, call get_state for project "
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# The hooks' one source: the plugin runs these files, and so do the settings hooks, by their path
# in this checkout (they source common.sh beside them, so they are not pasted inline).
HOOKS = os.path.join(ROOT, "plugins", "handoff", "hooks")
HOOK_SCRIPTS = {"SessionStart": os.path.join(HOOKS, "session-start.sh"), "Stop": os.path.join(HOOKS, "stop.sh")}
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


def hook_command(event):
    """The command that runs an event's hook script from this checkout."""
    return f"sh {shlex.quote(HOOK_SCRIPTS[event])}"


def hook_settings():
    """The settings.json `hooks` entry: SessionStart on every way a session starts, so a cleared
    or compacted session gets the state back, and Stop; within 10 s (each script ends by 5)."""
    def entry(event):
        return {"type": "command", "command": hook_command(event), "timeout": 10}
    return {"hooks": {
        "SessionStart": [{"matcher": "startup|resume|clear|compact", "hooks": [entry("SessionStart")]}],
        "Stop": [{"hooks": [entry("Stop")]}],
    }}


def plugin_lines(mcp_url):
    """The plugin's variables (the server's origin and the token) and its two commands."""
    origin, _, rest = mcp_url.partition("://")
    host, _, path = rest.partition("/")
    token = path[: -len("/mcp")] if path.endswith("/mcp") else path
    return [
        f"export HANDOFF_URL={origin}://{host}",
        f"export HANDOFF_TOKEN={token}",
        f"claude plugin marketplace add {ROOT}",
        "claude plugin install handoff@handoff-mcp",
    ]


def north_star_lines(mcp_url):
    """How every Claude Code session starts with the state in its context, and ends with it
    written: the variables, the plugin (or its hooks by hand), and the project's name."""
    return [
        "  Every Claude Code session starts from the North Star: the plugin in this repository sets up",
        "  the server and two hooks. SessionStart reads the project's state into the session's context",
        "  before the first prompt (on startup, resume, /clear and compaction); Stop asks Claude once",
        "  to update the focus and tasks when the session changed files and wrote no state",
        "  (HANDOFF_STOP=off turns that off). The token stays out of every committed file: put these",
        "  in your shell profile (or in .claude/settings.local.json's \"env\"), then install it:",
        *plugin_lines(mcp_url),
        "  The project is HANDOFF_PROJECT if set, else the first line of a committed .handoff file at",
        "  the repository root, else the token's one project, else the repository folder's name.",
        "  Without the plugin: the `claude mcp add` line above, and this merged into",
        "  ~/.claude/settings.json or a repository's .claude/settings.json; it runs the hook",
        "  scripts from this checkout, so keep the checkout where it is:",
        HOOK_BEGIN,
        json.dumps(hook_settings(), indent=2),
        HOOK_END,
        "  The hooks need sh, curl and git (macOS, Linux; on Windows, the Git Bash Claude Code runs",
        "  hooks with). They never stop a session: when the state cannot be read, the session starts",
        "  with one line saying why.",
    ]


def plain_url(mcp_url):
    """The MCP endpoint without the token: where OAuth clients connect."""
    origin, _, rest = mcp_url.partition("://")
    host = rest.partition("/")[0]
    return f"{origin}://{host}/mcp"


def sse_url(mcp_url):
    return mcp_url[: -len("/mcp")] + "/sse" if mcp_url.endswith("/mcp") else mcp_url


def page_url(mcp_url):
    """The project list, the human view: the token URL without its `mcp`."""
    return mcp_url[: -len("mcp")] if mcp_url.endswith("/mcp") else mcp_url


def short_banner(mcp_url, state_dir=None):
    """One screen, for scripts/dev's start: where the server is, its page and the plugin."""
    origin = "/".join(mcp_url.split("/", 3)[:3])
    return "\n".join([
        "",
        f"  handoff-mcp, local: {origin} (local D1 in {state_dir or '.wrangler/state'})",
        f"  The page (your projects, as the model reads them): {page_url(mcp_url)}",
        f"  MCP endpoint: {mcp_url}",
        "",
        "  Claude Code: the plugin sets up the server and the hooks that start every session from",
        "  the North Star. Put the two variables in your shell profile, then install it:",
        *plugin_lines(mcp_url),
        "",
        "  Claude Desktop, the hooks without the plugin, any other client: scripts/dev --print",
        "  (docs/clients.md). claude.ai and the phones need the deployed server: scripts/deploy.",
        "",
    ])


def banner(kind, mcp_url, mcp_remote_version, mcp_remote_node, state_dir=None):
    desktop = json.dumps(desktop_config(mcp_url, mcp_remote_version), indent=2)
    if kind == "local":
        origin = mcp_url.split("/", 3)[:3]
        head = [
            f"  handoff-mcp, local: {'/'.join(origin)} (local D1 in {state_dir or '.wrangler/state'})",
            f"  The page (your projects, as the model reads them): {page_url(mcp_url)}",
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
        head = [
            "  handoff-mcp, deployed. The MCP endpoint, with a full-access token in it (whoever holds the",
            "  URL holds the token: keep it like a password):",
            f"  {mcp_url}",
            f"  The page (your projects, as the model reads them): {page_url(mcp_url)}",
        ]
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
    short = argv[1:2] == ["--short"]
    args = argv[2:] if short else argv[1:]
    if len(args) not in (4, 5) or args[0] not in ("local", "deployed") or (short and args[0] != "local"):
        sys.stderr.write(__doc__)
        return 2
    state_dir = args[4] if len(args) == 5 else None
    if short:
        sys.stdout.write(short_banner(args[1], state_dir))
    else:
        sys.stdout.write(banner(args[0], args[1], args[2], args[3], state_dir))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
