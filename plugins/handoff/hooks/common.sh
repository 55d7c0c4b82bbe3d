# shellcheck shell=sh
# shellcheck disable=SC2034 # the variables set here are read by the scripts that source this file
# What handoff-mcp's two Claude Code hooks share (session-start.sh and stop.sh source this file):
# the deadline every run keeps, the checks of HANDOFF_URL and of a project id, the one GET of the
# state with its headers, the hook's JSON input, the per-session baseline file and the git
# fingerprint of a working tree. POSIX sh with curl, git and the tools macOS and Linux both have
# (no GNU-only flag). Nothing here prints to stdout: each hook decides what the model reads.

# Every run of a hook ends within DEADLINE seconds: its work runs in the background and a
# watchdog stops it then. curl gives up sooner on its own (CURL_TIME), so the watchdog only
# fires when a second request or git takes the rest of the time.
DEADLINE=4
CURL_TIME=3
# The most of an answer a hook reads (get_state's texts are at most 24,000 characters, so at most
# 96,000 bytes, but the contract, which comes first, fits well within this).
BODY_MAX=131072

# bounded PID: waits for the hook's work, started in the background as
#   exec 3<&0; (main) >"$tmp/out" 2>/dev/null &
# (its stdin on fd 3, its stdout a file, so that nothing left running holds the hook's own
# stdout and Claude Code never waits for it), and stops it after DEADLINE seconds. Returns 0
# when the work finished (it touches "$tmp/done" last), 1 when it was stopped. A subshell, not
# `main >file &`: dash keeps copies of the redirected stdout and stderr for a function call,
# and a subshell forked inside it (a $(…)) would hold them, so a stuck child kept Claude Code
# waiting after the hook had ended (seen: dash, a FIFO read, 8 s and more).
bounded() {
  (sleep "$DEADLINE" && kill "$1") >/dev/null 2>&1 &
  dog=$!
  wait "$1" 2>/dev/null
  kill "$dog" 2>/dev/null
  [ -e "$tmp/done" ]
}

# make_tmp: a private temporary folder in $tmp, removed when the hook exits.
make_tmp() {
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/handoff-hook.XXXXXX" 2>/dev/null) || return 1
  trap 'rm -rf "$tmp"' EXIT
  trap 'exit 0' HUP INT TERM
}

# read_input: the hook's JSON input (at most 64 KiB) into "$tmp/in"; nothing from a terminal.
read_input() {
  : >"$tmp/in"
  [ -t 3 ] || head -c "$BODY_MAX" <&3 >"$tmp/in" 2>/dev/null
}

# input_field NAME: the value of the input's top-level "NAME": "…" string (or true/false), or
# nothing. Only values of letters, digits, '-' and '_' are taken, so an escape never matters:
# callers validate what they get.
input_field() {
  LC_ALL=C awk -v key="\"$1\"" '
    { s = s $0 " " }
    END {
      at = index(s, key)
      if (!at) exit
      s = substr(s, at + length(key))
      sub(/^[ \t]*:[ \t]*/, "", s)
      if (s ~ /^"/) { s = substr(s, 2); if (match(s, /^[A-Za-z0-9_-]*"/)) print substr(s, 1, RLENGTH - 1) }
      else if (match(s, /^[a-z]+/)) print substr(s, 1, RLENGTH)
    }' "$tmp/in"
}

# id_ok VALUE: whether VALUE is a project id: 1-64 of A-Za-z0-9._-, starting with a letter or digit.
id_ok() {
  case $1 in [A-Za-z0-9]*) ;; *) return 1 ;; esac
  case $1 in *[!A-Za-z0-9._-]*) return 1 ;; esac
  [ "${#1}" -le 64 ]
}

# octet_ok VALUE: 0-255 in at most three digits.
octet_ok() {
  case $1 in '' | ????* | *[!0-9]*) return 1 ;; esac
  [ "$1" -le 255 ]
}

