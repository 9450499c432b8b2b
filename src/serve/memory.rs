//! The class's memory (`--max-memory`): before a student's tutor opens a lesson, the most that
//! lesson can make it hold is reserved against the class's limit, and given back when the
//! student leaves the lesson or the class. A lesson the class has no room for is not opened,
//! and the student is told why; so no number of students can take the machine's memory.

use std::sync::{Arc, Mutex, PoisonError};

use crate::app::{Allowance, most_kept_bytes};
use crate::attention::footprint;
use crate::lesson::Lesson;

const MIB: u64 = 1024 * 1024;

/// What a class may hold when `--max-memory` is not given: half the memory the machine has
/// available as the server starts (the rest stays for everything else the machine runs), or
/// 1 GiB where that cannot be read.
pub fn default_limit() -> u64 {
    available_bytes().map_or(1024 * MIB, |available| available / 2)
}

/// `MemAvailable` of /proc/meminfo (Linux), in bytes.
fn available_bytes() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = meminfo
        .lines()
        .find_map(|line| line.strip_prefix("MemAvailable:"))?;
    let kib: u64 = line.trim().trim_end_matches("kB").trim().parse().ok()?;
    kib.checked_mul(1024)
}

/// The most one student's tutor can hold with `lesson` open: every matrix its engine can
/// compute (`footprint::most_bytes`), a copy of the lesson's own matrices once edited, and
/// what undo keeps of whole matrices (a reset or a backward pass holds the lesson's matrices
/// before and after).
pub fn seat_bytes(lesson: &Lesson) -> u64 {
    let inputs: u64 = lesson
        .inputs()
        .iter()
        .map(|(_, input)| input.values.len() as u64 * 8)
        .sum();
    // `d` adds a backward pass's grad_output, one number per output cell.
    let grad_output = (lesson.seq_len() * lesson.d_out()) as u64 * 8;
    let inputs = inputs + grad_output;
    footprint::most_bytes(lesson) + inputs + most_kept_bytes(2 * inputs)
}

/// Megabytes, rounded up, as the student reads them.
fn megabytes(bytes: u64) -> u64 {
    bytes.div_ceil(MIB)
}

/// The class's limit, and what its students' lessons have reserved of it.
#[derive(Debug)]
pub struct ClassMemory {
    limit: u64,
    reserved: Mutex<u64>,
}

impl ClassMemory {
    pub fn new(limit: u64) -> Arc<ClassMemory> {
        Arc::new(ClassMemory {
            limit,
            reserved: Mutex::new(0),
        })
    }

    /// A new student's share: nothing reserved until they open a lesson.
    pub fn seat(self: &Arc<ClassMemory>) -> Arc<SeatMemory> {
        Arc::new(SeatMemory {
            class: Arc::clone(self),
            held: Mutex::new(0),
        })
    }

    fn reserved(&self) -> std::sync::MutexGuard<'_, u64> {
        self.reserved.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// One student's reservation; given back when the student's tutor is dropped (they left).
#[derive(Debug)]
pub struct SeatMemory {
    class: Arc<ClassMemory>,
    held: Mutex<u64>,
}

impl SeatMemory {
    fn held(&self) -> std::sync::MutexGuard<'_, u64> {
        self.held.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Allowance for SeatMemory {
    fn reserve(&self, name: &str, lesson: &Lesson) -> Result<(), String> {
        let needed = seat_bytes(lesson);
        let mut held = self.held();
        let mut reserved = self.class.reserved();
        let others = reserved.saturating_sub(*held);
        let limit = self.class.limit;
        if others.saturating_add(needed) > limit {
            let left = limit.saturating_sub(others);
            return Err(format!(
                "{name} is not opened: it may take up to {} MiB of the server's memory, and the \
                 class has {} MiB left of its {} MiB; open a smaller lesson, or try again when a \
                 classmate has left theirs",
                megabytes(needed),
                left / MIB,
                limit / MIB,
            ));
        }
        *reserved = others + needed;
        *held = needed;
        Ok(())
    }

    fn release(&self) {
        let mut held = self.held();
        let mut reserved = self.class.reserved();
        *reserved = reserved.saturating_sub(*held);
        *held = 0;
    }
}

impl Drop for SeatMemory {
    fn drop(&mut self) {
        self.release();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lesson() -> Lesson {
        let builtin = crate::lesson::builtin("cat-sleeps").expect("a built-in lesson");
        crate::lesson::load_text("cat-sleeps", None, builtin.text.to_string())
            .expect("it loads")
            .lesson
    }

    #[test]
    fn a_seat_reserves_one_lesson_at_a_time_and_gives_it_back_when_it_goes() {
        let lesson = lesson();
        let needed = seat_bytes(&lesson);
        let class = ClassMemory::new(2 * needed + needed / 2);
        let (first, second, third) = (class.seat(), class.seat(), class.seat());
        first.reserve("a", &lesson).unwrap();
        // Opening again (another lesson) replaces the seat's reservation, not adds to it.
        first.reserve("a", &lesson).unwrap();
        second.reserve("a", &lesson).unwrap();
        assert_eq!(*class.reserved(), 2 * needed);
        let refused = third.reserve("cat-sleeps", &lesson).unwrap_err();
        assert!(
            refused.starts_with("cat-sleeps is not opened: it may take up to "),
            "{refused}"
        );
        first.release();
        third.reserve("a", &lesson).unwrap();
        drop(second);
        drop(third);
        assert_eq!(*class.reserved(), 0);
    }
}
