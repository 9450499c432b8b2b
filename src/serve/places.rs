//! Places for connections, counted per address. A classroom often shares one NAT address, so
//! when an address has no place left, a new connection takes the place of that address's
//! oldest connection that has not signed in (as OpenSSH's `MaxStartups` drops unauthenticated
//! connections rather than refusing everyone); a signed-in student is never evicted. Only an
//! address whose every place holds a signed-in student is refused.

use std::collections::{HashMap, HashSet, VecDeque};
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex, PoisonError};

use super::Watch;

#[derive(Default)]
pub struct Places {
    addresses: Mutex<HashMap<IpAddr, Address>>,
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

/// What happened to a new connection.
pub enum Admitted {
    /// A free place.
    Free(Place),
    /// The place of this older connection, which is being dropped.
    Evicting(Place, SocketAddr),
    /// Every place of the address holds a signed-in student.
    Refused,
}

/// One connection's place; dropping it gives the place back.
pub struct Place {
    places: Arc<Places>,
    ip: IpAddr,
    id: u64,
}

impl Places {
    /// A place for `watch`'s connection from `ip`, with at most `per_address` at once.
    pub fn admit(
        self: &Arc<Places>,
        ip: IpAddr,
        watch: &Arc<Watch>,
        per_address: usize,
    ) -> Admitted {
        let mut addresses = self
            .addresses
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let address = addresses.entry(ip).or_default();
        // Made only when given: a Place's drop takes the lock held here.
        let place = || Place {
            places: Arc::clone(self),
            ip,
            id: watch.id,
        };
        if address.taken < per_address {
            address.taken += 1;
            address.waiting.push_back(Arc::clone(watch));
            return Admitted::Free(place());
        }
        let Some(oldest) = address.waiting.pop_front() else {
            if address.taken == 0 && address.evicted.is_empty() {
                addresses.remove(&ip);
            }
            return Admitted::Refused;
        };
        address.evicted.insert(oldest.id);
        address.waiting.push_back(Arc::clone(watch));
        drop(addresses);
        oldest.end();
        Admitted::Evicting(place(), oldest.peer)
    }
}

impl Place {
    /// The connection signed in: from now on it keeps its place.
    pub fn signed_in(&self) {
        let mut addresses = self
            .places
            .addresses
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(address) = addresses.get_mut(&self.ip) {
            address.waiting.retain(|watch| watch.id != self.id);
        }
    }
}

impl Drop for Place {
    fn drop(&mut self) {
        let mut addresses = self
            .places
            .addresses
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let Some(address) = addresses.get_mut(&self.ip) else {
            return;
        };
        if !address.evicted.remove(&self.id) {
            address.taken = address.taken.saturating_sub(1);
            address.waiting.retain(|watch| watch.id != self.id);
        }
        if address.taken == 0 && address.evicted.is_empty() {
            addresses.remove(&self.ip);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn watch(id: u64) -> Arc<Watch> {
        Arc::new(Watch::new(id, SocketAddr::from(([127, 0, 0, 1], 1)), None))
    }

    fn ip() -> IpAddr {
        IpAddr::from([127, 0, 0, 1])
    }

    #[test]
    fn a_full_address_evicts_its_oldest_connection_not_signed_in() {
        let places = Arc::new(Places::default());
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
        let places = Arc::new(Places::default());
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
        let places = Arc::new(Places::default());
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
}
