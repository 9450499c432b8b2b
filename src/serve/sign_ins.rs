//! Sign-in attempts, paced per address across all its connections (as OpenSSH's
//! `PerSourcePenalties` does per source): a token bucket of `BURST` attempts refilled at `RATE`
//! a second, so one address has its join codes checked at most about ten times a second
//! however many connections it opens. Waiting attempts go in order of how many times their own
//! connection has already failed, so a classmate's first try on the same address passes the
//! retries of a flood.

use std::collections::{BTreeMap, HashMap};
use std::net::IpAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use tokio::sync::Notify;

/// Attempts checked per second from one address, once its burst is spent.
pub const RATE: f64 = 10.0;

/// Attempts one address may make at once before it is paced.
pub const BURST: f64 = 10.0;

/// Above this many addresses, those with nothing pending are forgotten.
const REMEMBERED: usize = 256;

#[derive(Default)]
pub struct SignIns {
    addresses: Mutex<HashMap<IpAddr, Bucket>>,
    arrivals: AtomicU64,
}

struct Bucket {
    tokens: f64,
    updated: Instant,
    /// Attempts waiting for a turn, by (earlier failures of their connection, arrival).
    waiting: BTreeMap<(u32, u64), Arc<Notify>>,
    /// Whether the address is being paced (logged once each time it starts).
    slowed: bool,
}

impl Bucket {
    fn new() -> Bucket {
        Bucket {
            tokens: BURST,
            updated: Instant::now(),
            waiting: BTreeMap::new(),
            slowed: false,
        }
    }

    fn refill(&mut self) {
        let now = Instant::now();
        let earned = now.duration_since(self.updated).as_secs_f64() * RATE;
        self.tokens = (self.tokens + earned).min(BURST);
        self.updated = now;
        if self.tokens >= BURST {
            self.slowed = false;
        }
    }
}

/// An attempt's place in its address's line; leaving it (by its turn, or because the
/// connection ended while waiting) lets the next one go.
struct InLine<'a> {
    sign_ins: &'a SignIns,
    ip: IpAddr,
    key: (u32, u64),
}

impl Drop for InLine<'_> {
    fn drop(&mut self) {
        let mut addresses = self.sign_ins.lock();
        if let Some(bucket) = addresses.get_mut(&self.ip) {
            bucket.waiting.remove(&self.key);
            if let Some(next) = bucket.waiting.values().next() {
                next.notify_one();
            }
        }
    }
}

impl SignIns {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<IpAddr, Bucket>> {
        self.addresses
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Waits for `ip`'s turn to have an attempt checked; `failures` is how many its connection
    /// has already had refused. Returns how long it waited.
    pub async fn turn(&self, ip: IpAddr, failures: u32) -> Duration {
        let started = Instant::now();
        let key = (failures, self.arrivals.fetch_add(1, Ordering::Relaxed));
        let notify = Arc::new(Notify::new());
        {
            let mut addresses = self.lock();
            if addresses.len() > REMEMBERED {
                addresses.retain(|_, bucket| {
                    bucket.refill();
                    !bucket.waiting.is_empty() || bucket.tokens < BURST
                });
            }
            let bucket = addresses.entry(ip).or_insert_with(Bucket::new);
            bucket.waiting.insert(key, Arc::clone(&notify));
        }
        let _in_line = InLine {
            sign_ins: self,
            ip,
            key,
        };
        loop {
            let wait = {
                let mut addresses = self.lock();
                let bucket = addresses.entry(ip).or_insert_with(Bucket::new);
                bucket.refill();
                let first = bucket.waiting.keys().next() == Some(&key);
                if first && bucket.tokens >= 1.0 {
                    bucket.tokens -= 1.0;
                    if bucket.tokens < 1.0 && !bucket.slowed {
                        bucket.slowed = true;
                        tracing::warn!(
                            address = %ip,
                            per_second = RATE,
                            "sign-ins from this address are slowed: too many at once"
                        );
                    }
                    return started.elapsed();
                }
                first.then(|| Duration::from_secs_f64((1.0 - bucket.tokens) / RATE))
            };
            match wait {
                Some(wait) => {
                    tokio::select! {
                        () = tokio::time::sleep(wait) => {}
                        () = notify.notified() => {}
                    }
                }
                None => notify.notified().await,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip() -> IpAddr {
        IpAddr::from([127, 0, 0, 1])
    }

    #[tokio::test]
    async fn an_address_gets_its_burst_at_once_then_ten_a_second() {
        let sign_ins = SignIns::default();
        let started = Instant::now();
        for _ in 0..BURST as usize {
            sign_ins.turn(ip(), 0).await;
        }
        let burst = started.elapsed();
        for _ in 0..5 {
            sign_ins.turn(ip(), 0).await;
        }
        // Five more at ten a second take at least 0.4 s (a busy machine only makes it slower).
        let paced = started.elapsed() - burst;
        assert!(paced >= Duration::from_millis(400), "{paced:?}");
    }

    #[tokio::test]
    async fn another_address_is_not_slowed() {
        let sign_ins = SignIns::default();
        for _ in 0..BURST as usize + 5 {
            sign_ins.turn(ip(), 0).await;
        }
        let started = Instant::now();
        let other = IpAddr::from([127, 0, 0, 2]);
        assert!(sign_ins.turn(other, 0).await < Duration::from_millis(50));
        assert!(started.elapsed() < Duration::from_secs(1));
    }

    #[tokio::test]
    async fn a_first_try_goes_before_the_retries_waiting() {
        let sign_ins = Arc::new(SignIns::default());
        for _ in 0..BURST as usize {
            sign_ins.turn(ip(), 0).await;
        }
        let order = Arc::new(Mutex::new(Vec::new()));
        let mut waiting = Vec::new();
        for (name, failures) in [("retry 1", 3), ("retry 2", 3), ("retry 3", 3)] {
            let (sign_ins, order) = (Arc::clone(&sign_ins), Arc::clone(&order));
            waiting.push(tokio::spawn(async move {
                sign_ins.turn(ip(), failures).await;
                order.lock().unwrap().push(name);
            }));
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
        sign_ins.turn(ip(), 0).await;
        order.lock().unwrap().push("first try");
        for task in waiting {
            task.await.unwrap();
        }
        let order = order.lock().unwrap();
        assert_eq!(order[0], "first try", "{order:?}");
    }
}
