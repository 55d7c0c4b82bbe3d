// The Worker's entry module: scripts/build copies it to build/index.js (wrangler.toml's `main`),
// beside worker-build's own bundle, which it renames build/worker-build.js. It moves requests
// only: what a request does is decided in Rust.
//
// worker-build's entry exports a WorkerEntrypoint class behind a Proxy, so for every request the
// runtime constructs an instance (through the Proxy's construct trap, which makes a second Proxy
// around it) and reads `fetch` through a third. This module exports a plain handler object
// instead, whose `fetch` calls the wasm fetch the class's `fetch` calls, with the same `env` and
// `ctx`: docs/benchmarks-history.md has what that saved per request. The Durable Object class
// goes out as worker-build made it.

import Entrypoint, { SseSession } from "./worker-build.js";

export { SseSession };

// worker-build's `fetch`: `exports.fetch.call(this, request, this.env, this.ctx)`.
const wasmFetch = Entrypoint.prototype.fetch;
// workers-rs's state of the wasm instance; its panic hook sets `criticalError`.
const instance = globalThis.__worker_init_state;

export default {
  fetch(request, env, ctx) {
    // After a panic, the request that follows goes the way worker-build's entry sends every
    // request: its construct trap makes a new wasm instance and clears the flag first.
    if (instance.criticalError) {
      return new Entrypoint(ctx, env).fetch(request);
    }
    return wasmFetch.call({ env, ctx }, request);
  },
};
