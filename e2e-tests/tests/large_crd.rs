//! A large CRD (generated, shaped like the big real ones) through the real `.wasm`: the valid
//! path reads only the part of the schema the object touches, and still gives the whole
//! schema's answers — a valid object accepted unchanged, an error in an untouched-looking
//! corner found, a CEL rule of the CRD evaluated, a repair that needs the whole schema made —
//! inline and read from the cluster (read once per evaluation).
//!
//! Needs the module: `make build-wasm` (or `make test`), or `CRFIX_POLICY_WASM=path`.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use serde_json::{json, Value};

use crfix_e2e_tests::large_crd::{large_crd, valid_workload};
use crfix_e2e_tests::{admission_request, check_validation_response, inline_settings, PolicyHost};

/// Sections of the generated CRD (about 230 KB of JSON).
const SECTIONS: usize = 8;

fn answer(host: &PolicyHost, object: Value, settings: &Value) -> Value {
    let request = admission_request("CREATE", object, None);
    let response = match host.validate(&request, settings) {
        Ok(r) => r,
        Err(e) => panic!("validate failed in the host: {e:#}"),
    };
    if let Err(e) = check_validation_response(&response) {
        panic!("malformed response: {e}");
    }
    response
}

/// The policy reading the CRD from the cluster, and how many times it did.
fn cluster_host(crd: &Value) -> (PolicyHost, Arc<AtomicUsize>) {
    let bytes = serde_json::to_vec(crd).expect("json");
    let reads = Arc::new(AtomicUsize::new(0));
    let counter = reads.clone();
    let host = PolicyHost::policy()
        .unwrap_or_else(|e| panic!("{e:#}"))
        .with_route(
            "apiextensions.k8s.io/v1",
            "CustomResourceDefinition",
            move |_| {
                counter.fetch_add(1, Ordering::SeqCst);
                Ok(bytes.clone())
            },
        );
    (host, reads)
}

/// Both ways of giving the CRD: inline in the settings, and from the cluster.
fn hosts_and_settings(mode: &str) -> Vec<(&'static str, PolicyHost, Value, Arc<AtomicUsize>)> {
    let crd = large_crd(SECTIONS);
    let inline = PolicyHost::policy().unwrap_or_else(|e| panic!("{e:#}"));
    let (cluster, reads) = cluster_host(&crd);
    vec![
        (
            "inline",
            inline,
            inline_settings(std::slice::from_ref(&crd), json!({"mode": mode})),
            Arc::new(AtomicUsize::new(0)),
        ),
        (
            "cluster",
            cluster,
            json!({"schemaSource": "cluster", "mode": mode}),
            reads,
        ),
    ]
}

#[test]
fn the_generated_crd_is_as_large_as_the_big_real_ones() {
    let bytes = serde_json::to_vec(&large_crd(SECTIONS))
        .expect("json")
        .len();
    assert!(bytes >= 200 * 1024, "{bytes} bytes");
}

#[test]
fn a_valid_object_is_accepted_unchanged_and_the_crd_read_once() {
    for (source, host, settings, reads) in hosts_and_settings("fix") {
        let r = answer(&host, valid_workload(), &settings);
        assert_eq!(r["accepted"], true, "{source}: {r:#}");
        assert!(r["mutated_object"].is_null(), "{source}: {r:#}");
        if source == "cluster" {
            assert_eq!(reads.load(Ordering::SeqCst), 1, "one read per evaluation");
        }
    }
}

#[test]
fn errors_anywhere_in_the_object_are_found() {
    let mut object = valid_workload();
    let container = &mut object["spec"]["section0"]["containers"][0];
    container["ports"][0]["containerPort"] = json!(70000);
    container["sidecars"] = json!([{"name": "Log_Shipper"}]);
    object["spec"]["section5"] = json!({"replicas": "two"});
    for (source, host, settings, _) in hosts_and_settings("validate") {
        let r = answer(&host, object.clone(), &settings);
        assert_eq!(r["accepted"], false, "{source}: {r:#}");
        let message = r["message"].as_str().unwrap_or_default();
        for field in [
            "spec.section0.containers[0].ports[0].containerPort",
            "spec.section0.containers[0].sidecars[0].name",
            "spec.section5.replicas",
        ] {
            assert!(
                message.contains(field),
                "{source}: {field} not in {message}"
            );
        }
    }
}

#[test]
fn a_rule_of_the_crd_is_evaluated() {
    let mut object = valid_workload();
    object["spec"]["section0"]["enabled"] = json!(false);
    for (source, host, settings, _) in hosts_and_settings("validate") {
        let r = answer(&host, object.clone(), &settings);
        assert_eq!(r["accepted"], false, "{source}: {r:#}");
        let message = r["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("a disabled section runs no replicas"),
            "{source}: {message}"
        );
    }
}

#[test]
fn a_repair_reads_the_whole_schema() {
    // A misspelt property is renamed to the closest one the schema declares: a property the
    // object does not have, so not in the part of the schema the valid path read.
    let mut object = valid_workload();
    let container = object["spec"]["section0"]["containers"][0]
        .as_object_mut()
        .expect("container");
    container.insert("imagePullPolicy".into(), json!("ifnotpresent"));
    container.insert("readinessProbes".into(), json!({"periodSeconds": 5}));
    for (source, host, settings, reads) in hosts_and_settings("fix") {
        let r = answer(&host, object.clone(), &settings);
        assert_eq!(r["accepted"], true, "{source}: {r:#}");
        let fixed = &r["mutated_object"]["spec"]["section0"]["containers"][0];
        assert_eq!(fixed["imagePullPolicy"], "IfNotPresent", "{source}: {r:#}");
        assert_eq!(
            fixed["readinessProbe"]["periodSeconds"], 5,
            "{source}: {r:#}"
        );
        assert!(fixed.get("readinessProbes").is_none(), "{source}: {r:#}");
        if source == "cluster" {
            assert_eq!(reads.load(Ordering::SeqCst), 1, "one read per evaluation");
        }
    }
}
