//! The one registry of the pipeline: every step and every matrix, and the plan of one lesson.
//! Everything else reads it; it imports nothing of ours but the operations it names.

pub mod header;
mod matrix;
mod plan;
mod step;
mod steps;

pub use matrix::{Absent, Axis, Cell, Expectable, MatrixEntry, MatrixName, Per};
// The operations are their own modules (`crate::ops`); the plan names them.
pub use crate::ops::{OnlinePart, Op};
pub use plan::{Heads, Plan, Positions, Shape, head_superscript};
pub use step::{Header, Lit, Part, Piece, SeveralHeads, Step, StepEntry, View};
