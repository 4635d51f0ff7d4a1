//! A bounded pool for many targets: [`ordered`] runs a job per item on at most `jobs` threads and
//! hands each result to a sink in input order, as soon as it and every earlier item are done, so
//! output streams while its order stays the same whatever the completion order. [`Permits`]
//! bounds one kind of work (registry downloads) below the pool's own bound.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, PoisonError};

/// Run `work` on every item with at most `jobs` threads (each thread builds its own state with
/// `init`: state that cannot be shared, such as open git repositories), and pass each result to
/// `sink` in input order. After the first item whose result `stop` accepts, no new item starts;
/// items already started finish, and every item before the stopping one has started, so the
/// results handed to `sink` are a prefix of the input that ends with the first stopping result
/// (whatever the timing). `sink` runs on the calling thread.
pub fn ordered<I, S, R, E>(
    items: &[I],
    jobs: usize,
    init: impl Fn() -> Result<S, E> + Sync,
    work: impl Fn(&mut S, &I) -> R + Sync,
    stop: impl Fn(&R) -> bool + Sync,
    mut sink: impl FnMut(usize, R),
) -> Result<(), E>
where
    I: Sync,
    R: Send,
    E: Send,
{
    let jobs = jobs.clamp(1, items.len().max(1));
    let next = AtomicUsize::new(0);
    let stopped = AtomicBool::new(false);
    let (tx, rx) = std::sync::mpsc::channel::<(usize, R)>();
    let work = &work;
    let init = &init;
    let stop = &stop;
    let next = &next;
    let stopped = &stopped;
    let run_worker = move |tx: std::sync::mpsc::Sender<(usize, R)>| -> Result<(), E> {
        let mut state = init()?;
        loop {
            if stopped.load(Ordering::SeqCst) {
                return Ok(());
            }
            let i = next.fetch_add(1, Ordering::SeqCst);
            let Some(item) = items.get(i) else {
                return Ok(());
            };
            let result = work(&mut state, item);
            if stop(&result) {
                stopped.store(true, Ordering::SeqCst);
            }
            if tx.send((i, result)).is_err() {
                return Ok(());
            }
        }
    };
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..jobs)
            .map(|_| {
                let tx = tx.clone();
                scope.spawn(move || run_worker(tx))
            })
            .collect();
        drop(tx);
        // Reorder: hold results until every earlier one has been handed on.
        let mut waiting = BTreeMap::new();
        let mut due = 0;
        let mut ended = false;
        for (i, result) in rx {
            waiting.insert(i, result);
            while !ended && let Some(result) = waiting.remove(&due) {
                let last = stop(&result);
                sink(due, result);
                due += 1;
                ended = last;
            }
        }
        let mut first_err = None;
        for handle in handles {
            match handle.join() {
                Ok(Ok(())) => {}
                Ok(Err(e)) => {
                    first_err.get_or_insert(e);
                }
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        first_err.map_or(Ok(()), Err)
    })
}

/// A counting semaphore: at most `n` holders of a [`Permit`] at once.
#[derive(Debug)]
pub struct Permits {
    free: Mutex<usize>,
    returned: Condvar,
}

/// One held permit, given back when dropped.
pub struct Permit<'a>(&'a Permits);

impl Permits {
    pub fn new(n: usize) -> Self {
        Permits {
            free: Mutex::new(n.max(1)),
            returned: Condvar::new(),
        }
    }

    /// Wait for a free permit.
    pub fn take(&self) -> Permit<'_> {
        let mut free = self.free.lock().unwrap_or_else(PoisonError::into_inner);
        while *free == 0 {
            free = self
                .returned
                .wait(free)
                .unwrap_or_else(PoisonError::into_inner);
        }
        *free -= 1;
        Permit(self)
    }
}

impl Drop for Permit<'_> {
    fn drop(&mut self) {
        let mut free = self.0.free.lock().unwrap_or_else(PoisonError::into_inner);
        *free += 1;
        self.0.returned.notify_one();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::convert::Infallible;
    use std::time::Duration;

    #[test]
    fn results_come_in_input_order_whatever_the_completion_order() {
        // Earlier items sleep longer, so they finish last.
        let items: Vec<u64> = (0..12).collect();
        let mut seen = Vec::new();
        ordered(
            &items,
            4,
            || Ok::<_, Infallible>(()),
            |(), &i| {
                std::thread::sleep(Duration::from_millis((12 - i) * 3));
                i * 10
            },
            |_| false,
            |i, r| seen.push((i, r)),
        )
        .expect("no init error");
        let want: Vec<(usize, u64)> = (0..12).map(|i| (i as usize, i * 10)).collect();
        assert_eq!(seen, want);
    }

    #[test]
    fn at_most_jobs_run_at_once() {
        let running = AtomicUsize::new(0);
        let peak = AtomicUsize::new(0);
        let items: Vec<u32> = (0..16).collect();
        ordered(
            &items,
            3,
            || Ok::<_, Infallible>(()),
            |(), _| {
                let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                peak.fetch_max(now, Ordering::SeqCst);
                std::thread::sleep(Duration::from_millis(5));
                running.fetch_sub(1, Ordering::SeqCst);
            },
            |_| false,
            |_, ()| {},
        )
        .expect("no init error");
        assert_eq!(peak.load(Ordering::SeqCst), 3);
    }

    #[test]
    fn a_stop_ends_the_output_at_the_first_stopping_item() {
        let items: Vec<u32> = (0..40).collect();
        let mut seen = Vec::new();
        ordered(
            &items,
            4,
            || Ok::<_, Infallible>(()),
            |(), &i| {
                // Item 7 fails quickly; the items before it are slow.
                if i != 7 {
                    std::thread::sleep(Duration::from_millis(4));
                }
                i == 7 || i == 9
            },
            |failed| *failed,
            |i, _| seen.push(i),
        )
        .expect("no init error");
        assert_eq!(seen, (0..=7).collect::<Vec<usize>>());
    }

    #[test]
    fn permits_bound_their_holders() {
        let permits = Permits::new(2);
        let running = AtomicUsize::new(0);
        let peak = AtomicUsize::new(0);
        std::thread::scope(|s| {
            for _ in 0..6 {
                s.spawn(|| {
                    let _p = permits.take();
                    let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                    peak.fetch_max(now, Ordering::SeqCst);
                    std::thread::sleep(Duration::from_millis(5));
                    running.fetch_sub(1, Ordering::SeqCst);
                });
            }
        });
        assert_eq!(peak.load(Ordering::SeqCst), 2);
    }
}
