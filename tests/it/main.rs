//! The tests of attn-tutor as a learner, an author and a teacher meet it, one binary: each
//! module is one feature's tests (the lesson engine, the tutor's screens, the commands, the
//! exports). One binary links the whole program once, where one per file linked it sixty times.

#[path = "../common/mod.rs"]
mod common;

mod architecture;
mod backward;
mod cli_check;
mod cli_completions_and_man;
mod cli_freeze;
mod cli_list;
mod cli_new;
mod cli_progress;
mod cli_show;
mod cross_attention;
mod fuzz;
mod generation;
mod hostile_text;
mod import;
mod key_map;
mod lab_scaling;
mod large_lessons;
mod malformed_lessons;
mod memory_bounded;
mod missing_tools;
mod numpy_differential;
mod online_softmax;
mod online_step;
mod positions;
mod readme;
mod readme_screen;
mod record;
mod saving;
mod show_golden;
mod show_heads;
mod show_pictures;
mod softmax_entropy;
mod step_numbering;
mod teaching_text;
mod test_data_isolation;
mod tui_big_dimensions;
mod tui_classroom;
mod tui_cross;
mod tui_generation;
mod tui_heads;
mod tui_jump_and_undo;
mod tui_lab;
mod tui_polls;
mod tui_practice;
mod tui_screens;
mod tui_terminal;
mod tui_training;
mod tui_update;
mod tui_whole_matrices;
mod working_lines;
