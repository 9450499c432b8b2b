//! attn-tutor: a step-through tutor for the self-attention mechanism of Transformers.
//!
//! Data flows one way: lesson file → `lesson::Lesson` (validated) → `attention::Attention`
//! (computed, every cell explainable) → what the command line or the tutor shows. The first two
//! are the engine crate (engine/), re-exported here under the names the rest of the program
//! uses; this crate is what shows them: the app, the terminal UI, the classroom and the CLI.

pub use attn_engine::{
    attention, checkpoint, data, lab, lesson, ops, parallel, pipeline, practice, train, workings,
};

pub mod app;
pub mod cli;
pub mod import;
pub mod input;
pub mod keymap;
pub mod serve;
pub mod term;
pub mod ui;
