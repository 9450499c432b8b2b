//! One file per step: its entry in the step table.

pub mod all_heads;
pub mod backward_input;
pub mod backward_output;
pub mod backward_rotation;
pub mod backward_scaling;
pub mod backward_scores;
pub mod backward_softmax;
pub mod backward_values;
pub mod backward_weights;
pub mod circuits;
pub mod concat;
pub mod decode_output;
pub mod decode_weights;
pub mod embedding;
pub mod kv_cache;
pub mod masking;
pub mod new_token;
pub mod online_softmax;
pub mod output;
pub mod output_projection;
pub mod positions;
pub mod projection;
pub mod rotation;
pub mod scaling;
pub mod scores;
pub mod softmax;
