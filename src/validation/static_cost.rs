//! The cost limits the API server applies when a CRD is written: a rule whose estimated cost
//! (one evaluation on the largest value the schema allows, times the number of times it may
//! run) exceeds `StaticEstimatedCostLimit`, or rules whose total exceeds
//! `StaticEstimatedCRDCostLimit`, make the API server refuse the CRD. crfix reads such a CRD
//! (inline in the settings, or installed before the limits existed) but does not evaluate
//! those rules: a warning names each (its field path and message first, then the API server's
//! words, as much of them as fits). A CRD read from the cluster is not estimated at all: the
//! API server accepted it (`ValidateOptions::crd_accepted`).

use std::collections::HashMap;

use serde_json::Value;

use super::cel::RuleCache;
use super::cost;

/// Deepest schema nesting looked at.
const MAX_DEPTH: usize = 128;
/// The API server names at most this many rules as contributing to a total over the limit,
/// each at least 1 % of the limit.
const MOST_EXPENSIVE: usize = 4;

/// A rule of the schema: its node, its index in `x-kubernetes-validations`, its node's
/// field path, and its estimated cost.
struct RuleCost<'a> {
    node: &'a Value,
    index: usize,
    path: String,
    cost: u64,
}

/// The rules the API server would refuse, by node address and rule index: for each, its
/// node's field path (`spec.rules[*].matches[*]`) and the API server's error.
#[derive(Default)]
pub struct Refused {
    rules: HashMap<(usize, usize), (String, String)>,
}

impl Refused {
    /// Where rule `index` of `node` is and why the API server refuses it, if it does.
    pub fn get(&self, node: &Value, index: usize) -> Option<(&str, &str)> {
        self.rules
            .get(&(node as *const Value as usize, index))
            .map(|(path, why)| (path.as_str(), why.as_str()))
    }

    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// Every refusal: field path and the API server's words.
    #[cfg(test)]
    pub fn all(&self) -> Vec<(String, String)> {
        self.rules.values().cloned().collect()
    }
}

/// The API server's words for a cost over a limit (`getCostErrorMessage`).
pub fn cost_error_message(name: &str, cost: u64, limit: u64) -> String {
    let factor = cost as f64 / limit as f64;
    let shown = if factor > 100.0 {
        "more than 100x".to_string()
    } else if factor < 1.5 {
        format!("{factor:.6}x")
    } else {
        format!("{factor:.1}x")
    };
    format!(
        "{name} exceeds budget by factor of {shown} (try simplifying the rule, or adding \
         maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)"
    )
}

/// Estimates every rule of `root` (compiling them with `cache`) and returns those the API
/// server would refuse.
pub fn refused_rules<'a>(root: &'a Value, cache: &mut RuleCache<'a>) -> Refused {
    let mut rules = Vec::new();
    collect(
        root,
        Some(1),
        &Path {
            parent: None,
            segment: "",
            property: false,
        },
        cache,
        &mut rules,
        0,
    );
    let mut refused = Refused::default();
    let mut total = 0u64;
    for rule in &rules {
        total = total.saturating_add(rule.cost);
        if rule.cost > cost::STATIC_RULE_LIMIT {
            let message =
                cost_error_message("estimated rule cost", rule.cost, cost::STATIC_RULE_LIMIT);
            refused.insert(rule, format!("Forbidden: {message}"));
        }
    }
    if total > cost::STATIC_CRD_LIMIT {
        let mut expensive: Vec<&RuleCost<'a>> = rules
            .iter()
            .filter(|r| r.cost >= cost::STATIC_CRD_LIMIT / 100)
            .collect();
        expensive.sort_by_key(|r| std::cmp::Reverse(r.cost));
        let whole = cost_error_message(
            "x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema",
            total,
            cost::STATIC_CRD_LIMIT,
        );
        for rule in expensive.into_iter().take(MOST_EXPENSIVE) {
            refused.rules.entry(key(rule)).or_insert_with(|| {
                (
                    rule.path.clone(),
                    format!(
                        "Forbidden: contributed to estimated rule cost total exceeding cost \
                         limit for entire OpenAPIv3 schema; openAPIV3Schema: Forbidden: {whole}"
                    ),
                )
            });
        }
    }
    refused
}

