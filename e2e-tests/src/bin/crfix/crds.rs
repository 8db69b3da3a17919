//! The CRDs `crfix fix` checks against: files and directories (`--crd`), CRDs found among the
//! manifests themselves, and, read-only, the current kubeconfig's cluster (`--crds-from-cluster`,
//! through `kubectl get customresourcedefinitions`, so every kubeconfig authentication works).

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::Command;

use anyhow::{bail, Context, Result};
use serde_json::Value;

use crate::manifests;

/// CRDs by the group and kind of the objects they define (several files may define one kind,
/// e.g. a CRD of each release).
#[derive(Default)]
pub struct CrdIndex {
    by_group_kind: HashMap<(String, String), Vec<Value>>,
}

impl CrdIndex {
    /// Adds every CustomResourceDefinition in `value` (a CRD or a `List` of them); returns
    /// how many.
    pub fn add(&mut self, value: &Value) -> usize {
        if value["kind"] == "List" || value["items"].is_array() {
            return value["items"]
                .as_array()
                .map_or(0, |items| items.iter().map(|item| self.add(item)).sum());
        }
        if !is_crd(value) {
            return 0;
        }
        let group = value["spec"]["group"].as_str().unwrap_or_default();
        let kind = value["spec"]["names"]["kind"].as_str().unwrap_or_default();
        if kind.is_empty() {
            return 0;
        }
        let defined = self
            .by_group_kind
            .entry((group.to_string(), kind.to_string()))
            .or_default();
        let name = &value["metadata"]["name"];
        // A CRD read twice (a file and the cluster) counts once: the later one is kept.
        defined.retain(|crd| &crd["metadata"]["name"] != name || serves_other_versions(crd, value));
        defined.push(value.clone());
        1
    }

    /// Every CRD in the files and directories of `paths`.
    pub fn add_files(&mut self, paths: &[PathBuf]) -> Result<usize> {
        let mut added = 0;
        for file in manifests::collect_paths(paths)? {
            let manifest = manifests::read(&file)?;
            for document in &manifest.documents {
                added += self.add(&document.value);
            }
        }
        Ok(added)
    }

    /// The CRDs of the current kubeconfig's cluster (`kubectl` on PATH or `$KUBECTL`).
    pub fn add_from_cluster(&mut self, context: Option<&str>) -> Result<usize> {
        let kubectl = std::env::var("KUBECTL").unwrap_or_else(|_| "kubectl".to_string());
        let mut command = Command::new(&kubectl);
        if let Some(context) = context {
            command.args(["--context", context]);
        }
        command.args([
            "get",
            "customresourcedefinitions.apiextensions.k8s.io",
            "-o",
            "json",
        ]);
        let output = command
            .output()
            .with_context(|| format!("running {kubectl} (for --crds-from-cluster)"))?;
        if !output.status.success() {
            bail!(
                "{kubectl} get customresourcedefinitions failed: {}",
                String::from_utf8_lossy(&output.stderr).trim()
            );
        }
        let list: Value = serde_json::from_slice(&output.stdout)
            .with_context(|| format!("{kubectl} did not print a JSON list of CRDs"))?;
        Ok(self.add(&list))
    }

    /// The CRD that defines `object`'s kind and serves its version (the last one read
    /// when several do); else one that defines the kind, for the policy to say that the
    /// version is not served.
    pub fn for_object(&self, object: &Value) -> Option<&Value> {
        let api_version = object["apiVersion"].as_str()?;
        let kind = object["kind"].as_str()?;
        let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
        let defined = self
            .by_group_kind
            .get(&(group.to_string(), kind.to_string()))?;
        defined
            .iter()
            .rev()
            .find(|crd| served_versions(crd).any(|v| v == version))
            .or_else(|| defined.last())
    }

    pub fn is_empty(&self) -> bool {
        self.by_group_kind.is_empty()
    }
}

fn served_versions(crd: &Value) -> impl Iterator<Item = &str> {
    crd["spec"]["versions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|v| v["served"] != false)
        .filter_map(|v| v["name"].as_str())
}

fn serves_other_versions(a: &Value, b: &Value) -> bool {
    !served_versions(a).eq(served_versions(b))
}

pub fn is_crd(value: &Value) -> bool {
    value["kind"] == "CustomResourceDefinition"
        && value["apiVersion"]
            .as_str()
            .is_some_and(|v| v.starts_with("apiextensions.k8s.io/"))
}
