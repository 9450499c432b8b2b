//! One file per step: its entry in the step table.

pub(crate) mod all_heads;
pub(crate) mod backward_input;
pub(crate) mod backward_output;
pub(crate) mod backward_rotation;
pub(crate) mod backward_scaling;
pub(crate) mod backward_scores;
pub(crate) mod backward_softmax;
pub(crate) mod backward_values;
pub(crate) mod backward_weights;
pub(crate) mod circuits;
pub(crate) mod concat;
pub(crate) mod decode_output;
pub(crate) mod decode_weights;
pub(crate) mod embedding;
pub(crate) mod kv_cache;
pub(crate) mod layer_norm;
pub(crate) mod masking;
pub(crate) mod new_token;
pub(crate) mod online_softmax;
pub(crate) mod output;
pub(crate) mod output_projection;
pub(crate) mod positions;
pub(crate) mod projection;
pub(crate) mod rms_norm;
pub(crate) mod rotation;
pub(crate) mod scaling;
pub(crate) mod scores;
pub(crate) mod softmax;

/// Every backward step's `absent`: why a lesson has not got it.
fn without_a_backward_pass(plan: &crate::pipeline::Plan) -> Option<&'static str> {
    (!plan.shape.backward).then_some(
        "This lesson has no backward pass: it comes with `grad_output` (format 2), or with \
         --grad-seed S.",
    )
}
