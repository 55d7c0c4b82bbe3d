# shellcheck shell=bash
# What scripts/bench and scripts/profile share: snapshots of the tree to build and serve from,
# free loopback ports, and `wrangler dev`s started each in its own process group and stopped by
# that group. Sourced after scripts/toolchain.sh by a script that has set `root` (the repo) and
# `work` (its scratch folder) and calls `stop_all` when it exits.

bench_dir="$root/target/bench-worker"
started=()

step() { printf '\n=== [%3d s] %s\n' "$(($(date +%s) - began))" "$*" >&2; }

# snapshot_worktree DEST: the working tree's tracked and untracked files (not ignored ones), so a
# build there cannot be disturbed by edits in the shared tree, nor race other builds over target/
# and build/.
snapshot_worktree() {
  rm -rf "$1"
  mkdir -p "$1"
  (cd "$root" && git ls-files -z -co --exclude-standard | while IFS= read -r -d '' f; do
    if [[ -e "$f" ]]; then printf '%s\0' "$f"; fi
  done | tar --null -T - -cf -) | tar -xf - -C "$1"
}

# snapshot_commit REV DEST: the tree of a commit, for the "before" side of a comparison.
snapshot_commit() {
  rm -rf "$2"
  mkdir -p "$2"
  git -C "$root" archive "$1" | tar -xf - -C "$2"
}

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# take_ports N: N distinct free loopback ports into the array `ports`.
take_ports() {
  for _ in $(seq 1 20); do
    ports=()
    for _ in $(seq 1 "$1"); do ports+=("$(free_port)"); done
    [[ $(printf '%s\n' "${ports[@]}" | sort -u | wc -l) -eq $1 ]] && return 0
  done
  echo "no $1 distinct free ports" >&2
  exit 1
}

# start_dev DIR LOG ARGS...: `wrangler dev` in DIR, bound to 127.0.0.1, at log level warn (info
# would print each path, and the path holds the token), in a session of its own, so its pid names
# its process group. Sets dev_pid. Environment assignments before the call reach wrangler and the
# build it runs (CARGO_TARGET_DIR, HANDOFF_KEEP_NAMES).
start_dev() {
  local dir=$1 log=$2
  shift 2
  (cd "$dir" && WRANGLER_LOG_PATH="$work/wrangler-debug" exec setsid "$WRANGLER" dev --ip 127.0.0.1 \
    --log-level warn "$@") >"$log" 2>&1 &
  dev_pid=$!
  started+=("$dev_pid")
}

# wait_up URL PID LOG [METHOD]: polls (at most 4 minutes: the first start builds the Worker) until
# URL answers 2xx; on failure prints the log and stops the run.
wait_up() {
  local method=${4:-GET}
  for _ in $(seq 1 480); do
    curl -fsS -X "$method" "$1" >/dev/null 2>&1 && return 0
    kill -0 "$2" 2>/dev/null || { cat "$3" >&2; echo "wrangler dev exited early" >&2; exit 1; }
    sleep 0.5
  done
  curl -fsS -X "$method" "$1" >/dev/null 2>&1 || { cat "$3" >&2; echo "wrangler dev did not come up" >&2; exit 1; }
}

# parse_against REV: the short commit of REV into against_rev, or a usage error.
parse_against() {
  against_rev=$(git -C "$root" rev-parse --short "$1^{commit}" 2>/dev/null) || { echo "no commit $1" >&2; exit 2; }
}

# start_before TOKEN PORT INSPECTOR [--this-build]: REV's tree (against_rev), snapshotted and
# served by its own `wrangler dev` with its own target folder, so its build cannot overwrite this
# tree's artifacts. --this-build builds it with this tree's scripts/build (scripts/profile needs
# HANDOFF_KEEP_NAMES, which older commits lack). Sets before_pid and before_flags (the bench's
# --before-* flags). Environment assignments before the call reach its build, as for start_dev.
start_before() {
  local token=$1 port=$2 inspector=$3 before_tree="$bench_dir/before-tree"
  snapshot_commit "$against_rev" "$before_tree"
  if [[ "${4:-}" == --this-build ]]; then
    cp "$root/scripts/build" "$before_tree/scripts/build"
  fi
  (cd "$before_tree" && "$WRANGLER" d1 migrations apply DB --local --persist-to "$work/before-state" >/dev/null)
  CARGO_TARGET_DIR="$bench_dir/before-target" start_dev "$before_tree" "$work/before.log" \
    --port "$port" --inspector-port "$inspector" --persist-to "$work/before-state" \
    --var "AUTH_TOKEN:$token"
  before_pid=$dev_pid
  wait_up "http://127.0.0.1:$port/healthz" "$before_pid" "$work/before.log"
  before_flags=(--before-base "http://127.0.0.1:$port/$token" --before-pgid "$before_pid"
    --before-label "$against_rev")
}

# stop PID: the whole process group of a `wrangler dev` started by start_dev.
stop() {
  if [[ -n "${1:-}" ]]; then
    kill -- "-$1" 2>/dev/null || true
    wait "$1" 2>/dev/null || true
  fi
}

stop_all() {
  local pid
  for pid in "${started[@]}"; do stop "$pid"; done
  started=()
}

# write_section FILE NAME REPORT: replaces what lies between FILE's markers for NAME with the
# REPORT file, adding the markers at the end of FILE when they are missing.
write_section() {
  local file=$1 begin="<!-- $2: generated section begins -->" end="<!-- $2: generated section ends -->"
  if [[ ! -f "$file" ]] || ! grep -qF "$begin" "$file"; then
    printf '\n%s\n%s\n' "$begin" "$end" >>"$file"
  fi
  awk -v begin="$begin" -v end="$end" -v report="$3" '
    $0 == begin { print; while ((getline line < report) > 0) print line; skipping = 1; next }
    $0 == end { skipping = 0 }
    !skipping { print }' "$file" >"$work/section.md"
  cp "$work/section.md" "$file"
}

# machine_lines: who ran where, for the head of a generated section.
machine_lines() {
  local mem_gib cpu_model
  mem_gib=$(awk '/^MemTotal:/ { printf "%.1f", $2 / 1048576 }' /proc/meminfo)
  cpu_model=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
  echo "- Machine: $(nproc) cores ($cpu_model), $mem_gib GiB memory, Linux $(uname -r); the load client and the servers share these cores. Load average when the run ended: $(cut -d' ' -f1-3 /proc/loadavg)."
  echo "- Toolchain: $(rustc --version | cut -d' ' -f1-2), Node $(node --version), wrangler $("$WRANGLER" --version 2>/dev/null | tail -n 1)."
}
