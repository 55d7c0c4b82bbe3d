//! The isolate's start-up (`crate::startup`): its requests' answers turned into runtime
//! `Response`s and dropped, so that path is compiled before the first request too.

use wasm_bindgen::prelude::wasm_bindgen;

use super::{now_ms, respond};
use crate::startup;

/// Runs when the wasm module is instantiated: the Worker's start-up.
#[wasm_bindgen(start)]
fn start() {
    for answer in startup::serve(now_ms()) {
        let _ = respond(answer);
    }
}
