//! Evidence guardrails on an LLM's answer: the model may restate what the user wrote, never
//! invent it (docs/architecture.md, "Guardrails").
//!
//! Re-validation proves that a candidate is *valid*; it cannot see a valid value with the
//! wrong meaning. A small model, measured with `make e2e-llm`, fills a missing package name
//! from `metadata.name`, obeys an annotation that names a package, drops the upper bound of a
//! version range, replaces an injected list entry with a plausible invented one and turns
//! "off" into `Strict`. Three checks stop these, for LLM answers only (deterministic repairs
//! are designed, not guessed):
//!
//! 1. **Every value the LLM writes is grounded** (`llm.requireEvidence`): each word (letters),
//!    number and operator (`>=`, `~`, `*`, ...) of a string or number it writes must occur in
//!    the user's own text — in the
//!    value it replaces when there was one (a rewrite of `"off (skip checks)"` may not say
//!    `"Strict"`), else anywhere in the object (a namespace stated in an annotation may fill a
//!    missing `spec.namespace`). On UPDATE the old object's value at the same place counts too.
//! 2. **No number is dropped** (`llm.requireEvidence`): every number in a user's string that the
//!    LLM changes or removes must reappear in a value the LLM writes (`">= 1.2 AND < 2"` may
//!    become `">=1.2.0, <2.0.0"`, not `">= 1.2"`).
//! 3. **Verbatim paths** (`llm.verbatimPaths`, default `/spec/source/catalog/packageName`):
//!    which package gets installed is the user's decision. The LLM may cut the user's own
//!    value down (`"argocd-operator@v0.6.0"` → `"argocd-operator"`), move it there from a
//!    property of the same name, restore the old object's value, or copy the exact value of
//!    a label or annotation (`app.kubernetes.io/name: argocd-operator`) — never derive one
//!    from `metadata.name` or from prose.
//!
//! Words are compared without case and separators (`SelfCertified` is grounded by
//! "self-certified"); numbers by value with trailing `.0` parts dropped (`2.0.0` = `2`); an
//! amount restated in another unit (`"90 days"` → `2160h`) is the user's amount.
//! A truth value written over the user's words needs words that state one (a yes or a no, the
//! field's own name, or a negation); nulls and object keys are not checked.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::guardrails::Violation;
use crate::pointer;
use crate::settings::Settings;
use crate::text;

/// Deepest nesting walked; deeper values are not checked (the schema bounds real objects far
/// below this).
const MAX_DEPTH: usize = 64;
/// Longest text quoted in a violation.
const MAX_QUOTE_CHARS: usize = 60;

/// The violations of `candidate` (the LLM's answer) against `given` (the object it was asked
/// to repair) and, on UPDATE, `old_object`.
pub fn check(
    settings: &Settings,
    schema: &Value,
    given: &Value,
    old_object: Option<&Value>,
    candidate: &Value,
) -> Vec<Violation> {
    let mut violations = Vec::new();
    for root in &settings.llm.verbatim_paths {
        if let Some(v) = check_verbatim(settings, root, given, old_object, candidate) {
            violations.push(v);
        }
    }
    if settings.llm.require_evidence {
        violations.extend(check_grounding(
            settings, schema, given, old_object, candidate,
        ));
    }
    violations
}

fn check_verbatim(
    settings: &Settings,
    root: &str,
    given: &Value,
    old_object: Option<&Value>,
    candidate: &Value,
) -> Option<Violation> {
    let before = given.pointer(root);
    let after = candidate.pointer(root)?;
    if before == Some(after) || old_object.and_then(|o| o.pointer(root)) == Some(after) {
        return None;
    }
    let cut_down = match (before, after) {
        (Some(Value::String(b)), Value::String(a)) => {
            !a.trim().is_empty() && b.contains(a.as_str())
        }
        _ => false,
    };
    let name = pointer::split_last(root)
        .map(|(_, n)| n)
        .unwrap_or_default();
    if cut_down
        || labelled(given, after)
        || crate::guardrails::relocated_from(settings, given, candidate, &name, after, root)
    {
        return None;
    }
    Some(Violation {
        pointer: root.to_string(),
        message: format!(
            "llm.verbatimPaths: {} is not the user's value (an LLM may only cut down the \
             user's own value, move it here, or copy a label's or annotation's exact value)",
            quote(after)
        ),
    })
}

/// Is `value` exactly the value of one of the object's labels or annotations (the user's own
/// statement, e.g. `app.kubernetes.io/name: argocd-operator`)? `metadata.name` is not: the
/// name of an installation says nothing certain about the package installed.
fn labelled(given: &Value, value: &Value) -> bool {
    ["labels", "annotations"].iter().any(|key| {
        given
            .get("metadata")
            .and_then(|m| m.get(key))
            .and_then(Value::as_object)
            .is_some_and(|map| {
                map.iter()
                    .any(|(k, v)| v == value && k != crate::guardrails::REPAIR_ANNOTATION)
            })
    })
}

/// A scalar leaf: its pointer and its text.
struct Leaf {
    pointer: String,
    text: String,
    /// A JSON number: grounded only by a number the user wrote as a word of its own.
    number: bool,
}

