#!/bin/sh
# handoff-mcp's Claude Code SessionStart hook: prints the project's state (GET …/state.txt, the
# text get_state returns) so Claude Code adds it to the session's context before the first
# prompt. It never blocks or breaks a session: on any failure it prints nothing to stdout, one
# line to stderr, and exits 0 within about five seconds. The token comes from HANDOFF_TOKEN
# (the shell profile, or .claude/settings.local.json's "env"), never from a committed file; the
# project is HANDOFF_PROJECT, else the first line of the repository's .handoff, else the
# repository folder's name. Claude Code 2.1.332 keeps a hook's output whole only up to 10,000
# characters (past that the model gets a 2 KB preview and a file's path), so a state of over 9,500
# characters (UTF-8 lead bytes, counted in any locale) is cut to its contract text, which stays
# whole. scripts/lib/connect.py prints this file's lines as the hook command.
r=$(git rev-parse --show-toplevel 2>/dev/null) || r=${CLAUDE_PROJECT_DIR:-$PWD}
p=${HANDOFF_PROJECT:-$(head -n 1 "$r/.handoff" 2>/dev/null | tr -d '\r\t ')}
p=${p:-$(basename "$r")}
if [ -z "${HANDOFF_URL:-}" ] || [ -z "${HANDOFF_TOKEN:-}" ]; then echo "handoff-mcp hook: set HANDOFF_URL and HANDOFF_TOKEN to read the project's state" >&2; exit 0; fi
case $p in [A-Za-z0-9]*) case $p in *[!A-Za-z0-9._-]*) p= ;; esac ;; *) p= ;; esac
if [ -z "$p" ]; then echo "handoff-mcp hook: no valid project id; put one in .handoff at the repository root or in HANDOFF_PROJECT" >&2; exit 0; fi
s=$(printf 'Authorization: Bearer %s\n' "$HANDOFF_TOKEN" | curl -fsS --connect-timeout 2 --max-time 4 -H @- "${HANDOFF_URL%/}/projects/$p/state.txt" 2>/dev/null) || { echo "handoff-mcp hook: no state for project $p from HANDOFF_URL (server not reached, token refused or no such project); the session goes on without it" >&2; exit 0; }
n='
'
if [ $(($(printf %s "$s" | LC_ALL=C tr -d '\200-\277' | wc -c))) -gt 9500 ]; then s="${s%%"$n${n}Reference data"*}$n$n(The reference block with each deferred task's id is left out here: Claude Code keeps a hook's output whole only up to 10,000 characters. get_state returns it.)"; fi
printf "This project's state from handoff-mcp: project %s, read as this session started (get_state's text; call get_state for a fresher one).\n\n%s\n" "$p" "$s"
