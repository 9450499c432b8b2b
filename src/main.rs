//! attn-tutor's entry point: parses the command line and hands it to `cli::run`.

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let args = attn_tutor::cli::Cli::parse();
    attn_tutor::cli::run(args)
}