fn check_grounding(
    settings: &Settings,
    schema: &Value,
    given: &Value,
    old_object: Option<&Value>,
    candidate: &Value,
) -> Vec<Violation> {
    let (written, lost) = changed_leaves(settings, given, candidate);
    // A value the object did not have is grounded by a value of the user's that the answer
    // moves (changes or removes where it was), or by what the user wrote about that field;
    // being present somewhere else in the object is no evidence (docs/repair.md, "Meaning
    // kept").
    let moved_texts = moved_scalars(settings, given, candidate);
    let sources = super::candidates::Sources {
        schema,
        given,
        old_object,
        protected: &[],
    };
    // Built only for a leaf that replaces no value of the user's: finding the texts about a
    // field walks the object and the schema.
    let about_the_field = |p: &str| {
        let (about, mentioned) = super::candidates::texts_about(&sources, p);
        Evidence::new(
            moved_texts
                .iter()
                .chain(&about)
                .chain(&mentioned)
                .map(String::as_str),
        )
    };
    let mut violations: Vec<Violation> = written
        .iter()
        .filter_map(|leaf| invented(leaf, schema, given, candidate, old_object, &about_the_field))
        .collect();

    let written_numbers: BTreeSet<String> = written.iter().flat_map(|l| numbers(&l.text)).collect();
    let mut candidate_names = BTreeSet::new();
    leaves(candidate, "", 0, &mut |_, v| {
        if let Value::String(s) = v {
            candidate_names.extend(names_with_digits(s));
        }
    });
    violations.extend(lost.iter().filter_map(|leaf| {
        dropped(
            leaf,
            schema,
            &written_numbers,
            &candidate_names,
            old_object,
            candidate,
        )
    }));
    violations.extend(unstated_truths(given, candidate, old_object));
    violations
}

/// A truth value written over the user's words is grounded only by words that state one
/// (`"yes, until the migration"`, `"off (maintenance)"`), by the field's own name
/// (`"suspended until Monday"`), by the word that ends what the field names (`false` for
/// `paused: "resume - …"`), or by a negation, which the meaning checks read (`"not
/// read-only"`). `suspend: "only at weekends"` states none of these: `true` and `false` would
/// each be a guess.
fn unstated_truths(given: &Value, candidate: &Value, old_object: Option<&Value>) -> Vec<Violation> {
    let patch = json_patch::diff(given, candidate);
    patch
        .0
        .iter()
        .filter_map(|op| {
            let json_patch::PatchOperation::Replace(json_patch::ReplaceOperation {
                value: Value::Bool(written),
                ..
            }) = op
            else {
                return None;
            };
            let p = op.path().to_string();
            let Some(Value::String(said)) = given.pointer(&p) else {
                return None;
            };
            // The field's own name said (`"suspended until Monday"` for `suspend`) states it too.
            let field = pointer::split_last(&p).map(|(_, n)| n).unwrap_or_default();
            let field_words = crate::certainty::words_of_name(&field);
            let said_words = crate::certainty::words_of_name(said);
            let names_field = !field_words.is_empty()
                && field_words
                    .iter()
                    .all(|w| said_words.iter().any(|s| s.starts_with(w.as_str())));
            // On UPDATE, a change note's new side (`"true -> false: resume the rollout"`).
            let noted = old_object
                .and_then(|o| o.pointer(&p))
                .and_then(|stored| super::readings::change_note_target(said, stored))
                .and_then(super::readings::stated_bool);
            let stated = noted == Some(*written)
                || (noted.is_none() && super::readings::stated_bool(said).is_some())
                || !crate::certainty::negated_words(said).is_empty()
                || names_field
                || (!written && super::readings::ends_the_state(&field, said))
                || super::readings::state_of_negated_subject(&field, said) == Some(!*written);
            (!stated).then(|| {
                Violation::new(
                    &p,
                    format!(
                        "llm.requireEvidence: {} states no truth value (no yes or no, not the field's name, no negation)",
                        quote_str(said)
                    ),
                )
            })
        })
        .collect()
}

/// The leaves under `allowedPaths` the candidate writes (new or changed), and the user's
/// strings it changes or removes.
fn changed_leaves(settings: &Settings, given: &Value, candidate: &Value) -> (Vec<Leaf>, Vec<Leaf>) {
    let allowed = |p: &str| settings.allows(p);
    let leaf = |p: &str, v: &Value| Leaf {
        pointer: p.to_string(),
        text: scalar_text(v),
        number: v.is_number(),
    };
    let mut written = Vec::new();
    leaves(candidate, "", 0, &mut |p, v| {
        if allowed(p) && given.pointer(p) != Some(v) {
            written.push(leaf(p, v));
        }
    });
    let mut lost = Vec::new();
    leaves(given, "", 0, &mut |p, v| {
        if v.is_string() && allowed(p) && candidate.pointer(p) != Some(v) {
            lost.push(leaf(p, v));
        }
    });
    (written, lost)
}

