//! The module's allocator: wasi-libc's `malloc`, with frees deferred up to a budget.
//!
//! policy-server evaluates every request in a fresh instance and throws the instance away
//! afterwards, so a free that only makes memory reusable for later requests is work nobody
//! needs: an evaluation of a valid object frees about 750 blocks, some 12 % of its time in the
//! module (docs/performance.md, "Frees deferred"). So frees are skipped until the instance has
//! skipped [`DEFERRED_BYTES`] in all; from then on every free is a real one. A host that reuses
//! an instance for many calls therefore loses at most that much memory once, and a hostile
//! request that allocates without end is no worse off than with plain `malloc`.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Bytes an instance may leave unfreed over its whole life: more than any evaluation of a
/// valid object allocates (78 KB for the ClusterExtension, 600 KB against a 1.3 MB CRD).
const DEFERRED_BYTES: usize = 1 << 20;

pub struct FreeLater {
    /// What is left of [`DEFERRED_BYTES`].
    budget: AtomicUsize,
}

#[global_allocator]
static ALLOCATOR: FreeLater = FreeLater {
    budget: AtomicUsize::new(DEFERRED_BYTES),
};

// SAFETY: every block comes from `System`, and is either handed back to it exactly once or
// never (a block never freed is sound, only unreusable).
unsafe impl GlobalAlloc for FreeLater {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        System.alloc(layout)
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        System.alloc_zeroed(layout)
    }

    // Not inlined into every drop: that would cost the module 100 KB for nothing measurable.
    #[inline(never)]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // wasm32-wasip1 has one thread: load and store cannot interleave with another free.
        let left = self.budget.load(Ordering::Relaxed);
        match left.checked_sub(layout.size()) {
            Some(rest) => self.budget.store(rest, Ordering::Relaxed),
            None => System.dealloc(ptr, layout),
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        System.realloc(ptr, layout, new_size)
    }
}
