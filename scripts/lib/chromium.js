// Debian's Chromium as every browser step launches it (scripts/browser, scripts/screenshots,
// scripts/oauth-clients' mcp-remote, scripts/claude-oauth's consent pages), through
// playwright-core (PLAYWRIGHT_CORE, CHROMIUM_BIN: scripts/toolchain.sh, ensure_browser). The
// flags keep the browser's own traffic off the network: no background requests, component
// updates, sync or QUIC, so a test's only connections are the ones it makes to loopback.
"use strict";
const { chromium } = require(process.env.PLAYWRIGHT_CORE);

exports.launch = () =>
  chromium.launch({
    executablePath: process.env.CHROMIUM_BIN,
    headless: true,
    timeout: 30000,
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
