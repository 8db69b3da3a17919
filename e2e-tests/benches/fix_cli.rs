//! `make bench`: `crfix fix --check` on a repository of manifests, the whole command timed as a
//! user runs it (process start, module load, every document evaluated, the report).
//!
//! The sample repository (examples/repository: 22 files, 25 objects, valid, fixable, invalid,
//! multi-document, commented) and the same copied ten times (220 files), each with the module
//! compiled on the first run and loaded from the cache after. Target: ≤ 1 s with the cache.
//! `CRFIX_BENCH_RUNS` (default 10) runs per case after the first.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{bail, Result};

use crfix_e2e_tests::workspace_root;

fn copy_tree(from: &Path, to: &Path) -> Result<usize> {
    std::fs::create_dir_all(to)?;
    let mut files = 0;
    for entry in std::fs::read_dir(from)? {
        let path = entry?.path();
        let target = to.join(path.file_name().unwrap_or_default());
        if path.is_dir() {
            files += copy_tree(&path, &target)?;
        } else {
            std::fs::copy(&path, &target)?;
            files += 1;
        }
    }
    Ok(files)
}

fn check(dir: &Path, cache: &Path) -> Result<Duration> {
    let crds = workspace_root().join("e2e-tests/fixtures/crds");
    let started = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_crfix"))
        .args(["fix", "--check", "--crd"])
        .arg(&crds)
        .arg("--cache-dir")
        .arg(cache)
        .arg(dir)
        .env_remove("CRFIX_EVAL_CACHE_DIR")
        .output()?;
    let elapsed = started.elapsed();
    // The sample holds invalid objects: --check exits 1; 2 would be an error.
    if out.status.code() != Some(1) {
        bail!(
            "crfix fix --check exited {:?}: {}",
            out.status.code(),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(elapsed)
}

fn main() -> Result<()> {
    let runs: usize = std::env::var("CRFIX_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10);
    let tmp = std::env::temp_dir().join(format!("crfix-bench-fix-{}", std::process::id()));
    let sample = workspace_root().join("examples/repository");
    let small = tmp.join("small");
    let files_small = copy_tree(&sample, &small)?;
    let large = tmp.join("large");
    let mut files_large = 0;
    for i in 0..10 {
        files_large += copy_tree(&sample, &large.join(format!("copy-{i}")))?;
    }

    println!("crfix fix --check (the whole command; {runs} runs after the first)");
    println!(
        "{:<28} {:>7} {:>16} {:>14} {:>14}",
        "repository", "files", "first run ms", "median ms", "max ms"
    );
    let mut medians = Vec::new();
    for (name, dir, files) in [
        ("sample", &small, files_small),
        ("sample x10", &large, files_large),
    ] {
        let cache = tmp.join(format!("cache-{files}"));
        let first = check(dir, &cache)?;
        let mut samples: Vec<Duration> = (0..runs)
            .map(|_| check(dir, &cache))
            .collect::<Result<_>>()?;
        samples.sort();
        let median = samples[samples.len() / 2];
        println!(
            "{name:<28} {files:>7} {:>16.1} {:>14.1} {:>14.1}",
            first.as_secs_f64() * 1e3,
            median.as_secs_f64() * 1e3,
            samples.last().copied().unwrap_or_default().as_secs_f64() * 1e3
        );
        medians.push(median);
    }
    println!();
    println!("targets:");
    let met = |ok: bool| if ok { "met" } else { "NOT met" };
    println!(
        "  >= 20 manifests, cached, <= 1 s   {:>8.1} ms   {}",
        medians[0].as_secs_f64() * 1e3,
        met(files_small >= 20 && medians[0] <= Duration::from_secs(1))
    );
    let _ = std::fs::remove_dir_all(&tmp);
    Ok(())
}
