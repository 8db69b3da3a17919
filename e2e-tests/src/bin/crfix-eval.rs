//! `crfix-eval`: evaluate one request through the built policy `.wasm`, as `kwctl run` does
//! (the same flags and exit codes). The same command is `crfix run`; the body is
//! `crfix_e2e_tests::eval`.

use std::process::ExitCode;

use clap::Parser;

use crfix_e2e_tests::eval::{self, EvalArgs};

#[derive(Parser, Debug)]
#[command(
    name = "crfix-eval",
    about = "Evaluate an AdmissionRequest (or a bare object) with the crfix policy .wasm, as policy-server would (kwctl run's flags)",
    after_help = "Exit code (as kwctl run): 0 when the request was evaluated, whether accepted or rejected; 1 on an error."
)]
struct Cli {
    #[command(flatten)]
    args: EvalArgs,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match eval::run(&cli.args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("crfix-eval: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
