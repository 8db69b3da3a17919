//! A fake cluster answering `kubernetes/get_resource` from a set of objects, with
//! policy-server's error strings.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use anyhow::{Context, Result};
use serde_json::Value;

use crate::{fixtures, not_found_error, GetResourceCall, Resolver};

/// `(apiVersion, kind, namespace, name)`
type Key = (String, String, Option<String>, String);

/// Objects by apiVersion, kind, namespace and name. Cluster-scoped objects have no namespace.
#[derive(Debug, Clone, Default)]
pub struct Cluster {
    objects: BTreeMap<Key, Value>,
}

impl Cluster {
    /// An empty cluster: every `get_resource` is "not found".
    pub fn new() -> Cluster {
        Cluster::default()
    }

    /// The CRDs of `e2e-tests/fixtures/crds` (see [`Cluster::with_crds_from_dir`]).
    pub fn with_crd_fixtures() -> Result<Cluster> {
        Cluster::new().with_crds_from_dir(&fixtures::fixtures_dir().join("crds"))
    }

    /// Adds every CRD of `dir` (`*.yaml`, `*.yml`, `*.json`). Files are named
    /// `<plural>.<group>[.<version>].yaml`; when several describe the same CRD (e.g.
    /// `clusterextensions.olm.operatorframework.io.v1.yaml` and `...v1alpha1.yaml`), the
    /// cluster holds the one without a version suffix, else the `.v1` one, else the first in
    /// name order — the current release, as a real cluster holds one CRD per name.
    pub fn with_crds_from_dir(mut self, dir: &Path) -> Result<Cluster> {
        let mut by_name: BTreeMap<String, Vec<(String, Value)>> = BTreeMap::new();
        let entries =
            std::fs::read_dir(dir).with_context(|| format!("listing {}", dir.display()))?;
        let mut paths: Vec<_> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                p.extension()
                    .and_then(|e| e.to_str())
                    .is_some_and(|e| matches!(e, "yaml" | "yml" | "json"))
            })
            .collect();
        paths.sort();
        for path in paths {
            let doc = fixtures::load_document(&path)?;
            let Some(name) = doc.pointer("/metadata/name").and_then(Value::as_str) else {
                continue;
            };
            let stem = path
                .file_stem()
                .and_then(|s| s.to_str())
                .unwrap_or_default()
                .to_string();
            by_name
                .entry(name.to_string())
                .or_default()
                .push((stem, doc));
        }
        for (name, mut docs) in by_name {
            let rank = |stem: &str| {
                if stem == name {
                    0
                } else if stem == format!("{name}.v1") {
                    1
                } else {
                    2
                }
            };
            docs.sort_by_key(|(stem, _)| rank(stem));
            if let Some((_, doc)) = docs.into_iter().next() {
                self = self.with_object(doc);
            }
        }
        Ok(self)
    }

    /// Adds (or replaces) an object, keyed by its apiVersion, kind, namespace and name.
    pub fn with_object(mut self, object: Value) -> Cluster {
        let s = |p: &str| {
            object
                .pointer(p)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        let namespace = object
            .pointer("/metadata/namespace")
            .and_then(Value::as_str)
            .map(str::to_string);
        let key = (s("/apiVersion"), s("/kind"), namespace, s("/metadata/name"));
        self.objects.insert(key, object);
        self
    }

    /// Removes every object named `name` (any apiVersion/kind/namespace).
    pub fn without(mut self, name: &str) -> Cluster {
        self.objects.retain(|(_, _, _, n), _| n != name);
        self
    }

    /// The object a `get_resource` call names, or policy-server's "Cannot find" error.
    pub fn get(&self, call: &GetResourceCall) -> Result<Vec<u8>, String> {
        let key = (
            call.api_version.clone(),
            call.kind.clone(),
            call.namespace.clone().filter(|n| !n.is_empty()),
            call.name.clone(),
        );
        match self.objects.get(&key) {
            Some(object) => serde_json::to_vec(object).map_err(|e| e.to_string()),
            None => Err(not_found_error(call)),
        }
    }

    pub fn resolver(self) -> Resolver {
        let cluster = Arc::new(self);
        Arc::new(move |call: &GetResourceCall| cluster.get(call))
    }
}
