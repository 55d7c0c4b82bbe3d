#!/bin/sh
# handoff-mcp's Claude Code Stop hook: at most once per session, when the session changed the
# repository's work tree (or committed) and nothing has written the project's state since the
# session started, it asks Claude to bring the focus and the tasks up to date before it stops.
#
# Claude Code 2.1.332 runs a Stop hook at the end of every reply; printing
# {"decision":"block","reason":…} makes Claude go on with the reason as its next input. The
# baseline is what session-start.sh recorded for this session (x-handoff-written-at, git HEAD and
# a checksum of the work tree's changes) in ${XDG_CACHE_HOME:-$HOME/.cache}/handoff-mcp/sessions/.
# It asks nothing when HANDOFF_STOP is off, when Claude is already going on because of a Stop
# hook (stop_hook_active), when it asked once already this session, when there is no baseline
# (no git repository, or the state was not read at the start), when the work tree and HEAD are
# as they were, when x-handoff-written-at differs from the baseline's (the state was written),
# or when the server cannot be reached. It always exits 0, within about DEADLINE (4) seconds.
# POSIX sh with curl and git; runs under dash, bash and macOS's tools.

# shellcheck source-path=SCRIPTDIR source=common.sh
. "${0%/*}/common.sh"

# The request Claude reads, in plain words: what changed, what is asked, and that it may stop
# when nothing there needs to change.
ask() {
  printf '{"decision":"block","reason":"%s"}\n' "This session changed the repository, and project $1's handoff state (its focus and tasks in handoff-mcp) has not been written since the session started. Before you stop, please bring it up to date for the next session: set_focus if the focus has moved, add_task for work left to do later, complete_task for tasks this session finished (get_state lists them with their task_id). If none of that needs to change, say so in one line and stop."
}

main() {
  umask 077
  read_input
  file=$(session_file) || exit 0
  [ -f "$file" ] || exit 0
  [ "$(input_field stop_hook_active)" != true ] || exit 0
  base_written='' base_project='' base_root='' base_head='' base_tree='' asked=''
  while IFS='=' read -r key value; do
    case $key in
      written_at) base_written=$value ;;
      project) base_project=$value ;;
      root) base_root=$value ;;
      head) base_head=$value ;;
      tree) base_tree=$value ;;
      asked) asked=1 ;;
    esac
  done <"$file"
  [ -z "$asked" ] && [ -n "$base_written" ] && id_ok "$base_project" || exit 0
  print=$(fingerprint "$base_root") || exit 0
  [ "$print" != "$base_head $base_tree" ] || exit 0
  [ -n "${HANDOFF_URL:-}" ] && [ -n "${HANDOFF_TOKEN:-}" ] && url_ok || exit 0
  fetch "/projects/$base_project/state.txt" && [ "$status" = 200 ] || exit 0
  [ "$written_at" = "$base_written" ] || exit 0
  echo asked=1 >>"$file" || exit 0
  ask "$base_project"
  : >"$tmp/done"
}

case ${HANDOFF_STOP:-on} in off | OFF | Off | 0 | false | no) exit 0 ;; esac
make_tmp || exit 0
exec 3<&0
(main) >"$tmp/out" 2>/dev/null &
if bounded $!; then cat "$tmp/out"; fi
exit 0