/// The user's scalars (under `allowedPaths`) that the candidate changes or removes, as text.
fn moved_scalars(settings: &Settings, given: &Value, candidate: &Value) -> Vec<String> {
    let allowed = |p: &str| settings.allows(p);
    let mut out = Vec::new();
    // A truth value moved counts too: written as text, it is the user's (`HF_HUB_OFFLINE:
    // true` made the item `{name: HF_HUB_OFFLINE, value: "true"}`).
    each_leaf(given, "", 0, true, &mut |p, v| {
        if allowed(p) && candidate.pointer(p) != Some(v) {
            out.push(scalar_text(v));
        }
    });
    // A map's key is the user's text too (`matchLabels: {app: [a, b]}` made a requirement on
    // `app`).
    removed_keys(given, candidate, "", 0, &mut |p, key| {
        if allowed(p) {
            out.push(key.to_string());
        }
    });
    out
}

/// Calls `f` with the pointer and key of every entry of `given`'s objects that `candidate`
/// no longer has.
fn removed_keys(
    given: &Value,
    candidate: &Value,
    at: &str,
    depth: usize,
    f: &mut dyn FnMut(&str, &str),
) {
    if depth > MAX_DEPTH {
        return;
    }
    match given {
        Value::Object(map) => {
            for (k, v) in map {
                let p = pointer::push(at, k);
                match candidate.pointer(&p) {
                    None => f(&p, k),
                    Some(_) => removed_keys(v, candidate, &p, depth + 1, f),
                }
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                removed_keys(
                    v,
                    candidate,
                    &pointer::push(at, &i.to_string()),
                    depth + 1,
                    f,
                );
            }
        }
        _ => {}
    }
}

/// Does the `candidate` write the time unit of the rate `said` states (`"10 per minute"`) in a
/// field beside the count at `p` (`{requestsPerUnit: 10, unit: Minute}`)?
fn unit_written_beside(candidate: &Value, p: &str, said: &str) -> bool {
    let Some((_, per)) = super::readings::count_per_time_unit(said) else {
        return false;
    };
    let Some((parent, field)) = pointer::split_last(p) else {
        return false;
    };
    candidate
        .pointer(parent)
        .and_then(Value::as_object)
        .is_some_and(|beside| {
            beside.iter().any(|(name, v)| {
                *name != field && v.as_str().and_then(super::readings::time_unit_named) == Some(per)
            })
        })
}

/// Is `written` at `p` the amount the user's `said` states relative to the old object's value
/// there (`"double it"` over `5m` is `10m`)?
fn relative_to_old(
    schema: &Value,
    said: &Value,
    old_object: Option<&Value>,
    p: &str,
    written: &str,
) -> bool {
    let (Some(said), Some(old)) = (said.as_str(), old_object.and_then(|o| o.pointer(p))) else {
        return false;
    };
    let description = crate::schema::node_at(schema, p)
        .and_then(|node| node.get("description"))
        .and_then(Value::as_str)
        .unwrap_or_default();
    super::readings::relative_amount(said, old)
        .or_else(|| super::readings::relative_amount_in_field_unit(said, old, description))
        .is_some_and(|v| scalar_text(&v) == written)
}

/// The old object's scalar at `p`, as text (UPDATE only).
fn old_text(old_object: Option<&Value>, p: &str) -> Option<String> {
    old_object
        .and_then(|o| o.pointer(p))
        .filter(|v| is_scalar(v))
        .map(scalar_text)
}

/// What the user's value `v` at `p` points to and so says there: the text of an annotation
/// it names, or of that annotation the clause about this item (an amount per item); else the
/// value of the field it says it is the same as (`"same as the request"`).
fn referred_to(given: &Value, p: &str, v: &Value) -> Option<Value> {
    let s = v.as_str()?;
    super::readings::annotation_referred_to(given, s)
        .map(|a| {
            super::readings::clause_naming_item(given, p, a)
                .map_or_else(|| Value::from(a), Value::from)
        })
        .or_else(|| super::readings::field_referred_to(given, p, s).cloned())
        .or_else(|| super::readings::stated_in_full(given, s).map(Value::from))
}

/// Why the written `leaf` is not grounded: a word, number or operator that neither the value
/// it replaces (else the whole object) nor, on UPDATE, the old value there has; or an amount
/// that is not the replaced value's.
fn invented(
    leaf: &Leaf,
    schema: &Value,
    given: &Value,
    candidate: &Value,
    old_object: Option<&Value>,
    about_the_field: &dyn Fn(&str) -> Evidence,
) -> Option<Violation> {
    let violation = |message: String| Violation {
        pointer: leaf.pointer.clone(),
        message: format!("llm.requireEvidence: {message}"),
    };
    let replaced = replaced_scalar(given, &leaf.pointer);
    // A namespace's name is its label `kubernetes.io/metadata.name`: the key of a namespace
    // selector's requirement made of the namespaces the user named by exception.
    if super::candidates::is_namespace_name_key(schema, given, &leaf.pointer, &leaf.text) {
        return None;
    }
    let annotation = replaced.and_then(|v| referred_to(given, &leaf.pointer, v));
    match amount_said(
        leaf,
        schema,
        (given, candidate),
        old_object,
        replaced,
        annotation.as_ref(),
    ) {
        Some(Ok(())) => return None,
        Some(Err(message)) => return Some(violation(message)),
        None => {}
    }
    let (own, place) = match replaced {
        Some(v) => (
            Evidence::new([scalar_text(v).as_str()]),
            "the value it replaces",
        ),
        None => (
            about_the_field(&leaf.pointer),
            "what the user wrote about this field or moved",
        ),
    };
    let own = &own;
    let old_here = old_text(old_object, &leaf.pointer);
    let old_here = old_here.as_deref().map(|t| Evidence::new([t]));
    let referred = stored_referred_to(given, old_object, &leaf.pointer);
    let referred =
        (!referred.is_empty()).then(|| Evidence::new(referred.iter().map(String::as_str)));
    let annotation = annotation.map(|a| Evidence::new([scalar_text(&a).as_str()]));
    let sources: Vec<&Evidence> = std::iter::once(own)
        .chain(old_here.as_ref())
        .chain(referred.as_ref())
        .chain(annotation.as_ref())
        .collect();
    // A number is a word of its own: the `1` of `"match prod-eu1-md-1"` is part of a name.
    if leaf.number
        && !sources
            .iter()
            .any(|e| e.standalone_numbers.contains(&leaf.text))
    {
        return Some(violation(format!(
            "{} is invented: no number {place} states it as a number of its own",
            quote_str(&leaf.text)
        )));
    }
    first_unsupported(&sources, &leaf.text).map(|missing| {
        violation(format!(
            "{} is invented: {} does not occur in {place}",
            quote_str(&leaf.text),
            quote_str(&missing)
        ))
    })
}

