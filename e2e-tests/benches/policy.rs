//! `make bench`: evaluations through the built `.wasm` in the e2e host, each in a FRESH
//! instance (rehydrate + waPC init + call), as policy-server evaluates every request.
//!
//! Cases: (a) a valid ClusterExtension with the v1 CRD inline in the settings, (b) an invalid
//! one in validate mode, (c) one with three independent repairs in fix mode, (d) the
//! no-op policy given the same payload as (a), and (e) the most hostile input found: the most
//! CEL work the API server's cost limits allow in one request (ten 280,000-character strings,
//! each matched by a 138-character regex; `gadgets.fidelity.example.com`'s `chunks`). Cases are interleaved round-robin so that
//! machine noise hits all of them alike.
//!
//! `CRFIX_BENCH_SECONDS` (default 6) bounds the measuring time; `CRFIX_BENCH_MAX_ITERATIONS`
//! (default 2000) the iterations per case.

use std::time::{Duration, Instant};

use anyhow::{bail, Result};
use serde_json::{json, Value};

use crfix_e2e_tests::valid_cluster_extension as valid_ce;
use crfix_e2e_tests::{admission_request, crd_fixture, inline_settings, PolicyHost};

struct Case {
    name: &'static str,
    /// `None`: `validate` with `request` and `settings`; `Some(op)`: that call, empty payload.
    call: Option<&'static str>,
    /// The `validate` payload, serialised once: the timing is the policy's, not the test
    /// host's (debug-built) JSON encoding.
    payload: Vec<u8>,
    host: PolicyHost,
    request: Value,
    settings: Value,
    samples: Vec<Duration>,
}

/// Three independent, deterministically repairable mistakes.
fn three_repairs_ce() -> Value {
    let mut ce = valid_ce();
    ce["spec"]["source"]["sourceType"] = json!("catalog");
    ce["spec"]["source"]["catalog"]["upgradeConstraintPolicy"] = json!("selfcertified");
    ce["spec"]["install"]["preflight"]["crdUpgradeSafety"]["enforcement"] = json!("strict");
    ce
}

/// Invalid beyond repair in validate mode: the errors are what is measured.
fn invalid_ce() -> Value {
    let mut ce = three_repairs_ce();
    if let Some(catalog) = ce["spec"]["source"]["catalog"].as_object_mut() {
        catalog.remove("packageName");
    }
    ce
}

/// The most regex work the API server's limits allow in one request (2.8 MB).
fn hostile_gadget() -> Value {
    let chunk = "abc123-".repeat(40_000) + "alpha";
    json!({
        "apiVersion": "fidelity.example.com/v1",
        "kind": "Gadget",
        "metadata": {"name": "g", "namespace": "default"},
        "spec": {"chunks": vec![chunk; 10]}
    })
}

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let idx = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[idx.min(sorted.len() - 1)]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn verdict(ok: bool) -> &'static str {
    if ok {
        "met"
    } else {
        "NOT met"
    }
}

/// One evaluation of `case`, its answer checked for shape.
fn run(case: &Case) -> Result<()> {
    match case.call {
        Some(op) => {
            case.host.call(op, &[])?;
        }
        None => {
            let out = case.host.validate_raw(&case.payload)?;
            if out.is_empty() {
                bail!("{}: empty response", case.name);
            }
        }
    }
    Ok(())
}

