//! The one registry of the pipeline: every step, and the plan of one lesson. Everything
//! above reads it; it imports nothing of ours but the matrices' table and the operations it
//! names, both below it.

pub mod header;
mod plan;
mod step;
mod steps;

// The matrices' table is below the operations (`crate::matrices`); the plan reads it.
pub use crate::matrices::{
    Absent, Axis, Cell, Expectable, GivenBy, Heads, MatrixEntry, MatrixName, NormKind, Per,
};
// The operations are their own modules (`crate::ops`); the plan names them.
pub use crate::ops::{OnlinePart, Op};
pub use plan::{Biased, Plan, Positions, Shape, head_superscript};
pub(crate) use plan::{HEAD_SUPERSCRIPT_BYTES, push_head_superscript};
pub use step::{Header, Lit, Part, Piece, SeveralHeads, Step, StepEntry, View};
