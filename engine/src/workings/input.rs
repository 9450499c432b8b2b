//! A number of the lesson itself: typed in the file, generated, or edited. It has no working
//! but what it is.

use super::number::format_number;
use super::{Explanation, Labels, NoteAfter, Words, Worked, Working};
use crate::matrices::Cell;

/// A number of the lesson itself (typed in the file, generated, or edited).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Input;

impl Working for Input {
    fn operands(&self) -> Vec<Cell> {
        Vec::new()
    }

    fn source(&self, _: Cell) -> Option<Cell> {
        None
    }

    fn words(&self, _: &dyn Labels, worked: &Worked) -> Words {
        Words {
            sides: vec![vec![format_number(worked.value, worked.decimals)]],
            note: Some("a number of the lesson".to_string()),
            note_after: NoteAfter::Comma,
            lesson_number: true,
        }
    }

    fn redone_from_shown(&self, _: usize) -> Option<f64> {
        None
    }

    fn hints(&self, _: &dyn Labels, _: &Worked, explanation: &Explanation) -> (String, String) {
        let given = format!("{} is a number of the lesson itself", explanation.name);
        (given.clone(), given)
    }
}
