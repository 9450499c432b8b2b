//! attn-tutor's entry point: parses the command line and hands it to `cli::run`.

use std::process::ExitCode;

fn main() -> ExitCode {
    let args = attn_tutor::cli::parse_args();
    attn_tutor::cli::run(args)
}
