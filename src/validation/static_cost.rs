//! The cost limits the API server applies when a CRD is written: a rule whose estimated cost
//! (one evaluation on the largest value the schema allows, times the number of times it may
//! run) exceeds `StaticEstimatedCostLimit`, or rules whose total exceeds
//! `StaticEstimatedCRDCostLimit`, make the API server refuse the CRD. crfix estimates an inline
//! CRD (settings `crds`) once, when the settings are validated, and refuses settings whose CRD
//! the API server would refuse (`crd::check_rule_costs`); so every CRD a request is evaluated
//! against is one the API server accepts or accepted, and every rule of it is evaluated.

use serde_json::Value;

use super::cel::RuleCache;
use super::cost;

/// Deepest schema nesting looked at.
const MAX_DEPTH: usize = 128;
/// The API server names at most this many rules as contributing to a total over the limit,
/// each at least 1 % of the limit.
const MOST_EXPENSIVE: usize = 4;

/// A rule of the schema: its text, its index in `x-kubernetes-validations`, its node's field
/// path, and its estimated cost.
struct RuleCost<'a> {
    rule: &'a str,
    index: usize,
    path: String,
    cost: u64,
    /// Why the API server would not compile it (a reserved word used as a name).
    invalid: Option<String>,
}

/// A rule the API server would refuse the CRD for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// Its node's field path (`spec.rules[*].matches[*]`; the root is `<root>`).
    pub path: String,
    /// Its index in the node's `x-kubernetes-validations`.
    pub index: usize,
    /// The rule's text.
    pub rule: String,
    /// The API server's error (`Forbidden: …`).
    pub why: String,
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

/// Estimates every rule of `root` as the API server does when the CRD is written and returns
/// those it would refuse the CRD for, in the order of their field paths.
pub fn refused_rules(root: &Value) -> Vec<Refusal> {
    let mut cache = RuleCache::default();
    let mut rules = Vec::new();
    collect(
        root,
        Some(1),
        &Path {
            parent: None,
            segment: "",
            property: false,
        },
        &mut cache,
        &mut rules,
        0,
    );
    let mut refused: Vec<(&RuleCost<'_>, String)> = Vec::new();
    let mut total = 0u64;
    for rule in &rules {
        total = total.saturating_add(rule.cost);
        if let Some(why) = &rule.invalid {
            refused.push((rule, why.clone()));
        } else if rule.cost > cost::STATIC_RULE_LIMIT {
            let message =
                cost_error_message("estimated rule cost", rule.cost, cost::STATIC_RULE_LIMIT);
            refused.push((rule, format!("Forbidden: {message}")));
        }
    }
    if total > cost::STATIC_CRD_LIMIT {
        let mut expensive: Vec<&RuleCost<'_>> = rules
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
            if refused.iter().any(|(r, _)| std::ptr::eq(*r, rule)) {
                continue;
            }
            refused.push((
                rule,
                format!(
                    "Forbidden: contributed to estimated rule cost total exceeding cost limit \
                     for entire OpenAPIv3 schema; openAPIV3Schema: Forbidden: {whole}"
                ),
            ));
        }
    }
    let mut out: Vec<Refusal> = refused
        .into_iter()
        .map(|(rule, why)| Refusal {
            path: rule.path.clone(),
            index: rule.index,
            rule: rule.rule.to_string(),
            why,
        })
        .collect();
    out.sort_by(|a, b| (&a.path, a.index).cmp(&(&b.path, b.index)));
    out
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
    /// The path as the API server's errors name it (`<root>` for the root).
    fn shown(&self) -> String {
        let rendered = self.render();
        if rendered.is_empty() {
            "<root>".to_string()
        } else {
            rendered
        }
    }

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

/// The estimate of each of `rules`, the rules of the node `schema` (which may occur
/// `cardinality` times).
fn node_rules<'a>(
    schema: &'a Value,
    rules: &'a [Value],
    cardinality: Option<u64>,
    path: &Path<'_>,
    cache: &mut RuleCache<'a>,
    out: &mut Vec<RuleCost<'a>>,
) {
    // Unbounded: as many as fit in a request, each at its smallest.
    let times = cardinality.unwrap_or_else(|| cost::max_count(Some(schema)));
    for (index, rule) in rules.iter().enumerate() {
        let Some(text) = rule.get("rule").and_then(Value::as_str) else {
            continue;
        };
        // A rule the API server does not compile refuses the CRD whatever it costs; one
        // that only crfix cannot compile is no refusal (it is skipped, with a warning).
        if let Some(word) = super::escaping::reserved_identifier(text) {
            out.push(RuleCost {
                rule: text,
                index,
                path: path.shown(),
                cost: 0,
                invalid: Some(format!(
                    "Invalid value: compilation failed: reserved identifier: {word} (a property of that name is self.__{word}__ in CEL)"
                )),
            });
            continue;
        }
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
        out.push(RuleCost {
            rule: text,
            index,
            path: if shown { path.shown() } else { String::new() },
            cost,
            invalid: None,
        });
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
        node_rules(schema, rules, cardinality, path, cache, out);
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
