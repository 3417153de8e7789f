//! The allocator: mimalloc, which the binary installs as the global allocator
//! ([`MiMalloc`]) and tunes at start ([`return_freed_memory_sooner`]), and the benchmarks
//! too, so they measure what ships; and [`pinned`], how the call path boxes its futures.
//! Owns nothing else; imports nothing of the crate.

use libmimalloc_sys as mi;

/// mimalloc as the global allocator, asked for plain blocks when the alignment is one every
/// block has. The `mimalloc` crate's allocator asks for every block with `mi_malloc_aligned`,
/// which checks the alignment and the free block's address before the same fast path:
/// about 2,000 instructions of a call's 120,000 (bench/README.md, Per call).
pub struct MiMalloc;

/// The alignment of every mimalloc block: blocks are whole words, on word boundaries.
const WORD: usize = std::mem::size_of::<usize>();

// SAFETY: mimalloc's functions meet `GlobalAlloc`'s contract: a null pointer on failure,
// `mi_free` and `mi_realloc*` take any pointer mimalloc gave out, and a block from
// `mi_malloc`/`mi_zalloc`/`mi_realloc` is word-aligned, so only larger alignments go to
// the `_aligned` functions.
unsafe impl std::alloc::GlobalAlloc for MiMalloc {
    #[inline]
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        // SAFETY: see the impl.
        unsafe {
            if layout.align() <= WORD {
                mi::mi_malloc(layout.size()).cast()
            } else {
                mi::mi_malloc_aligned(layout.size(), layout.align()).cast()
            }
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: std::alloc::Layout) -> *mut u8 {
        // SAFETY: see the impl.
        unsafe {
            if layout.align() <= WORD {
                mi::mi_zalloc(layout.size()).cast()
            } else {
                mi::mi_zalloc_aligned(layout.size(), layout.align()).cast()
            }
        }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, _layout: std::alloc::Layout) {
        // SAFETY: see the impl.
        unsafe { mi::mi_free(ptr.cast()) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, size: usize) -> *mut u8 {
        // SAFETY: see the impl.
        unsafe {
            if layout.align() <= WORD {
                mi::mi_realloc(ptr.cast(), size).cast()
            } else {
                mi::mi_realloc_aligned(ptr.cast(), size, layout.align()).cast()
            }
        }
    }
}

/// `mi_option_purge_delay` in mimalloc v3's `mi_option_t`, in milliseconds.
const PURGE_DELAY: mi::mi_option_t = 15;
/// Its default in the mimalloc this is built with (v3: 1 s).
const DEFAULT_PURGE_DELAY: std::ffi::c_long = 1000;

/// Freed pages go back to the OS after 10 ms instead of a second: loading a large spec frees
/// blocks (the file's bytes, synthesis scratch) while it keeps growing, and held for a
/// second they stacked up (GitHub's start-up peak: 98 MB, 75 MB with this). Throughput
/// under bench/run.sh was the same within its noise.
pub fn return_freed_memory_sooner() {
    // SAFETY: reading and setting an option is thread-safe in mimalloc. The option number
    // is checked by its default first, so that a mimalloc with another numbering (or
    // default) is left alone rather than mis-set.
    unsafe {
        if mi::mi_option_get(PURGE_DELAY) == DEFAULT_PURGE_DELAY {
            mi::mi_option_set(PURGE_DELAY, 10);
        }
    }
}

/// The future `make` returns, boxed and pinned, written straight into its allocation.
///
/// `Box::pin(future)` builds the future on the stack and copies all of it into the box,
/// whatever state it starts in: a future is as large as its largest state, and a call's are
/// kilobytes (the front's 7.9 KB, the upstream exchange's 6 KB). Four such copies were 23 KB
/// of the 81 KB a `tools/call` moved with `memcpy` (bench/README.md, the section of
/// 2026-11-30, 22:15–23:50 UTC). Built inside `Box::write`, the future is made where it
/// stays: the compiler writes it in place.
#[inline(always)]
pub fn pinned<F: std::future::Future>(make: impl FnOnce() -> F) -> std::pin::Pin<Box<F>> {
    Box::into_pin(Box::write(Box::new_uninit(), make()))
}
