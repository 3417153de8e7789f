//! A parallel map over a slice: one chunk per available core, each on its own scoped
//! thread, results in item order. The catalog synthesizes operations with it, and loading
//! checks client dialects with it.

/// `run` over `items` split in one chunk per available core (at most 8; one chunk for
/// fewer than 64 items), each on its own thread; the results in item order.
pub fn on_all_cores<T: Sync, R: Send>(items: &[T], run: impl Fn(&[T]) -> Vec<R> + Sync) -> Vec<R> {
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .min(8);
    if threads <= 1 || items.len() < 64 {
        return run(items);
    }
    let run = &run;
    std::thread::scope(|scope| {
        let handles: Vec<_> = items
            .chunks(items.len().div_ceil(threads))
            .map(|chunk| scope.spawn(move || run(chunk)))
            .collect();
        handles
            .into_iter()
            .flat_map(|handle| match handle.join() {
                Ok(results) => results,
                Err(panic) => std::panic::resume_unwind(panic),
            })
            .collect()
    })
}
