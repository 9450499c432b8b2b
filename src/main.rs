//! attn-tutor's entry point: parses the command line and hands it to `cli::run`.

use std::process::ExitCode;

/// mimalloc rather than the system's allocator: a classroom server frees a student's lesson
/// when they leave, and glibc's malloc kept all of it (three students who had walked the
/// largest generation lesson left the server at 357 MiB, 15 s after they had gone); mimalloc
/// gives a thread's freed memory back once the thread ends (112 MiB). See the README's
/// classroom memory figures.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let args = attn_tutor::cli::parse_args();
    attn_tutor::cli::run(args)
}
