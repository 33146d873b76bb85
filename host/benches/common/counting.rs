//! A global allocator that counts heap bytes while asked to, for the
//! benchmarks that measure a structure's memory. Included by path
//! (`#[path = "common/counting.rs"] mod counting;`) only by them: a
//! global allocator is the whole executable's.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicIsize, Ordering};

/// Counts heap bytes (as `malloc_usable_size` reports them) and
/// allocations while `COUNTING` is on, so a structure's size is the net
/// change over building it, and builds that are timed pay nothing but one
/// load per call. Memory mapped outside the heap (wasmtime's WebAssembly
/// linear memory and compiled code) is not counted.
pub struct Counting;

/// Whether allocations are counted now ([`counted`] turns it on).
pub static COUNTING: AtomicBool = AtomicBool::new(false);
static HELD_BYTES: AtomicIsize = AtomicIsize::new(0);
static HELD_ALLOCATIONS: AtomicIsize = AtomicIsize::new(0);

fn usable(ptr: *mut u8) -> isize {
    // SAFETY: `ptr` came from the system allocator and is live.
    unsafe { libc::malloc_usable_size(ptr.cast()) as isize }
}

fn count(ptr: *mut u8, sign: isize) {
    if !ptr.is_null() && COUNTING.load(Ordering::Relaxed) {
        HELD_BYTES.fetch_add(sign * usable(ptr), Ordering::Relaxed);
        HELD_ALLOCATIONS.fetch_add(sign, Ordering::Relaxed);
    }
}

// SAFETY: every call is passed on to the system allocator unchanged.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as the caller promised for `layout`.
        let ptr = unsafe { System.alloc(layout) };
        count(ptr, 1);
        ptr
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as the caller promised for `layout`.
        let ptr = unsafe { System.alloc_zeroed(layout) };
        count(ptr, 1);
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        count(ptr, -1);
        // SAFETY: as the caller promised.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count(ptr, -1);
        // SAFETY: as the caller promised.
        let moved = unsafe { System.realloc(ptr, layout, new_size) };
        // A failed realloc leaves the old block in place.
        count(if moved.is_null() { ptr } else { moved }, 1);
        moved
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Runs `f` with counting on: what it returns, and the net heap bytes and
/// allocations it left held (by any thread).
pub fn counted<T>(f: impl FnOnce() -> T) -> (T, (isize, isize)) {
    let before = (
        HELD_BYTES.load(Ordering::SeqCst),
        HELD_ALLOCATIONS.load(Ordering::SeqCst),
    );
    COUNTING.store(true, Ordering::SeqCst);
    let out = f();
    COUNTING.store(false, Ordering::SeqCst);
    let after = (
        HELD_BYTES.load(Ordering::SeqCst),
        HELD_ALLOCATIONS.load(Ordering::SeqCst),
    );
    (out, (after.0 - before.0, after.1 - before.1))
}
