//! `make bench`: evaluations through the built `.wasm` in the e2e host, each in a FRESH
//! instance (rehydrate + waPC init + call), as policy-server evaluates every request.
//!
//! Cases: (a) a valid ClusterExtension with the v1 CRD inline in the settings, (b) an invalid
//! one in validate mode, (c) one with three independent repairs in fix mode, (d) the
//! no-op policy given the same payload as (a), and (e) the most hostile input found: the most
//! CEL work the API server's cost limits allow in one request (ten 280,000-character strings,
//! each matched by a 138-character regex; `gadgets.fidelity.example.com`'s `chunks`), and
//! (f) a small valid object against a generated CRD shaped like the large real ones
//! ([`crfix_e2e_tests::large_crd`]) in three sizes, inline and read from the cluster, each
//! beside the no-op policy handed the same bytes. Cases are interleaved round-robin so that
//! machine noise hits all of them alike.
//!
//! `CRFIX_BENCH_SECONDS` (default 6) bounds the measuring time; `CRFIX_BENCH_MAX_ITERATIONS`
//! (default 2000) the iterations per case.

use std::time::{Duration, Instant};

use anyhow::{bail, Result};
use serde_json::{json, Value};

use crfix_e2e_tests::large_crd::{large_crd, valid_workload};
use crfix_e2e_tests::valid_cluster_extension as valid_ce;
use crfix_e2e_tests::{admission_request, crd_fixture, inline_settings, PolicyHost};

/// Sections of the generated large CRD: about 60 KB, 230 KB and 900 KB of JSON.
const LARGE_SECTIONS: [usize; 3] = [2, 8, 32];

struct Case {
    name: String,
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
    // The host's answer serialised once, as for the large CRDs below: the timing is the
    // policy's, not the (debug-built) test host's encoding.
    let crd_bytes = serde_json::to_vec(&crd)?;

    let mut cases = vec![
        Case {
            name: "valid (fix, inline CRD)".into(),
            host: policy.clone(),
            request: admission_request("CREATE", valid_ce(), None),
            settings: settings("fix"),
            call: None,
            payload: Vec::new(),
            samples: Vec::new(),
        },
        Case {
            name: "invalid (validate)".into(),
            host: policy.clone(),
            request: admission_request("CREATE", invalid_ce(), None),
            settings: settings("validate"),
            call: None,
            payload: Vec::new(),
            samples: Vec::new(),
        },
        Case {
            name: "repair x3 (fix)".into(),
            host: policy.clone(),
            request: admission_request("CREATE", three_repairs_ce(), None),
            settings: settings("fix"),
            call: None,
            payload: Vec::new(),
            samples: Vec::new(),
        },
        Case {
            name: "no-op policy".into(),
            host: noop.clone(),
            request: admission_request("CREATE", valid_ce(), None),
            settings: settings("fix"),
            call: None,
            payload: Vec::new(),
            samples: Vec::new(),
        },
        Case {
            name: "hostile (validate)".into(),
            host: policy.clone(),
            request: admission_request("CREATE", hostile_gadget(), None),
            // Read from the (test host's) cluster: the API server's estimate would refuse the
            // `chunks` rule in a new inline CRD; a CRD it accepted has every rule evaluated,
            // bounded only by the runtime limits, which is the work this case measures.
            settings: json!({"schemaSource": "cluster", "mode": "validate"}),
            call: None,
            payload: Vec::new(),
            samples: Vec::new(),
        },
        // The same valid object with the CRD read from the (test host's) cluster (its
        // `get_resource` call and answer).
        Case {
            name: "valid (fix, cluster CRD)".into(),
            host: policy.clone().with_route(
                "apiextensions.k8s.io/v1",
                "CustomResourceDefinition",
                move |_| Ok(crd_bytes.clone()),
            ),
            request: admission_request("CREATE", valid_ce(), None),
            settings: json!({"schemaSource": "cluster", "mode": "fix"}),
            call: None,
            payload: Vec::new(),
            samples: Vec::new(),
        },
        // What every evaluation pays before the policy reads a byte: a fresh instance
        // (rehydrate, WASI context, instantiate, wapc_init) and a trivial call.
        Case {
            name: "instance only (crfix)".into(),
            host: policy.clone(),
            request: Value::Null,
            settings: Value::Null,
            call: Some("protocol_version"),
            payload: Vec::new(),
            samples: Vec::new(),
        },
    ];

