# shellcheck shell=bash
# What the test scripts share: step headings, the size of the Worker's JavaScript, free loopback ports, fresh tokens, starting a
# `wrangler dev` in its own process group and waiting until it answers, stopping a process group,
# and the token scan of log files. Sourced after scripts/toolchain.sh (it needs $WRANGLER).
# Every wait here is bounded.

step() { printf '\n=== %s\n' "$*"; }

# bundle_js BUILD_DIR: "RAW GZIP" bytes of the Worker's JavaScript in a build folder: the entry
# module (index.js) and worker-build's bundle with the wasm-bindgen glue (worker-build.js),
# each gzipped on its own as the size budget counts them.
bundle_js() {
  echo "$(cat "$1/index.js" "$1/worker-build.js" | wc -c) \
$(($(gzip -9c "$1/index.js" | wc -c) + $(gzip -9c "$1/worker-build.js" | wc -c)))"
}

# free_port: a TCP port on 127.0.0.1 that nothing listens on right now.
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# mint_token PREFIX: PREFIX- and 32 random hex digits.
mint_token() { printf '%s-%s\n' "$1" "$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"; }

# start_wrangler_dev LOG PORT ARGS...: `wrangler dev` on 127.0.0.1:PORT with its own inspector port, in a
# process group of its own (setsid: util-linux's, or on macOS the stand-in in scripts/lib/bin),
# console to LOG, then waits up to 300 s for /healthz. Sets DEV_PID (the group's id). Returns 1,
# with the log printed, if it exits or never answers.
start_wrangler_dev() {
  local log=$1 port=$2
  shift 2
  setsid "$WRANGLER" dev --ip 127.0.0.1 --port "$port" --inspector-port "$(free_port)" \
    --log-level warn "$@" >"$log" 2>&1 &
  DEV_PID=$!
  wait_up "http://127.0.0.1:$port/healthz" "$DEV_PID" "$log"
}

# wait_up URL PID LOG: waits up to 300 s (a first start builds the Worker) for URL to answer while PID lives.
wait_up() {
  local _
  for _ in $(seq 1 600); do
    # Up is the Worker's own answer: `ok`, or (503) `unusable: …` when a test starts a server
    # with a setting it cannot use.
    case $(curl -sS --max-time 5 "$1" 2>/dev/null) in ok* | unusable:*) return 0 ;; esac
    kill -0 "$2" 2>/dev/null || { cat "$3" >&2; echo "wrangler dev exited early" >&2; return 1; }
    sleep 0.5
  done
  cat "$3" >&2
  echo "wrangler dev did not come up in 300 s" >&2
  return 1
}

# stop_group PID [SIGNAL]: signals the whole process group PID leads (default TERM) and reaps it.
stop_group() {
  [[ -n "${1:-}" ]] || return 0
  kill "-${2:-TERM}" -- "-$1" 2>/dev/null || true
  wait "$1" 2>/dev/null || true
}

# token_hits FILE... -- TOKEN...: how many lines of the files hold any of the tokens.
token_hits() {
  local files=() tokens=()
  while [[ $# -gt 0 && $1 != -- ]]; do files+=("$1"); shift; done
  shift
  tokens=("$@")
  local patterns=()
  for t in "${tokens[@]}"; do patterns+=(-e "$t"); done
  cat "${files[@]}" | grep -cF "${patterns[@]}" || true
}

# plugin_marketplace: what `claude plugin marketplace add` takes for this checkout's origin remote:
# `owner/repo` for GitHub, else the git URL with any user or password taken out of it (a URL may
# carry a token, which must not reach a Worker variable); nothing without a remote.
plugin_marketplace() {
  local url
  url=$(git -C "$(dirname "${BASH_SOURCE[0]}")/.." remote get-url origin 2>/dev/null) || return 0
  url=$(printf '%s' "$url" | sed -E 's#^([a-z+]+://)[^/@]*@#\1#')
  case $url in
    git@github.com:*) url=${url#git@github.com:} ;;
    https://github.com/* | ssh://git@github.com/*) url=${url#*github.com/} ;;
    *) printf '%s\n' "$url"; return 0 ;;
  esac
  printf '%s\n' "${url%.git}"
}
