//! Independent pieces of work (heads, generated matrices) spread over every core.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

/// How many cores the work may use, asked of the system once: the standard library reads the
/// cgroup's CPU quota from /proc each time it is asked, which, asked for every matrix product,
/// was half the time `show --format json` took on a small lesson.
pub fn cores() -> usize {
    static CORES: OnceLock<usize> = OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, usize::from))
}

/// `value(index)` for every index below `count`, in order: on every core when `parallel` and there
/// are several. Each core takes the next piece when it finishes one, so pieces of unequal size
/// (a 256 × 1024 embedding and 1024 × 1024 weights) still keep every core busy.
pub(crate) fn each<T: Send>(
    count: usize,
    parallel: bool,
    value: impl Fn(usize) -> T + Sync,
) -> Vec<T> {
    if !parallel || count < 2 || cores() < 2 {
        return (0..count).map(value).collect();
    }
    let next = AtomicUsize::new(0);
    let (next, value) = (&next, &value);
    let mut results: Vec<Option<T>> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..cores().min(count))
            .map(|_| {
                scope.spawn(move || {
                    let mut done = Vec::new();
                    loop {
                        let index = next.fetch_add(1, Ordering::Relaxed);
                        if index >= count {
                            return done;
                        }
                        done.push((index, value(index)));
                    }
                })
            })
            .collect();
        let mut results: Vec<Option<T>> = (0..count).map(|_| None).collect();
        for worker in workers {
            // A panic in `value` is the caller's bug: passed on as if it had happened here.
            let done = worker
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            for (index, result) in done {
                results[index] = Some(result);
            }
        }
        results
    });
    results.iter_mut().filter_map(Option::take).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_piece_comes_back_in_order_on_one_core_or_many() {
        let squares: Vec<usize> = (0..37).map(|index| index * index).collect();
        assert_eq!(each(37, true, |index| index * index), squares);
        assert_eq!(each(37, false, |index| index * index), squares);
        assert!(each(0, true, |index| index).is_empty());
    }
}