/// Does the notation of the user's `said` state `written`, at `p`, without writing it out (the
/// amounts step's first question, and a restatement for the drop check): the
/// port of a URL that names none, its scheme's (`https://api.example.com` is port 443), or the
/// range of an address with a dotted netmask in CIDR notation?
fn notation_states(said: &str, p: &str, written: &str) -> bool {
    let scheme_port = crate::certainty::scheme_default_port(said).is_some_and(|port| {
        written == port.to_string()
            && pointer::split_last(p)
                .is_some_and(|(_, field)| field.to_ascii_lowercase().contains("port"))
    });
    scheme_port || super::readings::cidr_of_netmask(said).is_some_and(|cidr| cidr == written)
}

/// Is `written` the number the field's description says means no limit, where the user's
/// text `said` states no limit?
fn no_limit_as_described(schema: &Value, p: &str, said: &str, written: &str) -> bool {
    let description = crate::schema::node_at(schema, p)
        .and_then(|node| node.get("description"))
        .and_then(Value::as_str)
        .unwrap_or_default();
    super::readings::no_limit_number(said, description)
        .is_some_and(|n| written.parse::<i64>() == Ok(n))
}

/// The amounts step of [`invented`]: the written `leaf` against the amount of the user's
/// scalar it `replaced` or of the annotation that scalar points to, or, for a missing value,
/// the amount a sentence of the annotations says about the field. `None` when amounts say
/// nothing (its words are checked next).
fn amount_said(
    leaf: &Leaf,
    schema: &Value,
    (given, candidate): (&Value, &Value),
    old_object: Option<&Value>,
    replaced: Option<&Value>,
    annotation: Option<&Value>,
) -> Option<Result<(), String>> {
    if replaced
        .and_then(Value::as_str)
        .is_some_and(|said| notation_states(said, &leaf.pointer, &leaf.text))
    {
        return Some(Ok(()));
    }
    let Some(v) = replaced else {
        let description = crate::schema::node_at(schema, &leaf.pointer)
            .and_then(|node| node.get("description"))
            .and_then(Value::as_str)
            .unwrap_or_default();
        return super::readings::described_amount(given, description)
            .is_some_and(|sentence| {
                same_amount_said(schema, &leaf.pointer, old_object, &sentence, &leaf.text)
            })
            .then_some(Ok(()));
    };
    let in_annotation =
        annotation.and_then(|a| amount_against(leaf, schema, (given, candidate), old_object, a));
    match (
        amount_against(leaf, schema, (given, candidate), old_object, v),
        in_annotation,
    ) {
        (Some(Ok(())), _) | (_, Some(Ok(()))) => Some(Ok(())),
        (Some(Err(message)), _) => Some(Err(message)),
        _ => None,
    }
}

