//! attn-tutor: a step-through tutor for the self-attention mechanism of Transformers.
//!
//! Data flows one way: lesson file → `lesson::Lesson` (validated) → `attention::Attention`
//! (computed, every cell explainable) → what the command line or the tutor shows.

pub mod app;
pub mod attention;
pub mod cli;
pub mod input;
pub mod lesson;
pub mod serve;
pub mod term;
pub mod ui;
