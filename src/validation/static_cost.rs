//! The cost limits the API server applies when a CRD is written: a rule whose estimated cost
//! (one evaluation on the largest value the schema allows, times the number of times it may
//! run) exceeds `StaticEstimatedCostLimit`, or rules whose total exceeds
//! `StaticEstimatedCRDCostLimit`, make the API server refuse the CRD. crfix reads such a CRD
//! (inline in the settings, or installed before the limits existed) but does not evaluate
//! those rules: a warning names each, in the API server's words.

use std::collections::HashMap;

use serde_json::Value;

use super::cel::RuleCache;
use super::cost;

/// Deepest schema nesting looked at.
const MAX_DEPTH: usize = 128;
/// The API server names at most this many rules as contributing to a total over the limit,
/// each at least 1 % of the limit.
const MOST_EXPENSIVE: usize = 4;

/// A rule of the schema: its node, its index in `x-kubernetes-validations`, where the API
/// server names it, and its estimated cost.
struct RuleCost<'a> {
    node: &'a Value,
    index: usize,
    path: String,
    cost: u64,
}

/// The rules the API server would refuse, by node address and rule index: the API server's
/// error for each.
#[derive(Default)]
pub struct Refused {
    rules: HashMap<(usize, usize), String>,
}

impl Refused {
    /// Why the API server refuses rule `index` of `node`, if it does.
    pub fn get(&self, node: &Value, index: usize) -> Option<&str> {
        self.rules
            .get(&(node as *const Value as usize, index))
            .map(String::as_str)
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
            segment: "openAPIV3Schema",
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
            refused.insert(rule, format!("{}: Forbidden: {message}", rule.path));
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
                format!(
                    "{}: Forbidden: contributed to estimated rule cost total exceeding cost \
                     limit for entire OpenAPIv3 schema; openAPIV3Schema: Forbidden: {whole}",
                    rule.path
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
        self.rules.insert(key(rule), message);
    }
}

/// Where a schema node is, as the API server names it: built into text only for the nodes
/// that have rules.
struct Path<'p> {
    parent: Option<&'p Path<'p>>,
    segment: &'p str,
    /// `properties[<segment>]` rather than the segment itself.
    property: bool,
}

impl Path<'_> {
    fn render(&self) -> String {
        let mut out = self.parent.map(Path::render).unwrap_or_default();
        if self.parent.is_some() {
            out.push('.');
        }
        if self.property {
            out.push_str("properties[");
            out.push_str(self.segment);
            out.push(']');
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
            out.push(RuleCost {
                node: schema,
                index,
                path: format!("{}.x-kubernetes-validations[{index}].rule", path.render()),
                cost: one.saturating_mul(times),
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
        let p = below("additionalProperties");
        collect(child, times(max), &p, cache, out, depth + 1);
    }
    if let Some(child) = schema.get("items").filter(|i| i.is_object()) {
        let max = schema.get("maxItems").and_then(Value::as_u64);
        collect(child, times(max), &below("items"), cache, out, depth + 1);
    }
}
