//! Choose, don't write: the fixes crfix can ground itself, for the model to pick from.
//!
//! The evidence rules say that a value the LLM writes must come from the user's text or the
//! schema. So crfix enumerates those values itself, per error: the field's enum values; the
//! words and numbers of the invalid value (`"cert-manager (create it if missing)"` →
//! `"cert-manager"`), its operators and numbers rejoined (`">= 1.2 AND < 2"` → `">=1.2, <2"`),
//! a list split from a string, a `key=value` string as a label map; for a missing value, the
//! values of fields of the same name elsewhere, labels and annotations and their words; for
//! an unknown field, a property of the same or a similar name elsewhere in the schema
//! (`spec.channel` → `spec.source.catalog.channels: [..]`) or its removal. Combinations of one option per error, best-first and bounded, are applied
//! to the object and kept only when the whole candidate passes what an LLM answer must pass
//! (guardrails, scope, evidence, full re-validation). The model then only picks one, or none:
//! the honest "cannot be fixed" is the cheapest answer it can give.

use serde_json::{Map, Value};

use crate::nearest::similar_name;
use crate::pointer;
use crate::repair::coerce::{number_value, whole_number};
use crate::schema;
use crate::types::{ErrorKind, FieldError};

/// Options per error (the "no change" option not counted).
const MAX_OPTIONS_PER_ERROR: usize = 16;
/// Distinct errors (pointers) crfix enumerates options for; with more, it does not try.
const MAX_ERROR_GROUPS: usize = 8;
/// Candidate objects built and checked at most (each is a full validation).
const MAX_COMBINATIONS: usize = 160;
/// Candidates offered to the model at most.
pub const MAX_CANDIDATES: usize = 4;
/// Deepest schema walk when looking for a property of a similar name.
const MAX_SCHEMA_DEPTH: usize = 8;
/// Most schema nodes walked to find whether a property name is used twice.
const MAX_SCHEMA_NODES: usize = 20_000;
/// Longest string crfix splits into words for options.
const MAX_SPLIT_CHARS: usize = 512;
/// Most enum values offered for one field.
const MAX_ENUM_OPTIONS: usize = 8;
/// Longest string read as a document (JSON or YAML) of the object or list it belongs in.
const MAX_DOCUMENT_BYTES: usize = 16 * 1024;

/// One edit of the object.
#[derive(Debug, Clone, PartialEq)]
enum Edit {
    Set(String, Value),
    Remove(String),
}

/// One way to resolve one error: edits applied together (empty: leave it to the others).
type Resolution = Vec<Edit>;

/// What the model is offered: a whole candidate object that crfix checked.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    pub object: Value,
}

/// The checked candidates, and whether combinations were left untried.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Offered {
    pub candidates: Vec<Candidate>,
    /// More readings might fit: the combinations or the candidates hit their bound.
    pub more_possible: bool,
}

/// The sources a value may come from, with the schema and the object they are read from.
pub struct Sources<'a> {
    pub schema: &'a Value,
    pub given: &'a Value,
    pub old_object: Option<&'a Value>,
    /// Paths no option may touch (guardrails would refuse the candidate anyway).
    pub protected: &'a [String],
}

/// The checked candidates for `errors` on `sources.given`, best first, at most
/// [`MAX_CANDIDATES`]. `accept` is the full check an LLM answer must pass.
pub fn enumerate(
    sources: &Sources,
    errors: &[FieldError],
    accept: &mut dyn FnMut(&Value) -> bool,
) -> Offered {
    let mut pointers: Vec<&str> = Vec::new();
    for e in errors {
        if !pointers.contains(&e.pointer.as_str()) {
            pointers.push(&e.pointer);
        }
    }
    if pointers.is_empty() || pointers.len() > MAX_ERROR_GROUPS {
        return Offered::default();
    }
    let mut groups: Vec<Vec<Resolution>> = pointers
        .iter()
        .map(|p| {
            let kinds: Vec<&ErrorKind> = errors
                .iter()
                .filter(|e| e.pointer == *p)
                .map(|e| &e.kind)
                .collect();
            let mut options = resolutions(sources, p, &kinds, errors);
            options.retain(|r| !r.iter().any(|e| touches_protected(sources, e)));
            dedup(&mut options);
            options.truncate(MAX_OPTIONS_PER_ERROR);
            options
        })
        .collect();
    if groups.len() > 1 {
        // Another error's fix may fix this one too (a moved field fills a required one).
        for g in &mut groups {
            g.push(Vec::new());
        }
    }
    let mut candidates: Vec<Candidate> = Vec::new();
    let mut seen: Vec<Value> = Vec::new();
    let combinations = best_first(&groups, MAX_COMBINATIONS + 1);
    let mut more_possible = combinations.len() > MAX_COMBINATIONS;
    for combination in combinations.into_iter().take(MAX_COMBINATIONS) {
        let edits: Vec<&Edit> = combination
            .iter()
            .enumerate()
            .flat_map(|(g, &o)| groups[g][o].iter())
            .collect();
        let Some(object) = apply(sources.given, &edits) else {
            continue;
        };
        if object == *sources.given || seen.contains(&object) {
            continue;
        }
        seen.push(object.clone());
        if accept(&object) {
            if candidates.len() == MAX_CANDIDATES {
                more_possible = true;
                break;
            }
            candidates.push(Candidate { object });
        }
    }
    Offered {
        candidates,
        more_possible,
    }
}

/// Whether `edit` would change what the object holds at a protected path. An edit above one
/// touches it only where the object holds something there that the edit changes: removing or
/// replacing a whole `spec` says nothing about a `spec.serviceAccount` it never had.
fn touches_protected(sources: &Sources, edit: &Edit) -> bool {
    sources.protected.iter().any(|root| {
        let (p, set) = match edit {
            Edit::Set(p, v) => (p, Some(v)),
            Edit::Remove(p) => (p, None),
        };
        if pointer::is_under(p, root) {
            return true;
        }
        if !pointer::is_under(root, p) {
            return false;
        }
        let held = sources.given.pointer(root);
        let written = set.and_then(|v| v.pointer(&root[p.len()..]));
        held.is_some() && held != written
    })
}

fn dedup(options: &mut Vec<Resolution>) {
    let mut kept: Vec<Resolution> = Vec::new();
    for o in options.drain(..) {
        if !o.is_empty() && !kept.contains(&o) {
            kept.push(o);
        }
    }
    *options = kept;
}

/// Index vectors (one option per group), in order of their index sum: the first options of
/// every group first. At most `limit`.
fn best_first(groups: &[Vec<Resolution>], limit: usize) -> Vec<Vec<usize>> {
    if groups.iter().any(Vec::is_empty) {
        return Vec::new();
    }
    let max_sum: usize = groups.iter().map(|g| g.len() - 1).sum();
    let mut out = Vec::new();
    for sum in 0..=max_sum {
        let mut current = Vec::with_capacity(groups.len());
        with_sum(groups, sum, &mut current, &mut out, limit);
        if out.len() >= limit {
            break;
        }
    }
    out
}

fn with_sum(
    groups: &[Vec<Resolution>],
    remaining: usize,
    current: &mut Vec<usize>,
    out: &mut Vec<Vec<usize>>,
    limit: usize,
) {
    if out.len() >= limit {
        return;
    }
    let g = current.len();
    if g == groups.len() {
        if remaining == 0 {
            out.push(current.clone());
        }
        return;
    }
    let rest_max: usize = groups[g + 1..].iter().map(|x| x.len() - 1).sum();
    for i in 0..groups[g].len().min(remaining + 1) {
        if remaining - i > rest_max {
            continue;
        }
        current.push(i);
        with_sum(groups, remaining - i, current, out, limit);
        current.pop();
    }
}

/// The object with `edits` applied, or `None` when they conflict or do not apply.
fn apply(given: &Value, edits: &[&Edit]) -> Option<Value> {
    let mut object = given.clone();
    // Sets first, removals after (highest array index first), so that indices stay right.
    let mut removals: Vec<&str> = Vec::new();
    let mut written: Vec<&str> = Vec::new();
    for edit in edits {
        match edit {
            Edit::Set(p, v) => {
                if written.contains(&p.as_str()) && object.pointer(p) != Some(v) {
                    return None;
                }
                set(&mut object, p, v.clone())?;
                written.push(p);
            }
            Edit::Remove(p) => removals.push(p),
        }
    }
    removals.sort_by(|a, b| b.cmp(a));
    removals.dedup();
    for p in removals {
        if written.iter().any(|w| pointer::is_under(w, p)) {
            return None;
        }
        remove(&mut object, p)?;
    }
    Some(object)
}

fn set(object: &mut Value, p: &str, value: Value) -> Option<()> {
    let (parent, name) = pointer::split_last(p)?;
    let mut node = object;
    for token in pointer::tokens(parent) {
        node = match node {
            Value::Object(map) => map
                .entry(token)
                .or_insert_with(|| Value::Object(Map::new())),
            Value::Array(items) => items.get_mut(token.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    match node {
        Value::Object(map) => {
            map.insert(name, value);
            Some(())
        }
        Value::Array(items) => {
            *items.get_mut(name.parse::<usize>().ok()?)? = value;
            Some(())
        }
        _ => None,
    }
}

fn remove(object: &mut Value, p: &str) -> Option<()> {
    let (parent, name) = pointer::split_last(p)?;
    match object.pointer_mut(parent)? {
        Value::Object(map) => map.remove(&name).map(|_| ()),
        Value::Array(items) => {
            let i = name.parse::<usize>().ok().filter(|i| *i < items.len())?;
            items.remove(i);
            Some(())
        }
        _ => None,
    }
}

/// The ways to resolve the errors at `p`.
fn resolutions(
    sources: &Sources,
    p: &str,
    kinds: &[&ErrorKind],
    all_errors: &[FieldError],
) -> Vec<Resolution> {
    let node = schema::node_at(sources.schema, p);
    let value = sources.given.pointer(p);
    let mut options: Vec<Resolution> = Vec::new();
    let list_entry = pointer::split_last(p)
        .is_some_and(|(parent, _)| sources.given.pointer(parent).is_some_and(Value::is_array));
    let named = named_in_enum(kinds, value);
    // An entry that is not one (an injected sentence) goes before any word of it; an entry
    // that names allowed values is the user's and stays.
    if list_entry && value.is_some() && named.is_empty() {
        options.push(vec![Edit::Remove(p.to_string())]);
    }
    // The user named one enum value: that is the reading; any other value, or dropping the
    // field, would only be a chance for a wrong pick.
    let named_one = named.len() == 1;
    for kind in kinds {
        if let (ErrorKind::Pattern { pattern }, Some(Value::String(said))) = (kind, value) {
            options.extend(pattern_options(p, pattern, said));
            options.extend(with_scheme(sources, p, pattern, said));
        }
        match (kind, value) {
            (ErrorKind::Enum { allowed }, Some(v)) => {
                options.extend(enum_resolutions(sources, p, allowed, v, &named, list_entry));
            }
            (ErrorKind::Required, None) => {
                if let Some(node) = node {
                    options.extend(described_amounts(sources, p, node));
                    options.extend(
                        fill_values(sources, p, node, 0)
                            .into_iter()
                            .map(|v| vec![Edit::Set(p.to_string(), v)]),
                    );
                }
            }
            (ErrorKind::Unknown, Some(v)) => {
                options.extend(relocations(sources, p, v, all_errors));
            }
            (ErrorKind::Cel { .. }, _) if node.is_some_and(|n| schema::type_of(n) == "object") => {
                options.extend(object_rule_readings(sources, p, value, all_errors));
            }
            (_, Some(v)) => {
                if let Some(node) = node {
                    options.extend(value_readings(sources, p, v, node));
                }
            }
            _ => {}
        }
    }
    let removal_allowed = !kinds.iter().any(|k| matches!(k, ErrorKind::Unknown))
        && !list_entry
        && !named_one
        && removable(sources, p);
    absence_readings(p, node, value, removal_allowed, &mut options);
    if let (true, Some(Value::String(said))) = (list_entry, value) {
        removal_after_item_reading(&mut options, p, said);
    }
    options
}

/// The readings of a value that says the field is absent or asks for its default: the field
/// removed (where `removal_allowed`), the empty list for a list stated as none, and no option
/// that writes the word of absence itself.
fn absence_readings(
    p: &str,
    node: Option<&Value>,
    value: Option<&Value>,
    removal_allowed: bool,
    options: &mut Vec<Resolution>,
) {
    // Dropping a value the user wrote is a reading only when they asked for what an absent
    // value means (`"latest"` where "when unspecified, the latest version is installed"):
    // dropping `"CST"` would silently mean UTC.
    let field = pointer::split_last(p)
        .map(|(_, name)| name)
        .unwrap_or_default();
    let absent = value.is_some_and(|v| says_absent(v, node));
    if value.is_some_and(|v| asks_for_default(v, node, &field) || absent) && removal_allowed {
        options.push(vec![Edit::Remove(p.to_string())]);
    }
    // A list stated as none is the empty list: it says there are none, where an absent list
    // may mean a default (kubeadm's control-plane taint when `taints` is unset).
    let none_listed = node.is_some_and(|n| {
        schema::type_of(n) == "array" && crate::certainty::accepts(n, &Value::Array(Vec::new()))
    }) && value
        .and_then(Value::as_str)
        .is_some_and(|said| super::readings::states_absence(said, false));
    if none_listed {
        options.insert(0, vec![Edit::Set(p.to_string(), Value::Array(Vec::new()))]);
    }
    // The word that says the field is absent is no value of it (`address: "none"`).
    // An allowed value is one though it says none (`copyMethod: None`).
    let allowed = |w: &str| {
        node.and_then(schema::enum_values)
            .is_some_and(|values| values.iter().any(|a| a.as_str() == Some(w)))
    };
    if absent {
        options.retain(|o| {
            !matches!(o.as_slice(), [Edit::Set(to, Value::String(w))]
                if to == p && super::readings::states_absence(w, true) && !allowed(w))
        });
    }
}

/// On UPDATE, where a rule relating an object's fields fails: the user's change says which
/// side of the rule they meant, and the stale side is all the stored fields it left there
/// together (a certificate's file and key beside the credential that replaces them), never
/// half of it.
fn stale_side(sources: &Sources, p: &str, all_errors: &[FieldError]) -> Option<Resolution> {
    let stale: Resolution =
        crate::certainty::stale_sides(sources.given, sources.old_object, all_errors)
            .into_iter()
            .filter(|at| pointer::split_last(at).is_some_and(|(parent, _)| parent == p))
            .map(Edit::Remove)
            .collect();
    (!stale.is_empty()).then_some(stale)
}

/// A list entry that reads as an item, every word of it kept (`"GitRepository/apps-repo"` →
/// `{kind: GitRepository, name: apps-repo}`), is the user's item written in another shape:
/// dropping it (`said`, at `p`) goes after that reading, not before.
fn removal_after_item_reading(options: &mut Vec<Resolution>, p: &str, said: &str) {
    let Some(at) = options
        .iter()
        .position(|o| matches!(o.as_slice(), [Edit::Remove(r)] if r == p))
    else {
        return;
    };
    let keeps_every_word = |o: &Resolution| {
        matches!(o.as_slice(), [Edit::Set(to, item)] if to == p
            && !item.is_string()
            && keeps_words(said, item))
    };
    if options.iter().any(keeps_every_word) {
        let removal = options.remove(at);
        options.push(removal);
    }
}

/// Does `item` hold every word of `said` among its texts?
fn keeps_words(said: &str, item: &Value) -> bool {
    let held: Vec<String> = super::evidence::leaf_texts(item)
        .iter()
        .flat_map(|t| super::evidence::tokens(t))
        .collect();
    super::evidence::tokens(said)
        .iter()
        .all(|w| held.contains(w))
}

/// Readings for a rule over the object at `p` (`value`): the children it misses, the side an
/// update left stale, and a label's list in a selector's whole `matchLabels` as a requirement.
fn object_rule_readings(
    sources: &Sources,
    p: &str,
    value: Option<&Value>,
    all_errors: &[FieldError],
) -> Vec<Resolution> {
    let mut options = missing_children(sources, p, all_errors);
    options.extend(stale_side(sources, p, all_errors));
    options.extend(value.and_then(|v| label_values_as_requirement(sources, p, v)));
    options
}

/// The allowed values the user's text names, for an enum's error (none for other errors).
fn named_in_enum<'k>(kinds: &[&'k ErrorKind], value: Option<&Value>) -> Vec<&'k str> {
    kinds
        .iter()
        .find_map(|k| match (k, value) {
            (ErrorKind::Enum { allowed }, Some(v)) => {
                Some(super::readings::named_now(&scalar_text(v), allowed))
            }
            _ => None,
        })
        .unwrap_or_default()
}

/// Readings of the value `v` the user wrote at `p`: a URL's host where a host belongs
/// (`"http://ratings.svc:9080/"`), a pasted command line's flags, a part split off to a
/// field beside it, and the value rewritten from its own text.
fn value_readings(sources: &Sources, p: &str, v: &Value, node: &Value) -> Vec<Resolution> {
    let mut options: Vec<Resolution> = v
        .as_str()
        .and_then(|s| crate::certainty::host_in_url(s, p))
        .map(|host| vec![Edit::Set(p.to_string(), Value::from(host))])
        .into_iter()
        .collect();
    options.extend(command_line(sources, p, v, node));
    // A list item written as an addition (`"+ reporting"`, a diff's added line): the item.
    options.extend(
        v.as_str()
            .filter(|_| pointer::is_list_item(p))
            .and_then(super::readings::added_item)
            .map(|item| vec![Edit::Set(p.to_string(), Value::from(item))]),
    );
    options.extend(split_to_sibling(sources, p, v));
    options.extend(named_sibling(sources, p, v, node));
    if let (Some(text), Some((_, field))) = (v.as_str(), pointer::split_last(p)) {
        options.extend(
            set_pairs_within(text, &field, node).map(|o| vec![Edit::Set(p.to_string(), o)]),
        );
    }
    // A text that names a field beside it and a value that field takes (`"port 443"`).
    options.extend(
        v.as_str()
            .and_then(|s| crate::certainty::names_sibling(sources.schema, sources.given, p, s))
            .map(|(to, value)| vec![Edit::Remove(p.to_string()), Edit::Set(to, value)]),
    );
    options.extend(label_values_as_requirement(sources, p, v));
    options.extend(clause_for_sibling(sources, p, v, node));
    options.extend(switch_beside(sources, p, v));
    options.extend(all_except(sources, p, v, node));
    options.extend(to_plural_sibling(sources, p, v, node));
    options.extend(
        pairs_as_one_item(v, node)
            .or_else(|| map_as_keyed_items(v, node))
            .or_else(|| map_of_objects_as_list(v, node, p))
            .or_else(|| map_as_requirements(v, node))
            .or_else(|| v.as_str().and_then(|s| namespaces_except(s, node, p)))
            .or_else(|| v.as_str().and_then(|s| selectors_per_value(s, node)))
            .map(|list| vec![Edit::Set(p.to_string(), list)]),
    );
    options.extend(truth_reading(p, v, node).map(|truth| vec![Edit::Set(p.to_string(), truth)]));
    options.extend(
        v.as_str()
            .and_then(|s| rate_as_count_and_unit(s, node))
            .map(|rate| vec![Edit::Set(p.to_string(), rate)]),
    );
    options.extend(truth_as_object(v, node).map(|on| vec![Edit::Set(p.to_string(), on)]));
    options.extend(
        v.as_str()
            .and_then(|s| url_as_host_and_port(s, node))
            .map(|endpoint| vec![Edit::Set(p.to_string(), endpoint)]),
    );
    options.extend(
        v.as_str()
            .and_then(super::readings::cidr_of_netmask)
            .map(|cidr| vec![Edit::Set(p.to_string(), Value::from(cidr))]),
    );
    rewrite_readings(sources, p, v, node, &mut options);
    options
}

/// A truth value where an object of optional settings belongs (`http10: true`,
/// `machineHealthCheck: "disabled (never auto-remediate)"`): the object's own switch set to it,
/// where it declares one (`enable` or `enabled`, a boolean), else, for `true`, the object
/// present with nothing set, its settings left at their defaults. Never an empty object for
/// `false`: it would turn on what the user turned off.
fn truth_as_object(v: &Value, node: &Value) -> Option<Value> {
    let requires = node
        .get("required")
        .and_then(Value::as_array)
        .is_some_and(|r| !r.is_empty());
    if schema::type_of(node) != "object" || requires {
        return None;
    }
    // A truth value, then a contrast that turns another switch of the object off (`"yes, but
    // never with --force"`): that switch too.
    let (truth, contrast) = match v {
        Value::Bool(b) => (*b, None),
        Value::String(text) => match super::readings::stated_bool(text) {
            Some(b) => (b, None),
            None => {
                let (first, rest) = text.split_once(", but ")?;
                (super::readings::stated_bool(first)?, Some(rest))
            }
        },
        _ => return None,
    };
    let switches: Vec<&String> = node
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter(|(name, child)| {
            matches!(name.to_ascii_lowercase().as_str(), "enable" | "enabled")
                && schema::type_of(child) == "boolean"
        })
        .map(|(name, _)| name)
        .collect();
    match switches.as_slice() {
        [switch] => {
            let mut object = Map::new();
            object.insert((*switch).clone(), Value::Bool(truth));
            if let Some(rest) = contrast {
                let (other, off) = switched_off_in(rest, node, switch)?;
                object.insert(other, Value::Bool(off));
            }
            Some(Value::Object(object))
        }
        [] if truth && v.is_boolean() => Some(Value::Object(Map::new())),
        _ => None,
    }
}

/// The one other boolean of the object (not `switch`) that a negation in `text` governs by
/// every word of its name (`"never with --force"` → `force`), and `false`.
fn switched_off_in(text: &str, node: &Value, switch: &str) -> Option<(String, bool)> {
    let negated = crate::certainty::negated_words(text);
    let mut named = node
        .get("properties")?
        .as_object()?
        .iter()
        .filter(|(name, child)| {
            let words = crate::certainty::words_of_name(name);
            name.as_str() != switch
                && schema::type_of(child) == "boolean"
                && !words.is_empty()
                && words.iter().all(|w| negated.contains(w))
        });
    let (name, _) = named.next().filter(|_| named.next().is_none())?;
    Some((name.clone(), false))
}

/// A URL where an object of a host and a port belongs (`controlPlaneEndpoint:
/// "https://api.example.com"`): its host, and its port or, where it names none, its scheme's
/// (443 for https). A URL with a path says more than the object holds: no reading.
fn url_as_host_and_port(text: &str, node: &Value) -> Option<Value> {
    let properties = node.get("properties")?.as_object()?;
    properties
        .get("host")
        .filter(|h| schema::type_of(h) == "string")?;
    let port_field = properties.get("port")?;
    let url = crate::certainty::url_parts(text)?;
    if !url.rest.trim_matches('/').is_empty() || url.has_user {
        return None;
    }
    let (host, port) = (url.host, url.port_or_default()?);
    let port = match schema::type_of(port_field) {
        "integer" => Value::from(port),
        "string" => Value::from(port.to_string()),
        _ => return None,
    };
    let mut endpoint = Map::new();
    endpoint.insert("host".into(), Value::from(host));
    endpoint.insert("port".into(), port);
    Some(Value::Object(endpoint))
}

/// A rate written as a number per a time unit (`"10 per minute"`) where an object takes it as
/// a count and a unit: its one number field and its one field whose allowed values name time
/// units (`{requestsPerUnit: 10, unit: Minute}`), the unit the one that names the text's.
fn rate_as_count_and_unit(text: &str, node: &Value) -> Option<Value> {
    let (count, scale) = super::readings::count_per_time_unit(text)?;
    let properties = node.get("properties")?.as_object()?;
    let counts: Vec<&String> = properties
        .iter()
        .filter(|(_, child)| matches!(schema::type_of(child), "integer" | "number"))
        .map(|(name, _)| name)
        .collect();
    let units: Vec<(&String, &Vec<Value>)> = properties
        .iter()
        .filter_map(|(name, child)| Some((name, child.get("enum")?.as_array()?)))
        .filter(|(_, allowed)| {
            allowed.iter().any(|a| {
                a.as_str()
                    .and_then(super::readings::time_unit_named)
                    .is_some()
            })
        })
        .collect();
    let ([count_field], [(unit_field, allowed)]) = (counts.as_slice(), units.as_slice()) else {
        return None;
    };
    let unit = allowed
        .iter()
        .find(|a| a.as_str().and_then(super::readings::time_unit_named) == Some(scale))?;
    let count = if schema::type_of(&properties[*count_field]) == "integer" {
        (count.fract() == 0.0).then(|| Value::from(count as i64))?
    } else {
        serde_json::Number::from_f64(count).map(Value::Number)?
    };
    let mut rate = Map::new();
    rate.insert((*count_field).clone(), count);
    rate.insert((*unit_field).clone(), unit.clone());
    Some(Value::Object(rate))
}

/// The truth value (or marker) the value `v` at `p` states for a boolean or one-value field in
/// words the generic readings do not read: the word that ends a pause (`paused: "resume - …"`
/// is `false`), the state of what the field is named for skipping
/// (`skipDependencyResolution: "dependency resolution back on"` is `false`), or `true` for a
/// field with one allowed value (`kraftMetadata: true` where the one value is `shared`).
fn truth_reading(p: &str, v: &Value, node: &Value) -> Option<Value> {
    if let (Value::Bool(true), Some([only])) = (v, schema::enum_values(node).map(Vec::as_slice)) {
        return Some(only.clone());
    }
    let (text, (_, field)) = (v.as_str()?, pointer::split_last(p)?);
    if schema::type_of(node) != "boolean" || super::readings::stated_bool(text).is_some() {
        return None;
    }
    if super::readings::ends_the_state(&field, text) {
        return Some(Value::Bool(false));
    }
    let description = node.get("description").and_then(Value::as_str);
    if description.is_some_and(|d| super::readings::stops_what_is_negated(d, text)) {
        return Some(Value::Bool(true));
    }
    super::readings::state_of_negated_subject(&field, text).map(|on| Value::Bool(!on))
}

/// The value `v` at `p` rewritten from its own text, then from the value of the one flag it
/// is (`"-l app=checkout,version=v2"`: the flag is syntax), then from the annotation it points
/// to (`"see ci.acme.io/wasm-sha256"`), each reading not already in `options`.
fn rewrite_readings(
    sources: &Sources,
    p: &str,
    v: &Value,
    node: &Value,
    options: &mut Vec<Resolution>,
) {
    let old = sources.old_object.and_then(|o| o.pointer(p));
    options.extend(
        rewrites_over(v, node, old)
            .into_iter()
            .map(|v| vec![Edit::Set(p.to_string(), v)]),
    );
    if let Some([value]) = v.as_str().and_then(|s| flag_values([s])).as_deref() {
        for read in rewrites_over(&Value::from(*value), node, old) {
            let reading = vec![Edit::Set(p.to_string(), read)];
            if !options.contains(&reading) {
                options.push(reading);
            }
        }
    }
    // A value that says it is another field's is read there (`"same as the request"`).
    if let Some(referred) = v
        .as_str()
        .and_then(|s| super::readings::field_referred_to(sources.given, p, s))
    {
        let as_written = crate::certainty::accepts(node, referred).then(|| referred.clone());
        for read in as_written
            .into_iter()
            .chain(rewrites_over(referred, node, None))
        {
            let reading = vec![Edit::Set(p.to_string(), read)];
            if !options.contains(&reading) {
                options.push(reading);
            }
        }
    }
    // A value cut short that the user's annotations state in full (`"1.31"`, "Runs
    // Kubernetes 1.31.4").
    if let Some(full) = v
        .as_str()
        .and_then(|s| super::readings::stated_in_full(sources.given, s))
    {
        let reading = vec![Edit::Set(p.to_string(), Value::from(full))];
        if crate::certainty::accepts(node, &Value::from(full)) && !options.contains(&reading) {
            options.push(reading);
        }
    }
    let annotation = v
        .as_str()
        .and_then(|s| super::readings::annotation_referred_to(sources.given, s));
    if let Some(annotation) = annotation {
        // Of an annotation that says an amount per item, what it says of this one.
        let about_item = super::readings::clause_naming_item(sources.given, p, annotation);
        let annotation = about_item.as_deref().unwrap_or(annotation);
        options.extend(
            rewrites_over(&Value::from(annotation), node, old)
                .into_iter()
                .map(|v| vec![Edit::Set(p.to_string(), v)]),
        );
    }
}

/// A list where one object belongs, beside the unset plural of the field that holds a list of
/// them (`namespaceSelector: [{…}, {…}]` beside `namespaceSelectors`, a deprecated singular
/// written in its successor's shape): the list goes there whole, when that field takes it. A
/// rename is never certain: a proposal.
fn to_plural_sibling(sources: &Sources, p: &str, v: &Value, node: &Value) -> Option<Resolution> {
    if !v.is_array() || schema::type_of(node) != "object" {
        return None;
    }
    let (parent, name) = pointer::split_last(p)?;
    let plural = [format!("{name}s"), format!("{name}es")]
        .into_iter()
        .map(|n| pointer::push(parent, &n))
        .find(|at| schema::node_at(sources.schema, at).is_some())?;
    let plural_node = schema::node_at(sources.schema, &plural)?;
    let takes = schema::type_of(plural_node) == "array"
        && sources.given.pointer(&plural).is_none()
        && crate::certainty::accepts(plural_node, v);
    takes.then(|| vec![Edit::Remove(p.to_string()), Edit::Set(plural, v.clone())])
}

/// `"everything except the 'Health check passed' messages"` where a list of what to include
/// belongs, beside its unset opposite (`inclusionList` and `exclusionList`, `includedX` and
/// `excludedX`): no inclusion (everything), and the quoted part excluded. Only a part in quotes
/// is an item, as written.
fn all_except(sources: &Sources, p: &str, v: &Value, node: &Value) -> Option<Resolution> {
    let text = v.as_str()?;
    if schema::type_of(node) != "array" {
        return None;
    }
    let trimmed = text.trim();
    let lower = trimmed.to_ascii_lowercase();
    let rest = [
        "everything except",
        "everything but",
        "all except",
        "all but",
        "anything but",
    ]
    .iter()
    .find_map(|lead| lower.strip_prefix(lead))?;
    let (quoted, _) = quoted_parts(&trimmed[trimmed.len() - rest.len()..]);
    let [item] = quoted.as_slice() else {
        return None;
    };
    let (parent, name) = pointer::split_last(p)?;
    let opposite = [
        "inclusion",
        "included",
        "include",
        "Inclusion",
        "Included",
        "Include",
    ]
    .iter()
    .zip([
        "exclusion",
        "excluded",
        "exclude",
        "Exclusion",
        "Excluded",
        "Exclude",
    ])
    .find_map(|(a, b)| name.contains(a).then(|| name.replacen(a, b, 1)))?;
    let sibling = pointer::push(parent, &opposite);
    let sibling_node = schema::node_at(sources.schema, &sibling)?;
    if sources.given.pointer(&sibling).is_some() || schema::type_of(sibling_node) != "array" {
        return None;
    }
    Some(vec![
        Edit::Remove(p.to_string()),
        Edit::Set(sibling, Value::Array(vec![Value::from(*item)])),
    ])
}

/// The pattern's own whole values the user named (`"daily at midnight"` → `@daily`,
/// `@midnight`); unnamed ones are no reading of the value.
fn pattern_options(p: &str, pattern: &str, said: &str) -> Vec<Resolution> {
    let negated = crate::certainty::negated_words(said);
    schema::pattern_literals(pattern)
        .into_iter()
        .filter(|l| super::readings::names_in_full(said, l))
        .filter(|l| !negated.contains(&l.to_lowercase()))
        .map(|l| vec![Edit::Set(p.to_string(), Value::from(l))])
        .collect()
}

/// An address written without its scheme where the pattern makes every value begin with one
/// (`proxy: "squid.corp:3128"` against `^(http|https)://.*$`): the address after each scheme
/// the pattern names. The address is one value (no blanks); never certain, as it writes a
/// word the user did not (`certainty::lossless`), and with two schemes, which one is the
/// user's to say.
fn with_scheme(sources: &Sources, p: &str, pattern: &str, said: &str) -> Vec<Resolution> {
    let said = said.trim();
    if said.contains("://") || !is_plain_address(said) {
        return Vec::new();
    }
    let mut schemes = schema::pattern_schemes(pattern);
    // The address's own object set up TLS for it (`tlsConfig`, `tls` beside the URL): the
    // secure schemes first.
    // (A secure scheme is another one the pattern names with an `s`: `https`, `wss`.)
    if tls_beside(sources.given, p) {
        let names: Vec<String> = schemes
            .iter()
            .map(|s| s.trim_end_matches("://").to_string())
            .collect();
        schemes.sort_by_key(|scheme| {
            let name = scheme.trim_end_matches("://");
            !name
                .strip_suffix('s')
                .is_some_and(|plain| names.iter().any(|n| n == plain))
        });
    }
    schemes
        .into_iter()
        .map(|scheme| {
            vec![Edit::Set(
                p.to_string(),
                Value::from(format!("{scheme}{said}")),
            )]
        })
        .collect()
}

/// A host name or address, an optional port number, then an optional path
/// (`squid.corp:3128`, `10.0.0.7/metrics`): what follows a URL's scheme. A user, or a `:`
/// before a path (`git@github.com:org/repo.git`, scp's form), is another syntax.
/// Does the object holding the value at `p` set up TLS: a property named for it (`tls`,
/// `tlsConfig`) that is not empty, false or null?
fn tls_beside(given: &Value, p: &str) -> bool {
    let Some(siblings) = pointer::split_last(p)
        .and_then(|(parent, _)| given.pointer(parent))
        .and_then(Value::as_object)
    else {
        return false;
    };
    siblings.iter().any(|(name, value)| {
        name.to_ascii_lowercase().starts_with("tls")
            && match value {
                Value::Object(m) => !m.is_empty(),
                Value::Bool(b) => *b,
                Value::Null => false,
                _ => true,
            }
    })
}

fn is_plain_address(s: &str) -> bool {
    let authority = s.split('/').next().unwrap_or_default();
    let (host, port) = authority.split_once(':').unwrap_or((authority, ""));
    !host.is_empty()
        && host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-')
        && port.chars().all(|c| c.is_ascii_digit())
        && !s.contains(char::is_whitespace)
}

/// The enum values for the value `v` at `p`, `named` those its text names (only that one,
/// when the user named one);
/// for a list entry also its split into the values it names, and none the list holds already.
fn enum_resolutions(
    sources: &Sources,
    p: &str,
    allowed: &[Value],
    v: &Value,
    named: &[&str],
    list_entry: bool,
) -> Vec<Resolution> {
    let description = schema::node_at(sources.schema, p)
        .and_then(|n| n.get("description"))
        .and_then(Value::as_str)
        .unwrap_or_default();
    let mut values = enum_options(p, allowed, v, named, description);
    if named.len() == 1 {
        values.truncate(1);
    }
    if !list_entry {
        return values;
    }
    let items = pointer::split_last(p)
        .and_then(|(parent, _)| sources.given.pointer(parent))
        .and_then(Value::as_array);
    // An entry that says it is the only one (`"dedicated controller"`, `"broker only"`) in a
    // list that holds another allowed value contradicts the list: no reading of it.
    if says_it_is_the_only_one(v)
        && items.is_some_and(|items| items.iter().any(|i| i != v && allowed.contains(i)))
    {
        return Vec::new();
    }
    let mut out = entry_split(sources, p, named);
    // A value the list already holds is no reading of another entry.
    values.retain(|r| match r.as_slice() {
        [Edit::Set(_, x)] => !items.is_some_and(|items| items.contains(x)),
        _ => true,
    });
    out.extend(values);
    out
}

/// Does the user's value ask for what an absent value means: one of its words (four letters
/// or more) in the sentence of the field's description that says so, or "default" itself?
fn asks_for_default(value: &Value, node: Option<&Value>, field: &str) -> bool {
    let text = scalar_text(value).to_lowercase();

    // `"do not abort"` does not ask for what "abort" names.
    let negated = crate::certainty::negated_words(&text);
    // The field's own name says what it is about, not what its absence means (`"all
    // namespaces"` for a `namespaceSelector` whose description says what unset does).
    let own = crate::certainty::words_of_name(field);
    let field_word = |w: &str| {
        own.iter().any(|f| {
            [f.clone(), format!("{f}s"), format!("{f}es")]
                .iter()
                .any(|x| x == w)
        })
    };
    let said: Vec<&str> = text
        .split(|c: char| !c.is_alphabetic())
        .filter(|w| w.chars().count() >= 4 && !negated.iter().any(|n| n == w) && !field_word(w))
        .collect();
    if said.contains(&"default") {
        return true;
    }
    let sentences = node.map(schema::default_sentences).unwrap_or_default();
    sentences.iter().any(|sentence| {
        let words: Vec<&str> = sentence.split(|c: char| !c.is_alphabetic()).collect();
        said.iter().any(|w| words.contains(w))
    })
}

/// Does the user's value state absence as its whole value (`"none - the gateway checks the
/// token"`, `"null"`), where the field has no default, so that its absence means nothing is
/// set? An off switch (`"disabled - the endpoint is gone"`) says so too where an object
/// belongs that has no switch of its own. (Where the field has a default, its absence means
/// that default, which `"none"` may contradict: `symbols: "none"` is not "a quarter of the
/// length when omitted".)
fn says_absent(value: &Value, node: Option<&Value>) -> bool {
    let Some(node) = node else {
        return false;
    };
    if schema::default_value(node).is_some() || !schema::default_sentences(node).is_empty() {
        return false;
    }
    let said = scalar_text(value);
    let has_switch = || {
        node.get("properties")
            .and_then(Value::as_object)
            .is_some_and(|p| p.values().any(|child| schema::type_of(child) == "boolean"))
    };
    // An amount's `"none"` may mean zero or no limit, never "unset" (`timeout: "none - the
    // hook can run for hours"`): a number, or a text that takes amounts and no words.
    let takes = |v: &str| crate::certainty::accepts(node, &Value::from(v));
    let amount = || {
        matches!(schema::type_of(node), "integer" | "number")
            || (["5m", "5Gi", "5"].iter().any(|a| takes(a)) && !takes("abc"))
    };
    match schema::type_of(node) {
        "boolean" => false,
        "object" => super::readings::states_absence(&said, !has_switch()),
        _ => super::readings::states_absence(&said, false) && !amount(),
    }
}

/// A list entry that names several allowed values, `named` (`"server auth and client
/// auth"`): the entry replaced by them, each one the list does not hold yet.
fn entry_split(sources: &Sources, p: &str, named: &[&str]) -> Vec<Resolution> {
    let Some((parent, index)) = pointer::split_last(p) else {
        return Vec::new();
    };
    let (Some(Value::Array(items)), Ok(index)) =
        (sources.given.pointer(parent), index.parse::<usize>())
    else {
        return Vec::new();
    };
    if named.len() < 2 || index >= items.len() {
        return Vec::new();
    }
    let mut spliced: Vec<Value> = items[..index].to_vec();
    for n in named {
        let n = Value::from(*n);
        if !items.contains(&n) && !spliced.contains(&n) {
            spliced.push(n);
        }
    }
    spliced.extend(items[index + 1..].iter().cloned());
    vec![vec![Edit::Set(parent.to_string(), Value::Array(spliced))]]
}

/// The allowed values, those the user's text names first, then the one the `description`
/// describes in the user's words ([`super::readings::best_described`]); none the text negates
/// (`"not Strict"`), and none at all for one word that names and describes none of them.
fn enum_options(
    p: &str,
    allowed: &[Value],
    value: &Value,
    named: &[&str],
    description: &str,
) -> Vec<Resolution> {
    let text = scalar_text(value);
    let strings: Vec<&str> = allowed.iter().filter_map(Value::as_str).collect();
    if let Some(one) = the_value_the_words_name(p, &text, &strings, named) {
        return vec![vec![Edit::Set(p.to_string(), Value::from(one))]];
    }
    // The one value named, with words the field's description says of another value
    // (`"Always (only encapsulate when the destination node is in another subnet)"`, where
    // the description gives that to CrossSubnet): the text contradicts itself, no reading.
    if let [one] = named {
        let rest = remove_ignoring_case(&text, one);
        let other = super::readings::best_described(&rest, description, &strings);
        if other.is_some_and(|other| other != *one) {
            return Vec::new();
        }
    }
    // One word that names no allowed value in any spelling (`"Zstd"` where Gzip and Brotli
    // are allowed) is another thing, not a misspelt one: each allowed value would replace it,
    // a substitution only the user can make, unless one value's words and description hold
    // all of its words (`LEAST_REQUEST` → `WeightedLeastRequest`). A part it shares with a
    // value (`StatefulSet` and `DaemonSet` share `set`) describes nothing.
    let stated = stated_version(&text);
    let described = match named.is_empty() {
        false => None,
        true if super::readings::one_name(&text) => {
            match super::readings::described_in_full(&text, description, &strings) {
                None => return Vec::new(),
                found => found,
            }
        }
        true => super::readings::best_described(&text, description, &strings),
    };
    let versions = allowed
        .iter()
        .all(|a| stated_version(&scalar_text(a)).is_some());
    let mut ranked: Vec<(bool, &Value)> = allowed
        .iter()
        .filter(|a| of_the_version_stated(&text, stated.filter(|_| versions), a))
        .filter(|a| {
            // Named in full but not a reading: negated, or part of a longer named value.
            !a.as_str()
                .is_some_and(|s| super::readings::names_in_full(&text, s) && !named.contains(&s))
        })
        // What tells it from the others negated (`"not external"`, `MESH_EXTERNAL`).
        .filter(|a| {
            !a.as_str()
                .is_some_and(|s| crate::certainty::negates_value(&text, s, allowed))
        })
        // An empty allowed value means "unset": no reading of words (asking for the default
        // is offered as the field's removal).
        .filter(|a| a.as_str() != Some("") || text.trim().is_empty())
        .map(|a| {
            let first = a
                .as_str()
                .is_some_and(|s| named.contains(&s) || described == Some(s));
            (!first, a)
        })
        .collect();
    ranked.sort_by_key(|(later, _)| *later);
    ranked
        .into_iter()
        .take(MAX_ENUM_OPTIONS)
        .map(|(_, a)| vec![Edit::Set(p.to_string(), a.clone())])
        .collect()
}

/// The one allowed value a text names without spelling it: the field's own action, negated
/// (`"do not rebalance"` for `replicaAutoBalance`: the value that turns it off, where the text
/// names no value), or the level a well-known topology label names (`kubernetes.io/hostname`).
fn the_value_the_words_name<'a>(
    p: &str,
    text: &str,
    strings: &[&'a str],
    named: &[&str],
) -> Option<&'a str> {
    let field = pointer::split_last(p).map(|(_, f)| f).unwrap_or_default();
    named
        .is_empty()
        .then(|| super::readings::negated_action_value(text, &field, strings))
        .flatten()
        .or_else(|| super::readings::topology_level(text, strings))
}

/// Is the allowed value `a` one of the version the user's `text` states, or does the text
/// state none? A number stated is the number meant: of allowed numbers (`stated`, when every
/// allowed value is one), only one it names is a reading (`"3.11"` names the major `"3"`,
/// `"1.1"` is neither `"1.2"` nor `"1.3"`); and a name with its version
/// (`OpenMetricsText1.0`) is, of the values of that name, only that version written short or
/// long (`OpenMetricsText1.0.0`), never another one (`OpenMetricsText0.0.1`).
fn of_the_version_stated(text: &str, stated: Option<&str>, a: &Value) -> bool {
    if let Some(said) = stated {
        return names_version(said, &scalar_text(a));
    }
    match (versioned_name(text), a.as_str().and_then(versioned_name)) {
        (Some((name, said)), Some((other, version))) if name.eq_ignore_ascii_case(other) => {
            names_version(said, version) || same_version(said, version)
        }
        _ => true,
    }
}

/// `text` without the first occurrence of `part`, letter case aside.
fn remove_ignoring_case(text: &str, part: &str) -> String {
    match text.to_lowercase().find(&part.to_lowercase()) {
        // Lower-casing keeps byte offsets only for ASCII; otherwise keep the text whole.
        Some(at) if text.is_ascii() && part.is_ascii() => {
            format!("{}{}", &text[..at], &text[at + part.len()..])
        }
        _ => text.to_string(),
    }
}

/// The number or version `text` begins with (`"1.1 (the old scanners)"` → `1.1`, `"v3.11"`
/// → `3.11`).
pub(super) fn stated_version(text: &str) -> Option<&str> {
    let first = text.trim_start().split([' ', ',', ';', '(']).next()?;
    let digits = first.strip_prefix(['v', 'V']).unwrap_or(first);
    let well_formed = !digits.is_empty()
        && digits
            .split('.')
            .all(|part| !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()));
    well_formed.then_some(digits)
}

/// Does the stated version `said` name `allowed`: the same, or `allowed` is its leading part
/// (`3.11` names `3`, `1.29.8` names `1.29`)?
fn names_version(said: &str, allowed: &str) -> bool {
    let allowed = stated_version(allowed).unwrap_or(allowed);
    said == allowed
        || said
            .strip_prefix(allowed)
            .is_some_and(|rest| rest.starts_with('.'))
}

/// A name ending in a version (`OpenMetricsText1.0.0` → `OpenMetricsText`, `1.0.0`).
fn versioned_name(text: &str) -> Option<(&str, &str)> {
    let text = text.trim();
    let at = text
        .char_indices()
        .rev()
        .take_while(|(_, c)| c.is_ascii_digit() || *c == '.')
        .last()?
        .0;
    let (name, version) = text.split_at(at);
    let version = version.trim_start_matches('.');
    (name.ends_with(char::is_alphabetic) && stated_version(version).is_some())
        .then_some((name, version))
}

/// The same version, zeros filled in where one is written short (`1.0` and `1.0.0`).
fn same_version(a: &str, b: &str) -> bool {
    let parts = |v: &str| -> Vec<u64> {
        let mut p: Vec<u64> = v.split('.').filter_map(|x| x.parse().ok()).collect();
        while p.last() == Some(&0) {
            p.pop();
        }
        p
    };
    parts(a) == parts(b)
}

/// Can the value at `p` go? An optional property, or an entry of a list.
fn removable(sources: &Sources, p: &str) -> bool {
    let Some((parent, name)) = pointer::split_last(p) else {
        return false;
    };
    if sources.given.pointer(parent).is_some_and(Value::is_array) {
        return true;
    }
    match schema::node_at(sources.schema, parent) {
        Some(node) => !schema::required(node).any(|r| r == name),
        None => true,
    }
}

/// A map of references grouped by one property's allowed values where a list of them belongs
/// (`{GitRepository: [webapp], OCIRepository: [webapp-manifests]}`, as values files group them,
/// for a list of `{kind, name}`): one item per name, with its group's value. Every key must be
/// an allowed value of one text property of the items, and every value a name or a list of
/// names.
fn grouped_by_enum(groups: &Map<String, Value>, node: &Value) -> Option<Value> {
    let items = node
        .get("items")
        .filter(|_| schema::type_of(node) == "array")?;
    let properties = items.get("properties")?.as_object()?;
    let target = reference_target(items)?;
    let mut grouping = properties.iter().filter(|(name, child)| {
        name.as_str() != target
            && schema::enum_values(child).is_some_and(|allowed| {
                groups
                    .keys()
                    .all(|k| allowed.contains(&Value::from(k.as_str())))
            })
    });
    let (by, _) = grouping.next()?;
    if grouping.next().is_some() || groups.is_empty() {
        return None;
    }
    let mut out = Vec::new();
    for (group, names) in groups {
        let names: Vec<&str> = match names {
            Value::String(one) => vec![one.as_str()],
            Value::Array(many) => many.iter().map(Value::as_str).collect::<Option<_>>()?,
            _ => return None,
        };
        for name in names {
            out.push(serde_json::json!({ by.as_str(): group, target: name }));
        }
    }
    Some(Value::Array(out))
}

/// A list of `"Name: value"` (or `name=value`, or `from -> to` as a mapping is written) lines
/// where the schema wants a map of strings: the arrow points from the key to its value. A list
/// of objects that each name a key and hold one value the map takes (`{name: region, value:
/// eu-west-1}` as a container's env var, `{name: http, containerPort: 8080, protocol: TCP}` as a
/// Pod's port for a map of port numbers) is that map too.
fn lines_as_map(items: &[Value], node: &Value) -> Option<Value> {
    let values = node
        .get("additionalProperties")
        .filter(|a| schema::type_of(node) == "object" && a.is_object())?;
    if items.is_empty() {
        return None;
    }
    let mut map = Map::new();
    for item in items {
        let (k, v) = match item {
            Value::Object(pair) => named_pair(pair, values)?,
            _ if schema::type_of(values) == "string" => {
                let line = item.as_str()?;
                let (k, v) = ["->", "=>", "\u{2192}"]
                    .iter()
                    .find_map(|arrow| line.split_once(arrow))
                    .or_else(|| line.split_once([':', '=']))?;
                (k.trim(), Value::from(unquoted(v.trim())))
            }
            _ => return None,
        };
        if k.is_empty() || k.contains(char::is_whitespace) || map.contains_key(k) {
            return None;
        }
        map.insert(k.to_string(), v);
    }
    Some(Value::Object(map))
}

/// An object that names a key (`name` or `key`) and holds exactly one other value the map's
/// value schema `values` takes: that key and value.
fn named_pair<'p>(pair: &'p Map<String, Value>, values: &Value) -> Option<(&'p str, Value)> {
    let (name_field, name) = ["name", "key"]
        .iter()
        .find_map(|f| pair.get(*f).and_then(Value::as_str).map(|n| (*f, n)))?;
    let mut taken = pair
        .iter()
        .filter(|(k, v)| k.as_str() != name_field && crate::certainty::accepts(values, v));
    let (_, value) = taken.next()?;
    taken.next().is_none().then(|| (name, value.clone()))
}

/// A list of lines where one free text belongs (`userData: ["#!/bin/bash", "sysctl --system"]`)
/// is those lines, one after the other. Only lines (items holding a blank), never names: a list
/// of names where one name belongs is no text; unless the field's own description says it holds
/// one entry per line (`ignore: ["/*", "!/deploy/"]` for patterns "one per line"). The line
/// breaks are crfix's: a proposal.
fn lines_as_text(items: &[Value], node: &Value) -> Option<Value> {
    let free_text = !says_what_it_takes(node);
    let lines: Vec<&str> = items.iter().map(Value::as_str).collect::<Option<_>>()?;
    let are_lines = lines.iter().any(|l| l.contains(char::is_whitespace)) || holds_lines(node);
    (free_text && lines.len() > 1 && are_lines).then(|| Value::from(lines.join("\n")))
}

/// Whether a text field's description says it holds one entry per line.
fn holds_lines(node: &Value) -> bool {
    let Some(description) = node.get("description").and_then(Value::as_str) else {
        return false;
    };
    let description = description.to_lowercase();
    [
        "per line",
        "newline-separated",
        "newline separated",
        "separated by newlines",
        "separated by new lines",
        "line-separated",
        "one on each line",
    ]
    .iter()
    .any(|phrase| description.contains(phrase))
}

/// A value as the syntax it was written in reads it: quotes around it are that syntax's, not
/// part of the value (`hostname: "rabbit.example"` in a manifest's line is `rabbit.example`).
/// Read as YAML, whose double-quoted scalars take JSON's escapes and single-quoted ones `''`.
fn unquoted(v: &str) -> String {
    let quoted = ['"', '\'']
        .iter()
        .any(|q| v.len() >= 2 && v.starts_with(*q) && v.ends_with(*q));
    if quoted {
        if let Ok(Value::String(s)) = serde_yaml_ng::from_str::<Value>(v) {
            return s;
        }
    }
    v.to_string()
}

/// New values for an invalid value, made of its own text.
fn rewrites(value: &Value, node: &Value) -> Vec<Value> {
    rewrites_over(value, node, None)
}

/// [`rewrites`] on UPDATE: `old` is the stored value there, whose amount in a user's text is
/// the past (`"8 MiB/s (raised from 2 MiB/s)"` over `2097152` states one new amount).
fn rewrites_over(value: &Value, node: &Value, old: Option<&Value>) -> Vec<Value> {
    let mut out = rewrites_of(value, node, old);
    // A change note from the stored value to another (`"zipkin -> otel-tracing (moving to
    // the collector)"` over `[{name: zipkin}]`): the new side, read as the field is.
    if let (Value::String(s), Some(stored)) = (value, old) {
        if let Some(to) = super::readings::change_note_target(s, stored) {
            let to = Value::from(to);
            let mut readings = match schema::type_of(node) {
                "string" => vec![to.clone()],
                _ => rewrites_of(&to, node, old),
            };
            out.retain(|v| !readings.contains(v));
            readings.append(&mut out);
            out = readings;
        }
    }
    // An amount stated relative to the stored one (`"double it"`) is read first.
    if let (Value::String(s), Some(old)) = (value, old) {
        let description = node.get("description").and_then(Value::as_str);
        let relative = super::readings::relative_amount(s, old)
            .or_else(|| super::readings::relative_amount_in_field_unit(s, old, description?))
            .or_else(|| relative_list(s, old))
            .or_else(|| super::readings::version_bumped(s, old).map(Value::from));
        if let Some(relative) = relative {
            out.retain(|v| v != &relative);
            out.insert(0, relative);
        }
    }
    out
}

/// On UPDATE, a list stated relative to the stored one (`"same as before, plus
/// X-Auth-Request-Groups for the RBAC check"` over `[X-Auth-Request-User]`, `"add
/// http://am-dr:9093 so the DR site gets them too"`): the stored items, then the names the
/// text adds (words with a separator or a digit inside that the stored list lacks, or a part
/// in quotes as written), its remarks aside. A verb that adds to something (`add`, `plus`,
/// `append`) says so by itself; `also` or `and` only with a word that refers to the stored
/// value. A proposal, like every relative reading.
fn relative_list(text: &str, old: &Value) -> Option<Value> {
    let stored: Vec<&str> = old
        .as_array()?
        .iter()
        .map(Value::as_str)
        .collect::<Option<_>>()?;
    let lower = text.to_lowercase();
    let said: Vec<&str> = lower
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    let refers = lower.contains("same as") || super::readings::refers_to_stored(&said);
    if let Some(kept) = refers
        .then(|| list_less(&unremarked_words(text), &stored))
        .flatten()
    {
        return Some(kept);
    }
    // A text that starts by taking away (`"drop the autogen rule, the Deployment is fixed
    // now"`) speaks of the stored list by itself; what it takes away is in its first clause.
    let takes_away = said
        .first()
        .is_some_and(|w| matches!(*w, "drop" | "remove" | "delete"));
    let first_clause = text.split([',', ';']).next().unwrap_or(text);
    if let Some(kept) = takes_away
        .then(|| list_less(&unremarked_words(first_clause), &stored))
        .flatten()
    {
        return Some(kept);
    }
    let adds_by_itself = said
        .iter()
        .any(|w| matches!(*w, "plus" | "add" | "adding" | "append"));
    let adds = said.iter().any(|w| matches!(*w, "also" | "and"));
    if !(adds_by_itself || (refers && adds)) {
        return None;
    }
    let mut items: Vec<Value> = stored.iter().map(|s| Value::from(*s)).collect();
    let mut add = |item: &str| {
        if !stored.contains(&item) && !items.contains(&Value::from(item)) {
            items.push(Value::from(item));
        }
    };
    // A part in quotes is one item as written, blanks and all (`'.*context deadline
    // exceeded.*'`); the words outside them, each as written (a path keeps its `/`: `"plus
    // /metrics"` adds `/metrics`), without the brackets, quotes and sentence marks around it.
    let unremarked = crate::certainty::without_remarks(text);
    let (quoted, outside) = quoted_parts(&unremarked);
    for part in quoted {
        add(part);
    }
    let written = outside
        .split(|c: char| c.is_whitespace() || matches!(c, ',' | ';'))
        .map(|w| w.trim_matches(|c: char| "()[]".contains(c)))
        .map(|w| w.trim_end_matches(|c: char| ".:!?".contains(c)))
        .filter(|w| !w.is_empty());
    for word in written {
        if looks_like_name(word) {
            add(word);
        }
    }
    (items.len() > stored.len()).then_some(Value::Array(items))
}

/// The stored items less those a word that takes away names (`"the current list minus ping"`,
/// `"without ping"`, `"drop ping"`): each named item as stored, the words before its remark.
/// An item is named whole, or by a word that is a part of its name and of no other item's
/// (`autogen` of `autogen-run-as-non-root` beside `run-as-non-root`).
fn list_less(said: &[String], stored: &[&str]) -> Option<Value> {
    const LESS: [&str; 7] = [
        "minus", "without", "except", "drop", "remove", "removing", "delete",
    ];
    let at = said.iter().position(|w| LESS.contains(&w.as_str()))?;
    let parts = |item: &str| -> Vec<String> {
        item.split(['-', '_', '.', '/'])
            .map(str::to_lowercase)
            .collect()
    };
    let part_of_one = |item: &str, w: &str| {
        w.chars().count() >= 4
            && parts(item).iter().any(|p| p == w)
            && stored
                .iter()
                .filter(|other| parts(other).iter().any(|p| p == w))
                .count()
                == 1
    };
    let named: Vec<&str> = stored
        .iter()
        .copied()
        .filter(|item| {
            said[at + 1..]
                .iter()
                .any(|w| w.eq_ignore_ascii_case(item) || part_of_one(item, w))
        })
        .collect();
    if named.is_empty() || named.len() == stored.len() {
        return None;
    }
    Some(Value::Array(
        stored
            .iter()
            .filter(|item| !named.contains(item))
            .map(|item| Value::from(*item))
            .collect(),
    ))
}

/// The words of `text` before its remark, as written (a name keeps its `-` and `.`), lower case.
fn unremarked_words(text: &str) -> Vec<String> {
    crate::certainty::without_remarks(text)
        .split(|c: char| c.is_whitespace() || ",;".contains(c))
        .map(|w| {
            w.trim_matches(|c: char| "\"'`()[].:!?".contains(c))
                .to_lowercase()
        })
        .filter(|w| !w.is_empty())
        .collect()
}

/// The parts of `text` in quotes (`'`, `"` or a backtick) that open after a blank or at the
/// start and close before a blank, a sentence mark or the end (an apostrophe in `don't` opens
/// none), and the text outside them.
fn quoted_parts(text: &str) -> (Vec<&str>, String) {
    let mut quoted = Vec::new();
    let mut outside = String::new();
    let mut rest = text;
    let mut after_blank = true;
    while let Some((at, quote)) = rest.char_indices().find(|(i, c)| {
        matches!(c, '\'' | '"' | '`') && (*i > 0 || after_blank) && {
            let before = rest[..*i].chars().last();
            before.is_none_or(|b| b.is_whitespace() || b == '(')
        }
    }) {
        let inner = &rest[at + 1..];
        let close = inner.char_indices().find(|(i, c)| {
            *c == quote
                && inner[i + 1..]
                    .chars()
                    .next()
                    .is_none_or(|n| n.is_whitespace() || ",;:.!?)".contains(n))
        });
        let Some((end, _)) = close else {
            break;
        };
        outside.push_str(&rest[..at]);
        outside.push(' ');
        let part = &inner[..end];
        if !part.is_empty() && part.trim() == part {
            quoted.push(part);
        }
        rest = &inner[end + 1..];
        after_blank = false;
    }
    outside.push_str(rest);
    (quoted, outside)
}

fn rewrites_of(value: &Value, node: &Value, old: Option<&Value>) -> Vec<Value> {
    if let Value::Object(groups) = value {
        return grouped_by_enum(groups, node).into_iter().collect();
    }
    if let Value::Array(items) = value {
        return lines_as_map(items, node)
            .into_iter()
            .chain(lines_as_text(items, node))
            .chain(list_as_property(items, node))
            .collect();
    }
    let Value::String(s) = value else {
        return Vec::new();
    };
    let kind = schema::type_of(node);
    // A structure written as a document inside a string: JSON (`"{\"name\": \"x\"}"`) or a
    // YAML block pasted where its object or list belongs (a configuration file's text).
    let document = document_in_string(s, kind);
    if s.chars().count() > MAX_SPLIT_CHARS {
        return document.into_iter().collect();
    }
    let mut out: Vec<Value> = document.into_iter().collect();
    match kind {
        "array" => {
            // On UPDATE, an addition to the stored list is that list and the item.
            let added = old.and_then(|o| super::readings::added_to_stored(s, o));
            out.extend(added.map(Value::Array));
            out.extend(list_readings(s, node));
        }
        // The truth value the text states, or both when it states none.
        "boolean" => match super::readings::stated_bool(s) {
            Some(b) => out.push(Value::Bool(b)),
            None => out.extend([Value::Bool(true), Value::Bool(false)]),
        },
        "integer" | "number" => out.extend(amount_readings(s, node, old)),
        "object" => out.extend(object_readings(s, node)),
        _ => {
            if digits_only(node) {
                out.extend(digit_readings(s, node, old));
            }
            out.extend(text_readings(s, node, old));
        }
    }
    out.retain(|v| v != value);
    out
}

/// A string where a list belongs: the fields of its one item written as pairs
/// (`port=http,path=/metrics`), the list its separators make (and of references), and one
/// selector in kubectl's syntax for a list of selectors (its commas are "and").
fn list_readings(s: &str, node: &Value) -> Vec<Value> {
    let mut out = Vec::new();
    // Kubernetes' own syntaxes for the list's items come first: every part of the text has
    // its field there.
    if let Some(items) = node.get("items") {
        out.extend(kubectl_names(s, items));
        out.extend(requirements(s, items));
        out.extend(toleration_of_taint(s, items).map(|t| Value::from(vec![t])));
        out.extend(subject_of_username(s, items).map(|t| Value::from(vec![t])));
    }
    if let Some(items) = node.get("items").filter(|i| schema::type_of(i) == "object") {
        out.extend(fields_from_pairs(s, items).map(|item| Value::Array(vec![item])));
    }
    // (The same flag before every item is read below: its values are the items.)
    if same_flag_values([s]).is_none() {
        out.extend(command_arguments(s));
        out.extend(shell_words(s, node));
    }
    let mut lists = list_rewrites(s, node);
    if let Some(items) = node.get("items") {
        let kinds: Vec<Value> = lists
            .iter()
            .filter_map(|list| kinds_of_kubectl_names(list, items))
            .collect();
        for (at, list) in kinds.into_iter().enumerate() {
            lists.insert(at, list);
        }
    }
    // The same flag before every item (`--query=a` and `--query=b` on two lines, a
    // command's arguments pasted): the flag is the syntax, its values are the items.
    let values: Vec<Value> = same_flag_values([s])
        .into_iter()
        .chain(lists.iter().filter_map(|list| {
            let items = list.as_array()?.iter().map(Value::as_str);
            same_flag_values(items.collect::<Option<Vec<&str>>>()?)
        }))
        .collect();
    for (at, v) in values.into_iter().enumerate() {
        lists.insert(at, v);
    }
    out.extend(lists_of_references(&lists, node));
    out.extend(lists);
    if let Some(items) = node.get("items") {
        out.extend(
            label_selector(s, items)
                .into_iter()
                .map(|v| Value::from(vec![v])),
        );
    }
    out
}

/// A node taint in kubectl's syntax (`"node-role.kubernetes.io/control-plane:NoSchedule"`,
/// `"dedicated=gpu:NoExecute"`, as `kubectl taint` takes and `kubectl describe node` prints
/// it) where a list of tolerations belongs: the toleration that tolerates exactly that taint,
/// `Exists` for a taint without a value, `Equal` and the value for one with.
fn toleration_of_taint(s: &str, items: &Value) -> Option<Value> {
    const EFFECTS: [&str; 3] = ["NoSchedule", "PreferNoSchedule", "NoExecute"];
    let declared = items.get("properties")?;
    for field in ["key", "operator", "effect"] {
        declared.get(field)?;
    }
    let (taint, effect) = s.trim().rsplit_once(':')?;
    if !EFFECTS.contains(&effect) || taint.contains(char::is_whitespace) || taint.is_empty() {
        return None;
    }
    Some(match taint.split_once('=') {
        Some((key, value)) => {
            serde_json::json!({"key": key, "operator": "Equal", "value": value, "effect": effect})
        }
        None => serde_json::json!({"key": taint, "operator": "Exists", "effect": effect}),
    })
}

/// A service account's username as the API server writes it
/// (`"system:serviceaccount:argocd:argocd-application-controller"`) where a subject belongs
/// (an object that declares `kind`, `name` and `namespace`): that service account, as an RBAC
/// subject names it.
fn subject_of_username(s: &str, subject: &Value) -> Option<Value> {
    let declared = subject.get("properties")?;
    for field in ["kind", "name", "namespace"] {
        declared.get(field)?;
    }
    let rest = s.trim().strip_prefix("system:serviceaccount:")?;
    let (namespace, name) = rest.split_once(':')?;
    let dns = |part: &str| {
        !part.is_empty()
            && part
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.')
    };
    (dns(namespace) && dns(name)).then(
        || serde_json::json!({"kind": "ServiceAccount", "name": name, "namespace": namespace}),
    )
}

/// A command's arguments written as one line (`"--epochs 10 --lr 0.001 --data s3://a/b"`)
/// where a list belongs: the words a shell would pass, each an item, never a flag and its
/// value joined into one (a program given `"--epochs 10"` sees one unknown flag). Only text
/// that is nothing but flags, each followed by at most one value, and no quotes.
fn command_arguments(s: &str) -> Option<Value> {
    let is_flag = |w: &str| {
        let name = w.strip_prefix("--").or_else(|| w.strip_prefix('-'));
        name.is_some_and(|n| n.starts_with(|c: char| c.is_ascii_alphabetic()))
    };
    let words: Vec<&str> = s.split_whitespace().collect();
    if words.len() < 2 || !is_flag(words[0]) || s.contains(['"', '\'', '`']) {
        return None;
    }
    if words.windows(2).any(|w| !is_flag(w[0]) && !is_flag(w[1])) {
        return None;
    }
    Some(Value::from(words))
}

/// A command line where a list that its schema calls a command or its arguments belongs
/// (a container's `command`: `"python -u train.py --run-name 'resnet50 baseline v2'"`): the
/// words a shell passes, its quotes grouping words (`resnet50 baseline v2` one argument). Only
/// a line that holds a flag, and whose quotes close.
fn shell_words(s: &str, node: &Value) -> Option<Value> {
    let described = [
        node.get("description"),
        node.get("items").and_then(|i| i.get("description")),
    ]
    .into_iter()
    .flatten()
    .filter_map(Value::as_str)
    .any(|d| {
        let d = d.to_lowercase();
        ["command", "argument", "entrypoint"]
            .iter()
            .any(|w| d.contains(w))
    });
    let texts = node
        .get("items")
        .is_some_and(|i| schema::type_of(i) == "string");
    if !described || !texts || !s.trim().contains(char::is_whitespace) {
        return None;
    }
    let words = shlex::split(s)?;
    // A line that uses the shell's own syntax outside quotes (`$VAR`, a pipe, a redirect, `&&`,
    // `;`) means what only a shell makes of it: its words alone would run another command.
    let mut quote: Option<char> = None;
    let shell_syntax = s.chars().any(|c| match (quote, c) {
        (None, '\'' | '"') => {
            quote = Some(c);
            false
        }
        (Some(q), c) if c == q => {
            quote = None;
            false
        }
        (None, c) => "$|><;`&".contains(c),
        _ => false,
    });
    let flag = words.iter().any(|w| w.len() > 1 && w.starts_with('-'));
    (words.len() >= 2 && flag && !shell_syntax).then(|| Value::from(words))
}

/// A kubectl command that names objects (`"kubectl delete pod media-worker-7x2kq
/// media-worker-9fzlm -n media"`) where a list of names belongs: the names, in order, when
/// the items take each. The command is `kubectl`, a verb, a built-in kind, the names; a flag
/// other than the namespace's, or one whose value is not glued with `=`, makes no reading
/// (its value could not be told from a name).
fn kubectl_names(s: &str, items: &Value) -> Option<Value> {
    let words = shlex::split(s)?;
    let [program, verb, kind, rest @ ..] = words.as_slice() else {
        return None;
    };
    if program != "kubectl" || !verb.chars().all(|c| c.is_ascii_lowercase()) {
        return None;
    }
    super::readings::built_in_kind(kind)?;
    let mut names = Vec::new();
    let mut words = rest.iter();
    while let Some(word) = words.next() {
        match word.as_str() {
            "-n" | "--namespace" => {
                words.next()?;
            }
            flag if flag.starts_with("--") && flag.contains('=') => {}
            flag if flag.starts_with('-') => return None,
            name => names.push(Value::from(name)),
        }
    }
    let taken = names.iter().all(|n| crate::certainty::accepts(items, n));
    (!names.is_empty() && taken).then_some(Value::Array(names))
}

/// A map of label keys to their values where a list of label requirements belongs
/// (`matchExpressions: {"pki.acme.io/ca-tier": [root, intermediate]}`): one `In` requirement
/// per key, its values the listed ones (one text is one value), as `matchLabels` would say
/// with one value. Only where the items declare `key`, `operator` and `values` and take `In`.
fn map_as_requirements(v: &Value, node: &Value) -> Option<Value> {
    let map = v.as_object().filter(|m| !m.is_empty())?;
    let items = node.get("items")?;
    let declared = items.get("properties")?;
    declared.get("key")?;
    declared.get("values")?;
    let takes_in = crate::certainty::accepts(declared.get("operator")?, &Value::from("In"));
    if schema::type_of(node) != "array" || !takes_in {
        return None;
    }
    map.iter()
        .map(|(key, values)| {
            let values = match values {
                Value::String(one) => vec![Value::from(one.as_str())],
                Value::Array(listed)
                    if !listed.is_empty() && listed.iter().all(Value::is_string) =>
                {
                    listed.clone()
                }
                _ => return None,
            };
            Some(serde_json::json!({"key": key, "operator": "In", "values": values}))
        })
        .collect::<Option<Vec<Value>>>()
        .map(Value::Array)
}

/// The label every namespace carries with its own name.
const NAMESPACE_NAME_LABEL: &str = "kubernetes.io/metadata.name";

/// Is `text`, at `p`, the key of a requirement in a namespace selector where the user named
/// namespaces by exception ([`namespaces_except`] reads the user's text there)?
pub(super) fn is_namespace_name_key(schema: &Value, given: &Value, p: &str, text: &str) -> bool {
    if text != NAMESPACE_NAME_LABEL || !p.ends_with("/key") {
        return false;
    }
    let mut selector = String::new();
    for token in pointer::tokens(p) {
        selector = pointer::push(&selector, &token);
        if names_namespace_selector(&token) {
            let said = given.pointer(&selector).and_then(Value::as_str);
            let node = schema::node_at(schema, &selector);
            return said
                .zip(node)
                .and_then(|(said, node)| namespaces_except(said, node, &selector))
                .is_some();
        }
    }
    false
}

/// Does a field's name say it selects namespaces (`namespaceSelector`)?
fn names_namespace_selector(field: &str) -> bool {
    let words = crate::certainty::words_of_name(field);
    words.iter().any(|w| w == "namespace") && words.iter().any(|w| w == "selector")
}

/// Namespaces named by exception where a namespace selector belongs (`namespaceSelector:
/// "all namespaces except kube-system and kube-public"`): the selector on the label every
/// namespace carries with its name, `NotIn` the names. Only where the field is a namespace
/// selector (its name says so, and it declares `matchExpressions` of `key`, `operator`,
/// `values`), the text is "all"/"every" ... "except"/"but" and names, and each is a namespace's
/// name.
fn namespaces_except(text: &str, node: &Value, p: &str) -> Option<Value> {
    let (_, field) = pointer::split_last(p)?;
    let expressions = node.get("properties")?.get("matchExpressions")?;
    let takes_not_in = expressions
        .get("items")
        .and_then(|i| i.get("properties"))
        .and_then(|d| d.get("operator"))
        .is_some_and(|o| crate::certainty::accepts(o, &Value::from("NotIn")));
    if !takes_not_in || !names_namespace_selector(&field) {
        return None;
    }
    let lower = text.trim().to_lowercase();
    let (whole, names) = lower
        .split_once(" except ")
        .or_else(|| lower.split_once(" but "))?;
    if !["all", "every", "any"].iter().any(|w| whole.starts_with(w)) {
        return None;
    }
    let names: Vec<Value> = names
        .split([','])
        .flat_map(|part| part.split(" and "))
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .map(|n| is_dns_label(n).then(|| Value::from(n)))
        .collect::<Option<_>>()?;
    (!names.is_empty()).then(|| {
        serde_json::json!({"matchExpressions": [
            {"key": NAMESPACE_NAME_LABEL, "operator": "NotIn", "values": names}
        ]})
    })
}

/// A list whose items are kubectl's names of built-in kinds (`deploy`, `sts`,
/// `statefulsets`) where the items take a kind's name and refuse those: each item's kind.
fn kinds_of_kubectl_names(list: &Value, items: &Value) -> Option<Value> {
    let written = list.as_array().filter(|l| !l.is_empty())?;
    let kinds = written
        .iter()
        .map(|item| {
            let name = item.as_str()?;
            let (kind, _) = super::readings::built_in_kind(name)?;
            let kind = Value::from(kind);
            let refused = !crate::certainty::accepts(items, item);
            (refused && crate::certainty::accepts(items, &kind)).then_some(kind)
        })
        .collect::<Option<Vec<Value>>>()?;
    Some(Value::Array(kinds))
}

/// A selector in kubectl's syntax (`"app in (payments-api,ledger),track!=canary"`) where a
/// list of label requirements belongs (items that declare `key` and `operator`): one
/// requirement per clause, the commas ANDing them as the list does; an equality is `In` its
/// one value.
fn requirements(s: &str, items: &Value) -> Option<Value> {
    let declared = items.get("properties")?;
    declared.get("key")?;
    declared.get("operator")?;
    let list = selector_requirements(s)?
        .into_iter()
        .map(|(key, operator, values)| {
            let operator = if operator == "=" { "In" } else { operator };
            let mut requirement = serde_json::json!({"key": key, "operator": operator});
            if !values.is_empty() {
                requirement["values"] = Value::from(values);
            }
            requirement
        })
        .collect();
    Some(Value::Array(list))
}

/// The values of texts that are each nothing but one flag, the same one throughout, before
/// each of its values (`"-f values.yaml -f values-production.yaml"`, Helm's repeated `-f`, or
/// a list's items `--query=a`, `--query b`): the values in order, when there are two or more.
/// A repeated flag is syntax.
fn same_flag_values<'t>(texts: impl IntoIterator<Item = &'t str>) -> Option<Value> {
    let values = flag_values(texts)?;
    (values.len() >= 2).then(|| values.into_iter().map(Value::from).collect())
}

/// The values of texts that are each nothing but one flag, the same one throughout, before
/// each of its values; no value starts with `-`.
fn flag_values<'t>(texts: impl IntoIterator<Item = &'t str>) -> Option<Vec<&'t str>> {
    let mut flag: Option<&str> = None;
    let mut values = Vec::new();
    for text in texts {
        let mut words = text.split_whitespace().peekable();
        words.peek()?;
        while let Some(word) = words.next() {
            let (name, value) = match word.split_once('=') {
                Some(inline) if word.starts_with("--") => inline,
                _ => (word, words.next()?),
            };
            let is_flag = name.len() > 1 && name.starts_with('-');
            if !is_flag || value.is_empty() || value.starts_with('-') {
                return None;
            }
            if *flag.get_or_insert(name) != name {
                return None;
            }
            values.push(value);
        }
    }
    Some(values)
}

/// A string where a number belongs. An amount keeps its size: `"5 minutes"` for a field
/// counted in seconds is 300, and never 5. Otherwise the numbers written in it: `"3
/// replicas"`, `"7 (one a week)"`.
fn amount_readings(s: &str, node: &Value, old: Option<&Value>) -> Vec<Value> {
    let whole = schema::type_of(node) == "integer";
    let description = node.get("description").and_then(Value::as_str);
    if let Some(n) = super::readings::no_limit_number(s, description.unwrap_or_default()) {
        return vec![Value::from(n)];
    }
    // A count per item of a listed set is the total, never the count alone.
    if let Some(total) = super::readings::count_per_listed(s, description.unwrap_or_default()) {
        return number_value(total).into_iter().collect();
    }
    // One in every N, where the field counts a percentage: 100 / N.
    if let Some(share) = super::readings::share_as_percentage(s, node) {
        return number_value(share).into_iter().collect();
    }
    match super::readings::amount_in_field_unit(s, description.unwrap_or_default(), old) {
        Some(Some(n)) if !whole => number_value(n).into_iter().collect(),
        Some(Some(n)) if n.abs() < 1e15 => vec![Value::from(n as i64)],
        Some(_) => Vec::new(),
        None => {
            let numbers = numbers_in(s, whole);
            if numbers.is_empty() {
                return super::readings::counted_in_words(s)
                    .and_then(number_value)
                    .into_iter()
                    .collect();
            }
            numbers.into_iter().take(MAX_ENUM_OPTIONS).collect()
        }
    }
}

/// Does the text field take digits alone (an int64 carried as a string, `^[0-9]+$`)?
fn digits_only(node: &Value) -> bool {
    node.get("pattern").is_some()
        && crate::certainty::accepts(node, &Value::from("1024"))
        && !crate::certainty::accepts(node, &Value::from("1024 Ki"))
        // No unit after the number, nor a word: digits alone.
        && ('a'..='z')
            .chain('A'..='Z')
            .chain(['%', '.'])
            .all(|c| !crate::certainty::accepts(node, &Value::from(format!("1{c}"))))
}

/// A text field that takes digits alone holds a number: the text read as a whole-number field
/// reads it (`"50 GiB"` where the description counts bytes is 53687091200), written in digits;
/// only a text whose numbers are all its one amount's (`"604800000 (30 days)"` says two).
fn digit_readings(s: &str, node: &Value, old: Option<&Value>) -> Vec<Value> {
    if !super::readings::numbers_only_of_one_amount(s) {
        return Vec::new();
    }
    let mut counted = node.clone();
    counted["type"] = Value::from("integer");
    let old = old
        .and_then(Value::as_str)
        .and_then(|o| o.parse::<i64>().ok())
        .map(Value::from);
    amount_readings(s, &counted, old.as_ref())
        .into_iter()
        .filter_map(|n| n.as_i64().filter(|n| *n >= 0))
        .map(|n| Value::from(n.to_string()))
        .collect()
}

/// A string where an object belongs: the object each of its syntaxes makes of it.
fn object_readings(s: &str, node: &Value) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    // Kubernetes' own syntaxes for the object come first (a taint where a toleration belongs).
    out.extend(toleration_of_taint(s, node));
    out.extend(fields_from_pairs(s, node));
    out.extend(counted_object(s, node));
    out.extend(flags_object(s, node));
    out.extend(flags_map(s, node));
    out.extend(pair_object(s, node));
    out.extend(label_map(s, node));
    out.extend(free_map_pairs(s, node));
    out.extend(list_into_property(s, node));
    out.extend(label_selector(s, node));
    out.extend(named_reference(s, node));
    out.extend(subject_of_username(s, node));
    // Two readings that differ only in the parts' order are offered where nothing else reads
    // the text (`sts/redis-cache` is kubectl's TYPE/NAME, read above).
    let parts = parts_as_fields(s, node);
    if parts.len() == 1 || out.is_empty() {
        out.extend(parts);
    }
    out
}

/// Most fields one part of [`parts_as_fields`] may be offered to.
const MAX_PART_TAKERS: usize = 8;

/// A string of two or three parts joined by `/` or `:` where an object belongs (`"9080/TCP"`,
/// the PORT(S) column of `kubectl get svc`, for a port `{number, protocol, name}`): each part in
/// a field of its own that takes it, when exactly one such assignment makes an object the
/// schema takes, its rules and required fields included (the principle of a part split off to
/// a sibling, for a new object). Two parts that the same two fields take either way round
/// (`"smtp.example.com:587"` for `{host, port}`, both text) are two readings: the one that
/// keeps the text's order in the schema's order first, and neither certain.
fn parts_as_fields(s: &str, node: &Value) -> Vec<Value> {
    parts_assignments(s, node).unwrap_or_default()
}

fn parts_assignments(s: &str, node: &Value) -> Option<Vec<Value>> {
    let properties = node.get("properties")?.as_object()?;
    let text = s.trim();
    let separator = ['/', ':'].into_iter().find(|c| text.contains(*c))?;
    let parts: Vec<&str> = text.split(separator).map(str::trim).collect();
    if !(2..=3).contains(&parts.len())
        || parts
            .iter()
            .any(|p| p.is_empty() || p.contains(char::is_whitespace))
    {
        return None;
    }
    // For each part, the fields that take it, with the value as that field's type reads it.
    let mut takers: Vec<Vec<(&str, Value)>> = Vec::new();
    for part in &parts {
        let fields: Vec<(&str, Value)> = properties
            .iter()
            .filter_map(|(name, child)| {
                let value = match schema::type_of(child) {
                    "integer" => Value::from(part.parse::<i64>().ok()?),
                    "string" => Value::from(*part),
                    _ => return None,
                };
                crate::certainty::accepts(child, &value).then_some((name.as_str(), value))
            })
            .collect();
        if fields.is_empty() || fields.len() > MAX_PART_TAKERS {
            return None;
        }
        takers.push(fields);
    }
    let mut found: Vec<Value> = Vec::new();
    assign_parts(&takers, &mut Map::new(), node, &mut found);
    let keys = |v: &Value| -> Vec<String> {
        v.as_object()
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default()
    };
    match found.as_slice() {
        [only] => Some(vec![only.clone()]),
        [a, b] if parts.len() == 2 && keys(a) == keys(b) => {
            // In the text's order: the first part in the field the schema declares first.
            let declared_first = properties.keys().find(|k| keys(a).contains(k))?;
            let in_order = |v: &Value| v.get(declared_first) == Some(&Value::from(parts[0]));
            Some(if in_order(b) {
                vec![b.clone(), a.clone()]
            } else {
                vec![a.clone(), b.clone()]
            })
        }
        _ => None,
    }
}

/// Every assignment of the parts' takers to distinct fields whose object `node` takes.
fn assign_parts(
    takers: &[Vec<(&str, Value)>],
    object: &mut Map<String, Value>,
    node: &Value,
    found: &mut Vec<Value>,
) {
    let Some((first, rest)) = takers.split_first() else {
        let candidate = Value::Object(object.clone());
        if crate::certainty::accepts(node, &candidate) {
            found.push(candidate);
        }
        return;
    };
    for (name, value) in first {
        if object.contains_key(*name) || found.len() > 2 {
            continue;
        }
        object.insert(name.to_string(), value.clone());
        assign_parts(rest, object, node, found);
        object.remove(*name);
    }
}

/// A string the field's syntax refuses: a schedule said in words where the syntax is checked
/// (a cron pattern), or a stored cron's time moved, then the text's own rewrites.
fn text_readings(s: &str, node: &Value, old: Option<&Value>) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    // An int-or-string amount's number for no limit.
    if schema::is_int_or_string(node) {
        let description = node.get("description").and_then(Value::as_str);
        let no_limit = super::readings::no_limit_number(s, description.unwrap_or_default());
        out.extend(no_limit.map(Value::from));
    }
    if node.get("pattern").is_some() || node.get("x-kubernetes-validations").is_some() {
        out.extend(super::cron::cron_in_words(s).map(Value::from));
        out.extend(super::cron::interval_in_words(s).map(Value::from));
        // A time of day in the clock notation the field's syntax takes (`"6:30pm"` →
        // `18:30:00`).
        out.extend(super::cron::clock_spellings(s).into_iter().map(Value::from));
        out.extend(
            old.and_then(Value::as_str)
                .and_then(|stored| super::cron::moved_time(s, stored))
                .map(Value::from),
        );
    }
    // A fraction in words where the field takes a percentage (`"a quarter of the pods"`).
    if crate::certainty::accepts(node, &Value::from("25%")) {
        out.extend(
            super::readings::fraction_as_percentage(s).map(|p| Value::from(format!("{p}%"))),
        );
        out.extend(super::readings::percent_in_words(s).map(|p| Value::from(format!("{p}%"))));
    }
    // A name in the spelling an identifier's pattern takes (`"Request Transformer"` →
    // `request-transformer`): where the rules may not make that change (the pattern is
    // another system's, not a Kubernetes name), a reading to propose.
    if let Some(pattern) = node.get("pattern").and_then(Value::as_str) {
        let dots = crate::repair::dns::allows_dots(pattern);
        let max_len = node.get("maxLength").and_then(Value::as_u64).unwrap_or(253) as usize;
        out.extend(
            crate::repair::dns::normalise(s, dots, max_len)
                .map(Value::from)
                .filter(|v| crate::certainty::accepts(node, v)),
        );
    }
    let rewrites = string_rewrites(s, old);
    // An amount in the notation its field takes: ISO 8601's where the pattern refuses unit
    // symbols (`"1 min 30 s"` → `PT1M30S` for a Knative delivery timeout).
    let refused =
        |spellings: &[Value]| !spellings.iter().any(|v| crate::certainty::accepts(node, v));
    if node.get("pattern").is_some() && refused(&rewrites) {
        let amount = super::readings::value_before_comment(s, old);
        out.extend(super::readings::iso_8601_spelling(amount).map(Value::from));
    }
    out.extend(rewrites);
    out
}

/// The object or list a string holds as a document of its own, when the field takes that
/// kind: JSON, or YAML written over several lines (a single line is read by the readings
/// below, which know a sentence from a `key: value`). Every word and number stays; only the
/// document's own syntax goes.
fn document_in_string(s: &str, kind: &str) -> Option<Value> {
    if !matches!(kind, "object" | "array") || s.len() > MAX_DOCUMENT_BYTES {
        return None;
    }
    let trimmed = s.trim_start();
    let parsed = if trimmed.starts_with(['{', '[']) {
        serde_json::from_str::<Value>(s).ok()
    } else if s.trim().contains('\n') {
        serde_yaml_ng::from_str::<Value>(s).ok()
    } else {
        None
    }?;
    let fits = match &parsed {
        Value::Object(_) => kind == "object",
        Value::Array(_) => kind == "array",
        _ => false,
    };
    fits.then_some(parsed)
}

/// A list written as one string: split at its strongest separator when it has one (line
/// breaks, else `;`, else commas: `"server auth, client auth"`, an item may hold a blank or a
/// weaker separator; names joined by `:` or `|`, `coerce::names_separator`), else at blanks, lower-cased or as written; the allowed items it names
/// (`"GET and HEAD only"` → `[GET, HEAD]`); one of its words alone (`"candidate (was stable)"`).
fn list_rewrites(s: &str, node: &Value) -> Vec<Value> {
    let mut out = Vec::new();
    // Names joined by `:` or `|` with no blank between (an OpenSSL cipher list) are listed too.
    let separator = crate::repair::coerce::item_separator(s).or_else(|| {
        crate::repair::coerce::names_separator(s)
            .filter(|_| !s.trim().contains(char::is_whitespace))
    });
    let listed = separator.is_some();
    let items: Vec<&str> = crate::repair::coerce::split_outside_quotes(s, |c: char| {
        Some(c) == separator || (!listed && c.is_whitespace())
    })
    .into_iter()
    .map(str::trim)
    .filter(|i| !i.is_empty() && !FUNCTION_WORDS.contains(&i.to_lowercase().as_str()))
    .collect();
    // As written first (file names, image names keep their case); lower-cased for a schema
    // that wants it (a DNS-1123 pattern then refuses the first). Prose (more words than a list
    // of values written with blanks has) is no list: its first word is, below.
    let prose = !listed && items.len() > crate::text::MAX_VALUE_WORDS;
    // Items written with blanks are alike: a plain word between names (`"worker-1 through
    // worker-3"`) is a word of the sentence, not an item.
    let alike = listed
        || items
            .iter()
            .all(|i| looks_like_name(i) == looks_like_name(items[0]));
    if !items.is_empty() && !prose && alike {
        out.push(Value::Array(
            items.iter().map(|i| Value::from(*i)).collect(),
        ));
        out.push(Value::Array(
            items
                .iter()
                .map(|i| Value::from(i.to_lowercase()))
                .collect(),
        ));
    }
    if let Some(allowed) = node.get("items").and_then(schema::enum_values) {
        let named = super::readings::chosen_values(s, allowed);
        if !named.is_empty() {
            out.push(Value::Array(named.into_iter().map(Value::from).collect()));
        }
    }
    // One word alone drops the others: a reading of prose (`"stable (the default)"`), never of
    // a list the user separated (`"stable, fast"` is not `["fast"]`).
    if !listed {
        for word in value_words(s).into_iter().take(MAX_OPTIONS_PER_ERROR) {
            out.push(Value::Array(vec![Value::from(word.to_lowercase())]));
        }
    }
    out
}

/// A string rewritten from its own text: an amount, however spelt, in unit symbols (alone
/// when there is one, never its number or unit alone: `"512 MiB"` is `"512Mi"`, not `"512"`;
/// `"2 min (the export endpoint is slow)"` is `"2m"`), else its comparisons rejoined and its
/// words.
fn string_rewrites(s: &str, old: Option<&Value>) -> Vec<Value> {
    let amount = super::readings::value_before_comment(s, old);
    if super::readings::states_an_amount(amount) {
        return super::readings::amount_spellings(amount)
            .into_iter()
            .map(Value::from)
            .collect();
    }
    let mut out = operator_ranges(s).unwrap_or_default();
    // A percentage that is the text's only number (`"at most 10% of the nodes"`): itself.
    let percentages: Vec<String> = words(s)
        .into_iter()
        .filter(|w| {
            w.strip_suffix('%')
                .is_some_and(|n| n.parse::<f64>().is_ok_and(f64::is_finite))
        })
        .collect();
    if let [only] = percentages.as_slice() {
        if super::readings::numbers_said(s).len() == 1 {
            out.push(Value::from(only.as_str()));
        }
    }
    // A comment glued into the value, as YAML writes one after a blank
    // (`"ISRG Root X1   # short chain only"`): the value before it.
    if let Some(value) = super::readings::before_comment(s).map(str::trim) {
        if !value.is_empty() {
            out.push(Value::from(value));
        }
    }
    for word in value_words(s) {
        let lower = word.to_lowercase();
        let differs = lower != word;
        out.push(Value::from(word));
        if differs {
            out.push(Value::from(lower));
        }
    }
    out
}

/// The numbers written with digits in `s`, as JSON numbers (whole ones only for an integer),
/// each read with the magnitude word after it (`"50 thousand"` is 50000, never 50).
/// A number is a word of its own: digits glued to letters are part of a name or a class
/// (`5xx` is no 5, `s3` no 3, `v2` no 2).
fn numbers_in(s: &str, integer: bool) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    for said in super::readings::numbers_said(s) {
        let parsed = if integer {
            said.decimal.then(|| whole_number(said.value)).flatten()
        } else {
            number_value(said.value)
        };
        if let Some(v) = parsed.filter(|v| !out.contains(v)) {
            out.push(v);
        }
    }
    out
}

/// Lists of strings as lists of the objects `node`'s items are, each part in the item's one
/// field a name goes to (its one required string property, or `name`): `"infra, apps"` for a
/// list of `{name}` references is `[{name: infra}, {name: apps}]`.
fn lists_of_references(lists: &[Value], node: &Value) -> Vec<Value> {
    let Some(item) = node.get("items").filter(|i| schema::type_of(i) == "object") else {
        return Vec::new();
    };
    let mut out: Vec<Value> = lists
        .iter()
        .filter_map(|list| {
            list.as_array()?
                .iter()
                .map(|part| {
                    let part = part.as_str()?;
                    toleration_of_taint(part, item)
                        .or_else(|| pair_object(part, item))
                        .or_else(|| {
                            // The reading that gives the item every field it requires, else the
                            // first (`deployment/api` for a `{kind, name}` target is both).
                            let readings = named_reference(part, item);
                            readings
                                .iter()
                                .find(|r| schema::required(item).all(|k| r.get(k).is_some()))
                                .or(readings.first())
                                .cloned()
                        })
                })
                .collect::<Option<Vec<Value>>>()
                .map(Value::Array)
        })
        .collect();
    // A part that a field with a pattern, a format, an enum or a type other than text accepts
    // (`sg-0a1b…` for an `id` matching `sg-[0-9a-z]+`, `53/udp` for `{port, protocol}`) goes
    // there before a free `name`: that schema says more about it.
    let typed: Vec<Value> = lists
        .first()
        .into_iter()
        .flat_map(|list| typed_items(list, item))
        .collect();
    let said_most = typed.first().is_some_and(|first| {
        first.as_array().is_some_and(|items| {
            items.iter().all(|i| {
                i.as_object().is_some_and(|o| {
                    o.keys().all(|k| {
                        item.get("properties")
                            .and_then(|p| p.get(k))
                            .is_some_and(says_what_it_takes)
                    })
                })
            })
        })
    });
    if out.is_empty() || said_most {
        out.retain(|r| !typed.contains(r));
        out.splice(0..0, typed);
    }
    out
}

/// Does the schema say what values it takes: a type other than text, or a pattern, a format
/// or an enum? A free string takes any part, so it says nothing about one.
fn says_what_it_takes(node: &Value) -> bool {
    schema::type_of(node) != "string"
        || ["pattern", "format", "enum"]
            .iter()
            .any(|k| node.get(k).is_some())
}

/// A list of alternatives (`"search.acme.internal, 10.20.30.40"` for items `{dns}` or `{ip}`):
/// each part in the one field of the item whose schema takes it, or, a part holding one `/` or
/// `:` (`"53/udp"`), its two pieces in two fields whose schemas say what they take (`port`, an
/// integer, and `protocol`, an enum: `{port: 53, protocol: UDP}`). A part several fields take
/// is placed in each of them in turn, the placement whose fields' schemas say most about their
/// values (a type other than text, a pattern, a format, an enum) first: two readings, never a
/// certain one.
fn typed_items(list: &Value, item: &Value) -> Vec<Value> {
    let (Some(parts), Some(properties)) = (
        list.as_array(),
        item.get("properties").and_then(Value::as_object),
    ) else {
        return Vec::new();
    };
    let says_most = |name: &str| properties.get(name).is_some_and(says_what_it_takes);
    let scalar = |child: &Value| {
        matches!(schema::type_of(child), "string" | "integer" | "number")
            || schema::is_int_or_string(child)
    };
    let place = |text: &str, child: &Value| {
        typed_part(text, child).filter(|v| crate::certainty::accepts(child, v))
    };
    let mut takers: Vec<Vec<Map<String, Value>>> = Vec::new();
    for part in parts {
        // A part with a blank in it is prose, not a value (a piece cut from a string is one).
        let Some(text) = part.as_str().filter(|t| !t.contains(char::is_whitespace)) else {
            return Vec::new();
        };
        let mut found: Vec<Map<String, Value>> = properties
            .iter()
            .filter(|(_, child)| schema::type_of(child) == "string")
            .filter_map(|(name, child)| {
                place(text, child).map(|v| Map::from_iter([(name.clone(), v)]))
            })
            .collect();
        let pieces = text.split_once('/').or_else(|| text.split_once(':'));
        if let Some((a, b)) =
            pieces.filter(|(a, b)| !a.is_empty() && !b.is_empty() && !b.contains(['/', ':']))
        {
            for (first, one) in properties.iter().filter(|(_, c)| scalar(c)) {
                for (second, other) in properties.iter().filter(|(_, c)| scalar(c)) {
                    if first == second || !says_most(first) || !says_most(second) {
                        continue;
                    }
                    if let (Some(x), Some(y)) = (place(a, one), place(b, other)) {
                        found.push(Map::from_iter([(first.clone(), x), (second.clone(), y)]));
                    }
                }
            }
        }
        found.sort_by_key(|placed| {
            std::cmp::Reverse(placed.keys().filter(|k| says_most(k)).count())
        });
        if found.is_empty() {
            return Vec::new();
        }
        takers.push(found);
    }
    if properties.len() < 2 {
        // One field: a plain list of references, read elsewhere.
        return Vec::new();
    }
    // Each part in its first placement, or in its last.
    let build = |last: bool| {
        Value::Array(
            takers
                .iter()
                .map(|t| Value::Object(t[if last { t.len() - 1 } else { 0 }].clone()))
                .collect(),
        )
    };
    let mut out = vec![build(false)];
    if takers.iter().any(|t| t.len() > 1) {
        out.push(build(true));
    }
    out
}

/// A sentence where an object belongs, whose numbers each count one of its number properties
/// (`"2 sockets x 2 cores, no hyperthreading"` for `{sockets, cores, threads}` is `{sockets: 2,
/// cores: 2}`): the word right after each number names the property (its name, or its name
/// with a plural `s`). Every number must count one, and none twice; the other words are left
/// behind, so it is a proposal.
fn counted_object(s: &str, node: &Value) -> Option<Value> {
    let properties = node.get("properties")?.as_object()?;
    let tokens: Vec<&str> = s
        .split(|c: char| !(c.is_alphanumeric() || c == '.'))
        .filter(|t| !t.is_empty())
        .collect();
    let numbers = super::readings::numbers_said(s).len();
    let mut out = Map::new();
    for pair in tokens.windows(2) {
        let Ok(n) = pair[0].parse::<i64>() else {
            continue;
        };
        let word = pair[1].to_lowercase();
        let named = properties.iter().find(|(name, child)| {
            matches!(schema::type_of(child), "integer" | "number")
                && (name.to_lowercase() == word
                    || name.to_lowercase().trim_end_matches('s') == word.trim_end_matches('s'))
        });
        let (name, child) = named?;
        let value = Value::from(n);
        if out.contains_key(name) || !crate::certainty::accepts(child, &value) {
            return None;
        }
        out.insert(name.clone(), value);
    }
    (!out.is_empty() && out.len() == numbers).then_some(Value::Object(out))
}

/// Pairs whose keys are paths of the object's declared properties give those properties
/// (`helm --set`'s `pkcs12.create=true,pkcs12.passwordSecretRef.name=p12`, or
/// `port=http,path=/metrics`), each value in its field's type; a key that names no declared
/// property, a value its field does not take, or a path set twice is no reading. One pair
/// without a `.` is other readings' (a map's entry, a `name=value` pair).
fn fields_from_pairs(s: &str, node: &Value) -> Option<Value> {
    // An escaped dot (`a\.b=v`) is part of a key, no path separator: a map's pairs.
    if s.contains('\\') {
        return None;
    }
    let pairs = key_value_pairs(s)?;
    if pairs.len() < 2 && !pairs.iter().any(|(k, _)| k.contains('.')) {
        return None;
    }
    let mut object = Map::new();
    for (key, text) in pairs {
        let segments: Vec<&str> = key.split('.').collect();
        if segments.len() > MAX_SCHEMA_DEPTH || segments.iter().any(|s| s.is_empty()) {
            return None;
        }
        let mut field = node;
        for segment in &segments {
            field = field.get("properties")?.get(*segment)?;
        }
        let value = match (schema::type_of(field), text.as_str()) {
            ("boolean", "true") => Value::Bool(true),
            ("boolean", "false") => Value::Bool(false),
            ("boolean", _) => return None,
            _ => typed_part(&text, field).filter(|v| crate::certainty::accepts(field, v))?,
        };
        insert_new(&mut object, &segments, value)?;
    }
    Some(Value::Object(object))
}

/// Sets `value` at `path` below `map`, making the objects on the way; `None` where the path
/// is set already or passes through a value that is no object.
fn insert_new(map: &mut Map<String, Value>, path: &[&str], value: Value) -> Option<()> {
    let (first, rest) = path.split_first()?;
    if rest.is_empty() {
        return map.insert(first.to_string(), value).is_none().then_some(());
    }
    let child = map
        .entry(first.to_string())
        .or_insert_with(|| Value::Object(Map::new()));
    insert_new(child.as_object_mut()?, rest, value)
}

/// `name=value` as the object's name and value fields (`{name, value}`, `{key, value}`): a Helm
/// parameter, an analysis argument. A comparison (`severity=~"critical|warning"`) likewise,
/// where one field's enum names its operator: the operator goes there, and only there
/// (`{name, matchType: "=~", value}`); quotes around the value are the syntax's, not the value's.
/// A name holds no `=`, so the pair is cut at its first (`JAVA_OPTS=-Dfile.encoding=UTF-8`, as
/// `docker run -e` cuts it); a key that starts with no letter or digit is a flag's or an
/// operator's (`--for=…`, `==`). The pair's own structure, nothing added.
fn pair_object(s: &str, node: &Value) -> Option<Value> {
    // Declared properties only: a free map's keys are the user's words, never `name`/`value`
    // that crfix writes.
    let string = |name: &str| {
        node.get("properties")
            .and_then(|p| p.get(name))
            .is_some_and(|c| schema::type_of(c) == "string")
    };
    let key_field = ["name", "key"].into_iter().find(|f| string(f))?;
    if !string("value") {
        return None;
    }
    let (key, operator, value) = comparison(s, node)?;
    let quoted = value.len() >= 2 && value.starts_with('"') && value.ends_with('"');
    let value = if quoted {
        &value[1..value.len() - 1]
    } else {
        value
    };
    if !key.starts_with(|c: char| c.is_alphanumeric() || c == '_')
        || value.is_empty()
        || value.starts_with('=')
        || key.contains(char::is_whitespace)
    {
        return None;
    }
    let mut object = serde_json::json!({ key_field: key, "value": value });
    if let Some((field, op)) = operator {
        object[field] = Value::from(op);
    }
    Some(object)
}

/// A comparison's key, its operator (the property whose enum names it, and the symbol) and
/// its value.
type Comparison<'s> = (&'s str, Option<(&'s str, &'s str)>, &'s str);

/// `key=value`, or `key OP value` where OP is the longest operator some property's enum of
/// symbols allows (`=~`, `!=`): the key, that property and operator (none for a plain `=`
/// nobody's enum names), and the value.
fn comparison<'s>(s: &'s str, node: &'s Value) -> Option<Comparison<'s>> {
    let symbolic = |v: &&str| !v.is_empty() && !v.chars().any(char::is_alphanumeric);
    let mut operators: Vec<(&str, &str)> = node
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .flat_map(|(field, child)| {
            schema::enum_values(child)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .filter(symbolic)
                .map(move |op| (field.as_str(), op))
        })
        .collect();
    operators.sort_by_key(|(_, op)| std::cmp::Reverse(op.len()));
    let first = s.find(|c: char| "=!<>~".contains(c))?;
    let rest = &s[first..];
    if let Some(&(field, op)) = operators.iter().find(|(_, op)| rest.starts_with(op)) {
        return Some((
            s[..first].trim(),
            Some((field, op)),
            s[first + op.len()..].trim(),
        ));
    }
    let (key, value) = s.split_once('=')?;
    (key.len() == first).then(|| (key.trim(), None, value.trim()))
}

/// A list written as one string, in the object's one property that is a list of strings
/// (`"payments, canary"` for a namespace selector `{any, matchNames}`): the part goes to the
/// one field that takes it, and only when exactly one does.
fn list_into_property(s: &str, node: &Value) -> Vec<Value> {
    let Some((name, child)) = one_list_property(node) else {
        return Vec::new();
    };
    list_rewrites(s, child)
        .into_iter()
        .map(|list| serde_json::json!({ name: list }))
        .collect()
}

/// A list where an object belongs, in the object's one property that is a list of strings
/// (`restoreStatus: [workflows.argoproj.io]` for `{includedResources, excludedResources}`).
fn list_as_property(items: &[Value], node: &Value) -> Option<Value> {
    let (name, child) = one_list_property(node)?;
    let list = Value::from(items.to_vec());
    crate::certainty::accepts(child, &list).then(|| serde_json::json!({ name: list }))
}

/// The object's one property that is a list of strings, a name that negates aside: a list the
/// user wrote names what is taken, so `excludedResources` beside `includedResources` is no
/// place for it (docs/repair.md, "A value never moves to a name that negates it").
fn one_list_property(node: &Value) -> Option<(&str, &Value)> {
    let properties = node.get("properties").and_then(Value::as_object)?;
    let lists: Vec<(&String, &Value)> = properties
        .iter()
        .filter(|(_, child)| {
            schema::type_of(child) == "array"
                && child
                    .get("items")
                    .is_some_and(|i| schema::type_of(i) == "string")
        })
        .collect();
    let plain: Vec<&(&String, &Value)> = lists
        .iter()
        .filter(|(name, _)| !crate::certainty::name_negates(name))
        .collect();
    match plain.as_slice() {
        [(name, child)] => Some((name.as_str(), *child)),
        _ => None,
    }
}

/// `a=b,c=d` as a map: the value itself when `node` is a map of strings (a rule's `labels`) or
/// of amounts (each value read as the map takes it), and under each property of `node` that is
/// a map of strings (`matchLabels` of a label selector).
fn label_map(s: &str, node: &Value) -> Vec<Value> {
    let Some(pairs) = key_value_pairs(s) else {
        return Vec::new();
    };
    let pairs: Map<String, Value> = pairs
        .into_iter()
        .map(|(k, v)| (k, Value::from(v)))
        .collect();
    let is_string_map = |node: &Value| {
        schema::type_of(node) == "object"
            && node
                .get("additionalProperties")
                .is_some_and(|a| schema::type_of(a) == "string")
    };
    let mut out = Vec::new();
    if is_string_map(node) {
        out.push(Value::Object(pairs.clone()));
    } else if quantity_map(node) {
        // A map of amounts (`requests: "cpu=4,memory=16Gi"`): each value read by the map's
        // value schema (`cpu: 4`).
        out.extend(pairs_map(s, node).filter(|m| crate::certainty::accepts(node, m)));
    }
    let Some(properties) = node.get("properties").and_then(Value::as_object) else {
        return out;
    };
    out.extend(
        properties
            .iter()
            .filter(|(_, child)| is_string_map(child))
            .map(|(name, _)| {
                let mut m = Map::new();
                m.insert(name.clone(), Value::Object(pairs.clone()));
                Value::Object(m)
            }),
    );
    out
}

/// A map whose values are numbers or int-or-string amounts (resources' `requests`).
fn quantity_map(node: &Value) -> bool {
    schema::type_of(node) == "object"
        && node.get("additionalProperties").is_some_and(|a| {
            matches!(schema::type_of(a), "integer" | "number") || schema::is_int_or_string(a)
        })
}

/// A label given several values in a label selector's `matchLabels` (`app: [api, worker]`),
/// which holds one value a label: the selector's requirement that the label is one of them
/// (`{key: app, operator: In, values: [api, worker]}` in `matchExpressions`), as Kubernetes'
/// selectors say it. The other labels stay; never certain, as `In` is crfix's word. The error
/// may be the label's or, where a rule over the whole map refuses it, `matchLabels`' own.
fn label_values_as_requirement(sources: &Sources, p: &str, value: &Value) -> Option<Resolution> {
    let label_values = |v: &Value| {
        v.as_array()
            .filter(|values| !values.is_empty() && values.iter().all(Value::is_string))
            .cloned()
    };
    let (labels, listed): (&str, Vec<(String, Vec<Value>)>) = match value {
        Value::Object(map) if p.ends_with("/matchLabels") => (
            p,
            map.iter()
                .filter_map(|(key, v)| Some((key.clone(), label_values(v)?)))
                .collect(),
        ),
        _ => {
            let (labels, key) = pointer::split_last(p)?;
            (labels, vec![(key, label_values(value)?)])
        }
    };
    let (selector, field) = pointer::split_last(labels)?;
    let expressions_node = schema::node_at(sources.schema, selector)?
        .get("properties")?
        .get("matchExpressions")?;
    if field != "matchLabels" || schema::type_of(expressions_node) != "array" || listed.is_empty() {
        return None;
    }
    let at = pointer::push(selector, "matchExpressions");
    let mut expressions = match sources.given.pointer(&at) {
        Some(Value::Array(items)) => items.clone(),
        None => Vec::new(),
        Some(_) => return None,
    };
    for (key, values) in &listed {
        expressions.push(serde_json::json!({"key": key, "operator": "In", "values": values}));
    }
    // `matchLabels` left empty goes with its last label.
    let held = sources.given.pointer(labels).and_then(Value::as_object)?;
    let mut edits: Vec<Edit> = if held.len() == listed.len() {
        vec![Edit::Remove(labels.to_string())]
    } else {
        listed
            .iter()
            .map(|(key, _)| Edit::Remove(pointer::push(labels, key)))
            .collect()
    };
    edits.push(Edit::Set(at, Value::from(expressions)));
    Some(edits)
}

/// `key=value` pairs where an object that keeps unknown fields belongs (a plugin's or a
/// chart's configuration): its entries, each value as Helm's `--set` types it (`true`,
/// `false` and whole numbers are no text). A key with a `.` may be one key (Kafka Connect's
/// `connection.url`) or a path (Helm's `image.tag`): then both, flat first, and only the user
/// can say which.
fn free_map_pairs(s: &str, node: &Value) -> Vec<Value> {
    if !schema::preserves_unknown(node) || node.get("additionalProperties").is_some() {
        return Vec::new();
    }
    let Some(pairs) = key_value_pairs(s) else {
        return Vec::new();
    };
    let flat: Map<String, Value> = pairs
        .iter()
        .map(|(k, v)| (k.clone(), helm_typed(v)))
        .collect();
    let mut out = vec![Value::Object(flat)];
    if pairs.iter().any(|(k, _)| k.contains('.')) {
        out.extend(helm_nested(&pairs, |_| Some(0)));
    }
    out
}

/// The object Helm's `--set` pairs build from their dotted keys, each key's path taken from
/// the segment `start` finds (none: the pair has no place here); an empty segment, or two
/// pairs for one place, build nothing.
fn helm_nested(
    pairs: &[(String, String)],
    start: impl Fn(&[&str]) -> Option<usize>,
) -> Option<Value> {
    let mut out = Map::new();
    for (key, value) in pairs {
        let segments: Vec<&str> = key.split('.').collect();
        let within = &segments[start(&segments)?..];
        if within.is_empty() || within.iter().any(|segment| segment.is_empty()) {
            return None;
        }
        insert_new(&mut out, within, helm_typed(value))?;
    }
    Some(Value::Object(out))
}

/// A value as Helm's `--set` types it: `true`, `false` and whole numbers are no text.
fn helm_typed(v: &str) -> Value {
    match serde_json::from_str::<Value>(v) {
        Ok(t) if t.is_boolean() || t.is_i64() => t,
        _ => Value::from(v),
    }
}

/// Helm's `--set` pairs whose keys name their place from the chart's root, where the object
/// `field` belongs (`outboundTrafficPolicy: "--set meshConfig.outboundTrafficPolicy.mode=
/// REGISTRY_ONLY"`): the part of each key after the field's own name is the place within it
/// (`{mode: REGISTRY_ONLY}`). Every key must pass through that name; the chart's path before it
/// is the chart's, not the object's, so the reading drops those words (a proposal).
fn set_pairs_within(s: &str, field: &str, node: &Value) -> Option<Value> {
    if schema::type_of(node) != "object" {
        return None;
    }
    let text = s.trim();
    let text = ["--set-string", "--set"]
        .iter()
        .find_map(|flag| text.strip_prefix(flag))
        .map(|rest| rest.trim_start_matches([' ', '=']))
        .unwrap_or(text);
    helm_nested(&key_value_pairs(text)?, |segments| {
        segments
            .iter()
            .rposition(|segment| *segment == field)
            .map(|at| at + 1)
    })
}

/// A label selector in kubectl's syntax (`-l`), for a node that has `matchExpressions`:
/// requirements split at the commas outside parentheses, each `key=v` / `key==v` (into
/// `matchLabels`), `key!=v` (`NotIn`), `key in (a,b)` / `key notin (a)`, `key` (`Exists`) or
/// `!key` (`DoesNotExist`). All or nothing: a requirement the grammar does not read makes no
/// reading at all (a lenient split made `research)` and `env!=dev` values of `team in (…)`).
/// Equalities alone are [`label_map`]'s.
fn label_selector(s: &str, node: &Value) -> Vec<Value> {
    let declared = node
        .get("properties")
        .and_then(|p| p.get("matchExpressions"));
    if declared.is_none() {
        return Vec::new();
    }
    let Some(requirements) = selector_requirements(s) else {
        return Vec::new();
    };
    let mut labels = Map::new();
    let mut expressions = Vec::new();
    for (key, operator, values) in requirements {
        if operator == "=" {
            if labels
                .insert(key.to_string(), Value::from(values[0]))
                .is_some()
            {
                return Vec::new();
            }
            continue;
        }
        let mut expression = serde_json::json!({"key": key, "operator": operator});
        if !values.is_empty() {
            expression["values"] = Value::from(values);
        }
        expressions.push(expression);
    }
    if expressions.is_empty() {
        return Vec::new();
    }
    let mut selector = Map::new();
    if !labels.is_empty() {
        selector.insert("matchLabels".into(), Value::Object(labels));
    }
    selector.insert("matchExpressions".into(), Value::from(expressions));
    vec![Value::Object(selector)]
}

/// The requirements of a selector in kubectl's syntax, each as key, operator (`=` for an
/// equality) and values; `None` when any part is not one.
fn selector_requirements(s: &str) -> Option<Vec<(&str, &'static str, Vec<&str>)>> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0usize, 0);
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.checked_sub(1)?,
            ',' if depth == 0 => {
                parts.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if depth != 0 {
        return None;
    }
    parts.push(&s[start..]);
    parts.into_iter().map(selector_requirement).collect()
}

fn selector_requirement(part: &str) -> Option<(&str, &'static str, Vec<&str>)> {
    let part = part.trim();
    let is_key = |k: &str| {
        !k.is_empty()
            && k.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/'))
    };
    let is_value = |v: &str| {
        v.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    };
    for (symbol, operator) in [("!=", "NotIn"), ("==", "="), ("=", "=")] {
        if let Some((key, value)) = part.split_once(symbol) {
            let (key, value) = (key.trim(), value.trim());
            return (is_key(key) && is_value(value)).then(|| (key, operator, vec![value]));
        }
    }
    if let Some(key) = part.strip_prefix('!') {
        return is_key(key.trim()).then(|| (key.trim(), "DoesNotExist", Vec::new()));
    }
    if let Some((key, rest)) = part.split_once(char::is_whitespace) {
        let rest = rest.trim();
        let (word, set) = rest.split_once('(')?;
        let operator = match word.trim().to_ascii_lowercase().as_str() {
            "in" => "In",
            "notin" => "NotIn",
            _ => return None,
        };
        let values: Vec<&str> = set.strip_suffix(')')?.split(',').map(str::trim).collect();
        let readable = is_key(key) && values.iter().all(|v| !v.is_empty() && is_value(v));
        return readable.then_some((key, operator, values));
    }
    is_key(part).then_some((part, "Exists", Vec::new()))
}

/// A reference given by its name alone (`"media-backup-gcs"` for `{name: ...}`): the string
/// as the object's one required string property, or its `name`.
fn named_reference(s: &str, node: &Value) -> Vec<Value> {
    if let Some(reference) = type_name_field(s, node).or_else(|| type_reference_field(s, node)) {
        return vec![reference];
    }
    let Some(target) = reference_target(node) else {
        return Vec::new();
    };
    let s = s.trim();
    if let Some((reference, namespace)) = namespace_flag(s) {
        return namespaced_references(reference, namespace, node);
    }
    // A name holds no blank and no `=` (`a=b` is a pair: [`pair_object`]).
    if s.is_empty() || s.contains(char::is_whitespace) || s.contains('=') {
        return Vec::new();
    }
    if let Some(reference) = scoped_name(s, target, node) {
        return vec![reference];
    }
    let mut out = vec![serde_json::json!({ target: s })];
    if let Some(properties) = node.get("properties").and_then(Value::as_object) {
        out.extend(name_and_part(s, target, properties));
    }
    out
}

/// kubectl's reference and its namespace flag (`secret/oidc -n identity`, `--namespace=x`,
/// either order): the one word that is no flag, and the namespace.
fn namespace_flag(s: &str) -> Option<(&str, &str)> {
    let words: Vec<&str> = s.split_whitespace().collect();
    let (flag_at, namespace) = words.iter().enumerate().find_map(|(i, w)| match *w {
        "-n" | "--namespace" => Some((i, *words.get(i + 1)?)),
        _ => w.strip_prefix("--namespace=").map(|n| (i, n)),
    })?;
    let flag_words = if words[flag_at].contains('=') { 1 } else { 2 };
    let rest: Vec<&str> = words
        .iter()
        .enumerate()
        .filter(|(i, _)| !(flag_at..flag_at + flag_words).contains(i))
        .map(|(_, w)| *w)
        .collect();
    match rest.as_slice() {
        [reference] if !reference.starts_with('-') => Some((reference, namespace)),
        _ => None,
    }
}

/// The readings of a reference written with kubectl's namespace flag: each with that
/// namespace, where the object names one freely; else none (the namespace is never dropped).
fn namespaced_references(reference: &str, namespace: &str, node: &Value) -> Vec<Value> {
    if !free_string(node, "namespace") || !is_dns_label(namespace) {
        return Vec::new();
    }
    named_reference(reference, node)
        .into_iter()
        .filter(|r| r.get("namespace").is_none())
        .map(|mut r| {
            r["namespace"] = Value::from(namespace);
            r
        })
        .collect()
}

/// A string property of `node` that takes any text (no enum).
fn free_string(node: &Value, field: &str) -> bool {
    schema::child(node, field)
        .is_some_and(|c| schema::type_of(c) == "string" && schema::enum_values(c).is_none())
}

/// kubectl's lower-case `type/NAME` (`secret/shop-tls`) where the object names that type's
/// name in one field (`secretName`): the name goes there, and only there.
fn type_name_field(s: &str, node: &Value) -> Option<Value> {
    let (kind, name) = s.trim().split_once('/')?;
    let field = format!("{kind}Name");
    let names_it = !kind.is_empty()
        && kind.chars().all(|c| c.is_ascii_lowercase())
        && free_string(node, &field);
    (names_it && is_dns_label(name.split('.').next().unwrap_or_default()))
        .then(|| serde_json::json!({ field: name }))
}

/// kubectl's `type/NAME` of a built-in kind (`configmap/offsets`, `cm/offsets`) where the
/// object holds a reference to that kind in one field named after it (`toConfigMap: {name}`,
/// `secretRef: {name}`): the name goes into that reference, and only there.
fn type_reference_field(s: &str, node: &Value) -> Option<Value> {
    let (kind, name) = s.trim().split_once('/')?;
    let (kind, _) = super::readings::built_in_kind(kind)?;
    if !is_dns_label(name.split('.').next().unwrap_or_default()) {
        return None;
    }
    let kind = kind.to_ascii_lowercase();
    let properties = node.get("properties")?.as_object()?;
    let mut fields = properties.iter().filter(|(field, child)| {
        crate::certainty::words_of_name(field)
            .concat()
            .contains(&kind)
            && schema::type_of(child) == "object"
            && reference_target(child) == Some("name")
    });
    let (field, _) = fields.next()?;
    fields
        .next()
        .is_none()
        .then(|| serde_json::json!({ field.as_str(): { "name": name } }))
}

/// The field a reference's name goes to: the object's one required string property, or
/// `name`.
fn reference_target(node: &Value) -> Option<&str> {
    let required: Vec<&str> = schema::required(node).collect();
    let target = match required.as_slice() {
        [only] => Some(*only),
        [] => Some("name"),
        _ => required.iter().copied().find(|r| *r == "name"),
    };
    // A declared property: a map's keys (`matchLabels`) are the user's words, and `name` is
    // no key of it that crfix may choose.
    target.filter(|t| {
        node.get("properties")
            .and_then(|p| p.get(*t))
            .is_some_and(|c| schema::type_of(c) == "string")
    })
}

/// kubectl's `TYPE/NAME` (`Deployment/inventory-api`): where the object names a kind freely, a
/// first part written as a kind is the kind. Kubernetes' `NAMESPACE/NAME`
/// (`flux-system/cert-manager`, as keys, `--depends-on` and `kubectl -n` print it): where the
/// object has a free namespace field, a first part written as a namespace is the namespace.
/// In both forms the name comes last, and it is the only reading offered.
fn scoped_name(s: &str, target: &str, node: &Value) -> Option<Value> {
    let (scope, name) = s.split_once('/')?;
    if name.is_empty() || name.contains('/') {
        return None;
    }
    if free_string(node, "kind") && written_as_kind(scope) {
        return Some(serde_json::json!({ target: name, "kind": scope }));
    }
    // kubectl's own names of a built-in kind (`sts/redis-cache`, `deployments/web`): the kind,
    // and its API version where the object names one freely.
    if let Some((kind, api_version)) =
        super::readings::built_in_kind(scope).filter(|_| free_string(node, "kind"))
    {
        let mut reference = serde_json::json!({ target: name, "kind": kind });
        if free_string(node, "apiVersion") {
            reference["apiVersion"] = Value::from(api_version);
        }
        return Some(reference);
    }
    if let Some(reference) = resource_reference(scope, name, target, node) {
        return Some(reference);
    }
    let namespaced = free_string(node, "namespace") && target != "namespace";
    (namespaced && is_dns_label(scope) && is_dns_label(name))
        .then(|| serde_json::json!({ target: name, "namespace": scope }))
}

/// kubectl's name of a resource before a `/NAME`: what `kubectl get -o name` prints
/// (`gateway.gateway.networking.k8s.io/public-gw`, the kind in lower case and its API group)
/// or its lower-case `type/NAME` (`httproute/checkout`). The type is the kind the object's
/// schema spells whose lower-case name or plural it is (an allowed value of its `kind`, or a
/// literal its rules compare with), and the group goes where the object names one. A
/// lower-case type that names no kind the schema spells is no type (it may be a namespace);
/// a resource with its group is the reference's own type where nothing spells its kind
/// (`cluster.postgresql.cnpg.io/pg-inventory` for `{name}`).
fn resource_reference(scope: &str, name: &str, target: &str, node: &Value) -> Option<Value> {
    let (resource, group) = match scope.split_once('.') {
        Some((resource, group)) if written_as_resource(scope) => (resource, Some(group)),
        _ => (scope, None),
    };
    if !is_dns_label(resource) || !is_dns_label(name.split('.').next().unwrap_or_default()) {
        return None;
    }
    let kind = schema::child(node, "kind")
        .and_then(|child| spelt_kind(resource, node, child))
        .map(Value::from);
    if kind.is_none() && group.is_none() {
        return None;
    }
    let mut reference = serde_json::json!({ target: name });
    if let Some(kind) = kind {
        reference["kind"] = kind;
    }
    if let Some(group) = group.filter(|_| free_string(node, "group")) {
        reference["group"] = Value::from(group);
    }
    Some(reference)
}

/// The one kind, as the schema spells it (the `kind` field's allowed values, or the literals
/// of the object's and the field's rules), whose lower-case name or plural is `resource`.
fn spelt_kind(resource: &str, object: &Value, kind: &Value) -> Option<String> {
    let mut spelt: Vec<String> = schema::enum_values(kind)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_string)
        .collect();
    spelt.extend(schema::rule_literals(object));
    spelt.extend(schema::rule_literals(kind));
    spelt.retain(|k| written_as_kind(k) && super::readings::names_kind_as_type(resource, k));
    spelt.sort();
    spelt.dedup();
    match spelt.as_slice() {
        [one] => Some(one.clone()),
        _ => None,
    }
}

/// A resource with its API group as kubectl writes one (`cluster.postgresql.cnpg.io`,
/// `deployments.apps`): a lower-case DNS label, then a group of at least two labels.
fn written_as_resource(s: &str) -> bool {
    let mut labels = s.split('.');
    let resource = labels.next().unwrap_or_default();
    let group: Vec<&str> = labels.collect();
    is_dns_label(resource) && group.len() >= 2 && group.iter().all(|l| is_dns_label(l))
}

/// A kind as Kubernetes writes one: UpperCamelCase letters and digits.
fn written_as_kind(s: &str) -> bool {
    s.starts_with(|c: char| c.is_ascii_uppercase()) && s.chars().all(|c| c.is_ascii_alphanumeric())
}

/// The name and one other part of a reference, each in its place:
/// `"billing-backup-s3/credentials.json"` → the name and another string property (`key`);
/// `"ClusterIssuer/letsencrypt-prod"` → a part that names an enum value of a property (`kind`)
/// goes there, and only there.
fn name_and_part(s: &str, target: &str, properties: &Map<String, Value>) -> Vec<Value> {
    let names_enum_value = |part: &str| {
        properties.values().any(|child| {
            schema::enum_values(child)
                .is_some_and(|allowed| !super::readings::named_values(part, allowed).is_empty())
        })
    };
    let mut out = Vec::new();
    for sep in ['/', ':'] {
        let Some((head, tail)) = s.split_once(sep) else {
            continue;
        };
        // A part never keeps a separator at the cut: `"tls-certs:/etc/tls:ro"` is not cut
        // at its `/` into a name `tls-certs:` and a path `etc/tls:ro`.
        let separator = |c: Option<char>| c.is_some_and(|c| "/:@".contains(c));
        if head.is_empty()
            || tail.is_empty()
            || separator(head.chars().next_back())
            || separator(tail.chars().next())
        {
            continue;
        }
        // The name comes first (`secret/key`), unless the first part is an enum value.
        let (named, rest) = if names_enum_value(head) {
            (tail, head)
        } else {
            (head, tail)
        };
        if names_enum_value(named) {
            continue;
        }
        for (other, child) in properties {
            if other == target || schema::type_of(child) != "string" {
                continue;
            }
            // A free kind is written as one (`TYPE/NAME` above); a name is no kind or API
            // version. A kind the schema lists is the one the text names, in any case.
            let free_kind = other == "kind" && schema::enum_values(child).is_none();
            if (free_kind && !written_as_kind(rest)) || other == "apiVersion" {
                continue;
            }
            let value = match schema::enum_values(child) {
                Some(allowed) => match super::readings::named_values(rest, allowed).as_slice() {
                    [only] => (*only).to_string(),
                    _ => continue,
                },
                None if names_enum_value(rest) => continue,
                None => rest.to_string(),
            };
            out.push(serde_json::json!({ target: named, other.as_str(): value }));
        }
    }
    out
}

/// A lower-case DNS label, as namespaces and most object names are (`flux-system`).
fn is_dns_label(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 63
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !s.starts_with('-')
        && !s.ends_with('-')
}

/// Words of prose that never name anything: not offered as values.
const FUNCTION_WORDS: [&str; 24] = [
    "a", "an", "and", "as", "at", "be", "by", "for", "from", "if", "in", "into", "is", "it", "its",
    "of", "on", "or", "the", "then", "to", "was", "with", "without",
];

/// The words of a text that could be a value, those that look like names (`argocd-system`,
/// `v0.6.0`: a separator or a digit inside) first.
fn value_words(s: &str) -> Vec<String> {
    let all = words(s);
    if all.len() > crate::text::MAX_VALUE_WORDS {
        // Prose: the value is its first word, what follows is a remark (or an injection,
        // whose words must not become choices). Only a word that names something, or that the
        // text sets off from the rest (`"stable (the default)"`), is a value: the first word of
        // a sentence (`"paygate's new EU endpoint"`) is not.
        return all
            .into_iter()
            .take(1)
            .filter(|w| looks_like_name(w) || set_off(s, w))
            .collect();
    }
    let mut ranked: Vec<(bool, String)> = all
        .into_iter()
        .filter(|w| !FUNCTION_WORDS.contains(&w.to_lowercase().as_str()))
        .map(|w| (!looks_like_name(&w), w))
        .collect();
    ranked.sort_by_key(|(plain, _)| *plain);
    ranked.into_iter().map(|(_, w)| w).collect()
}

/// The words of another text that may fill a missing value: of prose, only those that look
/// like names (`"Deploys Argo CD into the argocd-system namespace."` → `argocd-system`).
fn named_words(s: &str) -> Vec<String> {
    let all = words(s);
    if all.len() <= crate::text::MAX_VALUE_WORDS {
        return value_words(s);
    }
    all.into_iter().filter(|w| looks_like_name(w)).collect()
}

/// Does `text` set its first word `word` off from what follows: a remark in brackets, after a
/// dash, a comma, a colon, a semicolon or a `#`, a closing quote (`argocd"}, ...`), or the word
/// alone?
fn set_off(text: &str, word: &str) -> bool {
    let Some(at) = text.find(word) else {
        return false;
    };
    let rest = text[at + word.len()..].trim_start();
    rest.is_empty()
        || rest.starts_with(['(', '[', ',', ':', ';', '#', '"', '`', '—', '–'])
        || rest.starts_with("- ")
}

/// A word with a separator or a digit inside (`argocd-system`, `v0.6.0`) names something.
fn looks_like_name(w: &str) -> bool {
    w.chars().any(|c| c.is_ascii_digit() || "-._/".contains(c))
}

/// The words of a text: runs of letters, digits and `-._/:+%` (the characters of names,
/// versions, paths and percentages: `"50%"` is never the word `50`), without the punctuation
/// around them.
fn words(s: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for raw in s.split(|c: char| !(c.is_alphanumeric() || "-._/:+%".contains(c))) {
        // A mark that starts a name is part of it (`.shop.example.com`, a domain and its
        // subdomains, is not `shop.example.com`); other marks around a word are not.
        let w = raw.trim_end_matches(|c: char| ".:/-_+".contains(c));
        let w = match w.trim_start_matches(|c: char| ":/+".contains(c)) {
            marked if marked.starts_with(crate::text::NAME_MARKS) && marked.len() > 1 => marked,
            w => w.trim_start_matches(|c: char| ".:/-_+".contains(c)),
        };
        if !w.is_empty() && w != "%" && !out.iter().any(|o| o == w) {
            out.push(w.to_string());
        }
    }
    out
}

/// A comparison written with words around it (`">= 1.2 AND < 2"`, `"1.4 or any later patch"`)
/// rejoined from its own operators and numbers: `">=1.2, <2"`, `">=1.2 <2"`; `"1.4"` for a
/// lone number.
fn operator_ranges(s: &str) -> Option<Vec<Value>> {
    let mut parts: Vec<String> = Vec::new();
    let mut pending: Option<String> = None;
    let chars: Vec<char> = s.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if "<>=!~^".contains(c) {
            let mut op = String::new();
            while i < chars.len() && "<>=!~^".contains(chars[i]) {
                op.push(chars[i]);
                i += 1;
            }
            // `->`, `=>` are arrows ("from 1.13.3 -> to 1.14.5"), not comparisons.
            let arrow =
                op.starts_with('>') && i > op.len() && "-=".contains(chars[i - op.len() - 1]);
            pending = (!arrow && op != "=>").then_some(op);
            continue;
        }
        let starts_number =
            c.is_ascii_digit() || (c == 'v' && chars.get(i + 1).is_some_and(char::is_ascii_digit));
        // A number starts a word: glued to one (`PAY-1432`, `web_2`) it is part of a name
        // (after a number, `1.2-1.3`, the dash is a range's).
        let glued = i > 0
            && (chars[i - 1].is_alphanumeric()
                || ("-_".contains(chars[i - 1]) && i >= 2 && chars[i - 2].is_alphabetic()));
        if starts_number && !glued {
            let mut n = String::new();
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '.') {
                n.push(chars[i]);
                i += 1;
            }
            // A percentage is no version or bound.
            if chars.get(i) == Some(&'%') {
                return None;
            }
            let n = n.trim_end_matches('.').to_string();
            parts.push(format!("{}{n}", pending.take().unwrap_or_default()));
            continue;
        }
        i += 1;
    }
    if parts.is_empty() || parts.len() > 4 {
        return None;
    }
    // Comparisons joined mean all of them (`>=1.2, <2`); two bare versions joined would mean
    // "both at once" (`"1.14.x/1.15.x"`, `"[0.38.0,0.40.0)"`, `"1.13.3 -> 1.14.5"`): no reading.
    let compares = |p: &String| p.starts_with(|c: char| "<>=!~^".contains(c));
    if parts.len() > 1 && !parts.iter().all(compares) {
        return None;
    }
    let mut out = vec![Value::from(parts.join(", "))];
    if parts.len() > 1 {
        out.push(Value::from(parts.join(" ")));
    }
    Some(out)
}

/// `"argocd-operator@v0.6.0"` at `p`: the first part stays, the second goes to an absent
/// sibling string property (`version`).
fn split_to_sibling(sources: &Sources, p: &str, value: &Value) -> Vec<Resolution> {
    let Value::String(s) = value else {
        return Vec::new();
    };
    let Some((parent, _)) = pointer::split_last(p) else {
        return Vec::new();
    };
    let Some(parent_node) = schema::node_at(sources.schema, parent) else {
        return Vec::new();
    };
    let Some(properties) = parent_node.get("properties").and_then(Value::as_object) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    // `s3://bucket/some/prefix`: the host, and the path for a sibling.
    let unschemed = s.split_once("://").map_or(s.as_str(), |(_, rest)| rest);
    let mut splits: Vec<(&str, &str)> = Vec::new();
    if unschemed.len() < s.len() {
        splits.push(unschemed.split_once('/').unwrap_or((unschemed, "")));
    }
    for sep in ['@', '/', ':', ' '] {
        if let Some(split) = s.split_once(sep) {
            splits.push(split);
        }
    }
    for (head, tail) in splits {
        let (head, tail) = (head.trim(), tail.trim().trim_matches('/'));
        if !head.is_empty() && tail.is_empty() {
            out.push(vec![Edit::Set(p.to_string(), Value::from(head))]);
            continue;
        }
        // A part is one value: a part with blanks in it is the rest of a sentence
        // (`"ISRG Root X1  # short chain only"` is not `ISRG` and a `profile` of the rest).
        if head.is_empty() || tail.is_empty() || tail.contains(char::is_whitespace) {
            continue;
        }
        // The part goes only to a field whose schema takes it, and only when exactly one
        // absent field does (docs/repair.md, "Meaning kept"): `web:8080` puts 8080 into the
        // integer port, never into another string field that would take any text.
        let names = properties.keys().map(String::as_str);
        if let Some((sibling, part)) =
            one_absent_taker(sources, parent, p, names, |child| typed_part(tail, child))
        {
            out.push(vec![
                Edit::Set(p.to_string(), Value::from(head)),
                Edit::Set(sibling, part),
            ]);
        }
    }
    out
}

/// A command line pasted where a value belongs: the value of the flag named like the field,
/// and each other flag's value in the absent field beside it that the flag names and whose
/// schema takes it (`--partitions 6` → `partitions: 6`); with those first, then alone.
fn command_line(sources: &Sources, p: &str, value: &Value, node: &Value) -> Vec<Resolution> {
    let Some(text) = value.as_str() else {
        return Vec::new();
    };
    let argument =
        || crate::certainty::command_argument(text, |a| crate::certainty::takes_word(node, a));
    let Some(own) = crate::certainty::flag_value(text, p)
        .or_else(argument)
        .and_then(|v| flag_part(v, node))
    else {
        return Vec::new();
    };
    let alone = vec![Edit::Set(p.to_string(), own)];
    let properties = pointer::split_last(p)
        .and_then(|(parent, _)| Some((parent, schema::node_at(sources.schema, parent)?)))
        .and_then(|(parent, n)| Some((parent, n.get("properties")?.as_object()?)));
    let mut with_siblings = alone.clone();
    if let Some((parent, properties)) = properties {
        for (flag, flag_value) in crate::certainty::flags(text) {
            let absent = properties.iter().filter(|(name, _)| {
                let sibling = pointer::push(parent, name);
                sibling != p && sources.given.pointer(&sibling).is_none()
            });
            let Some((name, child)) = named_by_flag(&flag, absent) else {
                continue;
            };
            // A flag alone (`--pass-credentials`) turns its boolean on.
            let v = match flag_value {
                Some(flag_value) => flag_part(flag_value, child),
                None => (schema::type_of(child) == "boolean").then_some(Value::Bool(true)),
            };
            if let Some(v) = v.filter(|v| crate::certainty::accepts(child, v)) {
                with_siblings.push(Edit::Set(pointer::push(parent, name), v));
            }
        }
    }
    if with_siblings.len() > alone.len() {
        vec![with_siblings, alone]
    } else {
        vec![alone]
    }
}

/// A command line pasted where an object belongs (`kubectl set resources`'s `"--limits=cpu=2,
/// memory=4Gi --requests=cpu=1"` for `resources`): each flag named like one of the object's
/// properties gives that property's value, read by its schema (a map from `key=value` pairs).
/// A flag given once per item names a list (`--tag ssd --tag az:use1-az2` for `tags`): its
/// values are the items, in order. All or nothing: a named property whose value its schema
/// does not take, or a flag given twice for one value, makes no reading.
fn flags_object(text: &str, node: &Value) -> Option<Value> {
    let properties = node.get("properties")?.as_object()?;
    let mut object = Map::new();
    for (flag, value) in crate::certainty::flags(text) {
        let Some((name, child)) = named_by_flag(&flag, properties.iter()) else {
            continue;
        };
        if schema::type_of(child) == "array" {
            let items = flag_part(value?, child)?;
            let list = object
                .entry(name.clone())
                .or_insert_with(|| Value::Array(Vec::new()));
            list.as_array_mut()?
                .extend(items.as_array()?.iter().cloned());
            continue;
        }
        let value = value
            .and_then(|v| typed_part(v, child).or_else(|| pairs_map(v, child)))
            .filter(|v| crate::certainty::accepts(child, v))?;
        if object.insert(name.clone(), value).is_some() {
            return None;
        }
    }
    let taken = object.iter().all(|(name, v)| {
        properties
            .get(name)
            .is_some_and(|c| crate::certainty::accepts(c, v))
    });
    (!object.is_empty() && taken).then_some(Value::Object(object))
}

/// A command line's flags where a free map of texts belongs (`rayStartParams: "--num-cpus=0
/// --dashboard-host=0.0.0.0"`): each flag's name without its dashes, as written, is a key, its
/// value the text. Only text that is nothing but long flags, each with its value after `=`
/// ([`command_arguments`]); one flag alone is syntax around its value ([`flag_values`]).
fn flags_map(text: &str, node: &Value) -> Option<Value> {
    if node.get("properties").is_some() {
        return None;
    }
    let values = node.get("additionalProperties").filter(|a| a.is_object())?;
    if flag_values([text]).is_some() {
        return None;
    }
    command_arguments(text)?;
    let mut map = Map::new();
    for word in text.split_whitespace() {
        // A long flag names a parameter; a short one (`-l`) is an option's abbreviation. Its
        // value is glued with `=`: `--verbose start` may be a switch and an argument.
        let (name, value) = word.strip_prefix("--")?.split_once('=')?;
        if name.is_empty() || value.starts_with('-') || map.contains_key(name) {
            return None;
        }
        map.insert(name.to_string(), typed_part(value, values)?);
    }
    Some(Value::Object(map))
}

/// The one of `properties` that the flag `flag` names, when exactly one does.
fn named_by_flag<'a>(
    flag: &str,
    properties: impl Iterator<Item = (&'a String, &'a Value)>,
) -> Option<(&'a String, &'a Value)> {
    let mut named = properties.filter(|(name, _)| crate::certainty::names_field(flag, name));
    match (named.next(), named.next()) {
        (Some(one), None) => Some(one),
        _ => None,
    }
}

/// `key=value,key=value` as the map `node` is (its `additionalProperties`), each value read
/// by the map's value schema.
fn pairs_map(text: &str, node: &Value) -> Option<Value> {
    let values = node.get("additionalProperties").filter(|a| a.is_object())?;
    let mut map = Map::new();
    for (k, v) in key_value_pairs(text)? {
        map.insert(k, typed_part(&v, values)?);
    }
    Some(Value::Object(map))
}

/// The `key=value` pairs of `a=b,c=d` (`key==value` too, and in braces), each value as its syntax reads it
/// ([`unquoted`]) and each key as Helm's `--set` writes one (a backslash escapes the character
/// after it: `service\.beta\.kubernetes\.io/scheme` is `service.beta.kubernetes.io/scheme`;
/// no key of Kubernetes' holds a backslash); `None` when a part is no pair, a key comes twice,
/// or an `=` ends an operator (`tier!=cache` is a comparison, not a pair).
fn key_value_pairs(s: &str) -> Option<Vec<(String, String)>> {
    // Braces around the pairs are the set's own syntax (a PromQL label set,
    // `{cluster="prod", region="eu"}`).
    let s = s
        .trim()
        .strip_prefix('{')
        .and_then(|inner| inner.strip_suffix('}'))
        .unwrap_or(s);
    let mut pairs: Vec<(String, String)> = Vec::new();
    for part in crate::repair::coerce::split_outside_quotes(s, |c| c == ',') {
        let (k, v) = part.split_once('=')?;
        let (k, v) = (k.trim(), v.trim().trim_start_matches('='));
        // A key is no command-line flag (`--system-reserved=cpu=1` is the flag's value), and
        // one word: blanks, quotes or braces in it mean the text is cut elsewhere than between
        // pairs.
        if k.is_empty()
            || k.starts_with('-')
            || k.ends_with(crate::certainty::OPERATOR_STARTS)
            || k.contains(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '{' | '}'))
            // A key that ends in a backslash was cut at an escaped `=`.
            || k.ends_with('\\')
        {
            return None;
        }
        let k = unescaped(k);
        if pairs.iter().any(|(seen, _)| *seen == k) {
            return None;
        }
        // Helm's `--set` escapes a comma inside a value (`topics=a\\,b`).
        let v = unquoted(v).replace("\\,", ",");
        // A quote left in the value is syntax the cut did not read (`true b="x` of
        // `a=true b="x,y"`).
        if v.contains('"') {
            return None;
        }
        pairs.push((k, v));
    }
    Some(pairs)
}

/// `s` with each backslash that escapes a character removed (`a\.b` → `a.b`, `a\\b` → `a\b`).
fn unescaped(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => out.extend(chars.next()),
            c => out.push(c),
        }
    }
    out
}

/// `text` as a value of the schema node's type, when it is one.
/// Two settings in one text, one clause each (`replicas: "2 per shard, 3 shards"`): the clause
/// that names an unset field beside this one with a value it takes, before or after the name
/// (`3 shards`, `shards 3`), goes there, and the other clause is this field's, when it reads
/// as exactly one value the field takes (`2`).
fn clause_for_sibling(sources: &Sources, p: &str, v: &Value, node: &Value) -> Vec<Resolution> {
    let Some(text) = v.as_str() else {
        return Vec::new();
    };
    let mut clauses: Vec<&str> =
        crate::repair::coerce::split_outside_quotes(text, |c| c == ',' || c == ';')
            .into_iter()
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .collect();
    // A part counted within the whole (`"32 characters incl. 4 digits"`) is a clause too.
    if clauses.len() == 1 {
        if let Some((whole, part)) = [" incl. ", " including ", " incl "]
            .iter()
            .find_map(|word| text.split_once(word))
        {
            clauses = vec![whole.trim(), part.trim()];
        }
    }
    let [a, b] = clauses.as_slice() else {
        return Vec::new();
    };
    let old = sources.old_object.and_then(|o| o.pointer(p));
    let mut out = Vec::new();
    for (own, other) in [(a, b), (b, a)] {
        let Some((to, value)) =
            crate::certainty::names_sibling(sources.schema, sources.given, p, other)
        else {
            continue;
        };
        let own_values: Vec<Value> = rewrites_over(&Value::from(*own), node, old)
            .into_iter()
            .filter(|x| crate::certainty::accepts(node, x))
            .collect();
        if let [only] = own_values.as_slice() {
            out.push(vec![
                Edit::Set(p.to_string(), only.clone()),
                Edit::Set(to, value),
            ]);
        }
    }
    out
}

/// Is `switch` the switch beside `field` that the user's `said` turns on instead of a value:
/// for an absence (`none`, `disabled`), the off switch, named by one negating word and words of
/// the field's name (`disablePolling` for `pollingInterval: "none - webhook only"`); for all of
/// them (`*`, `all`), the switch named by `all` and the field's name in the plural
/// (`includeAllKeys` for `key: "*"`).
pub(super) fn is_switch_for(switch: &str, field: &str, said: &str) -> bool {
    let own = crate::certainty::words_of_name(field);
    let words = crate::certainty::words_of_name(switch);
    if super::readings::states_absence(said, true) {
        let (negating, rest): (Vec<&String>, Vec<&String>) = words
            .iter()
            .partition(|w| crate::certainty::name_negates(w));
        return negating.len() == 1 && !rest.is_empty() && rest.iter().all(|w| own.contains(w));
    }
    let all = matches!(
        crate::certainty::without_remarks(said)
            .trim()
            .to_lowercase()
            .as_str(),
        "*" | "all" | "all of them" | "every one"
    );
    let plural = own.last().map(|w| format!("{w}s"));
    all && words.iter().any(|w| w == "all") && plural.is_some_and(|p| words.contains(&p))
}

/// A value the user wrote where a switch beside the field says it instead ([`is_switch_for`]):
/// the switch on, the field removed. Only where exactly one such switch is declared, a boolean,
/// and the object does not turn it off.
fn switch_beside(sources: &Sources, p: &str, v: &Value) -> Option<Resolution> {
    let text = v.as_str()?;
    let (parent, name) = pointer::split_last(p)?;
    let properties = schema::node_at(sources.schema, parent)?
        .get("properties")?
        .as_object()?;
    let mut switches = properties.iter().filter(|(other, node)| {
        schema::type_of(node) == "boolean" && is_switch_for(other, &name, text)
    });
    let (switch, _) = switches.next().filter(|_| switches.next().is_none())?;
    let at = pointer::push(parent, switch);
    let unset = matches!(sources.given.pointer(&at), None | Some(Value::Bool(true)));
    unset.then(|| {
        vec![
            Edit::Remove(p.to_string()),
            Edit::Set(at, Value::Bool(true)),
        ]
    })
}

/// Does the entry say it is the list's only one: `only`, `dedicated`, `exclusively`, `solely`?
fn says_it_is_the_only_one(v: &Value) -> bool {
    const ONLY: [&str; 4] = ["only", "dedicated", "exclusively", "solely"];
    v.as_str().is_some_and(|s| {
        words(s)
            .iter()
            .any(|w| ONLY.contains(&w.to_lowercase().as_str()))
    })
}

/// A flag's value read by the field's schema: [`typed_part`], or for a list its items joined
/// by commas, as command lines write them (`--enable-feature=a,b`).
fn flag_part(text: &str, node: &Value) -> Option<Value> {
    if schema::type_of(node) != "array" {
        return typed_part(text, node);
    }
    let items = node.get("items")?;
    let separator = crate::repair::coerce::item_separator(text);
    crate::repair::coerce::split_outside_quotes(text, |c| Some(c) == separator)
        .into_iter()
        .map(str::trim)
        .map(|item| typed_part(item, items).filter(|_| !item.is_empty()))
        .collect::<Option<Vec<Value>>>()
        .map(Value::Array)
}

fn typed_part(text: &str, node: &Value) -> Option<Value> {
    match schema::type_of(node) {
        // An allowed value in another case is that value (`tcp` for `TCP`).
        "string" => Some(Value::from(
            node.get("enum")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .find(|a| a.eq_ignore_ascii_case(text))
                .unwrap_or(text),
        )),
        "object" => pairs_map(text, node),
        "integer" => text.parse::<i64>().ok().map(Value::from),
        "number" => text.parse::<f64>().ok().and_then(number_value),
        "" if schema::is_int_or_string(node) => Some(
            text.parse::<i64>()
                .map_or_else(|_| Value::from(text), Value::from),
        ),
        _ => None,
    }
}

/// Values for a missing value at `p`, from the user's own text: fields of the same name
/// elsewhere (and their words), the old object's value, labels and annotations (and their
/// words), the object's name.
fn fill_values(sources: &Sources, p: &str, node: &Value, depth: usize) -> Vec<Value> {
    match schema::type_of(node) {
        "object" if depth < 2 => fill_object(sources, p, node, depth),
        "string" | "" => fill_string(sources, p),
        _ => Vec::new(),
    }
}

/// A missing object: its (at most two) required children, each filled; one candidate per
/// combination of their first values.
fn fill_object(sources: &Sources, p: &str, node: &Value, depth: usize) -> Vec<Value> {
    let required: Vec<&str> = schema::required(node).collect();
    if required.is_empty() || required.len() > 2 {
        return Vec::new();
    }
    let mut out: Vec<Value> = vec![Value::Object(Map::new())];
    for r in required {
        let Some(child) = schema::child(node, r) else {
            return Vec::new();
        };
        let values = fill_values(sources, &pointer::push(p, r), child, depth + 1);
        let mut next = Vec::new();
        for base in &out {
            for v in values.iter().take(4) {
                let mut o = base.clone();
                if let Some(map) = o.as_object_mut() {
                    map.insert(r.to_string(), v.clone());
                }
                next.push(o);
            }
        }
        out = next;
    }
    out
}

/// A missing amount stated in a sentence of the object's annotations about the field
/// ([`readings::described_amount`]), in each spelling the field takes.
fn described_amounts(sources: &Sources, p: &str, node: &Value) -> Vec<Resolution> {
    let description = node
        .get("description")
        .and_then(Value::as_str)
        .unwrap_or_default();
    super::readings::described_amount(sources.given, description)
        .map(|sentence| super::readings::amount_spellings(&sentence))
        .unwrap_or_default()
        .into_iter()
        .map(Value::from)
        .filter(|v| crate::certainty::accepts(node, v))
        .map(|v| vec![Edit::Set(p.to_string(), v)])
        .collect()
}

/// A missing string: what the user wrote for this field — the old object's value, a field of
/// a similar name, a label or annotation whose key names it — whole, then its named words;
/// then the words next to a mention of the field in a label or annotation (`"Deploys Argo CD
/// into the argocd-system namespace."` for `namespace`). Never a text that says nothing
/// about the field: an unrelated label or the object's name would be a guess.
fn fill_string(sources: &Sources, p: &str) -> Vec<Value> {
    let (about, mentioned) = texts_about(sources, p);
    let bounded = |t: &&String| t.chars().count() <= MAX_SPLIT_CHARS;
    let about: Vec<&String> = about.iter().filter(bounded).collect();
    let words: Vec<String> = about.iter().flat_map(|t| named_words(t)).collect();
    let (named, plain): (Vec<&String>, Vec<&String>) =
        words.iter().partition(|w| looks_like_name(w));
    let ordered = about
        .into_iter()
        .chain(named)
        .chain(mentioned.iter())
        .chain(plain)
        .map(String::as_str);
    let mut unique: Vec<Value> = Vec::new();
    for text in ordered {
        let v = Value::from(text);
        if !text.trim().is_empty() && !unique.contains(&v) {
            unique.push(v);
        }
    }
    unique.truncate(MAX_OPTIONS_PER_ERROR * 2);
    unique
}

/// What the user wrote about the field at `p` (see [`fill_string`]): the texts about it, and
/// the words next to a mention of it elsewhere. The only evidence for a value the object did
/// not have there (the evidence check asks the same of the model's own answers).
pub(super) fn texts_about(sources: &Sources, p: &str) -> (Vec<String>, Vec<String>) {
    let field = pointer::split_last(p).map(|(_, n)| n).unwrap_or_default();
    let (about, others) = source_texts(sources, p);
    // Near a mention of `name` or `key` could be any name or key: only a specific field name
    // says what the words next to it are about.
    let mentioned: Vec<String> = if generic(&field) {
        Vec::new()
    } else {
        others
            .iter()
            .filter(|t| t.chars().count() <= MAX_SPLIT_CHARS)
            .flat_map(|t| words_near_a_mention(t, &field))
            .collect()
    };
    (about, mentioned)
}

/// How many words either side of a mention of a field may be its value.
const MENTION_WINDOW: usize = 3;

/// The words of `text` close to a mention of `field` (its name, or its first word of four
/// letters or more: `package` for `packageName`), those that look like names first.
fn words_near_a_mention(text: &str, field: &str) -> Vec<String> {
    let all = words(text);
    let whole = crate::nearest::canonical(field);
    let first: String = field
        .chars()
        .take_while(|c| !c.is_uppercase())
        .collect::<String>()
        .to_lowercase();
    let mentions = |w: &str| {
        let c = crate::nearest::canonical(w);
        c == whole || format!("{whole}s") == c || (first.len() >= 4 && c == first)
    };
    let mut near: Vec<String> = Vec::new();
    for (i, w) in all.iter().enumerate() {
        if !mentions(w) {
            continue;
        }
        let window = all[i.saturating_sub(MENTION_WINDOW)..(i + MENTION_WINDOW + 1).min(all.len())]
            .iter()
            .filter(|x| !mentions(x) && !FUNCTION_WORDS.contains(&x.to_lowercase().as_str()));
        for x in window {
            if !near.contains(x) {
                near.push(x.clone());
            }
        }
    }
    near.sort_by_key(|w| !looks_like_name(w));
    near
}

/// The texts a missing value at `p` may come from: those about this field (the old object's
/// value there, fields of a similar name elsewhere, labels and annotations whose key names
/// it), and the other label and annotation values (crfix's own annotation excepted).
fn source_texts(sources: &Sources, p: &str) -> (Vec<String>, Vec<String>) {
    let name = pointer::split_last(p).map(|(_, n)| n).unwrap_or_default();
    let mut about: Vec<String> = Vec::new();
    let mut others: Vec<String> = Vec::new();
    if let Some(old) = sources
        .old_object
        .and_then(|o| o.pointer(p))
        .and_then(Value::as_str)
    {
        about.push(old.to_string());
    }
    // A name the schema gives to fields of several objects (`email` of an ACME account and of
    // a DNS provider's account) says what a value is about only with its parent.
    let reused = reused_name(sources.schema, &name);
    for (at, text) in strings(sources.given, "") {
        if at != p && same_field(&at, p, reused) {
            about.push(text.to_string());
        }
    }
    for key in ["labels", "annotations"] {
        let Some(map) = sources
            .given
            .get("metadata")
            .and_then(|m| m.get(key))
            .and_then(Value::as_object)
        else {
            continue;
        };
        for (k, v) in map {
            let Some(v) = v.as_str() else { continue };
            if k == crate::guardrails::REPAIR_ANNOTATION {
                continue;
            }
            // `app.kubernetes.io/name` names a `packageName`; `team` names nothing here.
            let last = k.rsplit(['/', '.']).next().unwrap_or(k);
            if !generic(&name) && similar_name(last, &name) {
                about.push(v.to_string());
            } else {
                others.push(v.to_string());
            }
        }
    }
    (about, others)
}

/// A field name too common to say what it names alone (`name`, `key`, `type`).
fn generic(name: &str) -> bool {
    crate::nearest::canonical(name).chars().count() < 5
}

/// Do pointers `a` and `b` name the same kind of field: similar names, and for a generic
/// name, one the schema `reused` for several objects, or an `a` that qualifies `b`'s name with
/// more words, similar parents too (`secretRef/name` is not `serviceAccount/name`, `acme/email`
/// not `cloudflare/email`, `spec/nodeStartupTimeout` not `unhealthyConditions/0/timeout`)?
fn same_field(a: &str, b: &str, reused: bool) -> bool {
    let (Some((pa, na)), Some((pb, nb))) = (pointer::split_last(a), pointer::split_last(b)) else {
        return false;
    };
    if !similar_name(&na, &nb) {
        return false;
    }
    // A field whose name qualifies the missing one's with more words (`nodeStartupTimeout` for
    // a condition's `timeout`) is about a narrower thing: the same only beside a similar parent.
    // A label key's name is its last segment (`cluster.x-k8s.io/cluster-name`).
    let canonical = |n: &str| {
        let last = n.rsplit(['/', '.']).next().unwrap_or(n);
        crate::nearest::canonical(last).chars().count()
    };
    let qualified = canonical(&na) > canonical(&nb) + 1;
    if !generic(&nb) && !reused && !qualified {
        return true;
    }
    let parent = |p: &str| pointer::split_last(p).map(|(_, n)| n).unwrap_or_default();
    let (a, b) = (parent(pa), parent(pb));
    !a.is_empty() && similar_name(&a, &b)
}

/// Does the schema declare a property `name` in objects under two or more differently named
/// parents? Bounded walk; list items count under the list's name.
fn reused_name(schema: &Value, name: &str) -> bool {
    let mut parents: Vec<&str> = Vec::new();
    let mut stack: Vec<(&str, &Value, usize)> = vec![("", schema, 0)];
    let mut visited = 0;
    while let Some((parent, node, depth)) = stack.pop() {
        visited += 1;
        if depth > MAX_SCHEMA_DEPTH * 2 || visited > MAX_SCHEMA_NODES {
            break;
        }
        if let Some(properties) = node.get("properties").and_then(Value::as_object) {
            if properties.contains_key(name) && !parents.contains(&parent) {
                parents.push(parent);
                if parents.len() > 1 {
                    return true;
                }
            }
            for (key, child) in properties {
                stack.push((key, child, depth + 1));
            }
        }
        for key in ["items", "additionalProperties"] {
            if let Some(child) = node.get(key).filter(|c| c.is_object()) {
                stack.push((parent, child, depth + 1));
            }
        }
    }
    false
}

/// Every string leaf of the object's spec-like part (not metadata), with its pointer.
fn strings<'v>(v: &'v Value, at: &str) -> Vec<(String, &'v str)> {
    let mut out = Vec::new();
    let mut stack = vec![(at.to_string(), v, 0usize)];
    while let Some((p, v, depth)) = stack.pop() {
        if depth > MAX_SCHEMA_DEPTH * 2 || out.len() > 256 {
            break;
        }
        match v {
            Value::Object(map) => {
                for (k, c) in map {
                    if depth == 0 && (k == "metadata" || k == "apiVersion" || k == "kind") {
                        continue;
                    }
                    stack.push((pointer::push(&p, k), c, depth + 1));
                }
            }
            Value::String(s) => out.push((p, s.as_str())),
            _ => {}
        }
    }
    out.sort();
    out
}

/// An unknown field: removed, or moved to an absent property of a similar name elsewhere in
/// the schema (wrapped in a list when that property is one), with its words as values too.
fn relocations(
    sources: &Sources,
    p: &str,
    value: &Value,
    errors: &[FieldError],
) -> Vec<Resolution> {
    let name = pointer::split_last(p).map(|(_, n)| n).unwrap_or_default();
    let mut out: Vec<Resolution> = Vec::new();
    let targets = relocation_targets(sources, p, &name, errors);
    // Targets whose schema takes one of the values offered for them.
    for (target, node) in targets {
        let remove = Edit::Remove(p.to_string());
        let values = values_moved_to(value, node);
        for v in values {
            let v = match (schema::type_of(node), &v) {
                ("array", Value::Array(_)) => v,
                // One item where a list of them belongs (`destination: {…}` for
                // `destinations`): no separator to split at, so no other reading.
                ("array", Value::Object(_)) => Value::Array(vec![v]),
                (_, Value::Object(_)) => v,
                ("array", _) => Value::Array(vec![v]),
                (_, Value::Array(_)) => continue,
                _ => v,
            };
            out.push(vec![remove.clone(), Edit::Set(target.clone(), v)]);
        }
    }
    // Fields one level too high go first: the place beside them that declares them all says
    // more than a field of a similar name anywhere in the schema.
    if let Some(home) = into_the_field_that_declares_them(sources, p) {
        out.insert(0, home);
    }
    // A truth value under the name of a declared field's opposite is that field, negated;
    // the same value moved there unchanged would state the opposite.
    if let Some((twin, negated)) = negated_twin(sources, p, value) {
        out.retain(|r| {
            !r.iter()
                .any(|e| matches!(e, Edit::Set(to, _) if *to == twin))
        });
        out.insert(
            0,
            vec![Edit::Remove(p.to_string()), Edit::Set(twin, negated)],
        );
    }
    out.extend(api_version_of_parts(sources, p));
    out.extend(dotted_key(sources, p, value));
    out.extend(amount_in_named_unit(sources, p, value));
    // Another name for the one absent required field beside it (`schedule` for a cron,
    // `port` for a port's `number`, a CronJob's `jobTemplate` for a Job's spec), when only
    // that field's schema takes the value; after any field of a similar name that does.
    if let Some((to, taken)) = required_taker(sources, p, value) {
        out.push(vec![Edit::Remove(p.to_string()), Edit::Set(to, taken)]);
    }
    if let Some(unwrap) = unwrapped(sources, p, value) {
        out.insert(0, unwrap);
    }
    if let Some(swap) = swapped_levels(sources, p, value) {
        out.insert(0, swap);
    }

    if out.is_empty() {
        out.extend(into_the_map_beside(sources, p, value));
    }
    // A value that has a place elsewhere is moved there, never only dropped: dropping it
    // would lose what the user said (a channel, a version).
    if out.is_empty() {
        out.push(vec![Edit::Remove(p.to_string())]);
    }
    out.truncate(MAX_OPTIONS_PER_ERROR);
    out
}

/// The unset fields of the schema with a name similar to `name` (`p` left out), first where the
/// object lacks one the schema requires, then those of the same name.
fn relocation_targets<'s>(
    sources: &Sources<'s>,
    p: &str,
    name: &str,
    errors: &[FieldError],
) -> Vec<(String, &'s Value)> {
    let mut targets: Vec<(String, &Value)> = Vec::new();
    schema_properties(sources.schema, "", 0, &mut |at, node| {
        let leaf = pointer::split_last(at).map(|(_, n)| n).unwrap_or_default();
        if at != p && similar_name(name, &leaf) && sources.given.pointer(at).is_none() {
            targets.push((at.to_string(), node));
        }
    });
    // A value moved goes first where the object lacks one the schema requires.
    let required_missing = |at: &str| {
        errors
            .iter()
            .any(|e| e.pointer == at && matches!(e.kind, ErrorKind::Required))
    };
    // Then a field of the same name before one of a similar name (`backendRefs` before the
    // deprecated `backendRef`).
    let same_name = |at: &str| pointer::split_last(at).is_some_and(|(_, leaf)| leaf == name);
    targets.sort_by_key(|(at, _)| (!required_missing(at), !same_name(at)));
    targets
}

/// The values `value` may take where it moves to a field of schema `node`: as written, its
/// one item, its keys renamed to the node's, its pairs in the node's map, and its rewrites.
fn values_moved_to(value: &Value, node: &Value) -> Vec<Value> {
    let mut values = vec![value.clone()];
    // The one item of a list where one value belongs (`accessModes: [ReadWriteOncePod]`
    // for `accessMode`): the item, and its readings there.
    if let (Some([item]), false) = (
        value.as_array().map(Vec::as_slice),
        schema::type_of(node) == "array",
    ) {
        values.push(item.clone());
        values.extend(rewrites(item, node));
    }
    values.extend(with_similar_keys(value, node));
    values.extend(pairs_into_its_map(value, node));
    values.extend(rewrites(value, node));
    // The values its schema takes go first: the others only fit beside another edit.
    values.sort_by_key(|v| !crate::certainty::accepts(node, v));
    values
}

/// A wrapper from another API's shape (`authPassword: {secretKeyRef: {name, key}}`, as a
/// Pod's env var reads a Secret): an undeclared field whose fields are all declared, and
/// unset, where it stands. Its fields stay, one level up; the wrapper's name is structure,
/// and so is a chain of wrappers of one field each (`provider: {webhook: {url, …}}`, a
/// SecretStore's provider block where its generator takes the same fields directly).
fn unwrapped(sources: &Sources, p: &str, value: &Value) -> Option<Resolution> {
    let (parent, _) = pointer::split_last(p)?;
    let parent_node = schema::node_at(sources.schema, parent);
    let fits = |fields: &&Map<String, Value>| {
        !fields.is_empty()
            && fields.keys().all(|k| {
                parent_node.is_some_and(|n| schema::child(n, k).is_some())
                    && sources.given.pointer(&pointer::push(parent, k)).is_none()
            })
    };
    let fields = wrapped_levels(value).into_iter().find(fits)?;
    let mut unwrap = vec![Edit::Remove(p.to_string())];
    unwrap.extend(
        fields
            .iter()
            .map(|(k, v)| Edit::Set(pointer::push(parent, k), v.clone())),
    );
    Some(unwrap)
}

/// Two levels written the other way round (`ordering: {access: {before: [key-auth]}}` where
/// the schema nests phase inside direction, `{before: {access: [...]}}`): an undeclared key
/// whose fields are declared, and unset, where it stands, and each of whose fields declares
/// the key. Each field then holds the key, with what it held under it, as written.
fn swapped_levels(sources: &Sources, p: &str, value: &Value) -> Option<Resolution> {
    let (parent, key) = pointer::split_last(p)?;
    let parent_node = schema::node_at(sources.schema, parent)?;
    let fields = value.as_object().filter(|m| !m.is_empty())?;
    let mut edits = vec![Edit::Remove(p.to_string())];
    for (field, inner) in fields {
        let node = schema::child(parent_node, field)?;
        let at = pointer::push(parent, field);
        let takes_key = node
            .get("properties")
            .and_then(|props| props.get(&key))
            .or_else(|| node.get("additionalProperties").filter(|a| a.is_object()))?;
        if sources.given.pointer(&at).is_some() || !crate::certainty::accepts(takes_key, inner) {
            return None;
        }
        let mut swapped = Map::new();
        swapped.insert(key.clone(), inner.clone());
        edits.push(Edit::Set(at, Value::Object(swapped)));
    }
    Some(edits)
}

/// The fields a wrapper holds, outermost first: `value`'s own and, while the fields are one
/// field holding an object, that object's (at most three levels).
fn wrapped_levels(value: &Value) -> Vec<&Map<String, Value>> {
    let mut levels: Vec<&Map<String, Value>> = value.as_object().into_iter().collect();
    while let Some(&fields) = levels.last() {
        match fields.iter().next() {
            Some((_, Value::Object(inner))) if fields.len() == 1 && levels.len() < 3 => {
                levels.push(inner);
            }
            _ => break,
        }
    }
    levels
}

/// Pairs written one level too high (`ruleSelector: {role: alert-rules}` for a label
/// selector's `matchLabels`, as a Service's selector is written): where the object holds only
/// undeclared keys with text values and declares one map of texts, unset, the pair goes into
/// that map, its key and value as written.
fn into_the_map_beside(sources: &Sources, p: &str, value: &Value) -> Option<Resolution> {
    let (parent, key) = pointer::split_last(p)?;
    let node = schema::node_at(sources.schema, parent)?;
    let properties = node.get("properties")?.as_object()?;
    let given = sources.given.pointer(parent)?.as_object()?;
    let pairs_only = given
        .iter()
        .all(|(k, v)| !properties.contains_key(k) && v.is_string());
    if !value.is_string() || !pairs_only {
        return None;
    }
    let map = the_one_map_of_texts(properties)?;
    let to = pointer::push(&pointer::push(parent, map), &key);
    Some(vec![
        Edit::Remove(p.to_string()),
        Edit::Set(to, value.clone()),
    ])
}

/// Pairs of texts where an object belongs that declares one map of texts and none of their
/// keys (`selector: {app: orders}`, a Service's selector, moved to a label selector): the
/// pairs, as written, in that map (`matchLabels`).
fn pairs_into_its_map(value: &Value, node: &Value) -> Option<Value> {
    let pairs = value.as_object().filter(|m| !m.is_empty())?;
    let properties = node.get("properties")?.as_object()?;
    let texts_only = pairs
        .iter()
        .all(|(k, v)| v.is_string() && !properties.contains_key(k));
    let free_map = |child: &Value| {
        schema::type_of(child) == "object"
            && child.get("properties").is_none()
            && (child
                .get("additionalProperties")
                .is_some_and(|a| schema::type_of(a) == "string")
                || child.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true)))
    };
    let mut maps = properties.iter().filter(|(_, child)| free_map(child));
    let (Some((map, _)), None, true) = (maps.next(), maps.next(), texts_only) else {
        return None;
    };
    let mut object = Map::new();
    object.insert(map.clone(), value.clone());
    Some(Value::Object(object))
}

/// The one property of `properties` that is a map of texts (a selector's `matchLabels`).
fn the_one_map_of_texts(properties: &Map<String, Value>) -> Option<&String> {
    let string_map = |child: &Value| {
        schema::type_of(child) == "object"
            && child.get("properties").is_none()
            && child
                .get("additionalProperties")
                .is_some_and(|a| schema::type_of(a) == "string")
    };
    let mut maps = properties.iter().filter(|(_, child)| string_map(child));
    let (map, _) = maps.next()?;
    maps.next().is_none().then_some(map)
}

/// Pairs written where a list of objects belongs whose items declare one map of texts
/// (`namespaceSelectors: {team: payments}` for a list of label selectors): one item, the pairs
/// in its map, as written. None of the keys may be a property of the item.
fn pairs_as_one_item(value: &Value, node: &Value) -> Option<Value> {
    let pairs = value.as_object().filter(|m| !m.is_empty())?;
    let items = node
        .get("items")
        .filter(|_| schema::type_of(node) == "array")?;
    let properties = items.get("properties")?.as_object()?;
    let texts_only = pairs
        .iter()
        .all(|(k, v)| v.is_string() && !properties.contains_key(k));
    let map = the_one_map_of_texts(properties).filter(|_| texts_only)?;
    let mut item = Map::new();
    item.insert(map.clone(), value.clone());
    Some(Value::Array(vec![Value::Object(item)]))
}

/// A map where a list of objects belongs whose items pair a key with a value: one item per key,
/// the key in the item's key field and the value in its value field, as written. The fields are
/// the items' `name` and `value` (`httpHeaders: {Host: a, X-Probe: b}` for a probe's headers),
/// or, where the items require exactly two fields, the one way round in which they take every
/// key and value (`exceptions: {disallow-capabilities: [adding-capabilities]}` for items of a
/// `policyName` and a list of `ruleNames`). Where `{name, value}` items declare more (a
/// container's `env` and its `valueFrom`), a text with blanks may be meant as that reference
/// (`"from secret honeycomb, key api-key"`): only one-word texts and other scalars are values,
/// and an object whose every key is another field of the item is those fields
/// (`redisPassword: {secretKeyRef: {…}}` is `{name: redisPassword, secretKeyRef: {…}}`, never
/// a `value` that holds the reference); any other object makes no reading.
fn map_as_keyed_items(value: &Value, node: &Value) -> Option<Value> {
    let pairs = value.as_object().filter(|m| !m.is_empty())?;
    let items = node
        .get("items")
        .filter(|_| schema::type_of(node) == "array")?;
    let properties = items.get("properties")?.as_object()?;
    // A key that is a field of the items names that field, not a pair: `{ref: a-binding,
    // revision: …}` holds an item's `ref` beside a parameter, and `{name: ref, value:
    // a-binding}` would pass a parameter called `ref` and drop the reference.
    if pairs.keys().any(|k| properties.contains_key(k)) {
        return None;
    }
    let list_with = |key_field: &str, value_field: &str| {
        pairs
            .iter()
            .map(|(k, v)| keyed_item(properties, key_field, value_field, k, v))
            .collect::<Option<Vec<Value>>>()
    };
    if let Some(list) = objects_keyed_by_field(pairs, node, items, properties) {
        return Some(list);
    }
    let named = properties
        .get("name")
        .filter(|n| schema::type_of(n) == "string" && properties.contains_key("value"))
        .and_then(|_| list_with("name", "value"));
    if let Some(list) = named {
        return Some(Value::Array(list));
    }
    let required: Vec<&str> = items
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if let [a, b] = required.as_slice() {
        let mut ways = [(*a, *b), (*b, *a)]
            .into_iter()
            .filter_map(|(k, v)| list_with(k, v));
        return match (ways.next(), ways.next()) {
            (Some(list), None) => Some(Value::Array(list)),
            _ => None,
        };
    }
    enum_keyed_items(pairs, properties)
}

/// The item the map entry `k: v` makes with the items' key field `key_field` and value field
/// `value_field` (see [`map_as_keyed_items`]).
fn keyed_item(
    properties: &Map<String, Value>,
    key_field: &str,
    value_field: &str,
    k: &str,
    v: &Value,
) -> Option<Value> {
    let key_node = properties.get(key_field)?;
    let value_node = properties.get(value_field)?;
    if !crate::certainty::accepts(key_node, &Value::from(k)) {
        return None;
    }
    let mut item = Map::new();
    item.insert(key_field.to_string(), Value::from(k));
    let paired = properties.len() == 2;
    match v {
        Value::Object(fields) if !paired => {
            let others = !fields.is_empty()
                && fields
                    .keys()
                    .all(|f| f != key_field && f != value_field && properties.contains_key(f));
            if !others {
                return None;
            }
            item.extend(fields.clone());
        }
        Value::Array(_) if !paired && key_field == "name" => return None,
        Value::String(text) if !paired && text.contains(char::is_whitespace) => return None,
        _ => {
            // A whole number or a truth value where text belongs is that text, as a rule
            // repair writes it (an env var's `4096`).
            let taken = if crate::certainty::accepts(value_node, v) {
                v.clone()
            } else {
                crate::repair::coerce::coerce(v, schema::type_of(value_node))
                    .filter(|_| v.is_number() || v.is_boolean())
                    .filter(|c| crate::certainty::accepts(value_node, c))?
            };
            item.insert(value_field.to_string(), taken);
        }
    }
    Some(Value::Object(item))
}

/// A map of objects where a list of objects belongs, keyed by the one field the objects lack
/// (`{Ready: {status: Unknown, timeout: 5m}, …}` for node conditions of `type`, `status` and
/// `timeout`, as a list-map is often written): one item per key, the key in that field beside
/// the fields it held, as written. The field is the list's one map key, else the one required
/// field of the items that no object holds; every object holds only fields the items declare,
/// and the field takes every key.
fn objects_keyed_by_field(
    pairs: &Map<String, Value>,
    node: &Value,
    items: &Value,
    properties: &Map<String, Value>,
) -> Option<Value> {
    let objects: Vec<(&String, &Map<String, Value>)> = pairs
        .iter()
        .map(|(k, v)| v.as_object().map(|o| (k, o)))
        .collect::<Option<_>>()?;
    let declared = objects
        .iter()
        .all(|(_, o)| !o.is_empty() && o.keys().all(|f| properties.contains_key(f)));
    if !declared {
        return None;
    }
    let lacked = |field: &&str| objects.iter().all(|(_, o)| !o.contains_key(*field));
    let key_field = match schema::list_map_keys(node).as_slice() {
        [key] => Some(*key).filter(lacked),
        [] => {
            let mut required = schema::required(items).filter(lacked);
            match (required.next(), required.next()) {
                (Some(one), None) => Some(one),
                _ => None,
            }
        }
        _ => None,
    }?;
    let key_node = properties.get(key_field)?;
    let list = objects
        .into_iter()
        .map(|(k, o)| {
            let key = Value::from(k.as_str());
            crate::certainty::accepts(key_node, &key).then(|| {
                let mut item = Map::new();
                item.insert(key_field.to_string(), key);
                item.extend(o.clone());
                Value::Object(item)
            })
        })
        .collect::<Option<Vec<Value>>>()?;
    Some(Value::Array(list))
}

/// A map whose keys are each an allowed value of one text field of the items and whose values
/// are each an allowed value of another (`policies: {PodEvicted: RestartJob, PodFailed:
/// AbortJob}` for items of an `event` and an `action`): one item per entry, the key and the
/// value each in the one field that lists it. Only where exactly one pair of fields does.
fn enum_keyed_items(pairs: &Map<String, Value>, properties: &Map<String, Value>) -> Option<Value> {
    let lists = |field: &Value, v: &Value| {
        schema::type_of(field) == "string"
            && schema::enum_values(field).is_some_and(|allowed| allowed.contains(v))
    };
    let mut ways = properties.iter().flat_map(|(key_field, key_node)| {
        properties
            .iter()
            .filter(move |(value_field, _)| *value_field != key_field)
            .filter(move |(_, value_node)| {
                pairs
                    .iter()
                    .all(|(k, v)| lists(key_node, &Value::from(k.as_str())) && lists(value_node, v))
            })
            .map(move |(value_field, _)| (key_field, value_field))
    });
    let (Some((key_field, value_field)), None) = (ways.next(), ways.next()) else {
        return None;
    };
    let items = pairs
        .iter()
        .map(|(k, v)| serde_json::json!({ key_field.as_str(): k, value_field.as_str(): v }));
    Some(Value::Array(items.collect()))
}

/// A map of objects keyed by name where a list of objects belongs (`remoteWrite: {mimir-prod:
/// {url, …}, grafana-cloud: {url, …}}`, as Helm values key their entries): one item per key,
/// each object as written, the key as the item's name where the items declare one and the
/// object has none; where they declare none, the key is a label of the user's values file, and
/// the items are the objects alone (a proposal: the keys are dropped). The items' name is
/// their `name`, or the one field named for what the list at `p` holds (`groupName` in
/// `workerGroupSpecs`).
fn map_of_objects_as_list(value: &Value, node: &Value, p: &str) -> Option<Value> {
    let entries = value.as_object().filter(|m| !m.is_empty())?;
    let items = node
        .get("items")
        .filter(|_| schema::type_of(node) == "array")?;
    let properties = items.get("properties")?.as_object()?;
    let name_field = item_name_field(properties, p);
    entries
        .iter()
        .map(|(key, entry)| {
            let mut object = entry.as_object()?.clone();
            // Every field of the entry is the item's: the map is a list written by key.
            if object.is_empty() || !object.keys().all(|k| properties.contains_key(k)) {
                return None;
            }
            if let Some(name) = name_field.filter(|n| !object.contains_key(*n)) {
                object.insert(name.to_string(), Value::from(key.as_str()));
            }
            Some(Value::Object(object))
        })
        .collect::<Option<Vec<Value>>>()
        .map(Value::Array)
}

/// The text field that names an item of the list at `p` ([`readings::item_name_key`]).
fn item_name_field<'a>(properties: &'a Map<String, Value>, p: &str) -> Option<&'a str> {
    let (_, list) = pointer::split_last(p)?;
    let texts = properties
        .iter()
        .filter(|(_, n)| schema::type_of(n) == "string")
        .map(|(k, _)| k);
    super::readings::item_name_key(texts, &list)
}

/// A set-based selector in kubectl's syntax (`"kubernetes.io/metadata.name in (prod,
/// staging)"`) where a list of selectors belongs whose items take only `matchLabels`: the list
/// ORs its items, so the `in` is one item per value, each with that label (and the equalities
/// beside it). Exactly one `in` requirement, the rest equalities; anything else makes no reading.
fn selectors_per_value(text: &str, node: &Value) -> Option<Value> {
    let items = node
        .get("items")
        .filter(|_| schema::type_of(node) == "array")?;
    let properties = items.get("properties")?.as_object()?;
    if !properties.contains_key("matchLabels") || properties.contains_key("matchExpressions") {
        return None;
    }
    let requirements = selector_requirements(text)?;
    let mut equal = Map::new();
    let mut set = None;
    for (key, operator, values) in requirements {
        match (operator, values.as_slice()) {
            ("=", [v]) => {
                equal.insert(key.to_string(), Value::from(*v));
            }
            ("In", [_, _, ..]) if set.is_none() => set = Some((key, values)),
            _ => return None,
        }
    }
    let (key, values) = set?;
    let selectors = values.iter().map(|v| {
        let mut labels = equal.clone();
        labels.insert(key.to_string(), Value::from(*v));
        serde_json::json!({ "matchLabels": labels })
    });
    Some(Value::Array(selectors.collect()))
}

/// An object moved to a field of a similar name, its own undeclared keys renamed the same way
/// (`workloadSelector: {labels: …}` → `selector: {matchLabels: …}`): each to the one property
/// of the target with a similar name that the object does not hold. `None` when no key needs
/// it or one has no such property.
fn with_similar_keys(value: &Value, node: &Value) -> Option<Value> {
    let fields = value.as_object()?;
    let properties = node.get("properties")?.as_object()?;
    let mut renamed = Map::new();
    let mut any = false;
    for (key, v) in fields {
        if properties.contains_key(key) {
            renamed.insert(key.clone(), v.clone());
            continue;
        }
        let mut similar = properties
            .keys()
            .filter(|name| !fields.contains_key(*name) && similar_name(key, name));
        let (Some(name), None) = (similar.next(), similar.next()) else {
            return None;
        };
        renamed.insert(name.clone(), v.clone());
        any = true;
    }
    any.then_some(Value::Object(renamed))
}

/// A group and a version written apart (`group: kustomize.toolkit.fluxcd.io`, `version: v1`,
/// a GVK as other tools write one) beside an unset `apiVersion`: Kubernetes writes them as one,
/// `group/version` (the version alone for the core group).
fn api_version_of_parts(sources: &Sources, p: &str) -> Option<Resolution> {
    let (parent, key) = pointer::split_last(p)?;
    if key != "group" && key != "version" {
        return None;
    }
    let node = schema::node_at(sources.schema, parent)?;
    let properties = node.get("properties")?.as_object()?;
    let given = sources.given.pointer(parent)?.as_object()?;
    let declared = |k: &str| properties.contains_key(k);
    if declared("group") || declared("version") || given.contains_key("apiVersion") {
        return None;
    }
    let api_version_node = properties.get("apiVersion")?;
    let version = given.get("version")?.as_str()?.trim();
    let group = given.get("group").map_or(Some(""), Value::as_str)?.trim();
    if version.is_empty() || version.contains(['/', ' ']) || group.contains(['/', ' ']) {
        return None;
    }
    let api_version = Value::from(match group {
        "" => version.to_string(),
        group => format!("{group}/{version}"),
    });
    if !crate::certainty::accepts(api_version_node, &api_version) {
        return None;
    }
    let mut edits: Resolution = ["group", "version"]
        .iter()
        .filter(|k| given.contains_key(**k))
        .map(|k| Edit::Remove(pointer::push(parent, k)))
        .collect();
    edits.push(Edit::Set(pointer::push(parent, "apiVersion"), api_version));
    Some(edits)
}

/// Fields written one level too high (`issuerURL`, `audience` and `validations` on a spec
/// whose `oidcProviders` list holds objects of exactly those fields; `dataFrom: [{key: …}]`
/// where `key` belongs in the entry's `extract`): every undeclared key of the object goes, as
/// written, into the one unset property beside them that declares them all, an object of them,
/// or a list of one such object. A declared field beside them whose value its own schema
/// refuses goes with them where the home declares it and takes that value (an SNS entry's
/// `endpoint: /order-events`, an AWS URL there and the path of the webhook beside it).
fn into_the_field_that_declares_them(sources: &Sources, p: &str) -> Option<Resolution> {
    let (parent, _) = pointer::split_last(p)?;
    let properties = schema::node_at(sources.schema, parent)?
        .get("properties")?
        .as_object()?;
    let given = sources.given.pointer(parent)?.as_object()?;
    let undeclared: Map<String, Value> = given
        .iter()
        .filter(|(k, _)| !properties.contains_key(*k))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    if undeclared.is_empty() {
        return None;
    }
    let refused_where_they_stand: Vec<(&String, &Value)> = given
        .iter()
        .filter(|(k, v)| {
            properties
                .get(*k)
                .is_some_and(|node| !crate::certainty::accepts(node, v))
        })
        .collect();
    let mut homes = properties.iter().filter_map(|(name, node)| {
        let own = match schema::type_of(node) {
            "object" => node.get("properties"),
            "array" => node.get("items").and_then(|i| i.get("properties")),
            _ => None,
        }
        .and_then(Value::as_object)?;
        if !undeclared.keys().all(|k| own.contains_key(k)) {
            return None;
        }
        let mut moving = undeclared.clone();
        for (k, v) in &refused_where_they_stand {
            if *k != name && own.get(*k).is_some_and(|n| crate::certainty::accepts(n, v)) {
                moving.insert((*k).clone(), (*v).clone());
            }
        }
        // A home already written takes them beside what it holds, none of them set there
        // (`queueConfig: {batchSendDeadline: 5s}` beside `maxShards: 200`).
        let held = match given.get(name) {
            None => Map::new(),
            Some(Value::Object(held)) if moving.keys().all(|k| !held.contains_key(k)) => {
                held.clone()
            }
            Some(_) => return None,
        };
        let value = match schema::type_of(node) {
            "object" => {
                let mut merged = held;
                merged.extend(moving.clone());
                Value::Object(merged)
            }
            "array" if !held.is_empty() => return None,
            _ => Value::Array(vec![Value::Object(moving.clone())]),
        };
        crate::certainty::accepts(node, &value).then_some((name, value, moving))
    });
    let (home, value, moving) = homes.next()?;
    if homes.next().is_some() {
        return None;
    }
    let mut edits: Resolution = moving
        .keys()
        .map(|k| Edit::Remove(pointer::push(parent, k)))
        .collect();
    edits.push(Edit::Set(pointer::push(parent, home), value));
    Some(edits)
}

/// An undeclared key holding a truth value, named as an unset declared boolean beside it is
/// but for one word that names the opposite state (`revisionCounterEnabled: false` beside
/// `revisionCounterDisabled`): that field and the negated value (`true`).
fn negated_twin(sources: &Sources, p: &str, value: &Value) -> Option<(String, Value)> {
    let (parent, name) = pointer::split_last(p)?;
    let truth = match value {
        Value::Bool(b) => *b,
        Value::String(s) => super::readings::stated_bool(s)?,
        _ => return None,
    };
    let properties = schema::node_at(sources.schema, parent)?
        .get("properties")?
        .as_object()?;
    let mut twins = properties.iter().filter(|(declared, node)| {
        schema::type_of(node) == "boolean" && crate::certainty::names_opposite(&name, declared)
    });
    let (twin, _) = twins.next().filter(|_| twins.next().is_none())?;
    let at = pointer::push(parent, twin);
    sources
        .given
        .pointer(&at)
        .is_none()
        .then_some((at, Value::Bool(!truth)))
}

/// An undeclared key that is a declared field's name and a unit (`timeout-minutes: 20`, a
/// GitHub Actions key, or `timeoutSeconds: 30`, where `timeout` beside it takes a duration):
/// the number in that unit, for that field, when it is unset and takes it.
fn amount_in_named_unit(sources: &Sources, p: &str, value: &Value) -> Option<Resolution> {
    let (parent, name) = pointer::split_last(p)?;
    let number = match value {
        Value::Number(n) => n.as_f64()?,
        Value::String(s) => s.trim().parse::<f64>().ok()?,
        _ => return None,
    };
    let properties = schema::node_at(sources.schema, parent)?
        .get("properties")?
        .as_object()?;
    let (declared, node, symbol) = properties
        .iter()
        .find_map(|(k, node)| Some((k, node, unit_named_by(&name, k)?)))?;
    let at = pointer::push(parent, declared);
    let written = Value::from(amount_with_unit(number, symbol));
    (sources.given.pointer(&at).is_none() && crate::certainty::accepts(node, &written))
        .then(|| vec![Edit::Remove(p.to_string()), Edit::Set(at, written)])
}

/// The duration unit the key `key` names after the name of the field `field`
/// (`timeout-minutes` and `timeout`: `m`; `timeoutSeconds`: `s`), separators and case aside.
pub(super) fn unit_named_by(key: &str, field: &str) -> Option<&'static str> {
    let plain = |s: &str| -> String {
        s.chars()
            .filter(char::is_ascii_alphanumeric)
            .collect::<String>()
            .to_lowercase()
    };
    let (key, field) = (plain(key), plain(field));
    // A unit word, not one letter (`timeouts` is no `timeout` in seconds).
    let unit = key.strip_prefix(&field).filter(|u| u.len() >= 2)?;
    let seconds = super::readings::seconds_in_unit(unit)?;
    [
        ("ms", 0.001),
        ("s", 1.0),
        ("m", 60.0),
        ("h", 3_600.0),
        ("d", 86_400.0),
        ("w", 604_800.0),
    ]
    .iter()
    .find(|(_, scale)| (scale - seconds).abs() < 1e-9)
    .map(|(symbol, _)| *symbol)
}

/// `number` written with the unit `symbol`, whole when it is (`20m`, `1.5h`).
pub(super) fn amount_with_unit(number: f64, symbol: &str) -> String {
    if number.fract() == 0.0 {
        format!("{}{symbol}", number as i64)
    } else {
        format!("{number}{symbol}")
    }
}

/// An undeclared key written as a dotted path of the schema (`portLevelMtls.9200.mode:
/// DISABLE`, as Helm's `--set` names a place): the value at that place, when its first
/// segment is a property declared beside it, every other one a property or a key of a map,
/// and the place is unset and takes the value.
fn dotted_key(sources: &Sources, p: &str, value: &Value) -> Option<Resolution> {
    let (parent, name) = pointer::split_last(p)?;
    let mut node = schema::node_at(sources.schema, parent)?;
    let mut at = parent.to_string();
    for (i, segment) in name.split('.').enumerate() {
        let declared = node.get("properties").and_then(|ps| ps.get(segment));
        node = match declared {
            _ if segment.is_empty() => return None,
            Some(child) => child,
            None if i > 0 => node.get("additionalProperties").filter(|a| a.is_object())?,
            None => return None,
        };
        at = pointer::push(&at, segment);
    }
    (at != pointer::push(parent, &name)
        && sources.given.pointer(&at).is_none()
        && crate::certainty::accepts(node, value))
    .then(|| vec![Edit::Remove(p.to_string()), Edit::Set(at, value.clone())])
}

/// A value its field's schema refuses, moved whole to the one absent sibling named after that
/// field whose schema takes it as it is (`port: 9102`, where `port` names a container port,
/// beside an integer `portNumber`; `timeout: 30` beside `timeoutSeconds`; a URL in `jwks`, a
/// key set's JSON, beside `jwksUri`): the sibling's name is the field's name and more words
/// (`portNumber`, not `targetPort`). Nothing is retyped or dropped, but that the two fields
/// mean one thing is the user's to say: never certain (`certainty::lossless`, a move to a
/// field of another name).
fn named_sibling(sources: &Sources, p: &str, value: &Value, node: &Value) -> Option<Resolution> {
    if value.is_object() || value.is_array() || crate::certainty::accepts(node, value) {
        return None;
    }
    // Refused by a check of its text rather than by its type, the value goes only where a
    // check of its own tells it from other text: `storageClassName` beside `storage`, or a
    // `…Regex` beside a list, takes any text and is about something else.
    let type_refused = match schema::type_of(node) {
        "string" => !value.is_string(),
        "integer" | "number" => !value.is_number(),
        "boolean" => !value.is_boolean(),
        // A text where an object belongs (a Secret's key selector given a file's path).
        "object" => value.is_string(),
        _ => false,
    } && !schema::is_int_or_string(node);
    let checked = schema::checks_text;
    let (parent, name) = pointer::split_last(p)?;
    let properties = schema::node_at(sources.schema, parent)?
        .get("properties")?
        .as_object()?;
    // Named after the field, or, for a text where an object belongs, after one of what a plural
    // field holds (`alertRelabelConfigFile` beside `alertRelabelConfigs`: the file that holds
    // them).
    let singular = match schema::type_of(node) {
        "object" => name.strip_suffix('s').unwrap_or(&name),
        _ => name.as_str(),
    };
    let extends = |other: &str| {
        [name.as_str(), singular].iter().any(|stem| {
            other
                .strip_prefix(stem)
                .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_uppercase()))
        })
    };
    let names = properties
        .iter()
        .filter(|(n, sibling)| extends(n) && (type_refused || checked(sibling)))
        .map(|(n, _)| n.as_str());
    let (to, moved) = one_absent_taker(sources, parent, p, names, |_| Some(value.clone()))?;
    Some(vec![Edit::Remove(p.to_string()), Edit::Set(to, moved)])
}

/// The one absent required field beside the undeclared `p` whose schema takes its value and
/// tells it from other text: a pattern, a format or an enum, a value that is no string
/// (`port: 443` beside a required integer `number`), or an object whose every field it
/// declares; and a template's spec where that spec belongs (`jobTemplate: {spec: …}`, as a
/// CronJob holds a Job's, beside a required `jobTargetRef` that is a Job's spec). A field about
/// something else that takes any text is no home for it (docs/repair.md, "Meaning kept"); and
/// a rename is never certain (`certainty::lossless`): only the user can say the two names mean
/// one field. The field's pointer and the value it takes.
fn required_taker(sources: &Sources, p: &str, value: &Value) -> Option<(String, Value)> {
    if value.is_array() || value.is_null() || value.as_object().is_some_and(Map::is_empty) {
        return None;
    }
    let (parent, _) = pointer::split_last(p)?;
    let parent_node = schema::node_at(sources.schema, parent)?;
    let required = parent_node.get("required")?.as_array()?;
    let tells_apart = |node: &Value| {
        !value.is_string()
            || ["pattern", "format", "enum"]
                .iter()
                .any(|k| node.get(k).is_some())
    };
    let spec = value
        .as_object()
        .filter(|o| o.len() == 1)
        .and_then(|o| o.get("spec"))
        .filter(|s| s.as_object().is_some_and(|s| !s.is_empty()));
    let names = required.iter().filter_map(Value::as_str);
    one_absent_taker(sources, parent, p, names, |child| {
        if !tells_apart(child) {
            return None;
        }
        match spec {
            Some(spec) if !crate::certainty::accepts(child, value) => Some(spec.clone()),
            _ => Some(value.clone()),
        }
    })
}

/// Of the fields `names` of the object at `parent` (`p` itself left out), the one that is
/// absent and whose schema takes the value `value_for` makes for it; none when no field or
/// several do (docs/repair.md, "Meaning kept": a value goes only where exactly one field takes
/// it). The field's pointer and the value.
fn one_absent_taker<'n>(
    sources: &Sources,
    parent: &str,
    p: &str,
    names: impl Iterator<Item = &'n str>,
    value_for: impl Fn(&Value) -> Option<Value>,
) -> Option<(String, Value)> {
    let parent_node = schema::node_at(sources.schema, parent)?;
    let mut takers = names.filter_map(|name| {
        let at = pointer::push(parent, name);
        if at == p || sources.given.pointer(&at).is_some() {
            return None;
        }
        let child = schema::child(parent_node, name)?;
        value_for(child)
            .filter(|v| crate::certainty::accepts(child, v))
            .map(|v| (at, v))
    });
    let one = takers.next()?;
    takers.next().is_none().then_some(one)
}

/// Calls `f` with the pointer and node of every property the schema declares (through
/// `properties` only), depth-first in the schema's order.
fn schema_properties<'s>(
    node: &'s Value,
    at: &str,
    depth: usize,
    f: &mut dyn FnMut(&str, &'s Value),
) {
    if depth > MAX_SCHEMA_DEPTH {
        return;
    }
    if let Some(properties) = node.get("properties").and_then(Value::as_object) {
        for (name, child) in properties {
            let p = pointer::push(at, name);
            f(&p, child);
            schema_properties(child, &p, depth + 1, f);
        }
    }
}

/// A rule on an object that its message says needs a child (`"catalog is required when
/// sourceType is Catalog"`): that child, filled like a missing required value.
fn missing_children(sources: &Sources, p: &str, errors: &[FieldError]) -> Vec<Resolution> {
    let Some(node) = schema::node_at(sources.schema, p) else {
        return Vec::new();
    };
    let Some(properties) = node.get("properties").and_then(Value::as_object) else {
        return Vec::new();
    };
    let messages: Vec<&str> = errors
        .iter()
        .filter(|e| e.pointer == p)
        .map(|e| e.message.as_str())
        .collect();
    let mut out = Vec::new();
    for (name, child) in properties {
        let at = pointer::push(p, name);
        if sources.given.pointer(&at).is_some()
            || !messages.iter().any(|m| words(m).iter().any(|w| w == name))
        {
            continue;
        }
        out.extend(
            fill_values(sources, &at, child, 0)
                .into_iter()
                .map(|v| vec![Edit::Set(at.clone(), v)]),
        );
    }
    out
}

fn scalar_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The changes from `given` to `candidate`, one line each, for the model to read.
pub fn describe(given: &Value, candidate: &Value) -> Vec<String> {
    json_patch::diff(given, candidate)
        .0
        .iter()
        .map(|op| match op {
            json_patch::PatchOperation::Add(a) => {
                format!("add {} = {}", a.path, crate::text::quote(&a.value, 120))
            }
            json_patch::PatchOperation::Replace(r) => {
                format!("set {} = {}", r.path, crate::text::quote(&r.value, 120))
            }
            json_patch::PatchOperation::Remove(r) => format!("remove {}", r.path),
            json_patch::PatchOperation::Move(m) => format!("move {} to {}", m.from, m.path),
            json_patch::PatchOperation::Copy(c) => format!("copy {} to {}", c.from, c.path),
            json_patch::PatchOperation::Test(t) => format!("test {}", t.path),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Sources over a CREATE's object, nothing protected.
    fn sources<'a>(schema: &'a Value, given: &'a Value) -> Sources<'a> {
        Sources {
            schema,
            given,
            old_object: None,
            protected: &[],
        }
    }

    #[test]
    fn a_part_goes_to_the_fields_whose_schemas_say_most() {
        let item = json!({"type": "object", "required": ["port"], "properties": {
            "name": {"type": "string"},
            "port": {"type": "integer"},
            "protocol": {"type": "string", "enum": ["TCP", "UDP"]}}});
        let readings = typed_items(&json!(["22/tcp", "53/udp"]), &item);
        assert_eq!(
            readings[0],
            json!([{"port": 22, "protocol": "TCP"}, {"port": 53, "protocol": "UDP"}])
        );
        // Never the only reading: the pieces fit free text too.
        assert!(readings.len() > 1);
        // Two pieces that only free text takes are no split.
        let free = json!({"type": "object", "properties": {
            "namespace": {"type": "string"}, "name": {"type": "string"}}});
        let readings = typed_items(&json!(["team-a:auth"]), &free);
        assert!(readings
            .iter()
            .all(|r| r[0].as_object().unwrap().len() == 1));
    }

    #[test]
    fn a_document_pasted_as_a_string_is_the_structure_it_writes() {
        let pasted = "receivers:\n  otlp:\n    protocols:\n      grpc:\n        endpoint: 0.0.0.0:4317\nprocessors:\n  batch:\n    send_batch_size: 8192\n";
        assert_eq!(
            document_in_string(pasted, "object"),
            Some(
                json!({"receivers": {"otlp": {"protocols": {"grpc": {"endpoint": "0.0.0.0:4317"}}}},
                "processors": {"batch": {"send_batch_size": 8192}}})
            )
        );
        assert_eq!(
            document_in_string("- master\n- data\n", "array"),
            Some(json!(["master", "data"]))
        );
        assert_eq!(
            document_in_string(r#"{"name": "x"}"#, "object"),
            Some(json!({"name": "x"}))
        );
        // A document of the other kind, prose over two lines, one line of `key: value` (the
        // readings that tell a sentence from a pair take it), or a field of no structure: none.
        assert_eq!(document_in_string("- master\n- data\n", "object"), None);
        assert_eq!(
            document_in_string("keep the defaults\nuntil the migration", "object"),
            None
        );
        assert_eq!(document_in_string("header: x-session-id", "object"), None);
        assert_eq!(document_in_string("a: 1\nb: 2\n", "string"), None);
        // Aliases that expand a few hundred bytes into a billion items: the parser's
        // repetition limit refuses it, and there is no reading.
        let mut bomb = String::from("a: &a [x, x, x, x, x, x, x, x, x]\n");
        for (name, previous) in ["b", "c", "d", "e", "f", "g", "h", "i"]
            .iter()
            .zip("abcdefgh".chars())
        {
            let refs = vec![format!("*{previous}"); 9].join(", ");
            bomb.push_str(&format!("{name}: &{name} [{refs}]\n"));
        }
        assert_eq!(document_in_string(&bomb, "object"), None);
    }

    #[test]
    fn a_sentence_whose_numbers_count_properties_gives_them() {
        let cpu = json!({"type": "object", "properties": {
            "sockets": {"type": "integer", "minimum": 1},
            "cores": {"type": "integer", "minimum": 1},
            "model": {"type": "string"}}});
        assert_eq!(
            counted_object("2 sockets x 2 cores, no hyperthreading", &cpu),
            Some(json!({"sockets": 2, "cores": 2}))
        );
        assert_eq!(
            counted_object("1 socket", &cpu),
            Some(json!({"sockets": 1}))
        );
        // A number that counts nothing the object has, or a property counted twice: no reading.
        assert_eq!(counted_object("2 sockets, 8 threads", &cpu), None);
        assert_eq!(counted_object("2 cores or 4 cores", &cpu), None);
        assert_eq!(counted_object("0 cores", &cpu), None);
    }

    #[test]
    fn the_same_flag_before_every_item_is_syntax() {
        let node = json!({"type": "array", "items": {"type": "string"}});
        let pasted = "--query=dnssrv+_http._tcp.thanos-query.monitoring.svc\n--query=prom:9090";
        assert_eq!(
            list_readings(pasted, &node)[0],
            json!(["dnssrv+_http._tcp.thanos-query.monitoring.svc", "prom:9090"])
        );
        // Two different flags, or an item with more than its flag: the items as written.
        assert_eq!(same_flag_values(["--query=a", "--rule=b"]), None);
        assert_eq!(same_flag_values(["--query=a", "--query b and c"]), None);
        assert_eq!(same_flag_values(["--query=a"]), None);
        assert_eq!(
            same_flag_values(["--query a", "--query=b"]),
            Some(json!(["a", "b"]))
        );
        // The flag repeated inside one text, before each value, in order.
        assert_eq!(
            same_flag_values(["-f ./values.yaml -f ./values-production.yaml"]),
            Some(json!(["./values.yaml", "./values-production.yaml"]))
        );
        assert_eq!(same_flag_values(["-f a -g b"]), None);
        assert_eq!(same_flag_values(["-f a b"]), None);
        assert_eq!(same_flag_values(["-f a"]), None);
        assert_eq!(same_flag_values(["-f -x -f b"]), None);
    }

    #[test]
    fn a_list_of_lines_where_one_text_belongs_is_those_lines() {
        let text = json!({"type": "string"});
        let lines = [json!("#!/bin/bash"), json!("sysctl --system")];
        assert_eq!(
            lines_as_text(&lines, &text),
            Some(json!("#!/bin/bash\nsysctl --system"))
        );
        // Names are no lines, and a field with a pattern takes no text made of them.
        assert_eq!(lines_as_text(&[json!("a"), json!("b")], &text), None);
        let named = json!({"type": "string", "pattern": "^[a-z]+$"});
        assert_eq!(lines_as_text(&lines, &named), None);
        // A text whose description says it holds one entry per line takes names as lines.
        let per_line = json!({"type": "string",
            "description": "Exclusion patterns, one per line, in .gitignore syntax."});
        let patterns = [json!("/*"), json!("!/deploy/"), json!("/deploy/**/*.md")];
        assert_eq!(
            lines_as_text(&patterns, &per_line),
            Some(json!("/*\n!/deploy/\n/deploy/**/*.md"))
        );
        assert_eq!(lines_as_text(&patterns, &text), None);
    }

    #[test]
    fn a_list_stated_relative_to_the_stored_one_adds_its_names() {
        let old = json!(["X-Auth-Request-User", "X-Auth-Request-Email"]);
        assert_eq!(
            relative_list(
                "same as before, plus X-Auth-Request-Groups for the RBAC check",
                &old
            ),
            Some(json!([
                "X-Auth-Request-User",
                "X-Auth-Request-Email",
                "X-Auth-Request-Groups"
            ]))
        );
        // No word refers to the stored list, or none adds: no reading.
        assert_eq!(
            relative_list("X-Auth-Request-Groups and X-Other", &old),
            None
        );
        assert_eq!(relative_list("same as before", &old), None);
        // A word that takes away: the stored items less the one it names, its remark aside.
        assert_eq!(
            relative_list(
                "the current list minus ping - GitHub sends a ping whenever the hook is created",
                &json!(["ping", "push", "release"])
            ),
            Some(json!(["push", "release"]))
        );
        assert_eq!(
            relative_list("the current list minus nothing", &json!(["ping", "push"])),
            None
        );
        // A text that starts by taking away, naming the item by a part of its name no other
        // item has; a part two items share names neither.
        let rules = json!(["run-as-non-root", "autogen-run-as-non-root"]);
        assert_eq!(
            relative_list("drop the autogen rule, the Deployment is fixed now", &rules),
            Some(json!(["run-as-non-root"]))
        );
        assert_eq!(relative_list("drop the root rule", &rules), None);
        assert_eq!(relative_list("keep it, drop nothing", &rules), None);
        // An apostrophe opens no quote.
        assert_eq!(quoted_parts("don't add 'a b' now").0, vec!["a b"]);
        // A verb that adds says so by itself; a quoted part is one item, a remark no item.
        assert_eq!(
            relative_list(
                "add http://am.dr.svc:9093 so the DR site gets the alerts too",
                &json!(["dnssrv+_http._tcp.am.monitoring.svc"])
            ),
            Some(json!([
                "dnssrv+_http._tcp.am.monitoring.svc",
                "http://am.dr.svc:9093"
            ]))
        );
        assert_eq!(
            relative_list(
                "the existing one plus '.*context deadline exceeded.*' (flaky mirror, OPS-1182)",
                &json!(["^Dependencies do not meet ready condition"])
            ),
            Some(json!([
                "^Dependencies do not meet ready condition",
                ".*context deadline exceeded.*"
            ]))
        );
        // A path keeps its slash.
        assert_eq!(
            relative_list(
                "same as before, plus /metrics for the scrape",
                &json!(["/healthz"])
            ),
            Some(json!(["/healthz", "/metrics"]))
        );
    }

    #[test]
    fn pairs_keyed_by_property_paths_give_those_properties() {
        let keystores = json!({"type": "object", "properties": {"pkcs12": {"type": "object",
            "properties": {
                "create": {"type": "boolean"},
                "profile": {"type": "string", "enum": ["LegacyRC2", "Modern2023"]},
                "passwordSecretRef": {"type": "object", "properties": {
                    "name": {"type": "string"}, "key": {"type": "string"}}}}}}});
        assert_eq!(
            fields_from_pairs(
                "pkcs12.create=true,pkcs12.passwordSecretRef.name=p12,pkcs12.passwordSecretRef.key=password,pkcs12.profile=modern2023",
                &keystores
            ),
            Some(json!({"pkcs12": {"create": true, "profile": "Modern2023",
                "passwordSecretRef": {"name": "p12", "key": "password"}}}))
        );
        // A path that names no declared property, a value its field does not take, a path set
        // twice, or no path at all: no reading.
        for text in [
            "pkcs12.create=true,pkcs12.password=x",
            "pkcs12.create=yes",
            "pkcs12.create=true,pkcs12.create=false",
            "pkcs12.create=true,pkcs12.create.x=false",
            "create=true",
        ] {
            assert_eq!(fields_from_pairs(text, &keystores), None, "{text}");
        }
        // Several pairs keyed by the object's own fields are those fields; one pair is a map's
        // entry or a `name=value` pair, and a key it does not declare is no field of it.
        let endpoint = json!({"type": "object", "properties": {
            "port": {"type": "string"}, "path": {"type": "string"},
            "interval": {"type": "string", "pattern": "^[0-9]+[smh]$"}}});
        assert_eq!(
            fields_from_pairs(
                "port=http-prom,path=/stats/prometheus,interval=15s",
                &endpoint
            ),
            Some(json!({"port": "http-prom", "path": "/stats/prometheus", "interval": "15s"}))
        );
        for text in [
            "port=http-prom",
            "port=http-prom,team=payments",
            "port=a,interval=soon",
        ] {
            assert_eq!(fields_from_pairs(text, &endpoint), None, "{text}");
        }
    }

    #[test]
    fn pairs_are_cut_only_between_pairs() {
        assert_eq!(
            key_value_pairs(r#"a=true,ns="storefront,checkout""#),
            Some(vec![
                ("a".to_string(), "true".to_string()),
                ("ns".to_string(), "storefront,checkout".to_string())
            ])
        );
        // Helm's `--set` escapes a key's dots: the key is the name with its dots, a map's,
        // never a path of properties.
        let helm = r"service\.beta\.kubernetes\.io/aws-load-balancer-scheme=internal,b\.c=ip";
        let map = json!({"type": "object", "additionalProperties": {"type": "string"}});
        assert_eq!(
            label_map(helm, &map),
            vec![
                json!({"service.beta.kubernetes.io/aws-load-balancer-scheme": "internal",
                        "b.c": "ip"})
            ]
        );
        let paths = json!({"type": "object", "properties": {
            "b": {"type": "object", "properties": {"c": {"type": "string"}}}}});
        assert_eq!(fields_from_pairs(r"b\.c=ip", &paths), None);
        // An escaped `=` or `,` is no cut between a key and its value, or between pairs: an
        // escaped comma belongs to its value, as Helm's `--set` reads it.
        assert_eq!(key_value_pairs(r"a\=b=c"), None);
        assert_eq!(
            key_value_pairs(r"a=x\,y,b=z"),
            Some(vec![
                ("a".to_string(), "x,y".to_string()),
                ("b".to_string(), "z".to_string())
            ])
        );
        assert_eq!(
            fields_from_pairs("b.c=ip", &paths),
            Some(json!({"b": {"c": "ip"}}))
        );
        // Pairs written with blanks between them, after a command's words: a comma inside the
        // quotes is no cut between pairs, and a key with blanks is a sentence.
        let pasted = r#"kubectl annotate secret tls a/allowed=true a/namespaces="storefront,checkout" a/auto=true"#;
        assert_eq!(key_value_pairs(pasted), None);
        let map = json!({"type": "object", "additionalProperties": {"type": "string"}});
        assert!(label_map(pasted, &map).is_empty());
    }

    #[test]
    fn a_flag_named_like_a_map_field_gives_its_pairs() {
        let schema = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
            "systemReserved": {"type": "object", "additionalProperties": {"type": "string"}}}}}});
        let given = json!({"spec": {"systemReserved": "--system-reserved=cpu=100m,memory=200Mi"}});
        let sources = sources(&schema, &given);
        let p = "/spec/systemReserved";
        let options = value_readings(
            &sources,
            p,
            &given["spec"]["systemReserved"],
            schema::node_at(&schema, p).unwrap(),
        );
        assert_eq!(
            options,
            [vec![Edit::Set(
                p.into(),
                json!({"cpu": "100m", "memory": "200Mi"})
            )]]
        );
    }

    #[test]
    fn a_stated_number_is_the_number_meant() {
        let allowed = [json!("2"), json!("3")];
        let set = |options: Vec<Resolution>| -> Vec<Value> {
            options
                .into_iter()
                .map(|r| match r.as_slice() {
                    [Edit::Set(_, v)] => v.clone(),
                    _ => Value::Null,
                })
                .collect()
        };
        assert_eq!(
            set(enum_options("/p", &allowed, &json!("3.11"), &[], "")),
            [json!("3")]
        );
        let tls = [json!("1.2"), json!("1.3")];
        let said = json!("1.1 (the old scanners cannot do 1.2)");
        assert!(enum_options("/p", &tls, &said, &[], "").is_empty());
        // A name with its version: only that version of the name, written short or long.
        let protocols = [
            json!("OpenMetricsText0.0.1"),
            json!("OpenMetricsText1.0.0"),
            json!("PrometheusText0.0.4"),
        ];
        let said = "OpenMetricsText1.0";
        let spelled = super::super::readings::named_values(said, &protocols);
        let named = set(enum_options("/p", &protocols, &json!(said), &spelled, ""));
        assert!(named.contains(&json!("OpenMetricsText1.0.0")), "{named:?}");
        assert!(!named.contains(&json!("OpenMetricsText0.0.1")), "{named:?}");
        assert_eq!(versioned_name("TLSv1.2"), Some(("TLSv", "1.2")));
        assert_eq!(versioned_name("1.2"), None);
        assert!(same_version("1.0", "1.0.0") && !same_version("1.0", "0.0.1"));
        // Words are no stated number: every allowed value stays an option.
        assert_eq!(
            enum_options("/p", &tls, &json!("the newest one"), &[], "").len(),
            2
        );
        // One word that names no allowed value is another thing: no substitute is offered.
        assert!(enum_options("/p", &tls, &json!("newest"), &[], "").is_empty());
        let algorithms = [json!("Gzip"), json!("Brotli")];
        assert!(enum_options("/p", &algorithms, &json!("Zstd"), &[], "").is_empty());
        let kinds = [json!("Deployment"), json!("DaemonSet"), json!("Service")];
        let about = "Deployment, DaemonSet (one pod per node: a set of daemons) or Service.";
        assert!(enum_options("/p", &kinds, &json!("StatefulSet"), &[], about).is_empty());
        let strategies = [json!("RoundRobin"), json!("WeightedLeastRequest")];
        let options = enum_options("/p", &strategies, &json!("LEAST_REQUEST"), &[], "");
        assert_eq!(
            options[0],
            vec![Edit::Set("/p".into(), json!("WeightedLeastRequest"))]
        );
        let scopes = [
            json!("TriggerAuthentication"),
            json!("ClusterTriggerAuthentication"),
        ];
        let options = enum_options("/p", &scopes, &json!("cluster-wide"), &[], "");
        assert_eq!(
            options[0],
            vec![Edit::Set(
                "/p".into(),
                json!("ClusterTriggerAuthentication")
            )]
        );
        let sources = [
            json!("GitRepository"),
            json!("OCIRepository"),
            json!("Bucket"),
        ];
        assert!(enum_options("/p", &sources, &json!("HelmRepository"), &[], "").is_empty());
        assert_eq!(
            enum_options("/p", &algorithms, &json!("brotli"), &["Brotli"], "").len(),
            2
        );
    }

    #[test]
    fn pairs_written_as_env_vars_are_the_map() {
        let strings = json!({"type": "object", "additionalProperties": {"type": "string"}});
        let pairs = [
            json!({"name": "cluster", "value": "prod-eu-1"}),
            json!({"name": "region", "value": "eu-west-1"}),
        ];
        assert_eq!(
            lines_as_map(&pairs, &strings),
            Some(json!({"cluster": "prod-eu-1", "region": "eu-west-1"}))
        );
        // A name twice, a value from elsewhere, or more than the pair: no reading.
        let twice = [pairs[0].clone(), json!({"name": "cluster", "value": "b"})];
        assert_eq!(lines_as_map(&twice, &strings), None);
        let from = [json!({"name": "zone", "valueFrom": {"fieldRef": {}}})];
        assert_eq!(lines_as_map(&from, &strings), None);
        let two = [json!({"name": "a", "value": "b", "note": "c"})];
        assert_eq!(lines_as_map(&two, &strings), None);
        // A Pod's ports where a map of port numbers belongs: the one value the map takes.
        let numbers = json!({"type": "object", "additionalProperties": {"type": "integer"}});
        let ports = [
            json!({"name": "http", "containerPort": 8080, "protocol": "TCP"}),
            json!({"name": "grpc", "containerPort": 9090, "protocol": "TCP"}),
        ];
        assert_eq!(
            lines_as_map(&ports, &numbers),
            Some(json!({"http": 8080, "grpc": 9090}))
        );
    }

    #[test]
    fn a_manifest_line_reads_its_value_as_yaml_does() {
        let strings = json!({"type": "object", "additionalProperties": {"type": "string"}});
        let lines = [
            json!("service.beta.kubernetes.io/aws-load-balancer-type: nlb"),
            json!("external-dns.alpha.kubernetes.io/hostname: \"rabbit.prod.example\""),
            json!("note: 'it''s internal'"),
            json!("quoted-inside: a \"b\" c"),
        ];
        assert_eq!(
            lines_as_map(&lines, &strings),
            Some(json!({
                "service.beta.kubernetes.io/aws-load-balancer-type": "nlb",
                "external-dns.alpha.kubernetes.io/hostname": "rabbit.prod.example",
                "note": "it's internal",
                "quoted-inside": "a \"b\" c"
            }))
        );
        // A list where an object belongs goes to its one list that does not negate.
        let status = json!({"type": "object", "properties": {
            "includedResources": {"type": "array", "items": {"type": "string"}},
            "excludedResources": {"type": "array", "items": {"type": "string"}}}});
        let list = [json!("workflows.argoproj.io")];
        assert_eq!(
            list_as_property(&list, &status),
            Some(json!({"includedResources": ["workflows.argoproj.io"]}))
        );
        let excluded_only = json!({"type": "object", "properties": {
            "excludedResources": {"type": "array", "items": {"type": "string"}}}});
        assert_eq!(list_as_property(&list, &excluded_only), None);
        // Parts joined by `/` into the one assignment of fields the object's schema takes.
        let port = json!({"type": "object", "required": ["number"], "properties": {
            "number": {"type": "integer"}, "targetPort": {"type": "integer"},
            "protocol": {"type": "string", "enum": ["TCP", "UDP", "HTTP"]},
            "name": {"type": "string", "pattern": "^[a-z0-9-]+$"}},
            "x-kubernetes-validations": [{"rule": "!has(self.targetPort)"}]});
        assert_eq!(
            parts_as_fields("9080/TCP", &port),
            vec![json!({"number": 9080, "protocol": "TCP"})]
        );
        // Two assignments to different fields, or a part no field takes: no reading.
        let two = json!({"type": "object", "properties": {
            "number": {"type": "integer"}, "targetPort": {"type": "integer"},
            "protocol": {"type": "string", "enum": ["TCP"]}}});
        assert!(parts_as_fields("9080/TCP", &two).is_empty());
        assert!(parts_as_fields("9080/SCTP", &port).is_empty());
        assert!(parts_as_fields("web", &port).is_empty());
        // The same two fields either way round: both readings, the text's order first.
        let host = json!({"type": "object", "required": ["host", "port"], "properties": {
            "host": {"type": "string"}, "port": {"type": "string"}}});
        assert_eq!(
            parts_as_fields("smtp.example.com:587", &host),
            vec![
                json!({"host": "smtp.example.com", "port": "587"}),
                json!({"host": "587", "port": "smtp.example.com"})
            ]
        );
        // Helm's `--set` keys from the chart's root: the place after the field's own name.
        let policy = json!({"type": "object", "properties": {"mode": {"type": "string"}}});
        assert_eq!(
            set_pairs_within(
                "--set meshConfig.outboundTrafficPolicy.mode=REGISTRY_ONLY",
                "outboundTrafficPolicy",
                &policy
            ),
            Some(json!({"mode": "REGISTRY_ONLY"}))
        );
        assert_eq!(
            set_pairs_within("mode=REGISTRY_ONLY", "outboundTrafficPolicy", &policy),
            None
        );
        assert_eq!(
            set_pairs_within(
                "a.outboundTrafficPolicy=x",
                "outboundTrafficPolicy",
                &policy
            ),
            None
        );
        // A mapping written with arrows points from the key to its value.
        assert_eq!(
            lines_as_map(&[json!("shop -> shop-dr"), json!("db => db-dr")], &strings),
            Some(json!({"shop": "shop-dr", "db": "db-dr"}))
        );
        // A quote that opens and never closes is the user's character, kept.
        assert_eq!(unquoted("\"half"), "\"half");
        assert_eq!(
            label_map("app=\"web\",tier=db", &strings)[0],
            json!({"app": "web", "tier": "db"})
        );
        // Braces around the pairs are the set's syntax (a PromQL label set).
        assert_eq!(
            label_map("{cluster=\"prod-eu-1\", region=\"eu-west-1\"}", &strings)[0],
            json!({"cluster": "prod-eu-1", "region": "eu-west-1"})
        );
        assert!(label_map("{cluster=\"prod-eu-1\"", &strings).is_empty());
    }

    #[test]
    fn the_first_word_of_prose_is_a_value_only_when_set_off_or_a_name() {
        assert_eq!(
            value_words("stable (the default one we always use)"),
            ["stable"]
        );
        assert_eq!(value_words("stable - the default one we use"), ["stable"]);
        assert_eq!(
            value_words("eu-west-1 like the other clusters here"),
            ["eu-west-1"]
        );
        assert!(value_words("paygate's new EU endpoint (see their migration mail)").is_empty());
        assert!(value_words("Catalog please, it is the only one").is_empty());
    }

    #[test]
    fn a_comment_glued_into_a_value_is_read_as_the_value_before_it() {
        let options = string_rewrites("ISRG Root X1   # short chain only; the other expired", None);
        assert_eq!(options[0], json!("ISRG Root X1"));
        assert!(!string_rewrites("ISRG Root X1", None).contains(&json!("ISRG Root X1")));
        // An amount in the comment is a remark too: the value's amount is the one before it.
        let storage = "100Gi  # TODO: grow to 250Gi once the reindex is done";
        assert_eq!(string_rewrites(storage, None), vec![json!("100Gi")]);
        assert!(super::super::readings::contradiction(None, &json!(storage), None).is_none());
    }

    #[test]
    fn a_list_of_alternatives_puts_each_part_where_its_schema_takes_it() {
        let node = json!({"type": "array", "items": {"type": "object", "properties": {
            "dns": {"type": "string"},
            "ip": {"type": "string", "pattern": "^[0-9]{1,3}(\\.[0-9]{1,3}){3}$"}}}});
        let lists = list_rewrites("search.acme.internal, 10.20.30.40", &node);
        let options = lists_of_references(&lists, &node);
        // The address fits both fields: the one whose pattern says so first, then the other.
        assert_eq!(
            options,
            vec![
                json!([{"dns": "search.acme.internal"}, {"ip": "10.20.30.40"}]),
                json!([{"dns": "search.acme.internal"}, {"dns": "10.20.30.40"}]),
            ]
        );
    }

    #[test]
    fn names_joined_by_a_colon_are_listed_and_a_host_with_its_port_is_one_item() {
        let node = json!({"type": "array", "items": {"type": "string"}});
        let lists = list_rewrites(
            "ECDHE-RSA-AES256-GCM-SHA384:ECDHE-RSA-CHACHA20-POLY1305",
            &node,
        );
        assert_eq!(
            lists[0],
            json!(["ECDHE-RSA-AES256-GCM-SHA384", "ECDHE-RSA-CHACHA20-POLY1305"])
        );
        assert_eq!(
            list_rewrites("web.example.com:8443", &node)[0],
            json!(["web.example.com:8443"])
        );
    }

    #[test]
    fn a_command_line_where_an_object_belongs_gives_its_properties() {
        let quantity = json!({"anyOf": [{"type": "integer"}, {"type": "string"}],
            "x-kubernetes-int-or-string": true});
        let node = json!({"type": "object", "properties": {
            "limits": {"type": "object", "additionalProperties": quantity},
            "requests": {"type": "object", "additionalProperties": quantity}}});
        assert_eq!(
            flags_object(
                "--limits=cpu=2,memory=4Gi --requests=cpu=1,memory=4Gi",
                &node
            ),
            Some(json!({"limits": {"cpu": 2, "memory": "4Gi"},
                        "requests": {"cpu": 1, "memory": "4Gi"}}))
        );
        // A flag that names a property but whose value it does not take: no reading.
        assert_eq!(flags_object("--limits=lots", &node), None);
        // A flag given once per item names a list; one given twice for one value, nothing.
        let placement = json!({"type": "object", "properties": {
            "cluster": {"type": "string"},
            "tags": {"type": "array", "items": {"type": "string"}}}});
        assert_eq!(
            flags_object(
                "--cluster aws-us-east-1 --tag ssd --tag az:use1-az2",
                &placement
            ),
            Some(json!({"cluster": "aws-us-east-1", "tags": ["ssd", "az:use1-az2"]}))
        );
        assert_eq!(flags_object("--cluster a --cluster b", &placement), None);
        assert_eq!(flags_object("set resources for the api", &node), None);
    }

    #[test]
    fn a_listed_kind_is_the_one_the_text_names_in_any_case() {
        let node = json!({"type": "array", "items": {"type": "object",
            "required": ["kind", "name"],
            "properties": {
                "kind": {"type": "string", "enum": ["Deployment", "DaemonSet", "StatefulSet"]},
                "name": {"type": "string"}}}});
        let lists = list_rewrites("deployment/payments-api statefulset/payments-worker", &node);
        let options = lists_of_references(&lists, &node);
        assert_eq!(
            options[0],
            json!([{"kind": "Deployment", "name": "payments-api"},
                   {"kind": "StatefulSet", "name": "payments-worker"}])
        );
        // A free kind is still only one written as a kind.
        let free = json!({"type": "object", "required": ["kind", "name"], "properties": {
            "kind": {"type": "string"}, "name": {"type": "string"}, "key": {"type": "string"}}});
        assert!(!named_reference("widget/api", &free)
            .iter()
            .any(|r| r.get("kind").is_some()));
    }

    #[test]
    fn a_map_of_allowed_values_to_allowed_values_is_one_item_per_entry() {
        let events =
            json!({"type": "string", "enum": ["PodEvicted", "PodFailed", "TaskCompleted"]});
        let actions = json!({"type": "string", "enum": ["RestartJob", "AbortJob", "CompleteJob"]});
        let node = json!({"type": "array", "items": {"type": "object", "properties": {
            "event": events, "action": actions, "exitCode": {"type": "integer"}}}});
        assert_eq!(
            map_as_keyed_items(
                &json!({"PodEvicted": "RestartJob", "PodFailed": "AbortJob"}),
                &node
            ),
            Some(json!([{"event": "PodEvicted", "action": "RestartJob"},
                        {"event": "PodFailed", "action": "AbortJob"}]))
        );
        // A value no field lists: no reading.
        assert_eq!(
            map_as_keyed_items(&json!({"PodEvicted": "Retry"}), &node),
            None
        );
        // Two fields that list the same values: which one is meant is not certain.
        let twice = json!({"type": "array", "items": {"type": "object", "properties": {
            "event": events, "until": events, "action": actions}}});
        assert_eq!(
            map_as_keyed_items(&json!({"PodEvicted": "RestartJob"}), &twice),
            None
        );
    }

    #[test]
    fn kubectls_resource_name_is_the_kind_the_schema_spells_and_its_group() {
        let target = json!({"type": "object", "required": ["kind", "name"],
            "properties": {"group": {"type": "string"}, "kind": {"type": "string"},
                "name": {"type": "string"}, "namespace": {"type": "string"}},
            "x-kubernetes-validations": [{"rule":
                "self.kind == 'Service' || (self.kind == 'Gateway' && self.group == 'gateway.networking.k8s.io')"}]});
        assert_eq!(
            named_reference("gateway.gateway.networking.k8s.io/public-gw", &target),
            vec![json!({"name": "public-gw", "kind": "Gateway",
                "group": "gateway.networking.k8s.io"})]
        );
        // The lower-case type alone, singular or plural, is the kind too, never a namespace.
        assert_eq!(
            named_reference("gateways/public-gw", &target),
            vec![json!({"name": "public-gw", "kind": "Gateway"})]
        );
        // A word that spells no kind of the schema's is still a namespace.
        assert_eq!(
            named_reference("edge/public-gw", &target),
            vec![json!({"name": "public-gw", "namespace": "edge"})]
        );
        // A resource with its group where nothing spells a kind: the reference's own type.
        let named = json!({"type": "object", "properties": {"name": {"type": "string"}}});
        assert_eq!(
            named_reference("cluster.postgresql.cnpg.io/pg-inventory", &named),
            vec![json!({"name": "pg-inventory"})]
        );
    }

    #[test]
    fn kubectls_namespace_flag_beside_a_reference_is_its_namespace() {
        let secret_ref = json!({"type": "object", "required": ["name"],
            "properties": {"group": {"type": "string"}, "kind": {"type": "string"},
                "name": {"type": "string"}, "namespace": {"type": "string"}}});
        let readings = named_reference("secret/backoffice-oidc -n identity", &secret_ref);
        assert_eq!(
            readings.first(),
            Some(&json!({"name": "backoffice-oidc", "kind": "Secret", "namespace": "identity"}))
        );
        assert!(readings.iter().all(|r| r["namespace"] == "identity"));
        assert_eq!(
            named_reference("--namespace=identity backoffice-oidc", &secret_ref),
            vec![json!({"name": "backoffice-oidc", "namespace": "identity"})]
        );
        // Where the object names no namespace, the flag's is never dropped: no reading.
        let local = json!({"type": "object", "properties": {"name": {"type": "string"}}});
        assert!(named_reference("backoffice-oidc -n identity", &local).is_empty());
        // Two words beside the flag are no one reference.
        assert!(named_reference("secret oidc -n identity", &secret_ref).is_empty());
    }

    #[test]
    fn a_command_line_gives_the_values_of_the_flags_named_like_fields() {
        let schema = json!({"type": "object", "properties": {"spec": {"type": "object",
            "properties": {
                "topicName": {"type": "string"},
                "partitions": {"type": "integer", "minimum": 1},
                "replicas": {"type": "integer"}}}}});
        let given = json!({"spec": {"topicName":
            "kafka-topics.sh --bootstrap-server kafka:9092 --create --topic audit.v2 --partitions 6"}});
        let sources = sources(&schema, &given);
        let node = &schema["properties"]["spec"]["properties"]["topicName"];
        let value = &given["spec"]["topicName"];
        assert_eq!(
            command_line(&sources, "/spec/topicName", value, node),
            vec![
                vec![
                    Edit::Set("/spec/topicName".into(), json!("audit.v2")),
                    Edit::Set("/spec/partitions".into(), json!(6)),
                ],
                vec![Edit::Set("/spec/topicName".into(), json!("audit.v2"))],
            ]
        );
        // No flag named like the field: no reading.
        assert!(command_line(&sources, "/spec/replicas", value, node).is_empty());
    }

    #[test]
    fn a_command_lines_one_argument_the_field_takes_and_its_switches() {
        let schema = json!({"type": "object", "properties": {"spec": {"type": "object",
            "properties": {
                "url": {"type": "string", "pattern": "^(http|https|oci)://.*$"},
                "name": {"type": "string"},
                "passCredentials": {"type": "boolean"}}}}});
        let text = "helm repo add acme https://charts.acme.example/stable --pass-credentials";
        let given = json!({"spec": {"url": text}});
        let sources = sources(&schema, &given);
        let url = &schema["properties"]["spec"]["properties"]["url"];
        assert_eq!(
            command_line(&sources, "/spec/url", &given["spec"]["url"], url),
            vec![
                vec![
                    Edit::Set(
                        "/spec/url".into(),
                        json!("https://charts.acme.example/stable")
                    ),
                    Edit::Set("/spec/passCredentials".into(), json!(true)),
                ],
                vec![Edit::Set(
                    "/spec/url".into(),
                    json!("https://charts.acme.example/stable")
                )],
            ]
        );
        // A free text field takes every argument: which one is meant is not certain.
        let name = &schema["properties"]["spec"]["properties"]["name"];
        assert!(command_line(&sources, "/spec/name", &json!(text), name).is_empty());
        // Prose with an address is no command line (no flag).
        let prose = json!("see https://charts.acme.example/stable");
        assert!(command_line(&sources, "/spec/url", &prose, url).is_empty());
    }

    #[test]
    fn pairs_where_a_list_of_selectors_belongs_are_one_selectors_labels() {
        let selectors = json!({"type": "array", "items": {"type": "object", "properties": {
            "matchLabels": {"type": "object", "additionalProperties": {"type": "string"}},
            "matchExpressions": {"type": "array", "items": {"type": "object"}}}}});
        assert_eq!(
            pairs_as_one_item(&json!({"team": "payments", "tier": "frontend"}), &selectors),
            Some(json!([{"matchLabels": {"team": "payments", "tier": "frontend"}}]))
        );
        // A key of the item's own, a value that is no text, or no list: no reading.
        assert_eq!(
            pairs_as_one_item(&json!({"matchLabels": "x"}), &selectors),
            None
        );
        assert_eq!(pairs_as_one_item(&json!({"team": 3}), &selectors), None);
        assert_eq!(
            pairs_as_one_item(&json!({"team": "a"}), &selectors["items"]),
            None
        );
    }

    #[test]
    fn a_field_that_qualifies_the_missing_ones_name_is_about_a_narrower_thing() {
        // `nodeStartupTimeout` is no condition's `timeout`; a `timeout` beside one is.
        assert!(!same_field(
            "/spec/nodeStartupTimeout",
            "/spec/unhealthyConditions/0/timeout",
            false
        ));
        assert!(same_field(
            "/spec/checks/0/timeout",
            "/spec/unhealthyConditions/0/timeout",
            false
        ));
        // A plural is no qualifier, and a label key's name is its last segment.
        assert!(same_field(
            "/spec/secretNames",
            "/spec/other/secretName",
            false
        ));
        assert!(same_field(
            "/spec/selector/matchLabels/cluster.x-k8s.io~1cluster-name",
            "/spec/clusterName",
            false
        ));
    }

    #[test]
    fn a_map_of_objects_is_keyed_by_the_one_field_they_lack() {
        let conditions = json!({"type": "array", "items": {"type": "object",
            "required": ["type", "status", "timeout"], "properties": {
                "type": {"type": "string"}, "status": {"type": "string"},
                "timeout": {"type": "string"}}}});
        assert_eq!(
            map_as_keyed_items(
                &json!({"Ready": {"status": "Unknown", "timeout": "5m"},
                    "KernelDeadlock": {"status": "True", "timeout": "15m"}}),
                &conditions
            ),
            Some(
                json!([{"type": "KernelDeadlock", "status": "True", "timeout": "15m"},
                {"type": "Ready", "status": "Unknown", "timeout": "5m"}])
            )
        );
        // An object holding a field the items do not declare, or every field: no reading.
        assert_eq!(
            map_as_keyed_items(&json!({"Ready": {"state": "Unknown"}}), &conditions),
            None
        );
        assert_eq!(
            map_as_keyed_items(
                &json!({"Ready": {"type": "x", "status": "True", "timeout": "1m"}}),
                &conditions
            ),
            None
        );
        // A list-map's key names the field.
        let keyed = json!({"type": "array", "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["step"], "items": {"type": "object", "properties": {
                "step": {"type": "string"}, "fn": {"type": "string"}}}});
        assert_eq!(
            map_as_keyed_items(&json!({"render": {"fn": "templates"}}), &keyed),
            Some(json!([{"step": "render", "fn": "templates"}]))
        );
    }

    #[test]
    fn an_allowed_value_that_says_none_is_offered() {
        let schema = json!({"type": "object", "properties": {"copyMethod": {"type": "string",
            "enum": ["Direct", "None", "Clone", "Snapshot"]}}});
        let given = json!({"copyMethod": "none - the class can't snapshot or clone"});
        let options = resolutions(
            &sources(&schema, &given),
            "/copyMethod",
            &[&ErrorKind::Enum {
                allowed: vec![
                    json!("Direct"),
                    json!("None"),
                    json!("Clone"),
                    json!("Snapshot"),
                ],
            }],
            &[],
        );
        assert!(
            options.contains(&vec![Edit::Set("/copyMethod".into(), json!("None"))]),
            "{options:?}"
        );
    }

    #[test]
    fn a_map_where_keyed_items_belong_is_one_item_per_key() {
        let headers = json!({"type": "array", "items": {"type": "object", "properties": {
            "name": {"type": "string"}, "value": {"type": "string"}}}});
        assert_eq!(
            map_as_keyed_items(&json!({"Host": "a.example", "X-Probe": "istio"}), &headers),
            Some(json!([{"name": "Host", "value": "a.example"},
                        {"name": "X-Probe", "value": "istio"}]))
        );
        // A value the item's `value` does not take, or items without the pair: no reading.
        assert_eq!(map_as_keyed_items(&json!({"Host": 1.5}), &headers), None);
        // A key that is a field of the items is that field, not a pair's name.
        let bindings = json!({"type": "array", "items": {"type": "object", "properties": {
            "ref": {"type": "string"}, "name": {"type": "string"}, "value": {"type": "string"}}}});
        assert_eq!(
            map_as_keyed_items(
                &json!({"ref": "push-binding", "revision": "$(body.sha)"}),
                &bindings
            ),
            None
        );
        let ports = json!({"type": "array", "items": {"type": "object", "properties": {
            "port": {"type": "integer"}}}});
        assert_eq!(map_as_keyed_items(&json!({"http": "80"}), &ports), None);
        // Items that may take their value from elsewhere: a text may be meant as that.
        let env = json!({"type": "array", "items": {"type": "object", "properties": {
            "name": {"type": "string"}, "value": {"type": "string"},
            "valueFrom": {"type": "object"}}}});
        assert_eq!(
            map_as_keyed_items(&json!({"KEY": "from secret honeycomb, key api-key"}), &env),
            None
        );
        // A whole number where text belongs is that text.
        assert_eq!(
            map_as_keyed_items(&json!({"QUEUE_SIZE": 4096}), &env),
            Some(json!([{"name": "QUEUE_SIZE", "value": "4096"}]))
        );
        // An object whose keys are the item's other fields is those fields, never a value
        // that holds them; any other object is no reading where the items declare more.
        let dapr = json!({"type": "array", "items": {"type": "object", "properties": {
            "name": {"type": "string"}, "value": {"x-kubernetes-preserve-unknown-fields": true},
            "secretKeyRef": {"type": "object", "properties": {
                "name": {"type": "string"}, "key": {"type": "string"}}}}}});
        let secret = json!({"secretKeyRef": {"name": "redis", "key": "redis-password"}});
        assert_eq!(
            map_as_keyed_items(
                &json!({"redisHost": "redis:6379", "redisPassword": secret}),
                &dapr
            ),
            Some(json!([{"name": "redisHost", "value": "redis:6379"},
                        {"name": "redisPassword",
                         "secretKeyRef": {"name": "redis", "key": "redis-password"}}]))
        );
        assert_eq!(
            map_as_keyed_items(&json!({"redisPassword": {"from": "vault"}}), &dapr),
            None
        );
        // A one-word text is a value, not a reference described in words.
        assert_eq!(
            map_as_keyed_items(&json!({"environment": "staging"}), &env),
            Some(json!([{"name": "environment", "value": "staging"}]))
        );
        // Two required fields: the one way round that takes every key and value.
        let exceptions = json!({"type": "array", "items": {"type": "object",
            "required": ["policyName", "ruleNames"], "properties": {
            "policyName": {"type": "string"},
            "ruleNames": {"type": "array", "items": {"type": "string"}}}}});
        assert_eq!(
            map_as_keyed_items(
                &json!({"disallow-capabilities": ["adding-capabilities"]}),
                &exceptions
            ),
            Some(
                json!([{"policyName": "disallow-capabilities", "ruleNames": ["adding-capabilities"]}])
            )
        );
        // Both ways round take a text: which field is the key is not said.
        let two_texts = json!({"type": "array", "items": {"type": "object",
            "required": ["host", "path"], "properties": {
            "host": {"type": "string"}, "path": {"type": "string"}}}});
        assert_eq!(
            map_as_keyed_items(&json!({"a.example": "/b"}), &two_texts),
            None
        );
    }

    #[test]
    fn a_command_line_is_the_words_a_shell_passes() {
        assert_eq!(
            command_arguments("--epochs 10 --lr 0.001 --data s3://acme-ml/train"),
            Some(json!([
                "--epochs",
                "10",
                "--lr",
                "0.001",
                "--data",
                "s3://acme-ml/train"
            ]))
        );
        assert_eq!(
            command_arguments("-v --dry-run"),
            Some(json!(["-v", "--dry-run"]))
        );
        // Prose, quotes, or words that are not a flag's value: no reading.
        assert_eq!(command_arguments("--epochs 10 for the long run"), None);
        assert_eq!(command_arguments("run --epochs 10"), None);
        assert_eq!(command_arguments("--msg \"hello world\""), None);
        assert_eq!(command_arguments("--verbose"), None);
        // Where the schema says the list is a command, a whole line is its words, quotes
        // grouping them.
        let command = json!({"type": "array", "description": "Entrypoint of the container.",
            "items": {"type": "string"}});
        assert_eq!(
            shell_words(
                "python -u train.py --run-name 'resnet50 baseline v2' --epochs 90",
                &command
            ),
            Some(json!([
                "python",
                "-u",
                "train.py",
                "--run-name",
                "resnet50 baseline v2",
                "--epochs",
                "90"
            ]))
        );
        assert_eq!(shell_words("python train.py 'unclosed --x", &command), None);
        // A line only a shell reads the same: no split.
        assert_eq!(
            shell_words("pg_dump -U $PGUSER -f /tmp/dump.sql", &command),
            None
        );
        assert_eq!(
            shell_words("pg_dump -U app > /tmp/dump.sql", &command),
            None
        );
        // Quoted, the syntax is the shell's argument: `sh -c '…'` is three words.
        assert_eq!(
            shell_words("/bin/sh -c 'pg_dump -U app > /tmp/dump.sql'", &command),
            Some(json!(["/bin/sh", "-c", "pg_dump -U app > /tmp/dump.sql"]))
        );
        assert_eq!(shell_words("run the nightly job", &command), None);
        let hosts = json!({"type": "array", "description": "Hosts to serve.",
            "items": {"type": "string"}});
        assert_eq!(shell_words("api -n prod", &hosts), None);
    }

    #[test]
    fn flags_where_a_map_of_texts_belongs_are_its_keys() {
        let params = json!({"type": "object", "additionalProperties": {"type": "string"}});
        assert_eq!(
            flags_map("--num-cpus=0 --dashboard-host=0.0.0.0", &params),
            Some(json!({"num-cpus": "0", "dashboard-host": "0.0.0.0"}))
        );
        // A value after a blank may be an argument after a switch.
        assert_eq!(flags_map("--num-cpus=0 --verbose start", &params), None);
        // A flag without its value, or prose: no reading.
        assert_eq!(flags_map("--num-cpus=0 --block", &params), None);
        assert_eq!(flags_map("start with --num-cpus=0", &params), None);
        assert_eq!(flags_map("-l app=checkout,version=v2", &params), None);
    }

    #[test]
    fn a_service_account_username_is_that_subject() {
        let subject = json!({"type": "object", "properties": {"kind": {"type": "string"},
            "name": {"type": "string"}, "namespace": {"type": "string"}}});
        assert_eq!(
            subject_of_username("system:serviceaccount:argocd:app-controller", &subject),
            Some(
                json!({"kind": "ServiceAccount", "name": "app-controller", "namespace": "argocd"})
            )
        );
        assert_eq!(
            subject_of_username("system:serviceaccount:argocd", &subject),
            None
        );
        assert_eq!(subject_of_username("argocd:app-controller", &subject), None);
    }

    #[test]
    fn kubectl_names_of_kinds_are_those_kinds_where_kinds_are_taken() {
        let kinds = json!({"type": "string", "pattern": "^[A-Z][A-Za-z0-9]*$"});
        assert_eq!(
            kinds_of_kubectl_names(&json!(["deploy", "sts"]), &kinds),
            Some(json!(["Deployment", "StatefulSet"]))
        );
        // Items that take the names as written (an RBAC rule's resources): no reading.
        let resources = json!({"type": "string"});
        assert_eq!(kinds_of_kubectl_names(&json!(["deploy"]), &resources), None);
        assert_eq!(
            kinds_of_kubectl_names(&json!(["deploy", "widgets"]), &kinds),
            None
        );
    }

    #[test]
    fn a_set_based_selector_is_one_selector_per_value_where_only_labels_are_taken() {
        let labels_only = json!({"type": "array", "items": {"type": "object", "properties": {
            "matchLabels": {"type": "object", "additionalProperties": {"type": "string"}}}}});
        let key = "kubernetes.io/metadata.name";
        assert_eq!(
            selectors_per_value(&format!("{key} in (prod, staging)"), &labels_only),
            Some(json!([{"matchLabels": {key: "prod"}}, {"matchLabels": {key: "staging"}}]))
        );
        assert_eq!(
            selectors_per_value("team=a,env in (x,y)", &labels_only),
            Some(json!([{"matchLabels": {"team": "a", "env": "x"}},
                        {"matchLabels": {"team": "a", "env": "y"}}]))
        );
        // `notin`, two sets, or items that take expressions: no reading here.
        assert_eq!(selectors_per_value("env notin (x,y)", &labels_only), None);
        assert_eq!(
            selectors_per_value("a in (x,y),b in (z,w)", &labels_only),
            None
        );
        let with_expressions = json!({"type": "array", "items": {"type": "object", "properties": {
            "matchLabels": {"type": "object"}, "matchExpressions": {"type": "array"}}}});
        assert_eq!(selectors_per_value("env in (x,y)", &with_expressions), None);
    }

    #[test]
    fn an_object_moved_to_a_similar_field_takes_its_similar_keys() {
        let selector = json!({"type": "object", "properties": {
            "matchLabels": {"type": "object", "additionalProperties": {"type": "string"}}}});
        assert_eq!(
            with_similar_keys(&json!({"labels": {"app": "reviews"}}), &selector),
            Some(json!({"matchLabels": {"app": "reviews"}}))
        );
        // Nothing to rename, or a key with no similar property: no reading.
        assert_eq!(
            with_similar_keys(&json!({"matchLabels": {}}), &selector),
            None
        );
        assert_eq!(
            with_similar_keys(&json!({"labels": {}, "zone": "a"}), &selector),
            None
        );
    }

    #[test]
    fn a_clause_that_names_a_field_beside_goes_there_and_the_other_is_this_fields() {
        let schema = json!({"type": "object", "properties": {"spec": {"type": "object",
            "properties": {
                "replicas": {"type": "integer"},
                "shards": {"type": "integer", "minimum": 1}}}}});
        let given = json!({"spec": {"replicas": "2 per shard, 3 shards"}});
        let sources = sources(&schema, &given);
        let node = &schema["properties"]["spec"]["properties"]["replicas"];
        let expected = vec![vec![
            Edit::Set("/spec/replicas".into(), json!(2)),
            Edit::Set("/spec/shards".into(), json!(3)),
        ]];
        assert_eq!(
            clause_for_sibling(&sources, "/spec/replicas", &given["spec"]["replicas"], node),
            expected
        );
        let included = json!({"type": "object", "properties": {"spec": {"type": "object",
            "properties": {
                "length": {"type": "integer"},
                "digits": {"type": "integer", "minimum": 0}}}}});
        let password = json!({"spec": {"length": "32 characters incl. 4 digits"}});
        assert_eq!(
            clause_for_sibling(
                &Sources {
                    schema: &included,
                    given: &password,
                    old_object: None,
                    protected: &[],
                },
                "/spec/length",
                &password["spec"]["length"],
                &included["properties"]["spec"]["properties"]["length"]
            ),
            vec![vec![
                Edit::Set("/spec/length".into(), json!(32)),
                Edit::Set("/spec/digits".into(), json!(4)),
            ]]
        );
        let named_first = json!("shards 3; 2 per shard");
        assert_eq!(
            clause_for_sibling(&sources, "/spec/replicas", &named_first, node),
            expected
        );
        // The sibling's value must be one it takes; a clause naming nothing beside is no reading.
        for text in [
            "2 per shard, 0 shards",
            "2 per shard, 3 zones",
            "2, 3 shards, 4",
        ] {
            assert!(
                clause_for_sibling(&sources, "/spec/replicas", &json!(text), node).is_empty(),
                "{text}"
            );
        }
    }

    #[test]
    fn true_for_a_field_with_one_allowed_value_sets_that_value() {
        let schema = json!({"type": "object", "properties": {"spec": {"type": "object",
            "properties": {
                "kraftMetadata": {"type": "string", "enum": ["shared"]},
                "mode": {"type": "string", "enum": ["a", "b"]}}}}});
        let given = json!({"spec": {"kraftMetadata": true, "mode": true}});
        let sources = sources(&schema, &given);
        let node = &schema["properties"]["spec"]["properties"]["kraftMetadata"];
        assert!(
            value_readings(&sources, "/spec/kraftMetadata", &json!(true), node).contains(&vec![
                Edit::Set("/spec/kraftMetadata".into(), json!("shared"))
            ])
        );
        assert!(
            !value_readings(&sources, "/spec/kraftMetadata", &json!(false), node)
                .iter()
                .flatten()
                .any(|e| *e == Edit::Set("/spec/kraftMetadata".into(), json!("shared")))
        );
        // Two allowed values: `true` names neither.
        let mode = &schema["properties"]["spec"]["properties"]["mode"];
        assert!(value_readings(&sources, "/spec/mode", &json!(true), mode).is_empty());
    }

    #[test]
    fn a_flag_given_once_per_item_names_the_list_and_its_commas_part_the_items() {
        let schema = json!({"type": "object", "properties": {"spec": {"type": "object",
            "properties": {"enableFeatures": {"type": "array", "items": {"type": "string"}}}}}});
        let given = json!({"spec": {"enableFeatures":
            "--enable-feature=exemplar-storage,memory-snapshot-on-shutdown"}});
        let sources = sources(&schema, &given);
        let node = &schema["properties"]["spec"]["properties"]["enableFeatures"];
        assert_eq!(
            command_line(
                &sources,
                "/spec/enableFeatures",
                &given["spec"]["enableFeatures"],
                node
            ),
            vec![vec![Edit::Set(
                "/spec/enableFeatures".into(),
                json!(["exemplar-storage", "memory-snapshot-on-shutdown"])
            )]]
        );
        assert!(crate::certainty::names_field(
            "enablefeature",
            "enableFeatures"
        ));
        assert!(!crate::certainty::names_field(
            "enablefeature",
            "enableFeature2"
        ));
    }

    #[test]
    fn operators_and_numbers_are_rejoined() {
        assert_eq!(
            operator_ranges(">= 1.2 AND < 2"),
            Some(vec![json!(">=1.2, <2"), json!(">=1.2 <2")])
        );
        assert_eq!(
            operator_ranges("1.4 or any later patch"),
            Some(vec![json!("1.4")])
        );
        assert_eq!(operator_ranges("latest"), None);
        // A number in a name is no version: `PAY-1432` is a ticket.
        assert_eq!(operator_ranges("the new name from ticket PAY-1432"), None);
        assert_eq!(operator_ranges("1.2-1.3"), None);
        // Bare versions joined would mean both at once; an arrow is no comparison.
        assert_eq!(operator_ranges("1.14.x/1.15.x"), None);
        assert_eq!(operator_ranges("[0.38.0,0.40.0)"), None);
        assert_eq!(operator_ranges("1.13.3 -> 1.14.5"), None);
        assert_eq!(operator_ranges("-> 1.14.5"), Some(vec![json!("1.14.5")]));
        assert_eq!(operator_ranges("v0.6.0"), Some(vec![json!("v0.6.0")]));
    }

    #[test]
    fn words_keep_names_and_versions_whole() {
        assert_eq!(
            words("cert-manager (create it if missing)"),
            vec!["cert-manager", "create", "it", "if", "missing"]
        );
        assert_eq!(
            words("Deploys Argo CD into the argocd-system namespace."),
            vec![
                "Deploys",
                "Argo",
                "CD",
                "into",
                "the",
                "argocd-system",
                "namespace"
            ]
        );
    }

    #[test]
    fn similar_names() {
        assert!(similar_name("channel", "channels"));
        assert!(similar_name("installNamespace", "namespace"));
        assert!(similar_name("package_name", "packageName"));
        assert!(!similar_name("name", "namespace"));
        assert!(!similar_name("version", "channels"));
    }

    #[test]
    fn best_first_enumerates_low_index_sums_first_and_is_bounded() {
        let g = |n: usize| vec![vec![Edit::Remove("/a".into())]; n];
        let order = best_first(&[g(2), g(3)], 100);
        assert_eq!(order[0], vec![0, 0]);
        assert_eq!(order.len(), 6);
        assert!(order[1..3].contains(&vec![1, 0]) && order[1..3].contains(&vec![0, 1]));
        assert_eq!(
            best_first(&(0..6).map(|_| g(8)).collect::<Vec<_>>(), 10).len(),
            10
        );
        assert!(best_first(&[g(2), vec![]], 10).is_empty());
    }

    #[test]
    fn edits_apply_sets_then_removals_and_refuse_conflicts() {
        let given = json!({"spec": {"a": "x", "list": [1, 2, 3]}});
        let set = Edit::Set("/spec/b/c".into(), json!("x"));
        let rm = Edit::Remove("/spec/a".into());
        assert_eq!(
            apply(&given, &[&set, &rm]),
            Some(json!({"spec": {"b": {"c": "x"}, "list": [1, 2, 3]}}))
        );
        let rm1 = Edit::Remove("/spec/list/0".into());
        let rm2 = Edit::Remove("/spec/list/2".into());
        assert_eq!(
            apply(&given, &[&rm1, &rm2]),
            Some(json!({"spec": {"a": "x", "list": [2]}}))
        );
        let other = Edit::Set("/spec/b/c".into(), json!("y"));
        assert_eq!(apply(&given, &[&set, &other]), None);
        let under = Edit::Remove("/spec/b".into());
        assert_eq!(apply(&given, &[&set, &under]), None);
    }

    #[test]
    fn a_patterns_whole_values_are_offered_when_the_user_named_them() {
        let schema = json!({"type": "object", "properties": {"spec": {"type": "object",
            "properties": {"schedule": {"type": "string",
                "pattern": "^(@(daily|hourly|midnight)|[0-9*]+ [0-9*]+)$"}}}}});
        let at = |said: &str| {
            let given = json!({"spec": {"schedule": said}});
            let sources = sources(&schema, &given);
            let kind = ErrorKind::Pattern {
                pattern: "^(@(daily|hourly|midnight)|[0-9*]+ [0-9*]+)$".into(),
            };
            resolutions(&sources, "/spec/schedule", &[&kind], &[])
                .into_iter()
                .filter_map(|r| match r.as_slice() {
                    [Edit::Set(_, v)] => v.as_str().map(str::to_string),
                    _ => None,
                })
                .collect::<Vec<_>>()
        };
        let options = at("daily at midnight");
        assert_eq!(options[..2], ["@daily", "@midnight"], "{options:?}");
        assert!(!options.iter().any(|o| o == "@hourly"), "{options:?}");
        assert!(!at("CST").iter().any(|o| o.starts_with('@')));
    }

    #[test]
    fn a_named_enum_value_is_the_only_reading_and_a_value_is_dropped_only_for_the_default() {
        let schema = json!({"type": "object", "properties": {"spec": {"type": "object",
            "properties": {
                "policy": {"type": "string", "enum": ["CatalogProvided", "SelfCertified"]},
                "version": {"type": "string", "description":
                    "version is a range. When unspecified, the latest version is installed."},
                "timeZone": {"type": "string", "description": "A zone name. Defaults to UTC."}}}}});
        let options = |p: &str, v: Value, kind: ErrorKind| {
            let mut given = json!({"spec": {}});
            given["spec"][p.rsplit('/').next().unwrap()] = v;
            let sources = sources(&schema, &given);
            resolutions(&sources, p, &[&kind], &[])
        };
        let policy = ErrorKind::Enum {
            allowed: vec![json!("CatalogProvided"), json!("SelfCertified")],
        };
        let named = options(
            "/spec/policy",
            json!("ignore the graph (self-certified)"),
            policy.clone(),
        );
        assert_eq!(
            named,
            [vec![Edit::Set(
                "/spec/policy".into(),
                json!("SelfCertified")
            )]]
        );
        // Nothing named: every value, and no removal (nothing asks for the default).
        let unnamed = options("/spec/policy", json!("the usual"), policy);
        assert_eq!(unnamed.len(), 2, "{unnamed:?}");
        // An allowed empty value means "unset": it is no reading of the user's words.
        let with_empty = ErrorKind::Enum {
            allowed: vec![json!(""), json!("CatalogProvided"), json!("SelfCertified")],
        };
        let unnamed = options("/spec/policy", json!("the usual"), with_empty);
        assert_eq!(unnamed.len(), 2, "{unnamed:?}");
        assert!(!unnamed.contains(&vec![Edit::Set("/spec/policy".into(), json!(""))]));
        let cel = ErrorKind::Pattern {
            pattern: "^[0-9.]+$".into(),
        };
        let latest = options("/spec/version", json!("latest"), cel.clone());
        assert!(
            latest.contains(&vec![Edit::Remove("/spec/version".into())]),
            "{latest:?}"
        );
        let zone = options("/spec/timeZone", json!("CST"), cel);
        assert!(
            !zone.contains(&vec![Edit::Remove("/spec/timeZone".into())]),
            "{zone:?}"
        );
    }

    #[test]
    fn a_list_entry_naming_several_values_becomes_those_entries() {
        let usages = [
            "digital signature",
            "key encipherment",
            "server auth",
            "client auth",
        ];
        let allowed: Vec<Value> = usages.iter().map(|u| json!(u)).collect();
        let schema = json!({"type": "object", "properties": {"spec": {"type": "object",
            "properties": {"usages": {"type": "array",
                "items": {"type": "string", "enum": usages}}}}}});
        let given = json!({"spec": {"usages": ["digital signature", "key encipherment",
            "server auth and client auth (for mTLS)"]}});
        let sources = sources(&schema, &given);
        let kind = ErrorKind::Enum { allowed };
        let options = resolutions(&sources, "/spec/usages/2", &[&kind], &[]);
        let spliced = vec![Edit::Set(
            "/spec/usages".into(),
            json!([
                "digital signature",
                "key encipherment",
                "server auth",
                "client auth"
            ]),
        )];
        assert!(options.contains(&spliced), "{options:?}");
        // Values the list already holds are not offered for this entry.
        assert!(!options.iter().any(|o| o
            == &vec![Edit::Set(
                "/spec/usages/2".into(),
                json!("digital signature")
            )]));
    }

    #[test]
    fn an_entry_that_says_it_is_the_only_one_beside_another_value_has_no_reading() {
        let allowed = vec![json!("controller"), json!("broker")];
        let schema = json!({"type": "object", "properties": {"spec": {"type": "object",
            "properties": {"roles": {"type": "array",
                "items": {"type": "string", "enum": ["controller", "broker"]}}}}}});
        let kind = ErrorKind::Enum { allowed };
        let given = json!({"spec": {"roles": ["dedicated controller", "broker"]}});
        assert!(resolutions(&sources(&schema, &given), "/spec/roles/0", &[&kind], &[]).is_empty());
        // Alone in its list, the same words are read.
        let alone = json!({"spec": {"roles": ["dedicated controller"]}});
        assert!(!resolutions(&sources(&schema, &alone), "/spec/roles/0", &[&kind], &[]).is_empty());
    }

    #[test]
    fn a_missing_value_comes_only_from_text_about_that_field() {
        let fill = |given: Value, p: &str| {
            let schema = json!({"type": "object"});
            let sources = sources(&schema, &given);
            fill_string(&sources, p)
        };
        // An unrelated label and the object's own name say nothing about the namespace.
        let given = json!({"metadata": {"name": "argocd", "labels": {"team": "payments"}},
            "spec": {}});
        assert!(fill(given, "/spec/namespace").is_empty());
        // A label whose key names the field, and prose that mentions it next to a name.
        let given = json!({"metadata": {"name": "argocd",
            "labels": {"app.kubernetes.io/name": "argocd-operator", "team": "payments"},
            "annotations": {"description": "Deploys Argo CD into the argocd-system namespace."}},
            "spec": {}});
        assert_eq!(
            fill(given.clone(), "/spec/source/catalog/packageName"),
            [json!("argocd-operator")]
        );
        assert_eq!(fill(given, "/spec/namespace"), [json!("argocd-system")]);
        // A generic name (`name`) is filled from the same field under a similar parent only.
        let given = json!({"metadata": {"name": "x", "labels": {"app.kubernetes.io/name": "wiki"}},
            "spec": {"serviceAccount": {"name": "backup-runner"},
                     "source": {"secretRef": {"name": "wiki-s3"}}}});
        assert!(fill(given.clone(), "/spec/destination/keySecret/name").is_empty());
        assert_eq!(
            fill(given, "/spec/destination/secretRef/name"),
            [json!("wiki-s3")]
        );
        // A name the schema gives to fields of two objects (an ACME account's email and a DNS
        // provider's) is about the same thing only under a similar parent.
        let schema = json!({"type": "object", "properties": {"spec": {"type": "object",
            "properties": {"acme": {"type": "object", "properties": {
                "email": {"type": "string"},
                "cloudflare": {"type": "object", "properties": {"email": {"type": "string"}}}}}}}}});
        let given = json!({"metadata": {"name": "x"},
            "spec": {"acme": {"email": "tls@example.com", "cloudflare": {}}}});
        let sources = sources(&schema, &given);
        assert!(fill_string(&sources, "/spec/acme/cloudflare/email").is_empty());
        assert!(reused_name(&schema, "email") && !reused_name(&schema, "cloudflare"));
    }

    #[test]
    fn a_negated_word_is_no_reading_of_the_value() {
        // The default is "abort": "do not abort" does not ask for it, nor for the literal.
        let node = json!({"type": "string", "pattern": "^(?i)(abort|warn)?$",
            "description": "When unset, the strategy is abort."});
        assert!(!asks_for_default(
            &json!("do not abort"),
            Some(&node),
            "strategy"
        ));
        assert!(asks_for_default(
            &json!("abort, as by default"),
            Some(&node),
            "strategy"
        ));
        // The field's own name is no word about its default.
        let selector = json!({"type": "object", "description":
            "Namespaces searched; left unset, only the own namespace is searched."});
        let all = json!("all namespaces");
        assert!(!asks_for_default(
            &all,
            Some(&selector),
            "configNamespaceSelector"
        ));
        assert!(asks_for_default(
            &json!("only the own one, searched"),
            Some(&selector),
            "x"
        ));
        let p = "/spec/strategy";
        assert!(pattern_options(p, "^(abort|warn)$", "do not abort").is_empty());
        assert_eq!(
            pattern_options(p, "^(abort|warn)$", "warn only"),
            vec![vec![Edit::Set(p.into(), json!("warn"))]]
        );
    }

    #[test]
    fn an_allowed_value_the_user_negates_is_no_option() {
        let p = "/spec/location";
        let allowed = [json!("MESH_EXTERNAL"), json!("MESH_INTERNAL")];
        let value = json!("not external (the VMs run istio-proxy)");
        assert_eq!(
            enum_options(p, &allowed, &value, &[], ""),
            vec![vec![Edit::Set(p.into(), json!("MESH_INTERNAL"))]]
        );
    }

    #[test]
    fn a_named_value_whose_remark_describes_another_is_no_reading() {
        let p = "/spec/vxlanMode";
        let allowed = [json!("Never"), json!("Always"), json!("CrossSubnet")];
        let description = "VXLAN encapsulation: Always, CrossSubnet (only when the destination \
            node is on another subnet) or Never.";
        let contradicts =
            json!("Always (only encapsulate when the destination node is in another subnet)");
        assert!(enum_options(p, &allowed, &contradicts, &["Always"], description).is_empty());
        // A remark that says nothing of another value leaves the named one.
        let remark = json!("Always (we were told to)");
        assert_eq!(
            enum_options(p, &allowed, &remark, &["Always"], description)[0],
            vec![Edit::Set(p.into(), json!("Always"))]
        );
    }

    #[test]
    fn one_object_moved_where_a_list_of_them_belongs_is_its_one_item() {
        let schema = json!({"type": "object", "properties": {"spec": {"type": "object",
            "properties": {"destinations": {"type": "array", "items": {"type": "object",
                "properties": {"server": {"type": "string"}, "namespace": {"type": "string"}}}}}}}});
        let destination = json!({"server": "https://kubernetes.default.svc", "namespace": "pay"});
        let given = json!({"spec": {"destination": destination}});
        let sources = sources(&schema, &given);
        let at = "/spec/destination";
        assert_eq!(
            relocations(&sources, at, &destination, &[])[0],
            vec![
                Edit::Remove(at.into()),
                Edit::Set("/spec/destinations".into(), json!([destination])),
            ]
        );
    }

    #[test]
    fn a_wrapper_from_another_apis_shape_is_dropped_and_its_fields_kept() {
        let schema = json!({"type": "object", "properties": {"spec": {"type": "object",
            "properties": {"password": {"type": "object", "properties": {
                "name": {"type": "string"}, "key": {"type": "string"}}}}}}});
        let wrapped = json!({"name": "smtp", "key": "password"});
        let given = json!({"spec": {"password": {"secretKeyRef": wrapped}}});
        let sources = sources(&schema, &given);
        let at = "/spec/password/secretKeyRef";
        assert_eq!(
            relocations(&sources, at, &wrapped, &[])[0],
            vec![
                Edit::Remove(at.into()),
                Edit::Set("/spec/password/key".into(), json!("password")),
                Edit::Set("/spec/password/name".into(), json!("smtp")),
            ]
        );
        // A field the place does not declare: no unwrap, the wrapper is only dropped.
        let other = json!({"name": "smtp", "optional": true});
        let given = json!({"spec": {"password": {"secretKeyRef": other}}});
        let sources = Sources {
            given: &given,
            ..sources
        };
        assert_eq!(
            relocations(&sources, at, &other, &[]),
            vec![vec![Edit::Remove(at.into())]]
        );
    }

    #[test]
    fn a_chain_of_one_field_wrappers_is_structure_too() {
        let schema = json!({"type": "object", "properties": {"spec": {"type": "object",
            "properties": {"url": {"type": "string"}, "method": {"type": "string"}}}}});
        let block = json!({"webhook": {"url": "https://a.example/t", "method": "POST"}});
        let given = json!({"spec": {"provider": block}});
        let sources = sources(&schema, &given);
        let at = "/spec/provider";
        assert_eq!(
            relocations(&sources, at, &block, &[])[0],
            vec![
                Edit::Remove(at.into()),
                Edit::Set("/spec/method".into(), json!("POST")),
                Edit::Set("/spec/url".into(), json!("https://a.example/t")),
            ]
        );
        // Beside a field it would write, no unwrap.
        let given = json!({"spec": {"provider": block, "url": "https://b.example"}});
        let sources = Sources {
            given: &given,
            ..sources
        };
        assert!(relocations(&sources, at, &block, &[])
            .iter()
            .all(|r| !r.contains(&Edit::Set("/spec/method".into(), json!("POST")))));
    }

    #[test]
    fn a_word_of_absence_where_an_object_belongs_reads_as_its_absence() {
        let object = json!({"type": "object", "properties": {"ntlm": {"type": "object"}}});
        let none = json!("none - the API gateway checks the bearer token below");
        assert!(says_absent(&none, Some(&object)));
        assert!(says_absent(&json!("None"), Some(&object)));
        let address = json!({"type": "string", "description": "Where it is reached."});
        assert!(says_absent(&none, Some(&address)));
        // An off switch, where an object with no switch of its own belongs.
        let disabled = json!("disabled - v4 of the app dropped /healthz");
        assert!(says_absent(&disabled, Some(&object)));
        let switched = json!({"type": "object", "properties": {"enabled": {"type": "boolean"}}});
        assert!(!says_absent(&disabled, Some(&switched)));
        assert!(!says_absent(&disabled, Some(&address)));
        // Not where the field has a default (its absence means it), nor for a sentence that
        // only holds the word.
        let counted =
            json!({"type": "integer", "description": "A quarter of length when omitted."});
        assert!(!says_absent(&none, Some(&counted)));
        // Nor for an amount, whose "none" may be zero or no limit.
        let timeout = json!({"type": "string", "pattern": "^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$"});
        assert!(!says_absent(&none, Some(&timeout)));
        assert!(!says_absent(&none, Some(&json!({"type": "integer"}))));
        let defaulted = json!({"type": "object", "default": {"mode": "basic"}});
        assert!(!says_absent(&none, Some(&defaulted)));
        assert!(!says_absent(
            &json!("none of the usual ones"),
            Some(&object)
        ));
    }

    #[test]
    fn pairs_written_one_level_too_high_go_into_the_map_beside_them() {
        let schema = json!({"type": "object", "properties": {"spec": {"type": "object",
            "properties": {"selector": {"type": "object", "properties": {
                "matchLabels": {"type": "object", "additionalProperties": {"type": "string"}},
                "matchExpressions": {"type": "array", "items": {"type": "object"}}}}}}}});
        let given = json!({"spec": {"selector": {"role": "alert-rules", "ruler": "global"}}});
        let sources = sources(&schema, &given);
        let at = "/spec/selector/role";
        assert_eq!(
            relocations(&sources, at, &json!("alert-rules"), &[]),
            vec![vec![
                Edit::Remove(at.into()),
                Edit::Set(
                    "/spec/selector/matchLabels/role".into(),
                    json!("alert-rules")
                ),
            ]]
        );
        // Beside a declared field, or a value that is no text: only dropped.
        for given in [
            json!({"spec": {"selector": {"role": "alert-rules", "matchExpressions": []}}}),
            json!({"spec": {"selector": {"role": 3}}}),
        ] {
            let value = given.pointer(at).unwrap().clone();
            let sources = Sources {
                given: &given,
                ..sources
            };
            assert_eq!(
                relocations(&sources, at, &value, &[]),
                vec![vec![Edit::Remove(at.into())]]
            );
        }
    }

    #[test]
    fn an_address_without_its_scheme_gets_each_scheme_the_pattern_requires() {
        let proxy = "^(http|https)://.*$";
        let schema = json!({"type": "object"});
        let plain = json!({"spec": {"proxy": "squid.corp:3128"}});
        let set = |url: &str| vec![Edit::Set("/spec/proxy".into(), json!(url))];
        assert_eq!(
            with_scheme(
                &sources(&schema, &plain),
                "/spec/proxy",
                proxy,
                "squid.corp:3128"
            ),
            vec![
                set("http://squid.corp:3128"),
                set("https://squid.corp:3128")
            ]
        );
        // TLS set up beside the address: the secure scheme first.
        let tls = json!({"spec": {"proxy": "squid.corp:3128", "tlsConfig": {"ca": "x"}}});
        assert_eq!(
            with_scheme(
                &sources(&schema, &tls),
                "/spec/proxy",
                proxy,
                "squid.corp:3128"
            ),
            vec![
                set("https://squid.corp:3128"),
                set("http://squid.corp:3128")
            ]
        );
        let off = json!({"spec": {"proxy": "squid.corp:3128", "tls": false}});
        assert_eq!(
            with_scheme(
                &sources(&schema, &off),
                "/spec/proxy",
                proxy,
                "squid.corp:3128"
            )[0],
            set("http://squid.corp:3128")
        );
        let ws = json!({"spec": {"proxy": "a.b", "tls": true}});
        assert_eq!(
            with_scheme(
                &sources(&schema, &ws),
                "/spec/proxy",
                "^(ws|wss)://.*$",
                "a.b"
            )[0],
            set("wss://a.b")
        );
        // A scheme already written, prose, or a pattern that requires none: no reading.
        let plain = sources(&schema, &plain);
        for said in [
            "ftp://squid.corp",
            "the corporate proxy",
            "",
            "git@github.com:org/repo.git",
            "squid.corp:proxy",
        ] {
            assert!(
                with_scheme(&plain, "/spec/proxy", proxy, said).is_empty(),
                "{said}"
            );
        }
        assert!(with_scheme(&plain, "/spec/host", "^[a-z.]+$", "squid.corp").is_empty());
    }

    #[test]
    fn a_group_and_a_version_apart_are_the_api_version() {
        let schema = json!({"type": "object", "properties": {"spec": {"type": "object",
            "properties": {"resources": {"type": "array", "items": {"type": "object",
                "properties": {"apiVersion": {"type": "string"}, "kind": {"type": "string"},
                    "name": {"type": "string"}}}}}}}});
        let given = json!({"spec": {"resources": [{"group": "kustomize.toolkit.fluxcd.io",
            "version": "v1", "kind": "Kustomization", "name": "apps"}]}});
        assert_eq!(
            api_version_of_parts(&sources(&schema, &given), "/spec/resources/0/version"),
            Some(vec![
                Edit::Remove("/spec/resources/0/group".into()),
                Edit::Remove("/spec/resources/0/version".into()),
                Edit::Set(
                    "/spec/resources/0/apiVersion".into(),
                    json!("kustomize.toolkit.fluxcd.io/v1")
                ),
            ])
        );
        let core = json!({"spec": {"resources": [{"version": "v1", "kind": "Secret"}]}});
        assert_eq!(
            api_version_of_parts(&sources(&schema, &core), "/spec/resources/0/version")
                .and_then(|r| r.last().cloned()),
            Some(Edit::Set(
                "/spec/resources/0/apiVersion".into(),
                json!("v1")
            ))
        );
    }

    #[test]
    fn references_grouped_by_an_allowed_value_are_one_item_each() {
        let list = json!({"type": "array", "items": {"type": "object", "required": ["kind", "name"],
            "properties": {"kind": {"type": "string", "enum": ["GitRepository", "OCIRepository"]},
                "name": {"type": "string"}}}});
        let groups = json!({"GitRepository": ["webapp"], "OCIRepository": "manifests"});
        assert_eq!(
            grouped_by_enum(groups.as_object().unwrap(), &list),
            Some(json!([{"kind": "GitRepository", "name": "webapp"},
                {"kind": "OCIRepository", "name": "manifests"}]))
        );
        // A key that is no allowed value, or a value that is no name: no reading.
        let other = json!({"Bucket": ["b"]});
        assert_eq!(grouped_by_enum(other.as_object().unwrap(), &list), None);
        let deep = json!({"GitRepository": [{"name": "webapp"}]});
        assert_eq!(grouped_by_enum(deep.as_object().unwrap(), &list), None);
    }

    #[test]
    fn fields_one_level_too_high_go_into_the_field_that_declares_them() {
        let provider = json!({"type": "object", "properties": {
            "issuerURL": {"type": "string"}, "audience": {"type": "string"}}});
        let schema = json!({"type": "object", "properties": {"spec": {"type": "object",
            "properties": {
                "type": {"type": "string"},
                "oidcProviders": {"type": "array", "items": provider}}}}});
        let given = json!({"spec": {"type": "generic-oidc",
            "issuerURL": "https://token.example", "audience": "flux"}});
        let resolution =
            into_the_field_that_declares_them(&sources(&schema, &given), "/spec/audience");
        assert_eq!(
            resolution,
            Some(vec![
                Edit::Remove("/spec/audience".into()),
                Edit::Remove("/spec/issuerURL".into()),
                Edit::Set(
                    "/spec/oidcProviders".into(),
                    json!([{"issuerURL": "https://token.example", "audience": "flux"}])
                ),
            ])
        );
        // An undeclared key no property declares: no reading.
        let other = json!({"spec": {"issuerURL": "https://token.example", "team": "a"}});
        assert_eq!(
            into_the_field_that_declares_them(&sources(&schema, &other), "/spec/team"),
            None
        );
        // A home already written takes them beside what it holds, unless one is set there.
        let queue = json!({"type": "object", "properties": {
            "capacity": {"type": "integer"}, "deadline": {"type": "string"}}});
        let schema = json!({"type": "object", "properties": {"spec": {"type": "object",
            "properties": {"url": {"type": "string"}, "queueConfig": queue}}}});
        let given = json!({"spec": {"url": "u", "capacity": 20000,
            "queueConfig": {"deadline": "5s"}}});
        assert_eq!(
            into_the_field_that_declares_them(&sources(&schema, &given), "/spec/capacity"),
            Some(vec![
                Edit::Remove("/spec/capacity".into()),
                Edit::Set(
                    "/spec/queueConfig".into(),
                    json!({"deadline": "5s", "capacity": 20000})
                ),
            ])
        );
        let clash = json!({"spec": {"capacity": 20000, "queueConfig": {"capacity": 10}}});
        assert_eq!(
            into_the_field_that_declares_them(&sources(&schema, &clash), "/spec/capacity"),
            None
        );
    }

    #[test]
    fn a_declared_field_refused_where_it_stands_goes_with_the_fields_into_their_home() {
        let webhook = json!({"type": "object", "required": ["endpoint", "port"], "properties": {
            "endpoint": {"type": "string"}, "port": {"type": "string"},
            "url": {"type": "string"}}});
        let schema = json!({"type": "object", "properties": {"entry": {"type": "object",
            "properties": {
                "topic": {"type": "string"},
                "endpoint": {"type": "string", "pattern": "^https?://"},
                "webhook": webhook}}}});
        let given = json!({"entry": {"topic": "t", "endpoint": "/events", "port": "12000",
            "url": "https://events.example.com"}});
        assert_eq!(
            into_the_field_that_declares_them(&sources(&schema, &given), "/entry/port"),
            Some(vec![
                Edit::Remove("/entry/endpoint".into()),
                Edit::Remove("/entry/port".into()),
                Edit::Remove("/entry/url".into()),
                Edit::Set(
                    "/entry/webhook".into(),
                    json!({"endpoint": "/events", "port": "12000",
                        "url": "https://events.example.com"})
                ),
            ])
        );
        // An endpoint its own place takes stays there, and the webhook then lacks one.
        let valid_there = json!({"entry": {"endpoint": "https://sns.example.com",
            "port": "12000", "url": "https://events.example.com"}});
        assert_eq!(
            into_the_field_that_declares_them(&sources(&schema, &valid_there), "/entry/port"),
            None
        );
    }

    #[test]
    fn levels_written_the_other_way_round_are_swapped_back() {
        let phases = json!({"type": "object", "properties": {
            "access": {"type": "array", "items": {"type": "string"}}}});
        let schema = json!({"type": "object", "properties": {"ordering": {"type": "object",
            "properties": {"before": phases, "after": phases}}}});
        let given = json!({"ordering": {"access": {"before": ["key-auth"]}}});
        assert_eq!(
            swapped_levels(
                &sources(&schema, &given),
                "/ordering/access",
                &given["ordering"]["access"]
            ),
            Some(vec![
                Edit::Remove("/ordering/access".into()),
                Edit::Set("/ordering/before".into(), json!({"access": ["key-auth"]})),
            ])
        );
        // A field the inner level names that the schema does not declare: no reading.
        let other = json!({"ordering": {"access": {"during": ["key-auth"]}}});
        assert_eq!(
            swapped_levels(
                &sources(&schema, &other),
                "/ordering/access",
                &other["ordering"]["access"]
            ),
            None
        );
        // Nor where the swapped place is already written.
        let written =
            json!({"ordering": {"access": {"before": ["a"]}, "before": {"access": ["b"]}}});
        assert_eq!(
            swapped_levels(
                &sources(&schema, &written),
                "/ordering/access",
                &written["ordering"]["access"]
            ),
            None
        );
    }

    #[test]
    fn pairs_moved_to_a_label_selector_go_into_its_map() {
        let selector = json!({"type": "object", "properties": {
            "matchLabels": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
            "matchExpressions": {"type": "array", "items": {"type": "object"}}}});
        let pairs = json!({"app": "orders", "tier": "api"});
        assert_eq!(
            pairs_into_its_map(&pairs, &selector),
            Some(json!({"matchLabels": {"app": "orders", "tier": "api"}}))
        );
        // A key the selector declares is no label, and a value that is no text neither.
        assert_eq!(
            pairs_into_its_map(&json!({"matchLabels": "x"}), &selector),
            None
        );
        assert_eq!(pairs_into_its_map(&json!({"app": 1}), &selector), None);
    }

    #[test]
    fn a_value_moved_goes_first_where_a_required_one_is_missing() {
        let selector = json!({"type": "object", "properties": {
            "matchLabels": {"type": "object", "additionalProperties": {"type": "string"}}}});
        let schema = json!({"type": "object", "properties": {"spec": {"type": "object",
            "properties": {"externalWorkloadSelector": selector, "podSelector": selector}}}});
        let given = json!({"spec": {"selector": {"app": "orders"}}});
        let errors = [FieldError {
            pointer: "/spec/podSelector".into(),
            kind: ErrorKind::Required,
            message: "Required value".into(),
        }];
        let options = relocations(
            &sources(&schema, &given),
            "/spec/selector",
            &given["spec"]["selector"],
            &errors,
        );
        assert_eq!(
            options[0],
            vec![
                Edit::Remove("/spec/selector".into()),
                Edit::Set(
                    "/spec/podSelector".into(),
                    json!({"matchLabels": {"app": "orders"}})
                ),
            ]
        );
        let unordered = relocations(
            &sources(&schema, &given),
            "/spec/selector",
            &given["spec"]["selector"],
            &[],
        );
        assert!(
            matches!(&unordered[0][1], Edit::Set(to, _) if to == "/spec/externalWorkloadSelector")
        );
    }

    #[test]
    fn a_list_stated_as_none_is_offered_empty_first() {
        let schema = json!({"type": "object", "properties": {"taints": {"type": "array",
            "items": {"type": "object", "required": ["key"], "properties": {"key": {"type": "string"}}}}}});
        let given = json!({"taints": "none - workloads run on this node"});
        let options = resolutions(
            &sources(&schema, &given),
            "/taints",
            &[&ErrorKind::Type {
                expected: "array".into(),
            }],
            &[],
        );
        assert_eq!(options[0], vec![Edit::Set("/taints".into(), json!([]))]);
    }

    #[test]
    fn an_undeclared_field_may_be_the_required_field_beside_it_after_similar_names() {
        let schema = json!({"type": "object", "required": ["plugin"], "properties": {
            "plugin": {"type": "string", "pattern": "^[a-z0-9-]+$"},
            "instance_name": {"type": "string"}}});
        let given = json!({"name": "rate-limiting"});
        let options = relocations(&sources(&schema, &given), "/name", &given["name"], &[]);
        let to = |o: &Resolution| match &o[1] {
            Edit::Set(to, _) => to.clone(),
            Edit::Remove(_) => String::new(),
        };
        assert_eq!(
            options.iter().map(to).collect::<Vec<_>>(),
            ["/instance_name", "/plugin"]
        );
    }

    #[test]
    fn a_value_cut_short_is_read_as_the_annotation_states_it_in_full() {
        let schema = json!({"type": "object", "properties": {"version": {"type": "string",
            "pattern": "^v?[0-9]+\\.[0-9]+\\.[0-9]+$"}}});
        let given = json!({"metadata": {"annotations": {"description":
            "Runs Kubernetes 1.31.4, like the workers."}}, "version": "1.31"});
        let options = resolutions(
            &sources(&schema, &given),
            "/version",
            &[&ErrorKind::Pattern {
                pattern: "^v?[0-9]+\\.[0-9]+\\.[0-9]+$".into(),
            }],
            &[],
        );
        assert!(options.contains(&vec![Edit::Set("/version".into(), json!("1.31.4"))]));
    }

    #[test]
    fn a_selector_where_a_list_of_requirements_belongs_is_one_requirement_per_clause() {
        let items = json!({"type": "object", "properties": {
            "key": {"type": "string"}, "operator": {"type": "string"},
            "values": {"type": "array", "items": {"type": "string"}}}});
        assert_eq!(
            requirements("app in (payments-api,ledger),track!=canary,tier=db", &items),
            Some(json!([
                {"key": "app", "operator": "In", "values": ["payments-api", "ledger"]},
                {"key": "track", "operator": "NotIn", "values": ["canary"]},
                {"key": "tier", "operator": "In", "values": ["db"]}
            ]))
        );
        assert_eq!(requirements("app in (a,b", &items), None);
        assert_eq!(requirements("app=a", &json!({"type": "string"})), None);
    }

    #[test]
    fn a_taint_where_tolerations_belong_is_the_toleration_of_it() {
        let items = json!({"type": "object", "properties": {"key": {"type": "string"},
            "operator": {"type": "string"}, "value": {"type": "string"},
            "effect": {"type": "string"}}});
        assert_eq!(
            toleration_of_taint("node-role.kubernetes.io/control-plane:NoSchedule", &items),
            Some(json!({"key": "node-role.kubernetes.io/control-plane",
                "operator": "Exists", "effect": "NoSchedule"}))
        );
        assert_eq!(
            toleration_of_taint("dedicated=gpu:NoExecute", &items),
            Some(
                json!({"key": "dedicated", "operator": "Equal", "value": "gpu",
                "effect": "NoExecute"})
            )
        );
        assert_eq!(toleration_of_taint("dedicated=gpu:Sometimes", &items), None);
        assert_eq!(toleration_of_taint("a b:NoSchedule", &items), None);
    }

    #[test]
    fn a_key_named_for_a_field_and_a_unit_is_that_fields_amount() {
        let duration = json!({"type": "string", "pattern": "^([0-9]+(ms|s|m|h))+$"});
        let schema = json!({"type": "object", "properties": {"spec": {"type": "object",
            "properties": {"timeout": duration, "retries": {"type": "integer"}}}}});
        let given = json!({"spec": {"timeout-minutes": 20}});
        let sources = sources(&schema, &given);
        assert_eq!(
            amount_in_named_unit(&sources, "/spec/timeout-minutes", &json!(20)),
            Some(vec![
                Edit::Remove("/spec/timeout-minutes".into()),
                Edit::Set("/spec/timeout".into(), json!("20m")),
            ])
        );
        // A field that takes no such amount, or a value that is no number: no reading.
        assert_eq!(
            amount_in_named_unit(&sources, "/spec/retriesSeconds", &json!(3)),
            None
        );
        assert_eq!(
            amount_in_named_unit(&sources, "/spec/timeoutSeconds", &json!("soon")),
            None
        );
    }

    #[test]
    fn a_map_of_objects_where_a_list_belongs_is_one_item_per_key() {
        let item = |extra: Value| {
            let mut properties = json!({"url": {"type": "string"}});
            properties
                .as_object_mut()
                .unwrap()
                .extend(extra.as_object().unwrap().clone());
            json!({"type": "array", "items": {"type": "object", "properties": properties}})
        };
        let named = item(json!({"name": {"type": "string"}}));
        let map = json!({"mimir": {"url": "a"}, "cloud": {"url": "b"}});
        assert_eq!(
            map_of_objects_as_list(&map, &named, "/spec/remoteWrite"),
            Some(json!([{"url": "b", "name": "cloud"}, {"url": "a", "name": "mimir"}]))
        );
        // No name field: the keys are the values file's labels, the items the objects.
        assert_eq!(
            map_of_objects_as_list(&map, &item(json!({})), "/spec/remoteWrite"),
            Some(json!([{"url": "b"}, {"url": "a"}]))
        );
        // A field the items do not declare, or a value that is no object: no reading.
        let odd = json!({"mimir": {"url": "a", "shards": 2}});
        assert_eq!(
            map_of_objects_as_list(&odd, &named, "/spec/remoteWrite"),
            None
        );
        assert_eq!(
            map_of_objects_as_list(&json!({"a": "b"}), &named, "/spec/remoteWrite"),
            None
        );
        // The items' name field, named for what the list holds.
        let groups = json!({"type": "array", "items": {"type": "object", "properties": {
            "groupName": {"type": "string"}, "replicas": {"type": "integer"},
            "serviceName": {"type": "string"}}}});
        assert_eq!(
            map_of_objects_as_list(
                &json!({"cpu": {"replicas": 2}}),
                &groups,
                "/spec/workerGroupSpecs"
            ),
            Some(json!([{"groupName": "cpu", "replicas": 2}]))
        );
    }

    #[test]
    fn a_list_where_one_object_belongs_goes_to_its_plural() {
        let selector = json!({"type": "object", "properties": {
            "matchLabels": {"type": "object", "additionalProperties": {"type": "string"}}}});
        let schema = json!({"type": "object", "properties": {"spec": {"type": "object",
            "properties": {
                "namespaceSelector": selector,
                "namespaceSelectors": {"type": "array", "items": selector}}}}});
        let at = "/spec/namespaceSelector";
        let node = schema::node_at(&schema, at).unwrap();
        let list =
            json!([{"matchLabels": {"team": "payments"}}, {"matchLabels": {"team": "billing"}}]);
        let given = json!({"spec": {"namespaceSelector": list}});
        assert_eq!(
            to_plural_sibling(&sources(&schema, &given), at, &list, node),
            Some(vec![
                Edit::Remove(at.into()),
                Edit::Set("/spec/namespaceSelectors".into(), list.clone())
            ])
        );
        // The plural already set: no reading.
        let both = json!({"spec": {"namespaceSelector": list, "namespaceSelectors": []}});
        assert_eq!(
            to_plural_sibling(&sources(&schema, &both), at, &list, node),
            None
        );
    }

    #[test]
    fn everything_except_a_part_is_that_part_excluded() {
        let schema = json!({"type": "object", "properties": {"spec": {"type": "object",
            "properties": {
                "inclusionList": {"type": "array", "items": {"type": "string"}},
                "exclusionList": {"type": "array", "items": {"type": "string"}}}}}});
        let at = "/spec/inclusionList";
        let node = schema::node_at(&schema, at).unwrap();
        let except = |given: Value| {
            let sources = sources(&schema, &given);
            let value = given.pointer(at).cloned().unwrap();
            all_except(&sources, at, &value, node)
        };
        assert_eq!(
            except(json!({"spec": {"inclusionList":
                "everything except the 'Health check passed' messages"}})),
            Some(vec![
                Edit::Remove(at.into()),
                Edit::Set("/spec/exclusionList".into(), json!(["Health check passed"]))
            ])
        );
        // No part in quotes, the opposite already set, or no "except": no reading.
        assert_eq!(
            except(json!({"spec": {"inclusionList": "everything except health checks"}})),
            None
        );
        assert_eq!(
            except(json!({"spec": {"inclusionList": "everything except 'a'",
                "exclusionList": []}})),
            None
        );
        assert_eq!(except(json!({"spec": {"inclusionList": "only 'a'"}})), None);
    }

    #[test]
    fn a_value_its_field_refuses_goes_to_the_one_sibling_named_after_it() {
        let schema = json!({"type": "object", "properties": {"spec": {"type": "object",
            "properties": {
                "jwks": {"type": "string", "pattern": "^\\s*\\{[\\s\\S]*\\}\\s*$"},
                "jwksUri": {"type": "string", "format": "uri"},
                "port": {"type": "string"}, "portNumber": {"type": "integer"},
                "storage": {"type": "string", "pattern": "^[0-9]+Gi$"},
                "storageClassName": {"type": "string"},
                "alertRelabelConfigs": {"type": "object", "properties": {
                    "name": {"type": "string"}, "key": {"type": "string"}}},
                "alertRelabelConfigFile": {"type": "string"}}}}});
        let named = |given: Value, at: &str| {
            let sources = sources(&schema, &given);
            let value = given.pointer(at).cloned().unwrap();
            let node = schema::node_at(&schema, at).unwrap();
            named_sibling(&sources, at, &value, node)
        };
        // Refused by its type, or by its pattern.
        assert_eq!(
            named(json!({"spec": {"port": 9102}}), "/spec/port"),
            Some(vec![
                Edit::Remove("/spec/port".into()),
                Edit::Set("/spec/portNumber".into(), json!(9102))
            ])
        );
        let url = json!("https://auth.example.com/keys");
        assert_eq!(
            named(json!({"spec": {"jwks": url}}), "/spec/jwks"),
            Some(vec![
                Edit::Remove("/spec/jwks".into()),
                Edit::Set("/spec/jwksUri".into(), url.clone())
            ])
        );
        // A text where an object belongs goes to the text named after one of what it holds.
        let path = json!("/etc/thanos/alert-relabel/relabel.yaml");
        assert_eq!(
            named(
                json!({"spec": {"alertRelabelConfigs": path}}),
                "/spec/alertRelabelConfigs"
            ),
            Some(vec![
                Edit::Remove("/spec/alertRelabelConfigs".into()),
                Edit::Set("/spec/alertRelabelConfigFile".into(), path.clone())
            ])
        );
        // A value its field takes, or a sibling already set, or one that takes any text.
        assert_eq!(named(json!({"spec": {"jwks": "{}"}}), "/spec/jwks"), None);
        assert_eq!(
            named(json!({"spec": {"storage": "20 GiB"}}), "/spec/storage"),
            None
        );
        assert_eq!(
            named(
                json!({"spec": {"jwks": url, "jwksUri": "https://b"}}),
                "/spec/jwks"
            ),
            None
        );
    }

    #[test]
    fn an_undeclared_field_goes_to_the_one_absent_required_field_that_takes_it() {
        let cron = json!({"type": "string", "pattern": "^(@daily|\\S+ \\S+ \\S+ \\S+ \\S+)$"});
        let relocate = |required: Value, properties: Value, given: Value, at: &str| {
            let schema = json!({"type": "object", "properties": {"spec": {"type": "object",
                "required": required, "properties": properties}}});
            let sources = sources(&schema, &given);
            let value = given.pointer(at).cloned().unwrap();
            relocations(&sources, at, &value, &[])
        };
        let moved = vec![
            Edit::Remove("/spec/schedule".into()),
            Edit::Set("/spec/cron".into(), json!("*/30 * * * *")),
        ];
        let given = json!({"spec": {"schedule": "*/30 * * * *", "task": "snapshot"}});
        assert_eq!(
            relocate(
                json!(["cron", "task"]),
                json!({"cron": cron, "task": {"type": "string"}}),
                given.clone(),
                "/spec/schedule"
            )[0],
            moved
        );
        // A required field that takes any text is about something else, not this value.
        let plain = json!({"cron": {"type": "string"}, "task": {"type": "string"}});
        assert_eq!(
            relocate(
                json!(["cron", "task"]),
                plain,
                given.clone(),
                "/spec/schedule"
            ),
            vec![vec![Edit::Remove("/spec/schedule".into())]]
        );
        // Two absent required fields that take it: no reading.
        let two = json!({"cron": cron, "backupCron": cron, "task": {"type": "string"}});
        assert_eq!(
            relocate(
                json!(["cron", "backupCron"]),
                two,
                given.clone(),
                "/spec/schedule"
            ),
            vec![vec![Edit::Remove("/spec/schedule".into())]]
        );
        // Only a required one, only an absent one, only one whose schema takes the value.
        let optional = json!({"cron": cron, "task": {"type": "string"}});
        assert_eq!(
            relocate(json!(["task"]), optional, given, "/spec/schedule"),
            vec![vec![Edit::Remove("/spec/schedule".into())]]
        );
        // A number is told from text by its type: `port: 443` beside a required `number`.
        let ports = json!({"number": {"type": "integer", "minimum": 1, "maximum": 65535},
            "name": {"type": "string"}});
        assert_eq!(
            relocate(
                json!(["number", "name"]),
                ports.clone(),
                json!({"spec": {"port": 443, "name": "https"}}),
                "/spec/port"
            )[0],
            vec![
                Edit::Remove("/spec/port".into()),
                Edit::Set("/spec/number".into(), json!(443))
            ]
        );
        assert_eq!(
            relocate(
                json!(["number", "name"]),
                ports,
                json!({"spec": {"port": 70000, "name": "https"}}),
                "/spec/port"
            ),
            vec![vec![Edit::Remove("/spec/port".into())]]
        );
        // An object whose every field the absent required one declares; a template's spec
        // where that spec belongs (a CronJob's `jobTemplate` beside a Job's spec).
        let job = json!({"type": "object", "properties": {
            "backoffLimit": {"type": "integer"},
            "template": {"type": "object", "properties": {"spec": {"type": "object",
                "properties": {"containers": {"type": "array"}}}}}}});
        let jobs = json!({"jobTargetRef": job, "pollingInterval": {"type": "integer"}});
        let spec = json!({"backoffLimit": 2, "template": {"spec": {}}});
        for (written, at) in [
            (json!({"spec": spec.clone()}), "/spec/jobTemplate"),
            (spec.clone(), "/spec/job"),
        ] {
            let mut given = json!({"spec": {"pollingInterval": 20}});
            given["spec"][&at[6..]] = written;
            // (After the move into `template`, a field of a similar name that does not take it.)
            assert!(
                relocate(json!(["jobTargetRef"]), jobs.clone(), given, at).contains(&vec![
                    Edit::Remove(at.into()),
                    Edit::Set("/spec/jobTargetRef".into(), spec.clone())
                ]),
                "{at}"
            );
        }
        // A field it does not declare, or a template with more than its spec: no reading.
        for written in [
            json!({"backoffLimit": 2, "schedule": "@daily"}),
            json!({"metadata": {"name": "x"}, "spec": spec}),
        ] {
            let given = json!({"spec": {"jobTemplate": written}});
            let options = relocate(
                json!(["jobTargetRef"]),
                jobs.clone(),
                given,
                "/spec/jobTemplate",
            );
            assert!(!options
                .iter()
                .flatten()
                .any(|e| matches!(e, Edit::Set(to, _) if to == "/spec/jobTargetRef")));
        }
    }

    #[test]
    fn a_split_part_goes_only_to_the_one_field_that_takes_it() {
        let split = |properties: Value, value: &str| {
            let schema = json!({"type": "object", "properties": {"spec": {
                "type": "object", "properties": properties}}});
            let given = json!({"spec": {"service": value}});
            let sources = sources(&schema, &given);
            split_to_sibling(&sources, "/spec/service", &json!(value))
        };
        // `web:8080` → the integer port; the string `namespace` would take any text, the port
        // is the only field whose schema takes 8080 as what it is.
        let options = split(
            json!({"service": {"type": "string"}, "port": {"type": "integer", "maximum": 65535},
                   "namespace": {"type": "string", "pattern": "^[a-z]+$"}}),
            "web:8080",
        );
        assert_eq!(
            options,
            vec![vec![
                Edit::Set("/spec/service".into(), json!("web")),
                Edit::Set("/spec/port".into(), json!(8080)),
            ]]
        );
        // Two string fields that would both take the part: no split is a reading.
        let options = split(
            json!({"service": {"type": "string"}, "namespace": {"type": "string"},
                   "cluster": {"type": "string"}}),
            "web:prod",
        );
        assert!(options.is_empty(), "{options:?}");
        // A part is one value: the rest of a sentence is none (`ISRG Root X1  # remark` is
        // not `ISRG` and a `profile` of the rest).
        let options = split(
            json!({"service": {"type": "string"}, "profile": {"type": "string"}}),
            "ISRG Root X1   # short chain only",
        );
        assert!(options.is_empty(), "{options:?}");
        // A port out of range is taken by no field.
        let options = split(
            json!({"service": {"type": "string"}, "port": {"type": "integer", "maximum": 65535}}),
            "web:99999",
        );
        assert!(options.is_empty(), "{options:?}");
    }

    #[test]
    fn a_string_keeps_its_structure_in_the_one_place_that_takes_it() {
        // Pairs into a map of strings that is the field itself.
        let labels = json!({"type": "object", "additionalProperties": {"type": "string"}});
        assert_eq!(
            rewrites(&json!("severity=warning, team=storage"), &labels),
            vec![json!({"severity": "warning", "team": "storage"})]
        );
        // A free map's keys are the user's: never `{name, value}` written by crfix.
        assert_eq!(
            rewrites(&json!("team=web"), &labels),
            vec![json!({"team": "web"})]
        );
        // A comparison is no pair: `tier!=cache` is not `{"tier!": cache}`.
        assert!(rewrites(&json!("app=postgres,tier!=cache"), &labels).is_empty());
        // A separated list into the object's one list-of-strings property.
        let selector = json!({"type": "object", "properties": {
            "any": {"type": "boolean"},
            "matchNames": {"type": "array", "items": {"type": "string"}}}});
        let options = rewrites(&json!("payments, payments-canary"), &selector);
        assert_eq!(
            options[0],
            json!({"matchNames": ["payments", "payments-canary"]})
        );
        // ... and nowhere when two properties would take it; a name that negates is no
        // place for a list the user wrote (a proposal: `certainty::lossless`).
        let two = json!({"type": "object", "properties": {
            "include": {"type": "array", "items": {"type": "string"}},
            "exclude": {"type": "array", "items": {"type": "string"}}}});
        assert_eq!(
            rewrites(&json!("web, db"), &two)[0],
            json!({"include": ["web", "db"]})
        );
        let both = json!({"type": "object", "properties": {
            "names": {"type": "array", "items": {"type": "string"}},
            "hosts": {"type": "array", "items": {"type": "string"}}}});
        assert!(rewrites(&json!("a, b"), &both).is_empty());
        // A separated list of names for a list of references: each name in its item's field.
        let depends_on = json!({"type": "array", "items": {"type": "object",
            "required": ["name"], "properties": {
                "name": {"type": "string"}, "namespace": {"type": "string"}}}});
        let options = rewrites(&json!("infra-controllers, infra-configs"), &depends_on);
        assert_eq!(
            options[0],
            json!([{"name": "infra-controllers"}, {"name": "infra-configs"}])
        );
        // Pairs into `{name, value}` items, alone or as a list.
        let args = json!({"type": "array", "items": {"type": "object", "required": ["name"],
            "properties": {"name": {"type": "string"}, "value": {"type": "string"}}}});
        let options = rewrites(&json!("service-name=orders-canary, threshold=0.05"), &args);
        assert_eq!(
            options[0],
            json!([{"name": "service-name", "value": "orders-canary"},
                   {"name": "threshold", "value": "0.05"}])
        );
        assert!(
            options
                .iter()
                .all(|o| !o[0]["name"].as_str().unwrap_or("").contains('=')),
            "{options:?}"
        );
        let parameter = &args["items"];
        assert_eq!(
            rewrites(&json!("grafana.enabled=false"), parameter),
            vec![json!({"name": "grafana.enabled", "value": "false"})]
        );
        // kubectl's TYPE/NAME where the object names a kind freely.
        let workload = json!({"type": "object", "properties": {
            "apiVersion": {"type": "string"}, "kind": {"type": "string"},
            "name": {"type": "string"}}});
        assert_eq!(
            rewrites(&json!("Deployment/inventory-api"), &workload),
            vec![json!({"name": "inventory-api", "kind": "Deployment"})]
        );
        // ... and kubectl's own names of a built-in kind, with its API version; a name is
        // never put into `kind` or `apiVersion` as if it were one.
        let target = json!({"type": "object", "required": ["kind", "name"], "properties": {
            "apiVersion": {"type": "string"}, "kind": {"type": "string"},
            "name": {"type": "string"}}});
        assert_eq!(
            rewrites(&json!("sts/redis-cache"), &target),
            vec![json!({"name": "redis-cache", "kind": "StatefulSet", "apiVersion": "apps/v1"})]
        );
        assert_eq!(
            rewrites(&json!("web/redis-cache"), &target),
            vec![json!({"name": "web/redis-cache"})]
        );
        // What `kubectl get -o name` prints for a custom resource names it by its name.
        let cluster = json!({"type": "object", "required": ["name"], "properties": {
            "name": {"type": "string"}}});
        assert_eq!(
            rewrites(&json!("cluster.postgresql.cnpg.io/pg-inventory"), &cluster),
            vec![json!({"name": "pg-inventory"})]
        );
        // A comparison: the operator goes to the one field whose enum names it.
        let matcher = json!({"type": "object", "required": ["name"], "properties": {
            "name": {"type": "string"}, "value": {"type": "string"},
            "matchType": {"type": "string", "enum": ["!=", "=", "=~", "!~"]}}});
        assert_eq!(
            rewrites(&json!("severity=~\"critical|warning\""), &matcher)[0],
            json!({"name": "severity", "matchType": "=~", "value": "critical|warning"})
        );
        assert_eq!(
            rewrites(&json!("team!=payments"), &matcher)[0],
            json!({"name": "team", "matchType": "!=", "value": "payments"})
        );
        assert!(pair_object("team!=payments", &parameter.clone()).is_none());
        // A name holds no `=`: the pair is cut at its first; a flag or `==` is no pair.
        assert_eq!(
            pair_object("JAVA_TOOL_OPTIONS=-Dfile.encoding=UTF-8", parameter),
            Some(json!({"name": "JAVA_TOOL_OPTIONS", "value": "-Dfile.encoding=UTF-8"}))
        );
        for text in ["--for=condition=Ready", "a==b", "=b"] {
            assert_eq!(pair_object(text, parameter), None, "{text}");
        }
        // kubectl's lower-case type/NAME where the object names that type's name.
        let tls = json!({"type": "object", "properties": {
            "secretName": {"type": "string"}, "certResolver": {"type": "string"}}});
        assert_eq!(
            rewrites(&json!("secret/shop-example-com-tls"), &tls),
            vec![json!({"secretName": "shop-example-com-tls"})]
        );
        // ... and where it holds a reference to that kind in a field named after it.
        let offsets = json!({"type": "object", "required": ["toConfigMap"], "properties": {
            "toConfigMap": {"type": "object", "required": ["name"], "properties": {
                "name": {"type": "string"}}}}});
        for written in ["configmap/orders-offsets", "cm/orders-offsets"] {
            assert_eq!(
                rewrites(&json!(written), &offsets),
                vec![json!({"toConfigMap": {"name": "orders-offsets"}})]
            );
        }
        // Kubernetes' NAMESPACE/NAME where the object has a namespace field: the name last.
        assert_eq!(
            rewrites(&json!("flux-system/cert-manager"), &depends_on["items"]),
            vec![json!({"name": "cert-manager", "namespace": "flux-system"})]
        );
        assert_eq!(
            rewrites(&json!("platform/edge-router"), &depends_on)[0],
            json!([{"name": "edge-router", "namespace": "platform"}])
        );
        // A part that is no name (it holds a blank) makes no reference list.
        let options = rewrites(&json!("infra controllers, configs"), &depends_on);
        assert!(options.iter().all(|o| o[0].is_string()), "{options:?}");
    }

    #[test]
    fn a_truth_value_where_an_object_of_optional_settings_belongs_is_its_switch_or_its_presence() {
        let http10 =
            json!({"type": "object", "properties": {"useDefaultHost": {"type": "boolean"}}});
        assert_eq!(truth_as_object(&json!(true), &http10), Some(json!({})));
        assert_eq!(truth_as_object(&json!(false), &http10), None);
        assert_eq!(truth_as_object(&json!("yes"), &http10), None);
        let required = json!({"type": "object", "required": ["host"], "properties": {
            "host": {"type": "string"}}});
        assert_eq!(truth_as_object(&json!(true), &required), None);
        assert_eq!(
            truth_as_object(&json!(true), &json!({"type": "string"})),
            None
        );
        // The object's own switch takes the truth value, in words too.
        let check = json!({"type": "object", "properties": {"enable": {"type": "boolean"},
            "maxUnhealthy": {"type": "string"}}});
        assert_eq!(
            truth_as_object(
                &json!("disabled (never auto-remediate, see INC-2291)"),
                &check
            ),
            Some(json!({"enable": false}))
        );
        assert_eq!(
            truth_as_object(&json!(true), &check),
            Some(json!({"enable": true}))
        );
        assert_eq!(truth_as_object(&json!("only on weekdays"), &check), None);
        let drift = json!({"type": "object", "properties": {"enabled": {"type": "boolean"},
            "force": {"type": "boolean"}, "keepFailHistory": {"type": "boolean"}}});
        assert_eq!(
            truth_as_object(
                &json!("yes, but never with --force: it recreates the PVCs"),
                &drift
            ),
            Some(json!({"enabled": true, "force": false}))
        );
        // A contrast that turns no other switch off says what the object cannot hold.
        assert_eq!(
            truth_as_object(&json!("yes, but never restart"), &drift),
            None
        );
    }

    #[test]
    fn a_url_where_a_host_and_a_port_belong_is_its_host_and_its_schemes_port() {
        let endpoint = json!({"type": "object", "properties": {
            "host": {"type": "string"}, "port": {"type": "integer"}}});
        assert_eq!(
            url_as_host_and_port("https://api.lab.example.com", &endpoint),
            Some(json!({"host": "api.lab.example.com", "port": 443}))
        );
        assert_eq!(
            url_as_host_and_port("http://10.0.0.5:6443/", &endpoint),
            Some(json!({"host": "10.0.0.5", "port": 6443}))
        );
        // A path, a scheme with no known port, or no URL at all: no reading.
        for text in [
            "https://a.example.com/healthz",
            "tcp://a.example.com",
            "a.example.com",
        ] {
            assert_eq!(url_as_host_and_port(text, &endpoint), None, "{text}");
        }
    }

    #[test]
    fn a_rate_in_words_is_a_count_and_its_unit_where_an_object_takes_both() {
        let rate = json!({"type": "object", "properties": {
            "requestsPerUnit": {"type": "integer"},
            "unit": {"type": "string", "enum": ["Second", "Minute", "Hour"]}}});
        assert_eq!(
            rate_as_count_and_unit("10 per minute", &rate),
            Some(json!({"requestsPerUnit": 10, "unit": "Minute"}))
        );
        assert_eq!(
            rate_as_count_and_unit("at most 5 per second", &rate),
            Some(json!({"requestsPerUnit": 5, "unit": "Second"}))
        );
        // A unit the field has no value for, no rate, or two numbers: no reading.
        for text in [
            "10 per day",
            "10 minutes",
            "10 or 20 per minute",
            "1.5 per hour",
        ] {
            assert_eq!(rate_as_count_and_unit(text, &rate), None, "{text}");
        }
        // Two count fields: which one counts is not said.
        let mut two = rate.clone();
        two["properties"]["burst"] = json!({"type": "integer"});
        assert_eq!(rate_as_count_and_unit("10 per minute", &two), None);
    }

    #[test]
    fn a_label_given_several_values_is_a_requirement_that_it_is_one_of_them() {
        let schema = json!({"type": "object", "properties": {"spec": {"type": "object",
            "properties": {"selector": {"type": "object", "properties": {
                "matchLabels": {"type": "object", "additionalProperties": {"type": "string"}},
                "matchExpressions": {"type": "array", "items": {"type": "object"}}}}}}}});
        let given = json!({"spec": {"selector": {"matchLabels": {
            "app": ["api", "worker"], "tier": "web"}}}});
        let at = "/spec/selector/matchLabels/app";
        let read = |given: &Value| {
            label_values_as_requirement(
                &sources(&schema, given),
                at,
                &given.pointer(at).unwrap().clone(),
            )
        };
        assert_eq!(
            read(&given),
            Some(vec![
                Edit::Remove(at.into()),
                Edit::Set(
                    "/spec/selector/matchExpressions".into(),
                    json!([{"key": "app", "operator": "In", "values": ["api", "worker"]}])
                )
            ])
        );
        // The last label takes its empty `matchLabels` along; the expressions already there stay.
        let alone = json!({"spec": {"selector": {"matchLabels": {"app": ["api"]},
            "matchExpressions": [{"key": "tier", "operator": "Exists"}]}}});
        assert_eq!(
            read(&alone),
            Some(vec![
                Edit::Remove("/spec/selector/matchLabels".into()),
                Edit::Set(
                    "/spec/selector/matchExpressions".into(),
                    json!([{"key": "tier", "operator": "Exists"},
                        {"key": "app", "operator": "In", "values": ["api"]}])
                )
            ])
        );
        // Not a list of names, or no selector around it: no reading.
        let numbers = json!({"spec": {"selector": {"matchLabels": {"app": [1, 2]}}}});
        assert_eq!(read(&numbers), None);
        // The error on the whole map (a rule over `matchLabels`): each label given a list.
        let labels = "/spec/selector/matchLabels";
        let whole = |given: &Value| {
            label_values_as_requirement(
                &sources(&schema, given),
                labels,
                &given.pointer(labels).unwrap().clone(),
            )
        };
        assert_eq!(whole(&given), read(&given));
        let plain = json!({"spec": {"selector": {"matchLabels": {"app": "api"}}}});
        assert_eq!(whole(&plain), None);
        let no_expressions = json!({"type": "object", "properties": {"spec": {"type": "object",
            "properties": {"selector": {"type": "object", "properties": {
                "matchLabels": {"type": "object"}}}}}}});
        assert_eq!(
            label_values_as_requirement(
                &sources(&no_expressions, &given),
                labels,
                &given.pointer(labels).unwrap().clone()
            ),
            None
        );
    }

    #[test]
    fn an_undeclared_key_written_as_a_dotted_path_is_that_place() {
        let schema = json!({"type": "object", "properties": {"spec": {"type": "object",
            "properties": {"portLevelMtls": {"type": "object", "additionalProperties": {
                "type": "object", "properties": {"mode": {"type": "string",
                    "enum": ["DISABLE", "STRICT"]}}}}}}}});
        let read = |key: &str, value: Value| {
            let given = json!({"spec": {key: value.clone()}});
            let at = pointer::push("/spec", key);
            dotted_key(&sources(&schema, &given), &at, &value)
        };
        assert_eq!(
            read("portLevelMtls.9200.mode", json!("DISABLE")),
            Some(vec![
                Edit::Remove("/spec/portLevelMtls.9200.mode".into()),
                Edit::Set("/spec/portLevelMtls/9200/mode".into(), json!("DISABLE"))
            ])
        );
        // A value the place does not take, a first segment declared nowhere, no dot at all.
        assert_eq!(read("portLevelMtls.9200.mode", json!("OFF")), None);
        assert_eq!(read("mtls.9200.mode", json!("DISABLE")), None);
        assert_eq!(read("portLevelMtls", json!("DISABLE")), None);
    }

    #[test]
    fn a_truth_value_under_its_opposites_name_is_that_field_negated() {
        let schema = json!({"type": "object", "properties": {"spec": {"type": "object",
            "properties": {"revisionCounterDisabled": {"type": "boolean"},
                "replicaCount": {"type": "integer"}}}}});
        let read = |key: &str, value: Value| {
            let given = json!({"spec": {key: value.clone()}});
            negated_twin(
                &sources(&schema, &given),
                &pointer::push("/spec", key),
                &value,
            )
        };
        assert_eq!(
            read("revisionCounterEnabled", json!(false)),
            Some(("/spec/revisionCounterDisabled".into(), json!(true)))
        );
        assert_eq!(
            read("revisionCounterEnabled", json!("yes")),
            Some(("/spec/revisionCounterDisabled".into(), json!(false)))
        );
        // Not a truth value, another word changed too, a field of another type.
        assert_eq!(read("revisionCounterEnabled", json!("sometimes")), None);
        assert_eq!(read("revisionCountEnabled", json!(false)), None);
        assert_eq!(read("replicaCountEnabled", json!(false)), None);
    }

    #[test]
    fn a_text_field_of_digits_reads_an_amount_as_the_number_it_counts() {
        let size = json!({"type": "string", "pattern": "^[0-9]+$",
            "description": "Size of the volume in bytes, as a decimal string."});
        assert!(digits_only(&size));
        assert_eq!(
            digit_readings("50 GiB", &size, None),
            vec![json!("53687091200")]
        );
        // A number beside the amount says something else; a plain count stays as written.
        assert!(digit_readings("604800000 (30 days)", &size, None).is_empty());
        // A pattern that takes a unit after the number, or names, is no field of digits.
        let heap = json!({"type": "string", "pattern": "^[0-9]+[mMgG]?$"});
        assert!(!digits_only(&heap));
        let name = json!({"type": "string", "pattern": "^[a-z0-9]+$"});
        assert!(!digits_only(&name));
        // On UPDATE, a difference with its unit over the stored digits.
        assert_eq!(
            rewrites_over(
                &json!("add another 50Gi (disk-full alert)"),
                &size,
                Some(&json!("53687091200"))
            )
            .first(),
            Some(&json!("107374182400"))
        );
    }

    #[test]
    fn a_value_that_a_switch_beside_the_field_says_is_that_switch() {
        let schema = json!({"type": "object", "properties": {"spec": {"type": "object",
            "properties": {"pollingInterval": {"type": "string"},
                "disablePolling": {"type": "boolean"}, "paused": {"type": "boolean"},
                "key": {"type": "string"}, "includeAllKeys": {"type": "boolean"}}}}});
        let all = |text: &str| {
            let given = json!({"spec": {"key": text}});
            switch_beside(
                &sources(&schema, &given),
                "/spec/key",
                &given["spec"]["key"],
            )
        };
        assert_eq!(
            all("*"),
            Some(vec![
                Edit::Remove("/spec/key".into()),
                Edit::Set("/spec/includeAllKeys".into(), json!(true))
            ])
        );
        assert_eq!(all("ca.crt"), None);
        let read = |text: &str| {
            let given = json!({"spec": {"pollingInterval": text}});
            switch_beside(
                &sources(&schema, &given),
                "/spec/pollingInterval",
                &given["spec"]["pollingInterval"],
            )
        };
        assert_eq!(
            read("none - webhook only"),
            Some(vec![
                Edit::Remove("/spec/pollingInterval".into()),
                Edit::Set("/spec/disablePolling".into(), json!(true))
            ])
        );
        assert_eq!(read("disabled"), read("none - webhook only"));
        // An interval said, or no absence.
        assert_eq!(read("every 5 minutes"), None);
        assert_eq!(read("none, or 1h at most"), None);
    }

    #[test]
    fn a_map_of_label_keys_where_requirements_belong_is_one_in_requirement_each() {
        let expressions = json!({"type": "array", "items": {"type": "object", "properties": {
            "key": {"type": "string"},
            "operator": {"type": "string", "enum": ["In", "NotIn", "Exists", "DoesNotExist"]},
            "values": {"type": "array", "items": {"type": "string"}}}}});
        assert_eq!(
            map_as_requirements(
                &json!({"tier": ["root", "intermediate"], "env": "prod"}),
                &expressions
            ),
            Some(json!([{"key": "env", "operator": "In", "values": ["prod"]},
                {"key": "tier", "operator": "In", "values": ["root", "intermediate"]}]))
        );
        assert_eq!(
            map_as_requirements(&json!({"tier": {"a": 1}}), &expressions),
            None
        );
        assert_eq!(map_as_requirements(&json!({}), &expressions), None);
    }

    #[test]
    fn namespaces_named_by_exception_are_a_selector_on_their_name_label() {
        let selector = json!({"type": "object", "properties": {
            "matchLabels": {"type": "object", "additionalProperties": {"type": "string"}},
            "matchExpressions": {"type": "array", "items": {"type": "object", "properties": {
                "key": {"type": "string"},
                "operator": {"type": "string", "enum": ["In", "NotIn", "Exists", "DoesNotExist"]},
                "values": {"type": "array", "items": {"type": "string"}}}}}}});
        let at = "/spec/target/namespaceSelector";
        assert_eq!(
            namespaces_except(
                "all namespaces except kube-system and kube-public",
                &selector,
                at
            ),
            Some(
                json!({"matchExpressions": [{"key": "kubernetes.io/metadata.name",
                "operator": "NotIn", "values": ["kube-system", "kube-public"]}]})
            )
        );
        // The label's key is the user's only where their text named namespaces so.
        let schema = json!({"type": "object", "properties": {"spec": {"type": "object",
            "properties": {"target": {"type": "object", "properties": {
                "namespaceSelector": selector.clone()}}}}}});
        let key = "/spec/target/namespaceSelector/matchExpressions/0/key";
        let said = |s: Value| json!({"spec": {"target": {"namespaceSelector": s}}});
        let except = said(json!("all namespaces except kube-system"));
        assert!(is_namespace_name_key(
            &schema,
            &except,
            key,
            "kubernetes.io/metadata.name"
        ));
        let labels = said(json!({"matchLabels": {"team": "payments"}}));
        assert!(!is_namespace_name_key(
            &schema,
            &labels,
            key,
            "kubernetes.io/metadata.name"
        ));
        // Another selector, no exception, a word that is no namespace's name.
        assert_eq!(
            namespaces_except("all except kube-system", &selector, "/spec/podSelector"),
            None
        );
        assert_eq!(
            namespaces_except("kube-system and kube-public", &selector, at),
            None
        );
        assert_eq!(
            namespaces_except("all namespaces except the system ones", &selector, at),
            None
        );
    }

    #[test]
    fn a_display_name_where_another_systems_identifier_belongs_is_its_spelling_proposed() {
        let plugin = json!({"type": "string", "pattern": "^[a-z0-9]([a-z0-9_-]*[a-z0-9])?$"});
        let read = text_readings("Request Transformer", &plugin, None);
        assert_eq!(read.first(), Some(&json!("request-transformer")));
        // The rules make no such change there: the pattern takes `_`, no Kubernetes name.
        assert!(!crate::repair::dns::asks_for_dns(
            "^[a-z0-9]([a-z0-9_-]*[a-z0-9])?$"
        ));
    }

    #[test]
    fn a_kubectl_command_naming_objects_where_names_belong_is_its_names() {
        let names = json!({"type": "string", "pattern": "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"});
        assert_eq!(
            kubectl_names(
                "kubectl delete pod media-worker-7x2kq media-worker-9fzlm -n media",
                &names
            ),
            Some(json!(["media-worker-7x2kq", "media-worker-9fzlm"]))
        );
        // A flag whose value cannot be told from a name, another program, no kind.
        assert_eq!(
            kubectl_names("kubectl delete pod a -l app=x b", &names),
            None
        );
        assert_eq!(kubectl_names("oc delete pod a b", &names), None);
        assert_eq!(kubectl_names("kubectl delete widgets a b", &names), None);
    }

    #[test]
    fn pairs_where_a_free_object_belongs_are_its_entries() {
        let config = json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true});
        // Helm's `--set`: an escaped comma is the value's, `true` and numbers are no text; a
        // dotted key may be one key or a path.
        assert_eq!(
            free_map_pairs(
                r"topics=a\,b,connection.url=http://es:9200,key.ignore=true,batch=500",
                &config
            ),
            vec![
                json!({"topics": "a,b", "connection.url": "http://es:9200", "key.ignore": true,
                    "batch": 500}),
                json!({"topics": "a,b", "connection": {"url": "http://es:9200"},
                    "key": {"ignore": true}, "batch": 500})
            ]
        );
        assert_eq!(
            free_map_pairs("replicas=3,image=nginx", &config),
            vec![json!({"replicas": 3, "image": "nginx"})]
        );
        // Not pairs, or not a free object.
        assert!(free_map_pairs("replicas 3", &config).is_empty());
        let declared = json!({"type": "object", "properties": {"replicas": {"type": "integer"}}});
        assert!(free_map_pairs("replicas=3,image=nginx", &declared).is_empty());
    }

    #[test]
    fn strings_rewritten_into_the_shape_the_schema_wants() {
        let selector = json!({"type": "object", "properties": {
            "matchLabels": {"type": "object", "additionalProperties": {"type": "string"}},
            "matchExpressions": {"type": "array", "items": {"type": "object"}}}});
        assert_eq!(
            rewrites(&json!("a=x, b=y"), &selector),
            vec![json!({"matchLabels": {"a": "x", "b": "y"}})]
        );
        assert_eq!(
            rewrites(&json!("env in (prod, staging)"), &selector),
            vec![json!({"matchExpressions": [
                {"key": "env", "operator": "In", "values": ["prod", "staging"]}]})]
        );
        // kubectl's whole grammar, commas inside parentheses belonging to the set.
        assert_eq!(
            rewrites(
                &json!("team in (ml,research),env!=dev, tier, !legacy, app=web"),
                &selector
            ),
            vec![json!({"matchLabels": {"app": "web"}, "matchExpressions": [
                {"key": "team", "operator": "In", "values": ["ml", "research"]},
                {"key": "env", "operator": "NotIn", "values": ["dev"]},
                {"key": "tier", "operator": "Exists"},
                {"key": "legacy", "operator": "DoesNotExist"}]})]
        );
        // A list of selectors takes one.
        let selectors = json!({"type": "array", "items": selector});
        assert!(rewrites(&json!("a=x,!b"), &selectors).contains(&json!([{
            "matchLabels": {"a": "x"},
            "matchExpressions": [{"key": "b", "operator": "DoesNotExist"}]}])));
        // All or nothing: a part the grammar does not read makes no selector.
        for unreadable in [
            "team in (ml,research",
            "team in ml,research)",
            "team in (ml, research), and not dev",
            "replicas > 3",
            "a=x, a=y, b!=z",
        ] {
            assert!(
                rewrites(&json!(unreadable), &selector)
                    .iter()
                    .all(|o| o.get("matchExpressions").is_none()),
                "{unreadable}"
            );
        }
        let reference = json!({"type": "object", "required": ["name"], "properties": {
            "name": {"type": "string"}, "key": {"type": "string"}}});
        assert_eq!(
            rewrites(&json!("media-backup"), &reference),
            vec![json!({"name": "media-backup"})]
        );
        let issuer = json!({"type": "object", "required": ["name"], "properties": {
            "name": {"type": "string"}, "kind": {"type": "string", "enum": ["Issuer", "ClusterIssuer"]},
            "group": {"type": "string"}}});
        assert_eq!(
            rewrites(&json!("ClusterIssuer/letsencrypt-prod"), &issuer)[1..],
            [json!({"name": "letsencrypt-prod", "kind": "ClusterIssuer"})]
        );
        let options = rewrites(&json!("billing-backup-s3/credentials.json"), &reference);
        assert!(
            options.contains(&json!({"name": "billing-backup-s3", "key": "credentials.json"})),
            "{options:?}"
        );
        // A part never keeps a separator at the cut.
        let mount = json!({"type": "object", "required": ["name"], "properties": {
            "name": {"type": "string"}, "mountPath": {"type": "string"}}});
        let options = rewrites(&json!("tls-certs:/etc/tls:ro"), &mount);
        assert!(
            !options.iter().any(|o| o["name"] == json!("tls-certs:")),
            "{options:?}"
        );
        let list = json!({"type": "array", "items": {"type": "string"}});
        let options = rewrites(&json!("candidate (was stable)"), &list);
        assert!(options.contains(&json!(["candidate"])), "{options:?}");
        let options = rewrites(&json!("Stable, Candidate-V2 ,  fast"), &list);
        assert_eq!(options[0], json!(["Stable", "Candidate-V2", "fast"]));
        assert_eq!(options[1], json!(["stable", "candidate-v2", "fast"]));
        // A separated list is not cut down to one of its items.
        assert_eq!(options.len(), 2, "{options:?}");
        // Split at the strongest separator: a comma inside a `;`-separated item stays.
        let options = rewrites(&json!("hostssl a,b app; host all"), &list);
        assert_eq!(options[0], json!(["hostssl a,b app", "host all"]));
        let count = json!({"type": "integer"});
        assert_eq!(rewrites(&json!("3 replicas"), &count), vec![json!(3)]);
        // Digits glued to letters are no number: `5xx` is a class of statuses, not 5.
        assert!(rewrites(&json!("5xx"), &count).is_empty());
        assert_eq!(rewrites(&json!("503 (a 5xx)"), &count), vec![json!(503)]);
        // A number is read with its magnitude word, or not at all.
        assert_eq!(
            rewrites(&json!("50 thousand samples per scrape"), &count),
            vec![json!(50000)]
        );
        assert_eq!(
            rewrites(&json!("1.5 million"), &count),
            vec![json!(1_500_000)]
        );
        assert!(rewrites(&json!("50 k"), &count).is_empty());
        let quantity = json!({"type": "string", "pattern": "^[0-9]+$"});
        assert!(!rewrites(&json!("50%"), &quantity).contains(&json!("50")));
        let nodes = json!({"type": "string", "pattern": "^((100|[0-9]{1,2})%|[0-9]+)$"});
        let options = rewrites(&json!("at most 10% of the nodes at a time"), &nodes);
        assert_eq!(options[0], json!("10%"), "{options:?}");
        assert!(rewrites(&json!("2.5"), &count).is_empty());
        // An amount keeps its size: converted to the unit the field counts in, never bare.
        let seconds = json!({"type": "integer", "description": "How long, in whole seconds."});
        assert_eq!(rewrites(&json!("5 minutes"), &seconds), vec![json!(300)]);
        assert_eq!(rewrites(&json!("15s"), &seconds), vec![json!(15)]);
        assert!(rewrites(&json!("5 minutes"), &count).is_empty());
        assert!(rewrites(&json!("1.5s"), &seconds).is_empty());
        assert_eq!(
            rewrites(&json!("keep 7, or 14"), &count),
            vec![json!(7), json!(14)]
        );
        assert_eq!(
            rewrites(&json!("{\"name\": \"media-backup\"}"), &reference)[0],
            json!({"name": "media-backup"})
        );
        let options = rewrites(&json!("stable and fast"), &list);
        assert_eq!(options[0], json!(["stable", "fast"]));
        // Items written with blanks are alike: a word between names is no item.
        let options = rewrites(&json!("worker-1 through worker-3"), &list);
        assert!(
            !options.contains(&json!(["worker-1", "through", "worker-3"])),
            "{options:?}"
        );
        assert_eq!(
            rewrites(&json!("us-east-1 us-west-2"), &list)[0],
            json!(["us-east-1", "us-west-2"])
        );
        let methods = json!({"type": "array", "items": {"type": "string",
            "enum": ["GET", "POST", "HEAD"]}});
        assert!(rewrites(&json!("GET and HEAD only"), &methods).contains(&json!(["GET", "HEAD"])));
        let headers = json!({"type": "object", "additionalProperties": {"type": "string"}});
        assert_eq!(
            rewrites(
                &json!(["X-Team: payments", "Cache-Control: no-store"]),
                &headers
            ),
            [json!({"X-Team": "payments", "Cache-Control": "no-store"})]
        );
        assert!(rewrites(&json!(["no separator"]), &headers).is_empty());
        let duration = json!({"type": "string"});
        assert!(
            rewrites(&json!("2 min (the export endpoint is slow)"), &duration)
                .contains(&json!("2m"))
        );
        let flag = json!({"type": "boolean"});
        assert_eq!(rewrites(&json!("yes, for now"), &flag), vec![json!(true)]);
        assert_eq!(
            rewrites(&json!("for the mesh"), &flag),
            vec![json!(true), json!(false)]
        );
        let text = json!({"type": "string"});
        assert_eq!(rewrites(&json!("512 MiB"), &text), [json!("512Mi")]);
        assert_eq!(
            rewrites(&json!("30 days"), &text),
            [json!("720h"), json!("30d")]
        );
        assert_eq!(
            rewrites(&json!("2 GB"), &text),
            [json!("2G"), json!("2000M")]
        );
        // An amount in a unit of no fixed length, or beside another number: no spelling, and
        // never its number alone.
        assert!(rewrites(&json!("3 months"), &text).is_empty());
        assert!(rewrites(&json!("2 or 3 days"), &text).is_empty());
    }
}