fn key(rule: &RuleCost<'_>) -> (usize, usize) {
    (rule.node as *const Value as usize, rule.index)
}

impl Refused {
    fn insert(&mut self, rule: &RuleCost<'_>, message: String) {
        self.rules.insert(key(rule), (rule.path.clone(), message));
    }
}

/// Where a schema node is, as a field path (`spec.rules[*].matches[*]`; the root is
/// `<root>`): built into text only for the nodes that have rules.
struct Path<'p> {
    parent: Option<&'p Path<'p>>,
    segment: &'p str,
    /// A property name, rather than `[*]` (list items, map values).
    property: bool,
}

impl Path<'_> {
    fn render(&self) -> String {
        let mut out = self.parent.map(Path::render).unwrap_or_default();
        if self.property {
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(self.segment);
        } else {
            out.push_str(self.segment);
        }
        out
    }
}

/// The rules of `schema` and below, with `cardinality` the most times the node may occur
/// (`None`: unbounded), `path` its name in the API server's errors.
fn collect<'a>(
    schema: &'a Value,
    cardinality: Option<u64>,
    path: &Path<'_>,
    cache: &mut RuleCache<'a>,
    out: &mut Vec<RuleCost<'a>>,
    depth: usize,
) {
    if depth > MAX_DEPTH || !schema.is_object() {
        return;
    }
    if let Some(rules) = schema
        .get("x-kubernetes-validations")
        .and_then(Value::as_array)
    {
        // Unbounded: as many as fit in a request, each at its smallest.
        let times = cardinality.unwrap_or_else(|| cost::max_count(Some(schema)));
        for (index, rule) in rules.iter().enumerate() {
            let Some(text) = rule.get("rule").and_then(Value::as_str) else {
                continue;
            };
            let compiled = cache.get(text);
            let Some(one) = compiled
                .as_ref()
                .as_ref()
                .ok()
                .and_then(|c| c.cost_estimate(schema))
            else {
                continue;
            };
            let cost = one.saturating_mul(times);
            // Only a rule that could be named in a refusal (over the per-rule limit, or among
            // the most expensive of a total over the CRD's limit) needs its path as text.
            let shown = cost >= cost::STATIC_RULE_LIMIT.min(cost::STATIC_CRD_LIMIT / 100);
            let rendered = if shown { path.render() } else { String::new() };
            out.push(RuleCost {
                node: schema,
                index,
                path: if shown && rendered.is_empty() {
                    "<root>".to_string()
                } else {
                    rendered
                },
                cost,
            });
        }
    }
    let times = |max: Option<u64>| match (cardinality, max) {
        (Some(c), Some(m)) => Some(c.saturating_mul(m)),
        _ => None,
    };
    let below = |segment: &'static str| Path {
        parent: Some(path),
        segment,
        property: false,
    };
    if let Some(props) = schema.get("properties").and_then(Value::as_object) {
        for (name, child) in props {
            let p = Path {
                parent: Some(path),
                segment: name,
                property: true,
            };
            collect(child, cardinality, &p, cache, out, depth + 1);
        }
    }
    if let Some(child) = schema.get("additionalProperties").filter(|a| a.is_object()) {
        let max = schema.get("maxProperties").and_then(Value::as_u64);
        let p = below("[*]");
        collect(child, times(max), &p, cache, out, depth + 1);
    }
    if let Some(child) = schema.get("items").filter(|i| i.is_object()) {
        let max = schema.get("maxItems").and_then(Value::as_u64);
        collect(child, times(max), &below("[*]"), cache, out, depth + 1);
    }
}