    let mut sizes = Vec::new();
    for sections in LARGE_SECTIONS {
        let crd = large_crd(sections);
        let crd_bytes = serde_json::to_vec(&crd)?;
        let kb = crd_bytes.len() / 1024;
        sizes.push(kb);
        let answer = crd_bytes.clone();
        let cluster_host = policy.clone().with_route(
            "apiextensions.k8s.io/v1",
            "CustomResourceDefinition",
            move |_| Ok(answer.clone()),
        );
        let inline = inline_settings(std::slice::from_ref(&crd), json!({"mode": "fix"}));
        for (name, host, settings) in [
            (
                format!("valid, {kb} KB CRD inline"),
                policy.clone(),
                inline.clone(),
            ),
            (
                format!("valid, {kb} KB CRD cluster"),
                cluster_host,
                json!({"schemaSource": "cluster", "mode": "fix"}),
            ),
            (format!("no-op, {kb} KB payload"), noop.clone(), inline),
        ] {
            cases.push(Case {
                name,
                host,
                request: admission_request("CREATE", valid_workload(), None),
                settings,
                call: None,
                payload: Vec::new(),
                samples: Vec::new(),
            });
        }
    }

    for case in cases.iter_mut() {
        case.payload =
            serde_json::to_vec(&json!({"request": case.request, "settings": case.settings}))?;
    }

    // Check each case does what its name says before timing it.
    let mut notes = Vec::new();
    for case in cases.iter().filter(|c| c.call.is_none()) {
        let r = case.host.validate(&case.request, &case.settings)?;
        let mutated = r.get("mutated_object").is_some_and(Value::is_object);
        let expected = match case.name.as_str() {
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
        for i in 0..cases.len() {
            let t = Instant::now();
            run(&cases[i])?;
            cases[i].samples.push(t.elapsed());
            // The hostile case churns megabytes of memory for 150 ms: one untimed evaluation
            // after it, so that the case timed next pays its own cost, not that aftermath.
            if cases[i].name.starts_with("hostile") {
                run(&cases[0])?;
            }
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
    println!("{:<30} {:>12} {:>12}", "case", "median ms", "p90 ms");
    let mut medians = Vec::new();
    for case in cases.iter_mut() {
        case.samples.sort();
        let median = percentile(&case.samples, 0.5);
        let p90 = percentile(&case.samples, 0.9);
        medians.push(median);
        println!("{:<30} {:>12.3} {:>12.3}", case.name, ms(median), ms(p90));
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
    let (cluster_valid, instance) = (medians[5], medians[6]);
    println!(
        "valid, cluster CRD = {:.3} ms; instance only = {:.3} ms",
        ms(cluster_valid),
        ms(instance)
    );
    println!();
    println!("a valid object against the generated large CRD (cost by CRD size):");
    println!(
        "{:>8} {:>14} {:>15} {:>11} {:>14} {:>15}",
        "CRD KB", "inline ms", "cluster ms", "no-op ms", "inline/no-op", "cluster/no-op"
    );
    let mut large = Vec::new();
    for (i, kb) in sizes.iter().enumerate() {
        let base = 7 + 3 * i;
        let (inline, cluster, floor) = (medians[base], medians[base + 1], medians[base + 2]);
        let ratio = |d: Duration| d.as_secs_f64() / floor.as_secs_f64().max(1e-9);
        println!(
            "{kb:>8} {:>14.3} {:>15.3} {:>11.3} {:>13.2}x {:>14.2}x",
            ms(inline),
            ms(cluster),
            ms(floor),
            ratio(inline),
            ratio(cluster)
        );
        large.push((*kb, inline, cluster, ratio(inline), ratio(cluster)));
    }
    println!();
    println!("targets:");
    println!(
        "  valid median <= 0.45 ms       {:>8.3} ms   {}",
        ms(valid),
        verdict(ms(valid) <= 0.45)
    );
    println!(
        "  valid <= 3x no-op              {valid_vs_noop:>8.2}x    {}",
        verdict(valid_vs_noop <= 3.0)
    );
    for (kb, inline, cluster, inline_ratio, cluster_ratio) in large {
        println!(
            "  {kb} KB CRD: median <= 1 ms, <= 3x no-op   inline {:.3} ms {inline_ratio:.2}x {}, cluster {:.3} ms {cluster_ratio:.2}x {}",
            ms(inline),
            verdict(ms(inline) <= 1.0 && inline_ratio <= 3.0),
            ms(cluster),
            verdict(ms(cluster) <= 1.0 && cluster_ratio <= 3.0)
        );
    }
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
