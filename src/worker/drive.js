// The one piece of JavaScript of the fetch driver (src/worker/drive.rs, which declares it). It
// moves promises and values only: what a request does is decided in Rust.

// Settles `promise`, hands its outcome to `step(id, value, ok)`, and does the same with each
// promise `step` returns, until it returns the request's Response: the promise of that Response.
// One call into wasm per settled promise, where wasm-bindgen's executor spends two closures, a
// `queueMicrotask` and several calls on each.
export function chain(promise, id, step) {
  const next = (value, ok) => {
    const result = step(id, value, ok);
    return result instanceof Response ? result : result.then(resolved, rejected);
  };
  const resolved = (value) => next(value, true);
  const rejected = (error) => next(error, false);
  return promise.then(resolved, rejected);
}