/// The written `leaf` against the amount of the user's scalar `v` it replaces: `Some(Ok(()))`
/// when it restates that amount (in another unit, counted in the field's unit, relative to the
/// stored value, scaled, or one of the amounts of a string made into a map or list),
/// `Some(Err(why))` when it drops or changes the unit, `None` when amounts say nothing (its
/// words are checked next).
fn amount_against(
    leaf: &Leaf,
    schema: &Value,
    (given, candidate): (&Value, &Value),
    old_object: Option<&Value>,
    v: &Value,
) -> Option<Result<(), String>> {
    // The user's amount in another unit (`"90 days"` → `2160h`) invents nothing.
    // (A comment glued into the user's value is a remark: its amounts are not the value's.)
    let said = scalar_text(v);
    if same_amount_said(schema, &leaf.pointer, old_object, &said, &leaf.text)
        || in_field_unit(schema, &leaf.pointer, v, &leaf.text, old_object)
        || super::readings::names_built_in_kind(&said, &leaf.text)
        || relative_to_old(schema, v, old_object, &leaf.pointer, &leaf.text)
        || states_schedule(&said, &leaf.text)
        || super::cron::same_time_of_day(&said, &leaf.text)
        || no_limit_as_described(schema, &leaf.pointer, &said, &leaf.text)
        || super::readings::counted_in_words(&said)
            .is_some_and(|n| leaf.text.parse::<f64>() == Ok(n))
    {
        return Some(Ok(()));
    }
    // A string made into a map or a list (`"cpu=100m,memory=200Mi"`) holds one amount per
    // key or item: each one written inside it is one of the amounts the string states.
    if given.pointer(&leaf.pointer).is_none() && super::readings::among_amounts(&said, &leaf.text) {
        return Some(Ok(()));
    }
    // The number of the user's amount without its unit is another amount (`"5 minutes"`
    // → `5`), unless the field counts in that unit (checked above).
    let number = leaf.text.parse::<f64>().ok();
    if number.is_some() && number == super::readings::bare_number(&said) {
        return Some(Err(format!(
            "{} drops the unit of {}: the field's description names no unit it is counted in",
            quote_str(&leaf.text),
            quote(v)
        )));
    }
    // A count per a time unit the field does not count per (`"100 per minute"` where it
    // counts per a `period`): the count alone is another rate.
    let description = crate::schema::node_at(schema, &leaf.pointer)
        .and_then(|node| node.get("description"))
        .and_then(Value::as_str)
        .unwrap_or_default();
    if number.is_some_and(|n| super::readings::rate_dropped(&said, description, n))
        && !unit_written_beside(candidate, &leaf.pointer, &said)
    {
        return Some(Err(format!(
            "{} drops the time unit of the rate {}: the field does not count per that unit",
            quote_str(&leaf.text),
            quote(v)
        )));
    }
    // An amount written in place of a value must be that value's amount: a unit is
    // meaning too (`90` → `"90h"`, `"30 days"` → `"30h"` invent one).
    if let Some(amount) = super::readings::single_amount(&leaf.text) {
        return Some(Err(format!(
            "{} is not the amount of the value it replaces ({})",
            quote_str(&amount),
            quote(v)
        )));
    }
    None
}

/// Is `written` the cron expression the user's schedule in words states (`"every night at
/// 1:30 am"` → `30 1 * * *`, `"every six hours"` → `0 */6 * * *`)? Its numbers and fields are the text's days and time restated.
fn states_schedule(said: &str, written: &str) -> bool {
    super::cron::cron_in_words(said).as_deref() == Some(written)
        || super::cron::interval_in_words(said).as_deref() == Some(written)
}

/// The number of the user's `leaf` that the answer drops: one no written value has, that is
/// not inside a name the candidate still states (`s3` of `provider: S3`), nor on record in
/// the old object, unless the value was restated in another unit.
fn dropped(
    leaf: &Leaf,
    schema: &Value,
    written_numbers: &BTreeSet<String>,
    candidate_names: &BTreeSet<String>,
    old_object: Option<&Value>,
    candidate: &Value,
) -> Option<Violation> {
    if candidate
        .pointer(&leaf.pointer)
        .is_some_and(|v| restated(leaf, schema, old_object, &scalar_text(v)))
    {
        return None;
    }
    // On UPDATE the old object's value there is on record: `"1.13.3 -> 1.14.5"` over an old
    // `1.13.3` loses nothing by keeping `1.14.5`.
    let on_record = old_text(old_object, &leaf.pointer)
        .map(|t| numbers(&t))
        .unwrap_or_default();
    let kept: BTreeSet<String> = names_with_digits(&leaf.text)
        .into_iter()
        .filter(|w| candidate_names.contains(w))
        .flat_map(|w| numbers(&w))
        .chain(on_record)
        .chain(version_series(written_numbers))
        .collect();
    // A comment glued into the value (`"ISRG Root X1   # the X3 cross-sign expired in 2021"`,
    // YAML's ` #` inside quotes) is a remark: its numbers are no values to keep; nor are a
    // change note's, beside its new side (`"rotate key-2024 -> key-2025 (expires 31 Jan)"`).
    let stored = old_object.and_then(|o| o.pointer(&leaf.pointer));
    let value_part = stored
        .and_then(|stored| super::readings::change_note_target(&leaf.text, stored))
        .or_else(|| {
            // So are those of an item written as an addition (`"+ reporting (added for the
            // Q3 close)"`).
            super::readings::added_item(&leaf.text).filter(|_| pointer::is_list_item(&leaf.pointer))
        })
        .or_else(|| super::readings::before_comment(&leaf.text))
        .unwrap_or(&leaf.text);
    let left_out = numbers_said_to_leave_out(value_part);
    // The truth value the text states keeps its numbers of their own (`"yes, after 10
    // minutes"` says when), not the digits of a name (`"disabled - breaks on HTTP/2"`).
    let truth_stated = candidate
        .pointer(&leaf.pointer)
        .and_then(Value::as_bool)
        .is_some_and(|b| super::readings::stated_bool(&leaf.text) == Some(b));
    // So does the absence the text states, where the answer removes the value (`"disabled -
    // v4 of the app dropped /healthz"`).
    let absence_stated = candidate.pointer(&leaf.pointer).is_none()
        && super::readings::states_absence(&leaf.text, true);
    // Of a truth value or an absence the text states, a remark's numbers (after a dash set
    // off by blanks, in brackets: `"no longer suspended - quota for the 32 H100s was
    // approved"`) are the remark's, as the certainty layer reads remarks; an amount is a
    // setting the user may want (`"no - keep a 7 day recovery window"`), never a remark's.
    let own_numbers =
        if (truth_stated || absence_stated) && !super::readings::states_an_amount(value_part) {
            standalone_numbers(&crate::certainty::without_remarks(value_part))
        } else {
            standalone_numbers(value_part)
        };
    let dropped = numbers(value_part).into_iter().find(|n| {
        !written_numbers.contains(n)
            && !kept.contains(n)
            && !left_out.contains(n)
            && (!(truth_stated || absence_stated) || own_numbers.contains(n))
    })?;
    Some(Violation {
        pointer: leaf.pointer.clone(),
        message: format!(
            "llm.requireEvidence: the answer drops {dropped} from the user's {}",
            quote_str(&leaf.text)
        ),
    })
}

