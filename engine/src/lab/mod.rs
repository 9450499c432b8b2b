//! Labs: experiments beyond one lesson's numbers, each a sweep the learner can rerun with other
//! settings (`attn-tutor lab NAME`).

pub mod scaling;
