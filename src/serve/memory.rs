//! The class's memory (`--max-memory`): before a student's tutor opens a lesson, the most that
//! lesson can make it hold is reserved against the class's limit, and given back when the
//! student leaves the lesson or the class. A lesson the class has no room for is not opened,
//! and the student is told why; so no number of students can take the machine's memory.

use std::sync::{Arc, Mutex, PoisonError};

use crate::app::{Allowance, NoRoom, most_kept_bytes};
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

/// The class's limit, and what its students' lessons have reserved of it.
#[derive(Debug)]
pub(crate) struct ClassMemory {
    limit: u64,
    reserved: Mutex<u64>,
}

impl ClassMemory {
    pub(crate) fn new(limit: u64) -> Arc<ClassMemory> {
        Arc::new(ClassMemory {
            limit,
            reserved: Mutex::new(0),
        })
    }

    /// A new student's share: nothing reserved until they open a lesson.
    pub(crate) fn seat(self: &Arc<ClassMemory>) -> Arc<SeatMemory> {
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
pub(crate) struct SeatMemory {
    class: Arc<ClassMemory>,
    held: Mutex<u64>,
}

impl SeatMemory {
    fn held(&self) -> std::sync::MutexGuard<'_, u64> {
        self.held.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Allowance for SeatMemory {
    fn reserve(&self, lesson: &Lesson) -> Result<(), NoRoom> {
        let needed = seat_bytes(lesson);
        let mut held = self.held();
        let mut reserved = self.class.reserved();
        let others = reserved.saturating_sub(*held);
        let limit = self.class.limit;
        if others.saturating_add(needed) > limit {
            return Err(NoRoom {
                needed,
                left: limit.saturating_sub(others),
                limit,
            });
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
        first.reserve(&lesson).unwrap();
        // Opening again (another lesson) replaces the seat's reservation, not adds to it.
        first.reserve(&lesson).unwrap();
        second.reserve(&lesson).unwrap();
        assert_eq!(*class.reserved(), 2 * needed);
        let refused = third.reserve(&lesson).unwrap_err();
        assert_eq!(
            refused,
            NoRoom {
                needed,
                left: needed / 2,
                limit: 2 * needed + needed / 2
            }
        );
        first.release();
        third.reserve(&lesson).unwrap();
        drop(second);
        drop(third);
        assert_eq!(*class.reserved(), 0);
    }

    #[test]
    fn a_follower_goes_free_only_with_room_for_their_own_copy_of_the_lesson() {
        use crate::app::{Action, App, Classroom, Follow, Presented, update};
        let mut presenter = App::new(App::builtin_entries(), Some(0));
        presenter.picked = 0;
        let presented = std::sync::Arc::new(Presented::of(&presenter, 1));
        let needed = seat_bytes(&presenter.tutor().unwrap().lesson);
        for (limit, free) in [(needed / 2, false), (needed, true)] {
            let class = ClassMemory::new(limit);
            let mut student = App::new(App::builtin_entries(), None);
            student.allowance = Some(class.seat());
            student.classroom = Some(Classroom::Student {
                follow: Follow::Following,
                latest: None,
            });
            update(
                &mut student,
                Action::Presenter(std::sync::Arc::clone(&presented)),
            );
            assert!(student.tutor().is_some());
            assert_eq!(*class.reserved(), 0, "following reserves nothing");
            update(&mut student, Action::ToggleFollow);
            assert_eq!(
                student.follow() == Some(Follow::Free),
                free,
                "limit {limit}"
            );
            let status = student.status.as_ref().unwrap().text.clone();
            if free {
                assert_eq!(*class.reserved(), needed);
            } else {
                assert!(
                    status.starts_with(
                        "Still following the presenter: your own copy of cat-sleeps may take up to"
                    ),
                    "{status}"
                );
                assert_eq!(*class.reserved(), 0);
            }
        }
    }
}
