//! Places for connections, counted per address, and the class's limit on connections not
//! signed in. A classroom often shares one NAT address, so when an address has no place left,
//! a new connection takes the place of one of that address's connections that has not signed
//! in (as OpenSSH's `MaxStartups` drops unauthenticated connections rather than refusing
//! everyone); a signed-in student is never evicted. Only an address whose every place holds a
//! signed-in student is refused. The one evicted is the one least far along (one that has
//! said nothing before one that has, and that before one whose handshake is done), the oldest
//! of those: a flood of silent connections evicts itself, not a classmate mid-handshake.
//! Across addresses, at most `most_waiting` connections are not signed in at once (each holds
//! file descriptors): a newcomer past it evicts from the address holding the most. An IPv6
//! address counts by its /64, which one machine may fill.

use std::collections::{HashMap, HashSet, VecDeque};
use std::net::{IpAddr, Ipv6Addr};
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use super::Watch;

pub(crate) struct Places {
    state: Mutex<State>,
    /// The most connections not signed in at once, across addresses.
    most_waiting: usize,
}

#[derive(Default)]
struct State {
    addresses: HashMap<IpAddr, Address>,
    /// Connections not signed in, across addresses: the sum of the `waiting`.
    waiting: usize,
}

#[derive(Default)]
struct Address {
    /// Places taken.
    taken: usize,
    /// Connections not signed in yet, oldest first: the ones that may be evicted.
    waiting: VecDeque<Arc<Watch>>,
    /// Evicted connections still winding down: their place already went to a newcomer.
    evicted: HashSet<u64>,
}

impl Address {
    /// The one to evict: the oldest of those least far along. Looked at oldest first, and
    /// the first that has said nothing is the one (none is less far along).
    fn least_along(&self) -> Option<(usize, u8)> {
        let mut least: Option<(usize, u8)> = None;
        for (index, watch) in self.waiting.iter().enumerate() {
            let progress = watch.progress();
            if progress == 0 {
                return Some((index, 0));
            }
            if least.is_none_or(|(_, least)| progress < least) {
                least = Some((index, progress));
            }
        }
        least
    }
}

/// What happened to a new connection.
pub(crate) enum Admitted {
    /// A free place.
    Free(Place),
    /// The place of this older connection of the same address, which is being dropped.
    Evicting(Place, Arc<Watch>),
    /// A place, made by dropping this connection of the address holding the most connections
    /// not signed in: the class had as many as it takes at once.
    EvictingElsewhere(Place, Arc<Watch>),
    /// Every place of the address holds a signed-in student.
    Refused,
}

/// One connection's place; dropping it gives the place back.
pub(crate) struct Place {
    places: Arc<Places>,
    ip: IpAddr,
    id: u64,
}

/// Connections not signed in the class takes at once when the machine allows (OpenSSH's
/// `MaxStartups` takes 100): room for a whole class connecting in the same second.
pub(crate) const MOST_WAITING: usize = 256;

/// File descriptors kept for everything but connections (the runtime, the log, the terminal).
const FILES_KEPT: u64 = 64;

/// How many connections may be not signed in at once, and the open-file limit it comes from.
/// Each connection holds two descriptors (its socket, and a copy to end it from outside);
/// signed-in students (up to `max_sessions`) come first, so the limit is what the process may
/// open beyond them. The soft limit is raised to the hard one first, as far as 65,536.
pub(crate) fn most_waiting(max_sessions: usize) -> (usize, u64) {
    use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
    let limit = getrlimit(Resource::Nofile);
    let hard = limit.maximum.unwrap_or(u64::MAX).min(65_536);
    let mut open_files = limit.current.unwrap_or(u64::MAX);
    if open_files < hard {
        let raised = Rlimit {
            current: Some(hard),
            maximum: limit.maximum,
        };
        if setrlimit(Resource::Nofile, raised).is_ok() {
            open_files = hard;
        }
    }
    let sessions = u64::try_from(max_sessions).unwrap_or(u64::MAX);
    let room = (open_files.saturating_sub(FILES_KEPT) / 2).saturating_sub(sessions);
    let wanted = MOST_WAITING.max(max_sessions);
    let most = usize::try_from(room).unwrap_or(usize::MAX).min(wanted);
    (most, open_files)
}

/// The address that places and sign-in turns are counted by: an IPv4 address, or an IPv6
/// address's /64 (a single machine is commonly given a whole /64).
pub(crate) fn counted_as(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V4(_) => ip,
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => {
                let mut segments = v6.segments();
                segments[4..].fill(0);
                IpAddr::V6(Ipv6Addr::from(segments))
            }
        },
    }
}

