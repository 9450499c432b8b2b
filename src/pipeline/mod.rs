//! The one registry of the pipeline: every step and every matrix, and the plan of one lesson.
//! Everything else reads it; it imports nothing of ours.

mod matrix;
mod op;
mod plan;
mod step;
mod steps;

pub use matrix::{Axis, Cell, MatrixEntry, MatrixName, Per};
pub use op::{OnlinePart, Op};
pub use plan::{Heads, Plan, Positions, Shape};
pub use step::{Step, StepEntry, View};
