//! The numbers behind the operations, named by no matrix: the row softmax and its backward
//! pass, the sinusoid's and RoPE's angles, the product summed as a step of generation sums
//! it, the online softmax's tiles. The operations compute with them, and the engine's checks
//! show the same numbers.

mod online;
mod positions;
mod product;
mod softmax;

pub use online::{OnlineSoftmax, Tile, TileState, Tiles};
pub use positions::sinusoidal_as;
pub use positions::{rope_angle, rotate_rows, rotate_rows_as, sinusoid_angle, sinusoidal};
pub(crate) use product::product;
pub(crate) use softmax::softmax_backward;
pub use softmax::{RowSoftmax, entropy_bits, shifted_exp, shifted_exps, softmax_rows};