impl Places {
    pub(crate) fn new(most_waiting: usize) -> Places {
        Places {
            state: Mutex::default(),
            most_waiting: most_waiting.max(1),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A place for `watch`'s connection from `ip`, with at most `per_address` at once.
    pub(crate) fn admit(
        self: &Arc<Places>,
        ip: IpAddr,
        watch: &Arc<Watch>,
        per_address: usize,
    ) -> Admitted {
        let ip = counted_as(ip);
        let mut state = self.lock();
        let full = state.waiting >= self.most_waiting;
        // Made only when given: a Place's drop takes the lock held here.
        let place = || Place {
            places: Arc::clone(self),
            ip,
            id: watch.id,
        };
        let address = state.addresses.entry(ip).or_default();
        if address.taken >= per_address {
            let Some((index, _)) = address.least_along() else {
                if address.taken == 0 && address.evicted.is_empty() {
                    state.addresses.remove(&ip);
                }
                return Admitted::Refused;
            };
            let Some(victim) = address.waiting.remove(index) else {
                return Admitted::Refused;
            };
            address.evicted.insert(victim.id);
            address.waiting.push_back(Arc::clone(watch));
            drop(state);
            victim.end();
            return Admitted::Evicting(place(), victim);
        }
        address.taken += 1;
        if !full {
            address.waiting.push_back(Arc::clone(watch));
            state.waiting += 1;
            return Admitted::Free(place());
        }
        // Least far along first; then the address holding the most; its oldest. The newcomer
        // is not among them: it has not had the time to say anything.
        let chosen = state
            .addresses
            .iter()
            .filter_map(|(key, address)| {
                let (index, progress) = address.least_along()?;
                Some((
                    progress,
                    std::cmp::Reverse(address.waiting.len()),
                    *key,
                    index,
                ))
            })
            .min_by_key(|(progress, most, _, _)| (*progress, *most));
        let victim = chosen.and_then(|(_, _, key, index)| {
            // It keeps its address's place until it has gone (see `Drop`); it only stops
            // counting among those not signed in.
            state.addresses.get_mut(&key)?.waiting.remove(index)
        });
        if let Some(address) = state.addresses.get_mut(&ip) {
            address.waiting.push_back(Arc::clone(watch));
        }
        let Some(victim) = victim else {
            state.waiting += 1;
            return Admitted::Free(place());
        };
        drop(state);
        victim.end();
        Admitted::EvictingElsewhere(place(), victim)
    }
}

impl Place {
    /// The connection signed in: from now on it keeps its place.
    pub(crate) fn signed_in(&self) {
        let mut state = self.places.lock();
        let Some(address) = state.addresses.get_mut(&self.ip) else {
            return;
        };
        let before = address.waiting.len();
        address.waiting.retain(|watch| watch.id != self.id);
        let gone = before - address.waiting.len();
        state.waiting -= gone;
    }
}

impl Drop for Place {
    fn drop(&mut self) {
        let mut state = self.places.lock();
        let Some(address) = state.addresses.get_mut(&self.ip) else {
            return;
        };
        let mut gone = 0;
        if !address.evicted.remove(&self.id) {
            address.taken = address.taken.saturating_sub(1);
            let before = address.waiting.len();
            address.waiting.retain(|watch| watch.id != self.id);
            gone = before - address.waiting.len();
        }
        if address.taken == 0 && address.evicted.is_empty() {
            state.addresses.remove(&self.ip);
        }
        state.waiting -= gone;
    }
}

/// A connection's socket, which tells its watch when the client first says something: a
/// connection that has said nothing is the first to be evicted.
pub(crate) struct Heard {
    stream: tokio::net::TcpStream,
    watch: Arc<Watch>,
}

impl Heard {
    pub(crate) fn new(stream: tokio::net::TcpStream, watch: Arc<Watch>) -> Heard {
        Heard { stream, watch }
    }
}

impl Drop for Heard {
    fn drop(&mut self) {
        self.watch.closed();
    }
}

impl AsyncRead for Heard {
    fn poll_read(
        self: Pin<&mut Self>,
        context: &mut Context<'_>,
        buffer: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        let before = buffer.filled().len();
        let read = Pin::new(&mut this.stream).poll_read(context, buffer);
        if buffer.filled().len() > before {
            this.watch.heard();
        }
        read
    }
}

impl AsyncWrite for Heard {
    fn poll_write(
        self: Pin<&mut Self>,
        context: &mut Context<'_>,
        bytes: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.get_mut().stream).poll_write(context, bytes)
    }

    fn poll_flush(self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_flush(context)
    }

    fn poll_shutdown(self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_shutdown(context)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        context: &mut Context<'_>,
        buffers: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.get_mut().stream).poll_write_vectored(context, buffers)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::SocketAddr;

    fn watch(id: u64) -> Arc<Watch> {
        Arc::new(Watch::new(id, SocketAddr::from(([127, 0, 0, 1], 1)), None))
    }

    fn ip() -> IpAddr {
        IpAddr::from([127, 0, 0, 1])
    }

    #[test]
    fn a_full_address_evicts_its_oldest_connection_not_signed_in() {
        let places = Arc::new(Places::new(100));
        let (first, second, third) = (watch(1), watch(2), watch(3));
        let Admitted::Free(_first_place) = places.admit(ip(), &first, 2) else {
            panic!("a free place")
        };
        let Admitted::Free(_second_place) = places.admit(ip(), &second, 2) else {
            panic!("a free place")
        };
        let Admitted::Evicting(_third_place, _) = places.admit(ip(), &third, 2) else {
            panic!("the oldest is evicted")
        };
        assert!(first.has_ended());
        assert!(!second.has_ended());
    }

    #[test]
    fn signed_in_students_are_never_evicted_and_a_full_class_of_them_refuses() {
        let places = Arc::new(Places::new(100));
        let (first, second) = (watch(1), watch(2));
        let Admitted::Free(first_place) = places.admit(ip(), &first, 2) else {
            panic!("a free place")
        };
        first_place.signed_in();
        let Admitted::Free(second_place) = places.admit(ip(), &second, 2) else {
            panic!("a free place")
        };
        // The second, not signed in, makes room; then only signed-in students are left.
        let third = watch(3);
        let Admitted::Evicting(third_place, _) = places.admit(ip(), &third, 2) else {
            panic!("the second is evicted")
        };
        assert!(second.has_ended() && !first.has_ended());
        third_place.signed_in();
        assert!(matches!(
            places.admit(ip(), &watch(4), 2),
            Admitted::Refused
        ));
        // The evicted connection going away does not free a place twice.
        drop(second_place);
        assert!(matches!(
            places.admit(ip(), &watch(5), 2),
            Admitted::Refused
        ));
        drop(first_place);
        assert!(matches!(
            places.admit(ip(), &watch(6), 2),
            Admitted::Free(_)
        ));
    }

    #[test]
    fn addresses_do_not_share_places() {
        let places = Arc::new(Places::new(100));
        let first = watch(1);
        let Admitted::Free(_kept) = places.admit(ip(), &first, 1) else {
            panic!("a free place")
        };
        let other = IpAddr::from([127, 0, 0, 2]);
        assert!(matches!(
            places.admit(other, &watch(2), 1),
            Admitted::Free(_)
        ));
        assert!(!first.has_ended());
    }

    #[test]
    fn one_that_said_nothing_is_evicted_before_an_older_one_that_did() {
        let places = Arc::new(Places::new(100));
        let (talking, silent, newcomer) = (watch(1), watch(2), watch(3));
        let Admitted::Free(_talking_place) = places.admit(ip(), &talking, 2) else {
            panic!("a free place")
        };
        talking.heard();
        let Admitted::Free(_silent_place) = places.admit(ip(), &silent, 2) else {
            panic!("a free place")
        };
        let Admitted::Evicting(_, _) = places.admit(ip(), &newcomer, 2) else {
            panic!("one is evicted")
        };
        assert!(silent.has_ended() && !talking.has_ended());
    }

    #[test]
    fn past_the_class_limit_a_newcomer_evicts_from_the_address_holding_the_most() {
        let places = Arc::new(Places::new(4));
        let crowded = IpAddr::from([127, 0, 0, 2]);
        let watches: Vec<_> = (1..=3).map(watch).collect();
        let kept: Vec<_> = watches
            .iter()
            .map(|watch| match places.admit(crowded, watch, 64) {
                Admitted::Free(place) => place,
                _ => panic!("a free place"),
            })
            .collect();
        let alone = watch(4);
        let Admitted::Free(_alone_place) = places.admit(ip(), &alone, 64) else {
            panic!("a free place")
        };
        let classmate = watch(5);
        let Admitted::EvictingElsewhere(_classmate_place, _) =
            places.admit(IpAddr::from([127, 0, 0, 3]), &classmate, 64)
        else {
            panic!("the class is at its limit: one is evicted")
        };
        assert!(watches[0].has_ended(), "the crowded address's oldest");
        assert!(!watches[1].has_ended() && !alone.has_ended() && !classmate.has_ended());
        // The evicted one keeps its address's place until it has gone.
        drop(kept);
        assert!(!places.lock().addresses.contains_key(&crowded));
    }

    #[test]
    fn an_ipv6_address_counts_by_its_64() {
        let first: IpAddr = "2001:db8:1:2:aaaa::1".parse().unwrap();
        let second: IpAddr = "2001:db8:1:2:bbbb::2".parse().unwrap();
        let elsewhere: IpAddr = "2001:db8:1:3::1".parse().unwrap();
        assert_eq!(counted_as(first), counted_as(second));
        assert_ne!(counted_as(first), counted_as(elsewhere));
        assert_eq!(
            counted_as("::ffff:192.0.2.1".parse().unwrap()),
            IpAddr::from([192, 0, 2, 1])
        );
        let places = Arc::new(Places::new(100));
        let (one, two) = (watch(1), watch(2));
        let Admitted::Free(_one_place) = places.admit(first, &one, 1) else {
            panic!("a free place")
        };
        let Admitted::Evicting(_, _) = places.admit(second, &two, 1) else {
            panic!("the same /64 shares its places")
        };
        assert!(one.has_ended());
    }
}
