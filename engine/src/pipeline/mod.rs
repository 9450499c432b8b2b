//! The one registry of the pipeline: every step and every matrix, and the plan of one lesson.
//! Everything else reads it; it imports nothing of ours but the operations it names.

mod matrix;
mod plan;
mod step;
mod steps;

pub use matrix::{Axis, Cell, MatrixEntry, MatrixName, Per};
// The operations are their own modules (`crate::ops`); the plan names them.
pub use crate::ops::{OnlinePart, Op};
pub use plan::{Heads, Plan, Positions, Shape};
pub use step::{Step, StepEntry, View};
