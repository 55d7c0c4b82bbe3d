//! The Worker's global allocator: `heap::Heap` over this wasm memory, which grows a page at a
//! time with `memory.grow` and never shrinks. An isolate runs one thread, so the heap is used
//! by one caller at a time.

use std::alloc::{GlobalAlloc, Layout};
use std::cell::UnsafeCell;

use crate::heap::{Heap, Memory, PAGE};

/// This wasm module's memory 0.
struct Wasm;

impl Memory for Wasm {
    fn grow(&mut self, bytes: usize) -> Option<usize> {
        let old = core::arch::wasm32::memory_grow(0, bytes.div_ceil(PAGE));
        (old != usize::MAX).then(|| old * PAGE)
    }
}

struct Global(UnsafeCell<Heap<Wasm>>);

// SAFETY: wasm32-unknown-unknown without threads: the heap is never shared between threads.
unsafe impl Sync for Global {}

// SAFETY: `Heap` gives blocks apart, of the size and alignment asked, from memory only it uses.
unsafe impl GlobalAlloc for Global {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        unsafe { (*self.0.get()).alloc(layout.size(), layout.align()) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { (*self.0.get()).dealloc(ptr, layout.size(), layout.align()) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        unsafe { (*self.0.get()).realloc(ptr, layout.size(), layout.align(), new_size) }
    }
}

#[global_allocator]
static HEAP: Global = Global(UnsafeCell::new(Heap::new(Wasm)));
