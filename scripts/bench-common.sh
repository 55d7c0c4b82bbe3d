# shellcheck shell=bash
# What scripts/bench, scripts/profile and scripts/coldstart share, on top of scripts/lib.sh:
# snapshots of the tree to build and serve from, several free loopback ports at once, and
# `wrangler dev`s started each in its own process group (from a given folder, with given ports)
# and stopped by that group. Sourced after scripts/toolchain.sh by a script that has set `root`
# (the repo) and `work` (its scratch folder) and calls `stop_all` when it exits.

source "$root/scripts/lib.sh"

bench_dir="$root/target/bench-worker"
started=()

# One of scripts/bench, profile and coldstart at a time: they share the snapshots below, and a
# second run would replace a tree under the first one's running `wrangler dev`.
mkdir -p "$bench_dir"
exec 9>"$bench_dir/lock"
if ! flock -n 9; then
  echo "another scripts/bench, scripts/profile or scripts/coldstart is running (target/bench-worker/lock)" >&2
  exit 1
fi

# step, as scripts/lib.sh's but with the seconds since the start, so a run shows where its time
# goes.
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

# snapshot_commit REV DEST: the tree of a commit, for one side of a comparison. Every file is
# touched: git archive dates them at the commit, and cargo, which compares modification times,
# would take an earlier build in the same target folder for this commit's.
snapshot_commit() {
  rm -rf "$2"
  mkdir -p "$2"
  git -C "$root" archive "$1" | tar -xf - -C "$2"
  find "$2" -exec touch {} +
}

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

# short_rev REV: the short commit of REV, or a usage error.
short_rev() {
  git -C "$root" rev-parse --short "$1^{commit}" 2>/dev/null || { echo "no commit $1" >&2; exit 2; }
}

# serve_rev NAME REV TOKEN PORT INSPECTOR [--this-build]: REV's tree, snapshotted into
# target/bench-worker/NAME-tree and served by its own `wrangler dev` with its own target folder
# (NAME-target), so its build cannot overwrite another tree's artifacts; its database in
# $work/NAME-state, its log in $work/NAME.log. --this-build builds it with this tree's
# scripts/build (scripts/profile needs HANDOFF_KEEP_NAMES, which older commits lack).
# Environment assignments before the call reach its build, as for start_dev. Sets rev_pid.
serve_rev() {
  local name=$1 rev=$2 token=$3 port=$4 inspector=$5 dir="$bench_dir/$1-tree"
  snapshot_commit "$rev" "$dir"
  if [[ "${6:-}" == --this-build ]]; then
    cp "$root/scripts/build" "$dir/scripts/build"
  fi
  (cd "$dir" && "$WRANGLER" d1 migrations apply DB --local --persist-to "$work/$name-state" >/dev/null)
  CARGO_TARGET_DIR="$bench_dir/$name-target" start_dev "$dir" "$work/$name.log" \
    --port "$port" --inspector-port "$inspector" --persist-to "$work/$name-state" \
    --var "AUTH_TOKEN:$token"
  rev_pid=$dev_pid
  wait_up "http://127.0.0.1:$port/healthz" "$rev_pid" "$work/$name.log" || exit 1
}

# network_off PORT...: turns off DevTools' Network domain behind each wrangler inspector port
# (`bench network-off`). wrangler's inspector proxy turns it on as it attaches to the Worker, and
# then the runtime sends it an event for every request and subrequest, D1's reply bodies among
# them, which the proxy keeps until a DevTools client attaches and node writes to its debug log:
# about 3 ms of CPU per D1 query in node and the proxy on these two cores, and more memory with
# every request. Production has none of it. Call once per `wrangler dev`: the runtime does not
# answer a second `Network.disable`.
network_off() {
  local port
  for port in "$@"; do "$bench" network-off --inspector "$port" >&2; done
}

# keep_logs STATUS: after a failed run, the wrangler dev logs go to target/bench-worker/logs/,
# with wrangler's own debug logs (where a crash of `wrangler dev` says why) in its
# wrangler-debug/, where the next run can read them (the scratch folder is removed on exit).
keep_logs() {
  if [[ $1 -ne 0 ]] && compgen -G "$work/*.log" >/dev/null; then
    rm -rf "$bench_dir/logs"
    mkdir -p "$bench_dir/logs"
    cp "$work"/*.log "$bench_dir/logs/"
    if [[ -d "$work/wrangler-debug" ]]; then cp -r "$work/wrangler-debug" "$bench_dir/logs/"; fi
    echo "the wrangler dev logs are in target/bench-worker/logs/" >&2
  fi
}

stop_all() {
  local pid
  for pid in "${started[@]}"; do stop_group "$pid"; done
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
  echo "- Toolchain: $(rustc --version | cut -d' ' -f1-2), wrangler $("$WRANGLER" --version 2>/dev/null | tail -n 1) on Node $("$NODE22" --version)."
}
