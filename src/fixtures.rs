//! The project's CRD fixtures (`e2e-tests/fixtures/crds`), for the unit tests of every stage.

use serde_json::Value;

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/e2e-tests/fixtures/crds");

/// A fixture CRD as JSON text (the fixtures are YAML).
pub fn crd_json(file: &str) -> String {
    serde_json::to_string(&crd(file)).expect("json")
}

fn crd(file: &str) -> Value {
    let text = std::fs::read_to_string(format!("{FIXTURES}/{file}")).expect("fixture");
    serde_yaml_ng::from_str(&text).expect("yaml")
}

/// The `openAPIV3Schema` of `version` in a fixture CRD.
pub fn schema(file: &str, version: &str) -> Value {
    crd(file)["spec"]["versions"]
        .as_array()
        .expect("versions")
        .iter()
        .find(|v| v["name"] == version)
        .expect("version")["schema"]["openAPIV3Schema"]
        .clone()
}

pub fn ce_v1() -> Value {
    schema("clusterextensions.olm.operatorframework.io.v1.yaml", "v1")
}

pub fn ce_v1alpha1() -> Value {
    schema(
        "clusterextensions.olm.operatorframework.io.v1alpha1.yaml",
        "v1alpha1",
    )
}

pub fn widget_v1() -> Value {
    schema("widgets.example.com.yaml", "v1")
}