# url_ok: checks HANDOFF_URL. Sets base (the URL without its trailing slashes), where
# (scheme://host:port, for sentences; the path may hold a token) and loopback (1 for http:// to
# this machine). Returns 1 with why set: https:// to any host, http:// only to 127.0.0.0/8,
# localhost or [::1], nothing else; no user name, query, fragment or character outside a plain
# address, so curl and this check read the same host.
url_ok() {
  base=$HANDOFF_URL
  while :; do case $base in */) base=${base%/} ;; *) break ;; esac; done
  loopback=
  case $base in
    https://*) rest=${base#https://} ;;
    http://*) rest=${base#http://} loopback=1 ;;
    *) why="HANDOFF_URL is refused: it must start with https:// (or http:// for this machine's loopback)"; return 1 ;;
  esac
  case $rest in
    '' | *[!][A-Za-z0-9._~/:-]*) why="HANDOFF_URL is refused: it holds a character outside a plain server address"; return 1 ;;
  esac
  authority=${rest%%/*}
  where=${base%%://*}://$authority
  case $authority in
    \[*\]) host=$authority ;;
    \[*\]:*) host=${authority%%]:*}] ;;
    *) host=${authority%:*} ;;
  esac
  case ${authority#"$host"} in '' | :[0-9]*) ;; *) why="HANDOFF_URL is refused: its port is not a number"; return 1 ;; esac
  case ${authority#"$host"} in *:*[!0-9]*) why="HANDOFF_URL is refused: its port is not a number"; return 1 ;; esac
  [ -n "$host" ] || { why="HANDOFF_URL is refused: it names no host"; return 1; }
  [ -n "$loopback" ] || return 0
  case $host in
    localhost | \[::1\]) return 0 ;;
    127.*.*.*)
      rest=${host#127.}
      octet_ok "${rest%%.*}" && rest=${rest#*.} && octet_ok "${rest%%.*}" && octet_ok "${rest#*.}" && return 0 ;;
  esac
  why="HANDOFF_URL is refused: http:// is allowed only to this machine (127.0.0.0/8, localhost, [::1]); $host needs https://"
  return 1
}

# fetch PATH: GET "$base$PATH" with the token, the body (at most BODY_MAX bytes, C0 controls
# but tab and newline removed) in "$tmp/body". Sets status, project_header, written_at and
# writers_raw, and cut (1 when the body was longer). Returns 1 with why set when no answer came,
# or the answer is not a handoff-mcp server's (not text/plain, or no valid x-handoff-project).
# The token goes to curl on its standard input (-H @-), never on its command line; -q keeps a
# ~/.curlrc out; no redirect is followed; loopback goes through no proxy.
fetch() {
  route=$1
  if [ -n "$loopback" ]; then set -- --noproxy '*'; else set --; fi
  rm -f "$tmp/head" "$tmp/raw" "$tmp/rc"
  {
    printf 'Authorization: Bearer %s\n' "$HANDOFF_TOKEN" |
      curl -q -sS -g "$@" --connect-timeout 2 --max-time "$CURL_TIME" -H @- -D "$tmp/head" "$base$route" 2>/dev/null
    echo $? >"$tmp/rc"
  } | head -c $((BODY_MAX + 1)) >"$tmp/raw"
  rc=$(cat "$tmp/rc" 2>/dev/null)
  # The last header block is the answer (a proxy's CONNECT answer may come first).
  { read -r status; read -r ctype; read -r project_header; read -r written_at; read -r writers_raw; } <<EOF
$(LC_ALL=C awk '
  { sub(/\r$/, "") }
  /^HTTP\// { status = $2; ct = ""; pr = ""; wa = ""; wr = ""; next }
  {
    at = index($0, ":"); if (!at) next
    name = tolower(substr($0, 1, at - 1)); value = substr($0, at + 1)
    sub(/^[ \t]+/, "", value); sub(/[ \t]+$/, "", value)
    if (name == "content-type") ct = tolower(value)
    else if (name == "x-handoff-project") pr = value
    else if (name == "x-handoff-written-at") wa = value
    else if (name == "x-handoff-writers") wr = value
  }
  END { print status "\n" ct "\n" pr "\n" wa "\n" wr }' "$tmp/head" 2>/dev/null)
EOF
  cut=
  if [ -z "$status" ]; then
    case $rc in
      6) why="the host in HANDOFF_URL ($where) was not found" ;;
      7) why="the server at $where was not reached (connection refused)" ;;
      28) why="the server at $where did not answer within $CURL_TIME seconds" ;;
      35 | 51 | 53 | 54 | 58 | 59 | 60 | 66 | 77 | 80 | 82 | 83 | 90 | 91) why="the TLS connection to $where failed (curl exit $rc)" ;;
      127) why="curl is not installed" ;;
      *) why="the server at $where was not reached (curl exit $rc)" ;;
    esac
    return 1
  fi
  [ "$(wc -c <"$tmp/raw")" -gt "$BODY_MAX" ] && cut=1
  head -c "$BODY_MAX" "$tmp/raw" | LC_ALL=C tr -d '\000-\010\013-\037\177' >"$tmp/body"
  [ "$status" = 200 ] || return 0
  case $ctype in
    text/plain | "text/plain;"* | "text/plain "*) ;;
    *) why="the answer from $where is not a handoff-mcp server's (not text/plain)"; status=; return 1 ;;
  esac
  if ! id_ok "$project_header"; then
    why="the answer from $where is not a handoff-mcp server's (no x-handoff-project header)"
    status=
    return 1
  fi
  case $written_at in '' | *[!0-9]*) written_at= ;; esac
}

# refused: the sentence for an answer other than 200 (status set by fetch).
refused() {
  case $status in
    401) echo "the server at $where refused HANDOFF_TOKEN (401)" ;;
    403) echo "the server at $where refused the request (403)" ;;
    404) echo "the server at $where has no project $1, or HANDOFF_TOKEN does not reach it (404)" ;;
    429) echo "the server at $where is limiting requests (429)" ;;
    5??) echo "the server at $where failed to read the state ($status)" ;;
    *) echo "the server at $where answered $status" ;;
  esac
}

# repo_root: the repository's top folder, else Claude Code's project folder, else this one.
repo_root() {
  git rev-parse --show-toplevel 2>/dev/null || printf '%s\n' "${CLAUDE_PROJECT_DIR:-$PWD}"
}

# session_file: the baseline file of this session (session_id from the input), or nothing when
# the id is not one (1-100 of A-Za-z0-9_-) or there is no cache folder.
session_file() {
  sid=$(input_field session_id)
  case $sid in '' | *[!A-Za-z0-9_-]*) return 1 ;; esac
  [ "${#sid}" -le 100 ] || return 1
  cache=${XDG_CACHE_HOME:-}
  case $cache in /*) ;; *) [ -n "${HOME:-}" ] || return 1; cache=$HOME/.cache ;; esac
  printf '%s\n' "$cache/handoff-mcp/sessions/$sid"
}

# fingerprint ROOT: "HEAD TREE" for the git work tree at ROOT: the commit checked out (or none)
# and a checksum of every change against it, staged or not, and of every untracked file's name
# and content (ignored files aside). Returns 1 outside a work tree. Reads only: no index lock
# is taken and nothing is written into the repository.
fingerprint() {
  [ "$(git -C "$1" rev-parse --is-inside-work-tree 2>/dev/null)" = true ] || return 1
  head_commit=$(git -C "$1" rev-parse -q --verify HEAD 2>/dev/null) || head_commit=none
  tree=$(
    {
      if [ "$head_commit" = none ]; then
        GIT_OPTIONAL_LOCKS=0 git -C "$1" diff --cached --binary --no-ext-diff --no-textconv --no-color
        GIT_OPTIONAL_LOCKS=0 git -C "$1" diff --binary --no-ext-diff --no-textconv --no-color
      else
        GIT_OPTIONAL_LOCKS=0 git -C "$1" diff HEAD --binary --no-ext-diff --no-textconv --no-color
      fi
      git -C "$1" ls-files -z -o --exclude-standard | tr '\000' '\n' | tee "$tmp/untracked"
      (cd "$1" && git hash-object --no-filters --stdin-paths <"$tmp/untracked")
    } 2>/dev/null | cksum
  )
  tree=$(printf '%s' "$tree" | tr ' ' '-')
  printf '%s %s\n' "$head_commit" "$tree"
}
