//! attn-tutor's engine: a lesson file becomes a validated `lesson::Lesson`, the `pipeline` plans
//! its steps, `attention::Attention` computes every matrix and explains every cell, and
//! `practice` and `lab` build on those. It links no terminal, server or network code: the
//! `attn-tutor` crate shows what this one computes.

pub mod attention;
pub mod checkpoint;
pub mod data;
pub mod import;
pub mod lab;
pub mod lesson;
pub(crate) mod matrices;
pub mod ops;
pub mod parallel;
pub mod pipeline;
pub mod practice;
pub mod train;
pub mod workings;