/// Is `written` the user's `leaf` said another way: a URL's host where a host belongs, a
/// command line's flag (the rest is syntax), the same amount in another unit or scale, the
/// schedule or the time of day the words state, the stored time moved, a change of the stored
/// value?
fn restated(leaf: &Leaf, schema: &Value, old_object: Option<&Value>, written: &str) -> bool {
    let said = Value::from(leaf.text.as_str());
    crate::certainty::text_gives_for(&leaf.text, &leaf.pointer) == Some(written)
        || same_amount_said(schema, &leaf.pointer, old_object, &leaf.text, written)
        || states_schedule(&leaf.text, written)
        || super::cron::same_time_of_day(&leaf.text, written)
        || old_text(old_object, &leaf.pointer).is_some_and(|stored| {
            super::cron::moved_time(&leaf.text, &stored).as_deref() == Some(written)
        })
        || relative_to_old(schema, &said, old_object, &leaf.pointer, written)
        || in_field_unit(schema, &leaf.pointer, &said, written, old_object)
        || notation_states(&leaf.text, &leaf.pointer, written)
}

/// Is `written` the amount the user's text `said` for the field at `p` states: the same
/// amount (the one before a remark), scaled by its magnitude word, or the count per listed
/// item times the items? One place for what the drop and the invention checks both accept.
fn same_amount_said(
    schema: &Value,
    p: &str,
    old_object: Option<&Value>,
    said: &str,
    written: &str,
) -> bool {
    let old = old_object.and_then(|o| o.pointer(p));
    super::readings::same_amount(super::readings::value_before_comment(said, old), written)
        || super::readings::scaled_number(said, written)
        || written
            .strip_suffix('%')
            .is_some_and(|w| super::readings::fraction_as_percentage(said) == w.parse::<f64>().ok())
        || per_listed(schema, p, said, written)
        || crate::schema::node_at(schema, p)
            .and_then(|node| super::readings::share_as_percentage(said, node))
            .is_some_and(|share| written.parse::<f64>().is_ok_and(|w| w == share))
}

/// Is `written` the count the user's text says per item of the list it gives
/// (`readings::count_per_listed`), for the field at `p`?
fn per_listed(schema: &Value, p: &str, said: &str, written: &str) -> bool {
    let description = crate::schema::node_at(schema, p)
        .and_then(|node| node.get("description"))
        .and_then(Value::as_str)
        .unwrap_or_default();
    written
        .parse::<f64>()
        .is_ok_and(|w| super::readings::count_per_listed(said, description) == Some(w))
}

/// The series of each written version (`0.28` of `0.28.1`): that version, said less
/// precisely ("0.28 is needed").
fn version_series(written_numbers: &BTreeSet<String>) -> impl Iterator<Item = String> + '_ {
    written_numbers
        .iter()
        .filter(|n| n.matches('.').count() >= 2)
        .flat_map(|n| {
            let segments: Vec<&str> = n.split('.').collect();
            (2..segments.len())
                .map(|k| segments[..k].join("."))
                .collect::<Vec<_>>()
        })
}

/// The numbers `text` writes as words of their own (`3 replicas`, not the `1` of `md-1`),
/// as the JSON numbers they state.
fn standalone_numbers(text: &str) -> BTreeSet<String> {
    super::readings::numbers_said(text)
        .iter()
        .filter_map(|n| crate::repair::coerce::number_value(n.value))
        .map(|v| v.to_string())
        .collect()
}

