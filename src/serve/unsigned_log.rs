//! The log's share for connections that have not signed in: a flood of them must not fill the
//! teacher's disk, so past a burst their events get a line each only a few times a second, and
//! the rest are counted and summed up every two seconds, one line for each kind of event.

use std::sync::Mutex;
use std::time::Duration;

use super::sign_ins::Tokens;

/// Lines at once before the pacing starts: a whole class connecting at the bell is logged in full.
const BURST: f64 = 200.0;
/// Lines a second after that, for the whole class.
const PER_SECOND: f64 = 5.0;
/// How often what was held back is summed up.
pub(crate) const SUMMARY_EVERY: Duration = Duration::from_secs(2);

struct Share {
    tokens: Option<Tokens>,
    /// Each kind of event held back since the last summary, and how many.
    held: Vec<(&'static str, u64)>,
}

static SHARE: Mutex<Share> = Mutex::new(Share {
    tokens: None,
    held: Vec::new(),
});

/// Whether an event of a connection not signed in, logged with the message `what`, may have a
/// line of its own now; when not, it is counted for the next summary.
pub(crate) fn may_log(what: &'static str) -> bool {
    SHARE.lock().map_or(true, |mut share| share.may_log(what))
}

impl Share {
    fn may_log(&mut self, what: &'static str) -> bool {
        let tokens = self.tokens.get_or_insert_with(|| Tokens::full(BURST));
        if tokens.take_one(PER_SECOND, BURST) {
            return true;
        }
        match self.held.iter_mut().find(|(kind, _)| *kind == what) {
            Some((_, count)) => *count += 1,
            None => self.held.push((what, 1)),
        }
        false
    }
}

/// Logs what was held back since the last summary: "812 more not logged one by one: evicted".
pub(crate) fn summarise() {
    let held = match SHARE.lock() {
        Ok(mut share) => std::mem::take(&mut share.held),
        Err(_) => return,
    };
    for (what, count) in held {
        tracing::info!("{count} more not logged one by one: {what}");
    }
}

/// Logs an event of a connection not signed in, within the log's share: `unsigned!(info,
/// "connection opened", %peer)`. The message must be a literal: it names the kind in summaries.
/// `unsigned!(unless SIGNED_IN; …)` logs it in full when SIGNED_IN holds.
macro_rules! unsigned {
    (unless $signed_in:expr; $level:ident, $message:literal, $($field:tt)+) => {
        if $signed_in || $crate::serve::unsigned_log::may_log($message) {
            tracing::$level!($($field)+, $message);
        }
    };
    ($level:ident, $message:literal) => {
        if $crate::serve::unsigned_log::may_log($message) {
            tracing::$level!($message);
        }
    };
    ($level:ident, $message:literal, $($field:tt)+) => {
        if $crate::serve::unsigned_log::may_log($message) {
            tracing::$level!($($field)+, $message);
        }
    };
}
pub(crate) use unsigned;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn past_the_burst_events_are_counted_not_logged_and_summed_up_by_kind() {
        let mut share = Share {
            tokens: None,
            held: Vec::new(),
        };
        let logged = (0..1000)
            .filter(|turn| share.may_log(if turn % 2 == 0 { "a" } else { "b" }))
            .count();
        // The burst, and the few that the refill adds while the loop runs.
        assert!((200..210).contains(&logged), "{logged}");
        let total: u64 = share.held.iter().map(|(_, count)| count).sum();
        assert_eq!(total as usize, 1000 - logged);
        let kinds: Vec<&str> = share.held.iter().map(|(kind, _)| *kind).collect();
        assert_eq!(kinds, ["a", "b"]);
    }
}
