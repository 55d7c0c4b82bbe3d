//! The fetch driver: runs a request's future to its `Response` without wasm-bindgen's executor,
//! which spends two closures, a `queueMicrotask` (a costly call in workerd) and several calls
//! across the boundary on each await, and one more microtask to start. Here a request's future
//! is polled at once, inside the fetch call, and again inside the callback of each promise it
//! awaited (`drive.js`, `chain`): one call into wasm per settled promise.
//! docs/benchmarks-history.md has the profile and the figures.
//!
//! A driven future awaits JavaScript only through `settle`, one promise at a time (the request
//! body, then each D1 batch). `settle` outside a driven poll (the SSE routes and the Durable
//! Object's handlers, which workers-rs runs on wasm-bindgen's executor) is a plain `JsFuture`.
//! No request state lives here beyond a parked future between two of its promises.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use wasm_bindgen::prelude::{wasm_bindgen, Closure};
use wasm_bindgen::JsValue;
use worker::js_sys::{futures::JsFuture, Promise};
use worker::web_sys;

type Step = Closure<dyn FnMut(u32, JsValue, bool) -> JsValue>;
type Task = Pin<Box<dyn Future<Output = web_sys::Response>>>;

#[wasm_bindgen(module = "/src/worker/drive.js")]
extern "C" {
    /// Settles `promise`, hands its outcome to `step(id, value, ok)` and does the same with each
    /// promise `step` returns, until it returns a `Response`: the promise of that `Response`.
    fn chain(promise: &Promise, id: u32, step: &Step) -> Promise;
}

thread_local! {
    /// Whether the driver is polling a future right now. Polls never nest: each runs in the
    /// fetch call or in a promise's callback, on the isolate's one thread.
    static DRIVING: Cell<bool> = const { Cell::new(false) };
    /// The promise the future being polled has just begun to wait on.
    static AWAITED: RefCell<Option<Promise>> = const { RefCell::new(None) };
    /// How that promise settled, for the poll `step` makes next.
    static OUTCOME: RefCell<Option<Result<JsValue, JsValue>>> = const { RefCell::new(None) };
    /// The futures waiting on a promise, by the id `chain` carries for them.
    static PARKED: RefCell<Vec<Option<Task>>> = const { RefCell::new(Vec::new()) };
    /// `step` as a JavaScript function, made once per isolate.
    static STEP: Step = Closure::new(step);
}

/// The promise of the `Response` that `future` resolves to, polled first right now.
pub fn drive(future: impl Future<Output = web_sys::Response> + 'static) -> Promise {
    let mut task: Task = Box::pin(future);
    match poll(&mut task) {
        Polled::Done(response) => Promise::resolve(&JsValue::from(response)),
        Polled::Waiting(promise) => {
            let id = park(task);
            STEP.with(|step| chain(&promise, id, step))
        }
    }
}

/// A driven poll's outcome: the response, or the promise the future now waits on.
enum Polled {
    Done(web_sys::Response),
    Waiting(Promise),
}

fn poll(task: &mut Task) -> Polled {
    DRIVING.set(true);
    let polled = task.as_mut().poll(&mut Context::from_waker(Waker::noop()));
    DRIVING.set(false);
    match polled {
        Poll::Ready(response) => Polled::Done(response),
        Poll::Pending => Polled::Waiting(
            AWAITED
                .take()
                .expect("a driven future waits on JavaScript only through `settle`"),
        ),
    }
}

/// Keeps `task` until its promise settles; the id is its place, reused once it is done.
fn park(task: Task) -> u32 {
    PARKED.with_borrow_mut(|parked| {
        let id = match parked.iter().position(Option::is_none) {
            Some(free) => free,
            None => {
                parked.push(None);
                parked.len() - 1
            }
        };
        parked[id] = Some(task);
        id as u32
    })
}

/// `chain`'s callback: polls the parked future `id` with its promise's outcome, and returns its
/// `Response`, or the next promise it waits on (the future stays parked under the same id).
fn step(id: u32, value: JsValue, ok: bool) -> JsValue {
    let mut task = PARKED
        .with_borrow_mut(|parked| parked.get_mut(id as usize).and_then(Option::take))
        .expect("`chain` steps a parked future");
    OUTCOME.set(Some(if ok { Ok(value) } else { Err(value) }));
    match poll(&mut task) {
        Polled::Done(response) => response.into(),
        Polled::Waiting(promise) => {
            PARKED.with_borrow_mut(|parked| parked[id as usize] = Some(task));
            promise.into()
        }
    }
}

/// Waits for `promise`: through the driver when it is the one polling, else as a `JsFuture`.
pub fn settle(promise: Promise) -> Settle {
    Settle(State::New(promise))
}

pub struct Settle(State);

enum State {
    New(Promise),
    Driven,
    Spawned(JsFuture),
    Done,
}

impl Future for Settle {
    type Output = Result<JsValue, JsValue>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        match std::mem::replace(&mut this.0, State::Done) {
            State::New(promise) if DRIVING.get() => {
                AWAITED.set(Some(promise));
                this.0 = State::Driven;
                Poll::Pending
            }
            State::New(promise) => {
                this.0 = State::Spawned(JsFuture::from(promise));
                Pin::new(this).poll(cx)
            }
            // Polled again by `step`, which has just put the outcome here.
            State::Driven => match OUTCOME.take() {
                Some(outcome) => Poll::Ready(outcome),
                None => {
                    this.0 = State::Driven;
                    Poll::Pending
                }
            },
            State::Spawned(mut future) => {
                let polled = Pin::new(&mut future).poll(cx);
                if polled.is_pending() {
                    this.0 = State::Spawned(future);
                }
                polled
            }
            State::Done => panic!("`Settle` polled after it was ready"),
        }
    }
}
