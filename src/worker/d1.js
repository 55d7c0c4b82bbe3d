// The D1 adapter's one piece of JavaScript (src/worker/d1.rs declares it). It moves values
// only: which statement runs with which parameters is decided in Rust.

// Binds a prepared statement to its parameters, given as one JSON array, and runs it with
// `raw()`: one crossing and one string, where building the array from wasm took a call per
// parameter and a string copy for each text, then a call to bind and one to run.
export function bindAndRaw(statement, params) {
  return statement.bind(...JSON.parse(params)).raw();
}