fn main() -> Result<()> {
    let policy = PolicyHost::policy()?;
    let noop = PolicyHost::noop()?;
    let crd = crd_fixture("clusterextensions.olm.operatorframework.io.v1");
    let settings = |mode: &str| inline_settings(std::slice::from_ref(&crd), json!({"mode": mode}));

    let mut cases = vec![
        Case {
            name: "valid (fix, inline CRD)",
            host: policy.clone(),
            request: admission_request("CREATE", valid_ce(), None),
            settings: settings("fix"),
            call: None,
            payload: Vec::new(),
            samples: Vec::new(),
        },
        Case {
            name: "invalid (validate)",
            host: policy.clone(),
            request: admission_request("CREATE", invalid_ce(), None),
            settings: settings("validate"),
            call: None,
            payload: Vec::new(),
            samples: Vec::new(),
        },
        Case {
            name: "repair x3 (fix)",
            host: policy.clone(),
            request: admission_request("CREATE", three_repairs_ce(), None),
            settings: settings("fix"),
            call: None,
            payload: Vec::new(),
            samples: Vec::new(),
        },
        Case {
            name: "no-op policy",
            host: noop,
            request: admission_request("CREATE", valid_ce(), None),
            settings: settings("fix"),
            call: None,
            payload: Vec::new(),
            samples: Vec::new(),
        },
        Case {
            name: "hostile (validate)",
            host: policy.clone(),
            request: admission_request("CREATE", hostile_gadget(), None),
            settings: inline_settings(
                &[crd_fixture("gadgets.fidelity.example.com")],
                json!({"mode": "validate"}),
            ),
            call: None,
            payload: Vec::new(),
            samples: Vec::new(),
        },
        // What every evaluation pays before the policy reads a byte: a fresh instance
        // (rehydrate, WASI context, instantiate, wapc_init) and a trivial call.
        Case {
            name: "instance only (crfix)",
            host: policy.clone(),
            request: Value::Null,
            settings: Value::Null,
            call: Some("protocol_version"),
            payload: Vec::new(),
            samples: Vec::new(),
        },
    ];

    for case in cases.iter_mut() {
        case.payload =
            serde_json::to_vec(&json!({"request": case.request, "settings": case.settings}))?;
    }

    // Check each case does what its name says before timing it.
    let mut notes = Vec::new();
    for case in cases.iter().filter(|c| c.call.is_none()) {
        let r = case.host.validate(&case.request, &case.settings)?;
        let mutated = r.get("mutated_object").is_some_and(Value::is_object);
        let expected = match case.name {
            n if n.starts_with("valid") || n.starts_with("no-op") => {
                r["accepted"] == true && !mutated
            }
            n if n.starts_with("invalid") => r["accepted"] == false,
            n if n.starts_with("hostile") => r.get("accepted").is_some_and(Value::is_boolean),
            _ => r["accepted"] == true && mutated,
        };
        if !expected {
            notes.push(format!(
                "note: {:?} did not behave as intended (the policy may be incomplete): {}",
                case.name,
                serde_json::to_string(&r).unwrap_or_default()
            ));
        }
    }

    let budget = Duration::from_secs(env_number("CRFIX_BENCH_SECONDS", 6));
    let max_iterations = env_number("CRFIX_BENCH_MAX_ITERATIONS", 2000) as usize;
    let warmup = 20;
    for _ in 0..warmup {
        for case in &cases {
            run(case)?;
        }
    }
    let started = Instant::now();
    let mut rounds = 0;
    while rounds < max_iterations && (rounds < 50 || started.elapsed() < budget) {
        for case in cases.iter_mut() {
            let t = Instant::now();
            run(case)?;
            case.samples.push(t.elapsed());
        }
        rounds += 1;
    }

    println!(
        "crfix bench: {rounds} evaluations per case, each in a fresh wasm instance (rehydrate + init + validate)"
    );
    println!(
        "payload: AdmissionRequest + settings with the v1 ClusterExtension CRD inline ({} bytes)",
        serde_json::to_vec(&json!({"request": cases[0].request, "settings": cases[0].settings}))?
            .len()
    );
    println!();
    println!("{:<26} {:>12} {:>12}", "case", "median ms", "p90 ms");
    let mut medians = Vec::new();
    for case in cases.iter_mut() {
        case.samples.sort();
        let median = percentile(&case.samples, 0.5);
        let p90 = percentile(&case.samples, 0.9);
        medians.push(median);
        println!("{:<26} {:>12.3} {:>12.3}", case.name, ms(median), ms(p90));
    }
    let (valid, _invalid, repair, baseline) = (medians[0], medians[1], medians[2], medians[3]);
    let valid_vs_noop = valid.as_secs_f64() / baseline.as_secs_f64().max(1e-9);
    let repair_vs_valid = repair.as_secs_f64() / valid.as_secs_f64().max(1e-9);
    println!();
    println!("valid / no-op   = {valid_vs_noop:.2}x");
    println!("repair / valid  = {repair_vs_valid:.2}x");
    let hostile = medians[4];
    let hostile_vs_valid = hostile.as_secs_f64() / valid.as_secs_f64().max(1e-9);
    println!("hostile / valid = {hostile_vs_valid:.0}x");
    println!();
    println!("targets:");
    println!(
        "  valid median <= 0.5 ms        {:>8.3} ms   {}",
        ms(valid),
        verdict(ms(valid) <= 0.5)
    );
    println!(
        "  valid <= 5x no-op              {valid_vs_noop:>8.2}x    {}",
        verdict(valid_vs_noop <= 5.0)
    );
    println!(
        "  repair median <= 1 ms         {:>8.3} ms   {}",
        ms(repair),
        verdict(ms(repair) <= 1.0)
    );
    println!(
        "  repair <= 3x valid             {repair_vs_valid:>8.2}x    {}",
        verdict(repair_vs_valid <= 3.0)
    );
    println!(
        "  hostile median < 1000 ms      {:>8.3} ms   {}",
        ms(hostile),
        verdict(ms(hostile) < 1000.0)
    );
    for note in notes {
        println!("{note}");
    }
    Ok(())
}
