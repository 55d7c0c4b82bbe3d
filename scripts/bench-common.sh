# shellcheck shell=bash
# What scripts/bench, scripts/profile and scripts/coldstart share, on top of scripts/lib.sh: the
# flags they have in common (bench_flags), the start of every run (bench_begin: the toolchain, a
# scratch folder, the lock, the exit trap), the snapshot of the tree they build and serve from
# with the bench built in it (bench_tree), several free loopback ports at once, `wrangler dev`s
# started each in its own process group (from a given folder, with given ports; serve_workers
# for handoff-mcp and the floor Worker, serve_rev for a commit's tree) and stopped by that group,
# and the report written or printed (bench_report). Sourced first, by a script that has set
# `root` (the repo); scripts/instructions sources it after scripts/toolchain.sh for the snapshots
# and takes the lock itself (bench_lock).

source "$root/scripts/lib.sh"

bench_dir="$root/target/bench-worker"
started=()

# bench_flags NAME FLAG... -- ARG...: reads scripts/NAME's command line, which takes the FLAGs
# named, of these: --no-write (write=0, else 1), --paired (paired=1, else 0), --against REV,
# --this REV and --before REV (each into the variable of its name, else empty, or DEFAULT for a
# FLAG given as --before=DEFAULT). Anything else prints the usage the FLAGs make and exits 2.
# shellcheck disable=SC2034 # the variables it sets are read by the scripts that source this file
bench_flags() {
  bench_name=$1
  shift
  local usage="usage: scripts/$bench_name" allowed=() flag known
  write=1 paired=0 against="" this="" before=""
  while [[ $1 != -- ]]; do
    flag=${1%%=*}
    allowed+=("$flag")
    case $flag in
      --no-write | --paired) usage+=" [$flag]" ;;
      *)
        usage+=" [$flag REV]"
        if [[ $1 == *=* ]]; then printf -v "${flag#--}" '%s' "${1#*=}"; fi
        ;;
    esac
    shift
  done
  shift
  while [[ $# -gt 0 ]]; do
    known=""
    for flag in "${allowed[@]}"; do
      if [[ $1 == "$flag" ]]; then known=1; fi
    done
    if [[ -z $known ]]; then echo "$usage" >&2; exit 2; fi
    case "$1" in
      --no-write) write=0 ;;
      --paired) paired=1 ;;
      *)
        [[ $# -ge 2 ]] || { echo "$1 needs a commit" >&2; exit 2; }
        printf -v "${1#--}" '%s' "$2"
        shift
        ;;
    esac
    shift
  done
}

# bench_lock: one of scripts/bench, profile and coldstart (and scripts/instructions' table) at a
# time: they share the snapshots below, and a second run would replace a tree under the first
# one's running `wrangler dev`.
bench_lock() {
  mkdir -p "$bench_dir"
  exec 9>"$bench_dir/lock"
  if ! flock -n 9; then
    echo "another scripts/bench, scripts/profile or scripts/coldstart is running (target/bench-worker/lock)" >&2
    exit 1
  fi
}

# bench_begin: what a run starts with once its flags are read: the toolchain
# (scripts/toolchain.sh), the time `step` counts from (began), a scratch folder ($work), the
# lock, the short commits of the REVs the flags named (against_rev, this_rev, before_rev; a
# usage error for one that is no commit), and the trap that on exit keeps a failed run's logs,
# stops every `wrangler dev` started and removes $work.
# shellcheck disable=SC2034 # the variables it sets are read by the scripts that source this file
bench_begin() {
  source "$root/scripts/toolchain.sh"
  began=$(date +%s)
  work=$(mktemp -d "${TMPDIR:-/tmp}/handoff-$bench_name.XXXXXX")
  bench_lock
  if [[ -n "$against" ]]; then against_rev=$(short_rev "$against"); fi
  if [[ -n "$this" ]]; then this_rev=$(short_rev "$this"); fi
  if [[ -n "$before" ]]; then before_rev=$(short_rev "$before"); fi
  trap 'keep_logs $?; stop_all; rm -rf "$work"' EXIT
}

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

# bench_tree STEP: the working tree snapshotted into target/bench-worker/tree ($tree, now the
# current folder), which the run builds and serves from with its own cargo target folder
# (CARGO_TARGET_DIR) that later runs reuse, and the bench built there ($bench, release) under the
# heading STEP.
bench_tree() {
  step "snapshot the working tree into target/bench-worker/tree"
  tree="$bench_dir/tree"
  snapshot_worktree "$tree"
  export CARGO_TARGET_DIR="$bench_dir/target"
  cd "$tree"
  step "$1"
  cargo build --quiet --release --manifest-path bench/Cargo.toml
  bench="$CARGO_TARGET_DIR/release/bench"
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

# serve_workers TOKEN_NAME [--names-kept] [--floor-schema]: six free loopback ports ($ports) and
# a fresh token ($token, TOKEN_NAME-…); handoff-mcp on ports 0 and 1 (its inspector) with the
# command line scripts/test uses, from this tree or, with --this, REV's ($handoff_pid); with
# --against, REV's on ports 4 and 5 ($rev_pid, and $before_flags, which name it to the bench);
# the D1 floor Worker on ports 2 and 3 ($floor_pid), started once the Workers are built, so the
# builds' CPU does not slow the floor's start; then DevTools' Network domain off behind each
# inspector. --names-kept builds each handoff-mcp with its wasm name section
# (HANDOFF_KEEP_NAMES=1, a REV's with this tree's scripts/build); --floor-schema gives the
# floor's database handoff-mcp's schema, for the statement floors (the bench seeds it).
# shellcheck disable=SC2034 # the variables it sets are read by the scripts that source this file
serve_workers() {
  local name=$1 keep=${HANDOFF_KEEP_NAMES:-} this_build="" floor_schema="" option
  shift
  for option in "$@"; do
    case $option in
      --names-kept) keep=1 this_build=--this-build ;;
      --floor-schema) floor_schema=1 ;;
    esac
  done
  take_ports 6
  token=$(mint_token "$name")
  if [[ -n "$this" ]]; then
    HANDOFF_KEEP_NAMES=$keep serve_rev this "$this_rev" "$token" "${ports[0]}" "${ports[1]}" $this_build
    handoff_pid=$rev_pid
  else
    "$WRANGLER" d1 migrations apply DB --local --persist-to "$work/state" >/dev/null
    HANDOFF_KEEP_NAMES=$keep start_dev "$tree" "$work/wrangler.log" --port "${ports[0]}" \
      --inspector-port "${ports[1]}" --persist-to "$work/state" --var "AUTH_TOKEN:$token"
    handoff_pid=$dev_pid
    wait_up "http://127.0.0.1:${ports[0]}/healthz" "$handoff_pid" "$work/wrangler.log" || exit 1
  fi
  before_flags=()
  if [[ -n "$against" ]]; then
    HANDOFF_KEEP_NAMES=$keep serve_rev before "$against_rev" "$token" "${ports[4]}" "${ports[5]}" $this_build
    before_flags=(--before-base "http://127.0.0.1:${ports[4]}/$token" --before-pgid "$rev_pid"
      --before-label "$against_rev")
  fi
  if [[ -n $floor_schema ]]; then
    "$WRANGLER" d1 migrations apply DB --local --config bench/floor-worker/wrangler.toml \
      --persist-to "$work/floor-state" >/dev/null
  fi
  start_dev "$tree" "$work/floor.log" --config bench/floor-worker/wrangler.toml \
    --port "${ports[2]}" --inspector-port "${ports[3]}" --persist-to "$work/floor-state"
  floor_pid=$dev_pid
  wait_up "http://127.0.0.1:${ports[2]}/healthz" "$floor_pid" "$work/floor.log" || exit 1
  network_off "${ports[1]}" "${ports[3]}" ${against:+"${ports[5]}"}
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

# tree_rev: this tree's short commit, and whether src/ or the manifests hold uncommitted changes,
# for a report's head.
tree_rev() {
  echo "$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- src Cargo.toml Cargo.lock || echo ' plus uncommitted changes')"
}

# bench_report SECTION: the report ($work/report.md) written into docs/benchmarks.md between
# SECTION's markers, or printed with --no-write; then how long the run took.
bench_report() {
  if [[ $write -eq 1 ]]; then
    write_section docs/benchmarks.md "$1" "$work/report.md"
    echo "wrote the report into docs/benchmarks.md" >&2
  else
    cat "$work/report.md"
  fi
  echo "scripts/$bench_name took $(($(date +%s) - began)) s" >&2
}
