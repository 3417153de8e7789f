use std::process::ExitCode;

// mimalloc: loading GitHub's spec allocates millions of small JSON nodes; against glibc's
// allocator it cut serializing that tools/list from 172 ms to 69 ms when it was adopted.
// Built without transparent huge pages (the `no_thp` feature): with them, each 2 MB region
// mimalloc touched became resident whole, Petstore's start-up peak was 35 MB (21 MB
// without) and GitHub's 127 MB (98 MB without).
#[global_allocator]
static GLOBAL: restmcp::alloc::MiMalloc = restmcp::alloc::MiMalloc;

fn main() -> ExitCode {
    restmcp::alloc::return_freed_memory_sooner();
    restmcp::cli::main()
}
