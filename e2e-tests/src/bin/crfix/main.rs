//! `crfix`: the policy's engine where manifests are written.
//!
//! ```text
//! crfix fix PATH… [--crd FILE|DIR] [--write | --check] [--output text|json|sarif]
//! crfix run [POLICY] --request-path req.json …     (kwctl run's flags; as crfix-eval)
//! ```
//!
//! Exit codes of `crfix fix`: 0 nothing is left invalid (with --check: nothing is invalid
//! and nothing would change); 1 an object is invalid and not fixed, or (--check) a fix is
//! due; 2 an error (unreadable or unparsable input, no CRD, invalid settings, the module).

mod crds;
mod edit;
mod fix;
mod manifests;
mod report;

use std::io::Write as _;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};

use crfix_e2e_tests::eval::{self, EvalArgs};
use fix::{FixArgs, OutputFormat, Status};

#[derive(Parser, Debug)]
#[command(
    name = "crfix",
    about = "Repair custom resources against their CRDs: in manifests (fix) or one admission request (run)"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Check and fix the custom resources of YAML manifests against their CRDs.
    #[command(
        after_help = "Exit code: 0 nothing left invalid (--check: and nothing would change); 1 an object is invalid and not fixed, or (--check) a fix is due; 2 an error."
    )]
    Fix(FixArgs),
    /// Evaluate one AdmissionRequest (or a bare object) as policy-server would, with kwctl
    /// run's flags.
    #[command(
        after_help = "Exit code (as kwctl run): 0 when the request was evaluated, whether accepted or rejected; 1 on an error."
    )]
    Run(EvalArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Run(args) => match eval::run(&args) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("crfix: error: {e:#}");
                ExitCode::FAILURE
            }
        },
        Command::Fix(args) => match fix_command(&args) {
            Ok(code) => ExitCode::from(code),
            Err(e) => {
                if is_broken_pipe(&e) {
                    return ExitCode::SUCCESS;
                }
                eprintln!("crfix: error: {e:#}");
                ExitCode::from(2)
            }
        },
    }
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

fn fix_command(args: &FixArgs) -> Result<u8> {
    let report = fix::run(args)?;
    let mut stdout = std::io::stdout().lock();
    let mut stderr = std::io::stderr().lock();

    if args.write {
        for file in &report.files {
            match (&file.path, &file.fixed_text) {
                (Some(path), Some(text)) => std::fs::write(path, text)
                    .with_context(|| format!("writing {}", path.display()))?,
                // Standard input, fixed or not, is the stream the next command reads.
                (None, text) => {
                    stdout.write_all(text.as_deref().unwrap_or(&file.original).as_bytes())?
                }
                (Some(_), None) => {}
            }
        }
    }

    match args.output {
        OutputFormat::Text => {
            if !args.write && !args.check {
                for file in report.changed_files() {
                    stdout.write_all(file.diff.as_bytes())?;
                }
            }
            for finding in &report.findings {
                writeln!(stderr, "{}", report::finding_line(finding))?;
            }
            writeln!(stderr, "{}", report::summary(&report, args.write))?;
        }
        OutputFormat::Json => report::json(&report, &mut stdout)?,
        OutputFormat::Sarif => report::sarif(&report, &mut stdout)?,
    }
    stdout.flush()?;

    let invalid = report.count(Status::Invalid) > 0;
    let due = report.changed_files().next().is_some() && !args.write;
    Ok(if invalid || (args.check && due) { 1 } else { 0 })
}
