//! A parallel map over a slice: one chunk per available core, each on its own scoped
//! thread (and, if the caller wants, with a state of its own that outlives the call,
//! [`on_all_cores_with`]); results in item order. The catalog synthesizes operations with
//! it, and loading checks client dialects with it.

/// The threads [`on_all_cores`] runs on: one per available core, at most 8.
pub fn threads() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .min(8)
}

/// `run` over `items` split in one chunk per available core (at most 8; one chunk for
/// fewer than 64 items), each on its own thread; the results in item order.
pub fn on_all_cores<T: Sync, R: Send>(items: &[T], run: impl Fn(&[T]) -> Vec<R> + Sync) -> Vec<R> {
    let mut states = vec![(); threads()];
    on_all_cores_with(&mut states, items, |_, chunk| run(chunk))
}

/// Like [`on_all_cores`], each chunk run with a state of its own from `states` (one per
/// thread, [`threads`] of them; fewer threads if there are fewer states, none without
/// one), which outlives the call: a caller mapping several slices in turn keeps what each
/// thread has worked out.
pub fn on_all_cores_with<S: Send, T: Sync, R: Send>(
    states: &mut [S],
    items: &[T],
    run: impl Fn(&mut S, &[T]) -> Vec<R> + Sync,
) -> Vec<R> {
    let threads = threads().min(states.len());
    match states {
        [] => return Vec::new(),
        [first, ..] if threads <= 1 || items.len() < 64 => return run(first, items),
        _ => {}
    }
    let run = &run;
    std::thread::scope(|scope| {
        let handles: Vec<_> = items
            .chunks(items.len().div_ceil(threads))
            .zip(states.iter_mut())
            .map(|(chunk, state)| scope.spawn(move || run(state, chunk)))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_chunk_runs_with_a_state_and_results_keep_item_order() {
        let items: Vec<usize> = (0..1000).collect();
        let mut states = vec![0usize; threads()];
        let results = on_all_cores_with(&mut states, &items, |runs, chunk| {
            *runs += chunk.len();
            chunk.iter().map(|item| item * 2).collect()
        });
        assert_eq!(results, items.iter().map(|i| i * 2).collect::<Vec<_>>());
        assert_eq!(
            states.iter().sum::<usize>(),
            1000,
            "the states outlive the call"
        );
        let few = on_all_cores_with(&mut states, &items[..3], |_, chunk| chunk.to_vec());
        assert_eq!(few, [0, 1, 2]);
        let none = on_all_cores_with(&mut [] as &mut [()], &items, |_, chunk| chunk.to_vec());
        assert!(none.is_empty());
    }
}
