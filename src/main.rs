use std::process::ExitCode;

// mimalloc: loading GitHub's spec allocates millions of small JSON nodes; against glibc's
// allocator it cut serializing that tools/list from 172 ms to 69 ms when it was adopted.
// Built without transparent huge pages (the `no_thp` feature): with them, each 2 MB region
// mimalloc touched became resident whole, Petstore's start-up peak was 35 MB (21 MB
// without) and GitHub's 127 MB (98 MB without).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `mi_option_purge_delay` in mimalloc v3's `mi_option_t`, in milliseconds.
const PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;
/// Its default in the mimalloc this is built with (v3: 1 s).
const DEFAULT_PURGE_DELAY: std::ffi::c_long = 1000;

fn main() -> ExitCode {
    return_freed_memory_sooner();
    restmcp::cli::main()
}

/// Freed pages go back to the OS after 10 ms instead of a second: loading a large spec frees
/// blocks (the file's bytes, synthesis scratch) while it keeps growing, and held for a
/// second they stacked up (GitHub's start-up peak: 98 MB, 75 MB with this). Throughput
/// under bench/run.sh was the same within its noise.
fn return_freed_memory_sooner() {
    // SAFETY: reading and setting an option is thread-safe in mimalloc. The option number
    // is checked by its default first, so that a mimalloc with another numbering (or
    // default) is left alone rather than mis-set.
    unsafe {
        if libmimalloc_sys::mi_option_get(PURGE_DELAY) == DEFAULT_PURGE_DELAY {
            libmimalloc_sys::mi_option_set(PURGE_DELAY, 10);
        }
    }
}
