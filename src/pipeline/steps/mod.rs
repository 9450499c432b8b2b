//! One file per step: its entry in the step table.

pub mod embedding;
pub mod masking;
pub mod output;
pub mod positions;
pub mod projection;
pub mod rotation;
pub mod scaling;
pub mod scores;
pub mod softmax;
