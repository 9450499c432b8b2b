//! Sign-in attempts, paced per address across all its connections (as OpenSSH's
//! `PerSourcePenalties` does per source) and across the whole class: a token bucket per address
//! of `BURST` attempts refilled at `RATE` a second, and one for the class of `CLASS_BURST`
//! refilled at `CLASS_RATE`, so join codes are checked at most about ten times a second from
//! one address (an IPv6 address by its /64) and twenty from all of them together, however many
//! connections or addresses they come from. Within an address, waiting attempts go in order of
//! how many times their own connection has already failed, so a classmate's first try on the
//! same address passes the retries of a flood; across addresses, the next turn goes to the
//! address that has used the least of its own burst, so a classmate from an address that has
//! not been guessing passes a flood from many.

use std::collections::{BTreeMap, HashMap};
use std::net::IpAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use tokio::sync::Notify;

use super::places::counted_as;

/// Attempts checked per second from one address, once its burst is spent.
pub(crate) const RATE: f64 = 10.0;

/// Attempts one address may make at once before it is paced.
pub(crate) const BURST: f64 = 10.0;

/// Attempts checked per second from all addresses together, once their burst is spent.
pub(crate) const CLASS_RATE: f64 = 20.0;

/// Attempts all addresses together may make at once: a class typing the code in the same
/// few seconds.
pub(crate) const CLASS_BURST: f64 = 40.0;

/// Above this many addresses, those with nothing pending are forgotten.
const REMEMBERED: usize = 256;

#[derive(Default)]
pub(crate) struct SignIns {
    state: Mutex<State>,
    arrivals: AtomicU64,
    /// Told when a turn is taken or given up, to the first attempt of every address.
    turns: Notify,
}

struct State {
    addresses: HashMap<IpAddr, Bucket>,
    class: Tokens,
    /// Whether the class is being paced (logged once each time it starts).
    class_slowed: bool,
}

impl Default for State {
    fn default() -> State {
        State {
            addresses: HashMap::new(),
            class: Tokens::full(CLASS_BURST),
            class_slowed: false,
        }
    }
}

/// A token bucket: `rate` tokens a second, at most `burst` kept.
pub(super) struct Tokens {
    tokens: f64,
    updated: Instant,
}

impl Tokens {
    pub(super) fn full(burst: f64) -> Tokens {
        Tokens {
            tokens: burst,
            updated: Instant::now(),
        }
    }

    pub(super) fn refill(&mut self, rate: f64, burst: f64) {
        let now = Instant::now();
        let earned = now.duration_since(self.updated).as_secs_f64() * rate;
        self.tokens = (self.tokens + earned).min(burst);
        self.updated = now;
    }

    /// Refills, then takes a token if a whole one is there.
    pub(super) fn take_one(&mut self, rate: f64, burst: f64) -> bool {
        self.refill(rate, burst);
        let taken = self.tokens >= 1.0;
        if taken {
            self.tokens -= 1.0;
        }
        taken
    }

    /// How long until a whole token is there.
    fn until_one(&self, rate: f64) -> Duration {
        Duration::from_secs_f64(((1.0 - self.tokens) / rate).max(0.0))
    }
}

struct Bucket {
    tokens: Tokens,
    /// Attempts waiting for a turn, by (earlier failures of their connection, arrival).
    waiting: BTreeMap<(u32, u64), Arc<Notify>>,
    /// Whether the address is being paced (logged once each time it starts).
    slowed: bool,
}

impl Bucket {
    fn new() -> Bucket {
        Bucket {
            tokens: Tokens::full(BURST),
            waiting: BTreeMap::new(),
            slowed: false,
        }
    }

    fn refill(&mut self) {
        self.tokens.refill(RATE, BURST);
        if self.tokens.tokens >= BURST {
            self.slowed = false;
        }
    }

    /// Where the address's first attempt stands among the other addresses' (lower goes
    /// first): how much of its burst the address has used, then the attempt's own key.
    fn standing(&self) -> Option<(u64, (u32, u64))> {
        let first = *self.waiting.keys().next()?;
        Some(((BURST - self.tokens.tokens).max(0.0).floor() as u64, first))
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
        let mut state = self.sign_ins.lock();
        if let Some(bucket) = state.addresses.get_mut(&self.ip) {
            bucket.waiting.remove(&self.key);
            if let Some(next) = bucket.waiting.values().next() {
                next.notify_one();
            }
        }
        drop(state);
        self.sign_ins.turns.notify_waiters();
    }
}

