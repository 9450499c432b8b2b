//! The engine's tests, one binary that links the engine alone (no terminal, no server): lessons
//! read and written, attention computed and checked against its properties, heads, masks,
//! exponentials, practice's checking of a learner's numbers, and model checkpoints read.

mod checkpoint;
mod engine;
mod engine_properties;
mod exponentials;
mod heads;
mod induction_lesson;
mod lesson_writing;
mod long_sums;
mod masks;
mod norms_and_biases;
mod practice_checking;
mod shared_numbers;
mod training;