/// The numbers of `text` that a remark in brackets asks to leave out: a clause of it (cut at
/// `;`) that says so (`"10.0.0.1 and 10.0.0.2 (10.0.0.3 is being retired, leave it out)"`).
/// The user's own words drop them; nothing else in the remark, nor outside it, is dropped.
fn numbers_said_to_leave_out(text: &str) -> BTreeSet<String> {
    const LEAVE_OUT: [&str; 8] = [
        "leave it out",
        "leave that out",
        "leave out",
        "leave this out",
        "exclude it",
        "excluded",
        "do not include",
        "don't include",
    ];
    let mut out = BTreeSet::new();
    let mut rest = text;
    while let Some(open) = rest.find('(') {
        let Some(close) = rest[open..].find(')') else {
            break;
        };
        let remark = &rest[open + 1..open + close];
        for clause in remark.split(';') {
            let lower = clause.to_lowercase();
            if LEAVE_OUT.iter().any(|phrase| lower.contains(phrase)) {
                out.extend(numbers(clause));
            }
        }
        // A ticket's or issue's id in a remark (`"(flaky mirror, OPS-1182)"`) names where the
        // change is discussed; its number is no value.
        for word in remark.split(|c: char| c.is_whitespace() || ",;".contains(c)) {
            let word = word.trim_matches(|c: char| !c.is_alphanumeric());
            if let Some((project, id)) = word.split_once('-') {
                let ticket = !project.is_empty()
                    && project.chars().all(|c| c.is_ascii_alphabetic())
                    && !id.is_empty()
                    && id.chars().all(|c| c.is_ascii_digit());
                if ticket {
                    out.insert(normalise_number(id));
                }
            }
        }
        rest = &rest[open + close + 1..];
    }
    out
}

/// Is the number `written` at `p` the user's amount `said` counted in the unit the field's
/// description names (`"5 minutes"` → `300` in a field of whole seconds)? The same reading
/// the candidates make (`readings::amount_in_field_unit`).
fn in_field_unit(
    schema: &Value,
    p: &str,
    said: &Value,
    written: &str,
    old_object: Option<&Value>,
) -> bool {
    let (Value::String(said), Ok(number)) = (said, written.parse::<f64>()) else {
        return false;
    };
    let description = crate::schema::node_at(schema, p)
        .and_then(|node| node.get("description"))
        .and_then(Value::as_str)
        .unwrap_or_default();
    let old = old_object.and_then(|o| o.pointer(p));
    super::readings::same_amount_in_field_unit(said, number, description, old)
}

/// The user's scalar that the value at `p` takes the place of: the value at `p` itself, or
/// a scalar at one of its ancestors that the LLM turned into a structure (a comma-separated
/// string into a list).
/// On UPDATE, the texts of the stored value that the user's text replacing `p` refers to
/// (`"the current list minus ping"` over a stored `[ping, push, release]`): what a relative
/// reading keeps of it is the user's, not invented. Empty when the text refers to nothing stored.
fn stored_referred_to(given: &Value, old_object: Option<&Value>, p: &str) -> Vec<String> {
    let Some((at, Value::String(text))) = replaced_at(given, p) else {
        return Vec::new();
    };
    let lower = text.to_lowercase();
    let said: Vec<&str> = lower
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    match old_object.and_then(|o| o.pointer(at)) {
        Some(stored) if super::readings::refers_to_stored(&said) => leaf_texts(stored),
        _ => Vec::new(),
    }
}

fn replaced_scalar<'v>(given: &'v Value, p: &str) -> Option<&'v Value> {
    replaced_at(given, p).map(|(_, v)| v)
}

/// The user's scalar that the written value at `p` replaces (at `p` or above it), and where it
/// is; `None` where the object holds a structure there.
fn replaced_at<'v, 'p>(given: &'v Value, p: &'p str) -> Option<(&'p str, &'v Value)> {
    let mut current = p;
    loop {
        if let Some(v) = given.pointer(current) {
            return is_scalar(v).then_some((current, v));
        }
        let (parent, _) = pointer::split_last(current)?;
        current = parent;
    }
}

/// The texts of every string and number leaf of `v`.
pub(super) fn leaf_texts(v: &Value) -> Vec<String> {
    let mut out = Vec::new();
    leaves(v, "", 0, &mut |_, leaf| out.push(scalar_text(leaf)));
    out
}

pub(super) fn is_scalar(v: &Value) -> bool {
    matches!(v, Value::String(_) | Value::Number(_) | Value::Bool(_))
}

/// Calls `f` with every string and number leaf (bools, nulls and keys are not evidence).
pub(super) fn leaves(v: &Value, at: &str, depth: usize, f: &mut dyn FnMut(&str, &Value)) {
    each_leaf(v, at, depth, false, f);
}

/// Calls `f` on every string and number of `v` (and truth value, with `truths`).
fn each_leaf(v: &Value, at: &str, depth: usize, truths: bool, f: &mut dyn FnMut(&str, &Value)) {
    if depth > MAX_DEPTH {
        return;
    }
    match v {
        Value::Object(map) => {
            for (k, child) in map {
                each_leaf(child, &pointer::push(at, k), depth + 1, truths, f);
            }
        }
        Value::Array(items) => {
            for (i, child) in items.iter().enumerate() {
                each_leaf(
                    child,
                    &pointer::push(at, &i.to_string()),
                    depth + 1,
                    truths,
                    f,
                );
            }
        }
        Value::String(_) | Value::Number(_) => f(at, v),
        Value::Bool(_) if truths => f(at, v),
        _ => {}
    }
}

fn scalar_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The user's text, indexed for [`first_unsupported`].
struct Evidence {
    /// Every word of every source.
    words: BTreeSet<String>,
    /// Each source's words in order, for words written together (`self-certified`,
    /// `SelfCertified` → `selfcertified`).
    sequences: Vec<Vec<String>>,
    numbers: BTreeSet<String>,
    /// Numbers written as words of their own (`3 replicas`, not the `1` of `md-1`), as the
    /// JSON number they state.
    standalone_numbers: BTreeSet<String>,
    operators: BTreeSet<String>,
}