impl SignIns {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Waits for `ip`'s turn to have an attempt checked; `failures` is how many its connection
    /// has already had refused. Returns how long it waited.
    pub(crate) async fn turn(&self, ip: IpAddr, failures: u32) -> Duration {
        let ip = counted_as(ip);
        let started = Instant::now();
        let key = (failures, self.arrivals.fetch_add(1, Ordering::Relaxed));
        let notify = Arc::new(Notify::new());
        {
            let mut state = self.lock();
            if state.addresses.len() > REMEMBERED {
                state.addresses.retain(|_, bucket| {
                    bucket.refill();
                    !bucket.waiting.is_empty() || bucket.tokens.tokens < BURST
                });
            }
            let bucket = state.addresses.entry(ip).or_insert_with(Bucket::new);
            bucket.waiting.insert(key, Arc::clone(&notify));
        }
        let _in_line = InLine {
            sign_ins: self,
            ip,
            key,
        };
        loop {
            // Made before looking, so that a turn given up meanwhile is not missed.
            let turns = self.turns.notified();
            tokio::pin!(turns);
            turns.as_mut().enable();
            let wait = {
                let mut state = self.lock();
                let state = &mut *state;
                state.class.refill(CLASS_RATE, CLASS_BURST);
                if state.class.tokens >= CLASS_BURST {
                    state.class_slowed = false;
                }
                let bucket = state.addresses.entry(ip).or_insert_with(Bucket::new);
                bucket.refill();
                let first = bucket.waiting.keys().next() == Some(&key);
                if !first {
                    None
                } else if bucket.tokens.tokens < 1.0 {
                    Some(bucket.tokens.until_one(RATE))
                } else if state.class.tokens < 1.0 {
                    Some(state.class.until_one(CLASS_RATE))
                } else {
                    // The class has a turn to give: to the address that has used the least
                    // of its burst, among those with a turn of their own.
                    let mine = bucket.standing();
                    let best = state
                        .addresses
                        .values_mut()
                        .filter_map(|bucket| {
                            bucket.refill();
                            (bucket.tokens.tokens >= 1.0)
                                .then(|| bucket.standing())
                                .flatten()
                        })
                        .min();
                    if best == mine {
                        take_turn(state, ip);
                        return started.elapsed();
                    }
                    // Another address goes first; it tells when it has.
                    Some(Duration::from_secs_f64(1.0 / CLASS_RATE))
                }
            };
            match wait {
                Some(wait) => {
                    tokio::select! {
                        () = tokio::time::sleep(wait) => {}
                        () = notify.notified() => {}
                        () = turns => {}
                    }
                }
                None => notify.notified().await,
            }
        }
    }
}

/// Takes a turn from `ip`'s bucket and the class's, saying when either starts being paced.
fn take_turn(state: &mut State, ip: IpAddr) {
    state.class.tokens -= 1.0;
    if state.class.tokens < 1.0 && !state.class_slowed {
        state.class_slowed = true;
        tracing::warn!(
            per_second = CLASS_RATE,
            "sign-ins from all addresses together are slowed: too many at once"
        );
    }
    let Some(bucket) = state.addresses.get_mut(&ip) else {
        return;
    };
    bucket.tokens.tokens -= 1.0;
    if bucket.tokens.tokens < 1.0 && !bucket.slowed {
        bucket.slowed = true;
        tracing::warn!(
            address = %ip,
            per_second = RATE,
            "sign-ins from this address are slowed: too many at once"
        );
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

    #[tokio::test]
    async fn all_addresses_together_are_paced() {
        let sign_ins = SignIns::default();
        // Forty addresses, each well within its own burst, spend the class's.
        for address in 0..CLASS_BURST as u8 {
            sign_ins.turn(IpAddr::from([127, 0, 1, address]), 0).await;
        }
        let started = Instant::now();
        for address in 0..10u8 {
            sign_ins.turn(IpAddr::from([127, 0, 2, address]), 0).await;
        }
        // Ten more at twenty a second take at least 0.45 s, whichever addresses they are from.
        let paced = started.elapsed();
        assert!(paced >= Duration::from_millis(450), "{paced:?}");
    }

    #[tokio::test]
    async fn a_fresh_address_passes_addresses_that_have_been_guessing() {
        let sign_ins = Arc::new(SignIns::default());
        // Eight addresses have spent the class's burst, five guesses each.
        for turn in 0..CLASS_BURST as u8 {
            sign_ins.turn(IpAddr::from([127, 0, 1, turn % 8]), 0).await;
        }
        let order = Arc::new(Mutex::new(Vec::new()));
        let mut waiting = Vec::new();
        for address in 0..8u8 {
            let (sign_ins, order) = (Arc::clone(&sign_ins), Arc::clone(&order));
            waiting.push(tokio::spawn(async move {
                sign_ins.turn(IpAddr::from([127, 0, 1, address]), 0).await;
                order.lock().unwrap().push("flood");
            }));
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
        sign_ins.turn(IpAddr::from([127, 0, 3, 1]), 0).await;
        order.lock().unwrap().push("classmate");
        for task in waiting {
            task.await.unwrap();
        }
        let order = order.lock().unwrap();
        assert_eq!(order[0], "classmate", "{order:?}");
    }

    #[tokio::test]
    async fn an_ipv6_64_is_paced_as_one_address() {
        let sign_ins = SignIns::default();
        for host in 0..BURST as u16 {
            let ip = IpAddr::from([0x2001, 0xdb8, 0, 1, host, 0, 0, 1]);
            sign_ins.turn(ip, 0).await;
        }
        let started = Instant::now();
        for host in 100..105u16 {
            sign_ins
                .turn(IpAddr::from([0x2001, 0xdb8, 0, 1, host, 0, 0, 1]), 0)
                .await;
        }
        let paced = started.elapsed();
        assert!(paced >= Duration::from_millis(400), "{paced:?}");
    }
}
