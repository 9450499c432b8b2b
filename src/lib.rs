//! attn-tutor: a step-through tutor for the self-attention mechanism of Transformers.
//!
//! Data flows one way: lesson file → `lesson::Lesson` (validated) → `attention::Attention`
//! (computed, every cell explainable) → what the command line or the tutor shows.

pub mod app;
pub mod attention;
pub mod cli;
pub mod data;
pub mod input;
pub mod keymap;
pub mod lab;
pub mod lesson;
pub mod ops;
pub mod parallel;
pub mod pipeline;
pub mod practice;
pub mod serve;
pub mod term;
pub mod ui;