impl Evidence {
    fn new<'a>(texts: impl IntoIterator<Item = &'a str>) -> Self {
        let mut evidence = Evidence {
            words: BTreeSet::new(),
            sequences: Vec::new(),
            numbers: BTreeSet::new(),
            standalone_numbers: BTreeSet::new(),
            operators: BTreeSet::new(),
        };
        for text in texts {
            evidence.standalone_numbers.extend(standalone_numbers(text));
            evidence.operators.extend(operators(text));
            evidence.numbers.extend(numbers(text));
            let tokens = tokens(text);
            evidence.words.extend(tokens.iter().cloned());
            if tokens.len() > 1 {
                evidence.sequences.push(tokens);
            }
        }
        evidence
    }

    /// `word` is one of the user's words, or consecutive words of one text written together;
    /// never a part of a word (`none` is not in `nonexistent`).
    fn has_word(&self, word: &str) -> bool {
        self.words.contains(word) || self.sequences.iter().any(|tokens| joins(tokens, word))
    }
}

/// Some run of consecutive `tokens` spells `word` exactly.
fn joins(tokens: &[String], word: &str) -> bool {
    (0..tokens.len()).any(|start| {
        let mut rest = word;
        for token in &tokens[start..] {
            match rest.strip_prefix(token.as_str()) {
                Some("") => return true,
                Some(r) => rest = r,
                None => return false,
            }
        }
        false
    })
}

/// The words of the user's text: runs of letters, split where a lower-case letter meets an
/// upper-case one (`SelfCertified` → `self`, `certified`), lower case.
pub(super) fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for run in text
        .split(|c: char| !c.is_alphabetic())
        .filter(|r| !r.is_empty())
    {
        let mut current = String::new();
        let mut previous_lower = false;
        for c in run.chars() {
            if c.is_uppercase() && previous_lower {
                out.push(std::mem::take(&mut current));
            }
            previous_lower = c.is_lowercase();
            current.extend(c.to_lowercase());
        }
        out.push(current);
    }
    out
}

/// The first word, number or operator of `text` that none of `sources` contains.
fn first_unsupported(sources: &[&Evidence], text: &str) -> Option<String> {
    if let Some(w) = words(text)
        .into_iter()
        .find(|w| !sources.iter().any(|e| e.has_word(w)))
    {
        return Some(w);
    }
    if let Some(n) = numbers(text)
        .into_iter()
        .find(|n| !sources.iter().any(|e| e.numbers.contains(n)))
    {
        return Some(n);
    }
    operators(text)
        .into_iter()
        .find(|o| !sources.iter().any(|e| e.operators.contains(o)))
}

/// Runs of two or more letters, lower case (single letters such as the `v` of `v1.2` or a
/// wildcard `x` say nothing).
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphabetic())
        .filter(|w| w.chars().count() >= 2)
        .map(str::to_lowercase)
        .collect()
}

/// Words of letters and digits together (`s3`, `ipv6`), lower case: a number inside one is
/// part of a name, kept when the name is (`s3://bucket` → `provider: S3`).
fn names_with_digits(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().any(char::is_alphabetic) && w.chars().any(|c| c.is_ascii_digit()))
        .map(str::to_lowercase)
        .collect()
}

/// Characters that make comparison and wildcard operators (`>=`, `<`, `~`, `^`, `*`, `||`).
const OPERATOR_CHARS: &str = "<>=!~^*|&";

/// Runs of operator characters: `">=1.4"` says more than `"1.4"`, so an operator is meaning
/// the user must have written too.
fn operators(text: &str) -> Vec<String> {
    text.split(|c: char| !OPERATOR_CHARS.contains(c))
        .filter(|o| !o.is_empty())
        .map(str::to_string)
        .collect()
}

/// Dotted runs of digits (`1`, `1.2`, `0.6.0`), trailing `.0` parts dropped.
fn numbers(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        let inner_dot = c == '.'
            && !current.is_empty()
            && !current.ends_with('.')
            && chars.peek().is_some_and(char::is_ascii_digit);
        if c.is_ascii_digit() || inner_dot {
            current.push(c);
        } else if !current.is_empty() {
            out.push(normalise_number(&current));
            current.clear();
        }
    }
    if !current.is_empty() {
        out.push(normalise_number(&current));
    }
    out
}

fn normalise_number(n: &str) -> String {
    let mut parts: Vec<&str> = n.split('.').collect();
    while parts.len() > 1 && parts.last().is_some_and(|p| p.bytes().all(|b| b == b'0')) {
        parts.pop();
    }
    parts
        .iter()
        .map(|p| {
            let t = p.trim_start_matches('0');
            if t.is_empty() {
                "0"
            } else {
                t
            }
        })
        .collect::<Vec<_>>()
        .join(".")
}

fn quote(v: &Value) -> String {
    text::quote(v, MAX_QUOTE_CHARS)
}

fn quote_str(s: &str) -> String {
    text::quote(&Value::String(s.to_string()), MAX_QUOTE_CHARS)
}

#[cfg(test)]
mod tests;
