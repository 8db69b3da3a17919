//! `crfix-eval`: evaluate one request through the built policy `.wasm`, in the e2e host that
//! behaves like Kubewarden's policy-server (the local stand-in for `kwctl run`).
//!
//! Exit code: 0 accepted, 1 rejected, 2 error (bad input, invalid settings, guest failure).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{anyhow, bail, Context, Result};
use clap::Parser;
use serde_json::{json, Value};

use crfix_e2e_tests::{admission_request, load_document, Cluster, PolicyHost};

#[derive(Parser, Debug)]
#[command(
    name = "crfix-eval",
    about = "Evaluate an AdmissionRequest (or a bare object) with the crfix policy .wasm, as policy-server would",
    after_help = "Exit code: 0 accepted, 1 rejected, 2 error."
)]
struct Args {
    /// An AdmissionRequest (JSON or YAML), or a bare object (then a CREATE request is built).
    #[arg(long, short = 'r')]
    request: PathBuf,
    /// Policy settings (JSON or YAML). Default: `{}`.
    #[arg(long, short = 's')]
    settings: Option<PathBuf>,
    /// CRD file(s) to append to the settings' `crds` (for `schemaSource: inline`).
    #[arg(long = "crd")]
    crds: Vec<PathBuf>,
    /// Override the settings' `mode` (fix, suggest, validate).
    #[arg(long)]
    mode: Option<String>,
    /// Policy module. Default: $CRFIX_POLICY_WASM or target/wasm32-wasip1/release/crfix_policy.wasm.
    #[arg(long)]
    wasm: Option<PathBuf>,
    /// Directory of CRDs the fake cluster serves to `kubernetes/get_resource`
    /// (`schemaSource: cluster`). Default: e2e-tests/fixtures/crds.
    #[arg(long)]
    crd_dir: Option<PathBuf>,
    /// For a bare object: the operation of the request built around it.
    #[arg(long, default_value = "CREATE")]
    operation: String,
    /// For a bare object: the old object (makes an UPDATE request).
    #[arg(long)]
    old_object: Option<PathBuf>,
    /// Print the policy's raw JSON response instead of the summary.
    #[arg(long)]
    json: bool,
    /// Also print the policy's log events and host calls (on stderr).
    #[arg(long, short = 'v')]
    verbose: bool,
}

fn main() -> ExitCode {
    let args = Args::parse();
    match run(&args) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("crfix-eval: error: {e:#}");
            ExitCode::from(2)
        }
    }
}

/// Builds the request: an AdmissionRequest is recognised by its `operation` and object fields.
fn load_request(args: &Args) -> Result<Value> {
    let doc = load_document(&args.request)?;
    let is_request = doc.get("operation").is_some()
        && (doc.get("object").is_some() || doc.get("oldObject").is_some());
    if is_request {
        if args.old_object.is_some() {
            bail!("--old-object is for bare objects; this file is already an AdmissionRequest");
        }
        return Ok(doc);
    }
    if doc.get("apiVersion").is_none() || doc.get("kind").is_none() {
        bail!(
            "{} is neither an AdmissionRequest (operation + object) nor a Kubernetes object (apiVersion + kind)",
            args.request.display()
        );
    }
    let old = args.old_object.as_deref().map(load_document).transpose()?;
    let operation = if old.is_some() && args.operation == "CREATE" {
        "UPDATE".to_string()
    } else {
        args.operation.to_uppercase()
    };
    Ok(admission_request(&operation, doc, old))
}

fn load_settings(args: &Args) -> Result<Value> {
    let mut settings = match &args.settings {
        Some(path) => load_document(path)?,
        None => json!({}),
    };
    if settings.is_null() {
        settings = json!({});
    }
    let Some(map) = settings.as_object_mut() else {
        bail!("the settings must be an object");
    };
    if !args.crds.is_empty() {
        let crds = map.entry("crds").or_insert_with(|| json!([]));
        let Some(list) = crds.as_array_mut() else {
            bail!("settings.crds must be a list");
        };
        for path in &args.crds {
            list.push(load_document(path)?);
        }
    }
    if let Some(mode) = &args.mode {
        map.insert("mode".into(), json!(mode));
    }
    Ok(settings)
}

fn run(args: &Args) -> Result<bool> {
    let request = load_request(args)?;
    let settings = load_settings(args)?;
    let wasm = args
        .wasm
        .clone()
        .unwrap_or_else(crfix_e2e_tests::policy_wasm_path);
    let mut host = PolicyHost::load(&wasm)?;
    if let Some(dir) = &args.crd_dir {
        host = host.with_cluster(Cluster::new().with_crds_from_dir(dir)?);
    }
    // The LLM path plugs in here: `host.with_route("crfix.dev/v1alpha1", "Correction", ...)`
    // with a resolver that forwards the Correction GET to crfix-llm-proxy.

    // policy-server validates the settings before it serves any request.
    let verdict = host.validate_settings(&settings)?;
    if verdict["valid"] != true {
        bail!(
            "the policy rejected the settings: {}",
            verdict["message"].as_str().unwrap_or("(no message)")
        );
    }

    let response = host.validate(&request, &settings)?;
    if args.verbose {
        for line in host.logs() {
            eprintln!("log [{}] {}", line.level, line.message);
        }
        for call in host.host_calls() {
            eprintln!(
                "host call kubernetes/get_resource {}",
                serde_json::to_string(&call)?
            );
        }
    }
    let accepted = response["accepted"]
        .as_bool()
        .ok_or_else(|| anyhow!("the response has no boolean \"accepted\": {response}"))?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&response)?);
        return Ok(accepted);
    }
    print_summary(&request, &settings, &response)?;
    Ok(accepted)
}

fn print_summary(request: &Value, settings: &Value, response: &Value) -> Result<()> {
    let object = if request["object"].is_object() {
        &request["object"]
    } else {
        &request["oldObject"]
    };
    let mode = settings["mode"].as_str().unwrap_or("fix");
    println!(
        "{} {} {:?} (mode {mode})",
        request["operation"].as_str().unwrap_or("?"),
        object["kind"].as_str().unwrap_or("object"),
        object
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or(""),
    );
    let mutated = response
        .get("mutated_object")
        .filter(|m| m.is_object())
        .cloned();
    match (response["accepted"].as_bool(), &mutated) {
        (Some(true), Some(_)) => println!("result: ACCEPTED, with repairs"),
        (Some(true), None) => println!("result: ACCEPTED"),
        _ => match response["code"].as_u64() {
            Some(code) => println!("result: REJECTED (code {code})"),
            None => println!("result: REJECTED"),
        },
    }
    if let Some(message) = response["message"].as_str() {
        println!("message:");
        for line in message.lines() {
            println!("  {line}");
        }
    }
    if let Some(warnings) = response["warnings"].as_array() {
        if !warnings.is_empty() {
            println!("warnings:");
            for w in warnings {
                println!("  {}", w.as_str().unwrap_or_default());
            }
        }
    }
    if let Some(mutated) = mutated {
        let patch = json_patch::diff(object, &mutated);
        println!("JSON Patch (RFC 6902):");
        for op in patch.0.iter() {
            println!("  {}", serde_json::to_string(op)?);
        }
        println!("repaired object:");
        let yaml = serde_yaml::to_string(&mutated).context("rendering the object as YAML")?;
        for line in yaml.lines() {
            println!("  {line}");
        }
    }
    Ok(())
}
