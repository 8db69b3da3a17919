//! What a user's value can be read as: the enum values it names in full (`provides` names the
//! `Provided` of `CatalogProvided`; `"not Strict"` names none), the amounts it states (`14d`,
//! `"one month"`, `512 MiB`), and whether it contradicts itself.
//!
//! A value that contradicts itself — `"SelfCertified (only take upgrade edges the catalog
//! provides)"` names two of the field's enum values, `"14d (one month)"` states two different
//! amounts — has no fix: whichever reading a fix keeps, it drops the other, and nothing in the
//! object says which one the user meant. Such an error is never sent to the LLM (measured with
//! `make e2e-llm`: small models pick the reading the value names first, a confident wrong fix).
//! On UPDATE a reading equal to the old object's value is the past (`"CatalogProvided (was
//! SelfCertified)"`), not a second wish, and does not count.

use std::fmt;

use serde_json::Value;

use crate::schema;

/// Longest value checked (longer ones are not a remark on a value).
const MAX_CHARS: usize = 512;
/// Two amounts closer than this (relative) are the same amount said twice (`30d (a month)`).
const SAME_AMOUNT: f64 = 0.1;

/// Two readings of one value that cannot both hold.
#[derive(Debug, Clone, PartialEq)]
pub struct Contradiction {
    pub first: String,
    pub second: String,
    kind: Kind,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    EnumValues,
    SharedWord,
    Amounts,
    Qualified,
    Direction,
    NamesNone,
}

impl fmt::Display for Contradiction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self.kind {
            Kind::EnumValues => "names two allowed values",
            Kind::SharedWord => {
                return write!(
                    f,
                    "names only what several allowed values share ({:?}, {:?}, …)",
                    self.first, self.second
                )
            }
            Kind::Amounts => "states two different amounts",
            Kind::Direction => {
                return write!(f, "says {:?}, but {}", self.first, self.second);
            }
            Kind::NamesNone => {
                return write!(
                    f,
                    "is {:?}, a name that is none of the allowed values ({})",
                    self.first, self.second
                );
            }
            Kind::Qualified => {
                return write!(
                f,
                "names the allowed value {:?} and qualifies it ({:?}), which the value cannot say",
                self.first, self.second
            )
            }
        };
        write!(f, "{what}, {:?} and {:?}", self.first, self.second)
    }
}

/// The contradiction in the user's `value` for a field of schema `node`, if any. `old` is the
/// old object's value at the same place on UPDATE.
pub fn contradiction(
    node: Option<&Value>,
    value: &Value,
    old: Option<&Value>,
) -> Option<Contradiction> {
    let Value::String(text) = value else {
        return None;
    };
    if text.chars().count() > MAX_CHARS {
        return None;
    }
    let description = node
        .and_then(|n| n.get("description"))
        .and_then(Value::as_str)
        .unwrap_or_default();
    // Several amounts where the field holds several values (a map of resources, a list) are
    // one per key or item, not two statements of one value.
    let holds_one_value = !node.is_some_and(|n| matches!(schema::type_of(n), "object" | "array"));
    named_enum_values(node, text, old)
        .or_else(|| values_per_case(node, text))
        .or_else(|| qualified_value(node, value))
        .or_else(|| {
            holds_one_value
                .then(|| different_amounts(text, old, description))
                .flatten()
        })
        .or_else(|| amount_and_count(node, text, old, description))
        .or_else(|| wrong_direction(text, old))
        .or_else(|| note_against_change(text, old))
        .or_else(|| earlier_value_asked(text, old))
        .or_else(|| wrong_parity(text))
        .or_else(|| unchanged_but_different(value, old))
}

/// A truth value written for a field that names a state (`suspend`, `paused`) beside words
/// that put the object in that state: in the value itself (`"false - paused until the Nexus
/// migration is finished"`) or in `others`, the object's annotations (`"disabled"` under
/// `status: "paused until the registry move"`). The value says it is not in the state, the
/// words that it is: only the user can say which holds.
pub fn state_against_truth(field: &str, value: &Value, others: &[&str]) -> Option<Contradiction> {
    const STATES: [&str; 2] = ["pause", "suspend"];
    const IN_STATE: [&str; 6] = [
        "paused",
        "pause",
        "suspended",
        "suspend",
        "halted",
        "frozen",
    ];
    let text = value.as_str()?;
    let field = field.to_lowercase();
    if !STATES.iter().any(|s| field.starts_with(s)) || stated_bool(text) != Some(false) {
        return None;
    }
    let state_word = |said: &str| {
        let negated = crate::certainty::negated_words(said);
        let said_words = words(said);
        said_words
            .iter()
            .find(|w| IN_STATE.contains(&w.as_str()) && !negated.contains(w))
            .cloned()
            .or_else(|| {
                said_words
                    .windows(2)
                    .any(|pair| pair[0] == "on" && pair[1] == "hold")
                    .then(|| "on hold".to_string())
            })
    };
    let (word, place) = match state_word(text) {
        Some(word) => (word, "the same words say"),
        None => (
            others.iter().find_map(|other| state_word(other))?,
            "an annotation says",
        ),
    };
    Some(Contradiction {
        first: text.to_string(),
        second: format!("{place} {word:?}"),
        kind: Kind::Direction,
    })
}

/// A whole number the text calls odd or even when it is not (`"4 (an odd number, so the
/// ensemble keeps its quorum)"`): the words contradict the number, so neither is the reading.
fn wrong_parity(text: &str) -> Option<Contradiction> {
    let numbers = numbers_said(text);
    let [said] = numbers.as_slice() else {
        return None;
    };
    if !said.decimal || said.value.fract() != 0.0 {
        return None;
    }
    let negated = crate::certainty::negated_words(text);
    let said_words = words(text);
    // `odd number`, `even count`: the parity of a count (`even spread` says something else).
    let called = |word: &str| {
        !negated.iter().any(|n| n == word)
            && said_words
                .windows(2)
                .any(|pair| pair[0] == word && matches!(pair[1].as_str(), "number" | "count"))
    };
    let even = said.value % 2.0 == 0.0;
    let word = match (called("odd"), called("even")) {
        (true, false) if even => "odd",
        (false, true) if !even => "even",
        _ => return None,
    };
    Some(Contradiction {
        first: word.to_string(),
        second: format!("{} is {}", said.value, if even { "even" } else { "odd" }),
        kind: Kind::Direction,
    })
}

/// On UPDATE, a value whose own words say it did not change (`"9090 (unchanged, still the app
/// port)"`) while it differs from the stored one (`8080`) says two things: the number or the
/// remark is the mistake, and only the user knows which (for a list entry as much as for a
/// field of its own).
pub fn unchanged_but_different(value: &Value, old: Option<&Value>) -> Option<Contradiction> {
    let Value::String(text) = value else {
        return None;
    };
    let old = match old? {
        Value::String(s) => s.trim().to_string(),
        Value::Number(n) => n.to_string(),
        Value::Bool(b) => b.to_string(),
        _ => return None,
    };
    let claim = words(text)
        .into_iter()
        .find(|w| matches!(w.as_str(), "unchanged" | "unmodified"))?;
    // The value is what comes before its remark (in brackets, after a comma, a dash or a `#`).
    let without = crate::certainty::without_remarks(text);
    let value = without.split([',', ';']).next().unwrap_or_default().trim();
    let differs = !value.is_empty()
        && !value.to_lowercase().contains(claim.as_str())
        && value != old
        && !same_amount(value, &old);
    differs.then(|| Contradiction {
        first: claim,
        second: format!("{value:?} is not the stored {old:?}"),
        kind: Kind::Direction,
    })
}

/// In a number field counted in a unit (its description names one), an amount and a bare
/// number beside it are two statements of the value: `maxAge: "30 minutes (3600)"` in seconds
/// says 1800 and 3600. When they differ, neither is the reading (the same, `"5 minutes
/// (300)"`, is no contradiction); on UPDATE the stored number is the past.
fn amount_and_count(
    node: Option<&Value>,
    text: &str,
    old: Option<&Value>,
    description: &str,
) -> Option<Contradiction> {
    let numeric = node.is_some_and(|n| matches!(schema::type_of(n), "integer" | "number"));
    if !numeric {
        return None;
    }
    let found = amounts(text);
    let [amount] = found.as_slice() else {
        return None;
    };
    let scale = field_unit(description, amount.dimension)?;
    let old = old.and_then(Value::as_f64);
    let bare: Vec<f64> = numbers_said(text)
        .iter()
        .map(|n| n.value)
        .filter(|n| *n != amount.number && Some(*n) != old)
        .collect();
    let [count] = bare.as_slice() else {
        return None;
    };
    let differs = (count * scale - amount.value).abs() > f64::EPSILON * amount.value.max(1.0);
    differs.then(|| Contradiction {
        first: amount.said.clone(),
        second: count.to_string(),
        kind: Kind::Amounts,
    })
}

/// Words that state a change downwards, and upwards.
const DOWNWARDS: [&str; 9] = [
    "down", "lower", "reduce", "decrease", "fewer", "less", "shrink", "smaller", "shorter",
];
const UPWARDS: [&str; 9] = [
    "up", "raise", "increase", "more", "grow", "higher", "bigger", "longer", "bump",
];

/// On UPDATE, a change stated with its direction and the new number (`"scale down to 12"`)
/// where the stored value says the opposite (8): the words contradict the number, so neither
/// is the reading.
fn wrong_direction(text: &str, old: Option<&Value>) -> Option<Contradiction> {
    let old = old?;
    let (said, stored) = new_and_stored(text, old)?;
    // A number said as a change of the stored one (`"200 more than now"`) is no new value.
    if relative_amount(text, old).is_some() {
        return None;
    }
    let mut said_words = words(text);
    // `"up to 5s"` states a bound, not a direction.
    let bounds: Vec<usize> = said_words
        .windows(2)
        .enumerate()
        .filter(|(_, pair)| pair[0] == "up" && pair[1] == "to")
        .map(|(i, _)| i)
        .collect();
    for i in bounds.into_iter().rev() {
        said_words.remove(i);
    }
    // A direction word in any inflection (`raised`, `lowered`, `bumped`), never a shorter
    // word (`high` is no `higher`).
    let towards = |list: &[&str]| {
        said_words
            .iter()
            .find(|w| list.iter().any(|d| w.len() >= d.len() && same_word(w, d)))
    };
    let (down, up) = (towards(&DOWNWARDS), towards(&UPWARDS));
    let (word, comparison) = match (down, up) {
        (Some(w), None) if said.1 > stored.1 => (w, "more than"),
        (None, Some(w)) if said.1 < stored.1 => (w, "less than"),
        _ => return None,
    };
    Some(Contradiction {
        first: word.clone(),
        second: format!("{} is {comparison} the stored {}", said.0, stored.0),
        kind: Kind::Direction,
    })
}

/// On UPDATE, a change note whose new side is not the change its words state (`"double it:
/// 2 -> 3"` over 2): two statements of the new value that disagree.
fn note_against_change(text: &str, old: Option<&Value>) -> Option<Contradiction> {
    let old = old?;
    let target = change_note_target(text, old)?;
    let changed = relative_amount(text, old)?;
    let changed_text = match &changed {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let agree = changed_text == target
        || same_amount(&changed_text, target)
        || target.parse::<f64>().ok() == changed.as_f64();
    (!agree).then(|| Contradiction {
        first: target.to_string(),
        second: changed_text,
        kind: Kind::Amounts,
    })
}

/// On UPDATE, a text that asks for a value from before the stored one without stating it
/// (`"back to what it was before the 45m bump"` over `45m`): neither object holds that value,
/// and the stored one is what the text undoes, so no value is the reading.
fn earlier_value_asked(text: &str, old: Option<&Value>) -> Option<Contradiction> {
    const EARLIER: [&str; 5] = [
        "what it was",
        "what it used to be",
        "previous value",
        "the old value",
        "as it was before",
    ];
    let old = old?;
    let lower = text.to_lowercase();
    let phrase = EARLIER.iter().find(|p| lower.contains(*p))?;
    let stored = super::evidence::leaf_texts(old);
    // A value stated beside the words is the value (`"back to what it was: 30m"`).
    let said_amounts = amounts(text);
    let stored_number = |n: f64| stored.iter().any(|s| s.parse::<f64>().ok() == Some(n));
    let states_another = match said_amounts.is_empty() {
        false => said_amounts
            .iter()
            .any(|a| !stored.iter().any(|s| same_amount(&a.said, s))),
        true => numbers_said(text).iter().any(|n| !stored_number(n.value)),
    };
    (!states_another).then(|| Contradiction {
        first: phrase.to_string(),
        second: format!(
            "the value before the stored {} is in neither object",
            stored.first().map(String::as_str).unwrap_or("one")
        ),
        kind: Kind::Direction,
    })
}

/// The one new amount or number `text` states and the stored one, `old`, each as written and
/// as a value to compare: amounts of one dimension (`"increase to 5s"` over `10s`), else plain
/// numbers (`"scale down to 12"` over 8).
fn new_and_stored(text: &str, old: &Value) -> Option<((String, f64), (String, f64))> {
    if let Value::String(stored) = old {
        if let ([said], [stored]) = (amounts(text).as_slice(), amounts(stored).as_slice()) {
            if said.dimension == stored.dimension {
                return Some((
                    (said.said.clone(), said.value),
                    (stored.said.clone(), stored.value),
                ));
            }
        }
    }
    let stored = match old {
        Value::Number(n) => n.as_f64()?,
        Value::String(s) => s.trim().parse::<f64>().ok()?,
        _ => return None,
    };
    let numbers = numbers_said(text);
    let [said] = numbers.as_slice() else {
        return None;
    };
    Some((
        (said.value.to_string(), said.value),
        (stored.to_string(), stored),
    ))
}

/// A value stated, then qualified by a contrast (`updateMode: "Recreate, but never evict
/// running pods"`, `selfHeal: "yes, but keep manual kubectl hotfixes in place"`): the
/// qualification is part of what the user asks, and no value of the field says it. The value is
/// read from the text before the contrast (an enum value named in full, a truth value stated,
/// or a whole value of a syntax the schema checks: `"192.168.1.0/24 except the router"`); a contrast
/// that only rules out another allowed value (`"Stable, but not Candidate"`) qualifies
/// nothing.
pub fn qualified_value(node: Option<&Value>, value: &Value) -> Option<Contradiction> {
    let (node, Value::String(text)) = (node?, value) else {
        return None;
    };
    if text.chars().count() > MAX_CHARS {
        return None;
    }
    let at = contrast_at(text)?;
    let (before, clause) = (&text[..at], text[at..].trim());
    let (value, allowed): (String, Vec<&str>) = if let Some(allowed) = schema::enum_values(node) {
        let named = named_values(before, allowed);
        let [value] = named.as_slice() else {
            return None;
        };
        // Another allowed value that says the named one and the contrast itself
        // (`OnNamespaceExceptForAlertmanagerNamespace` for "on namespace …, except …") is what
        // the qualification asks for: the field can say it.
        let contrast = words(&text[at..]).into_iter().next().unwrap_or_default();
        let mut extended = words(value);
        extended.push(contrast);
        if allowed.iter().filter_map(Value::as_str).any(|other| {
            other != *value && {
                let own = words(other);
                extended.iter().all(|w| own.contains(w))
            }
        }) {
            return None;
        }
        (
            value.to_string(),
            allowed.iter().filter_map(Value::as_str).collect(),
        )
    } else if schema::type_of(node) == "boolean" {
        (stated_bool(before)?.to_string(), vec!["true", "false"])
    } else if schema::type_of(node) == "string"
        && ["pattern", "format", "x-kubernetes-validations"]
            .iter()
            .any(|k| node.get(k).is_some())
    {
        // A value of a checked syntax written whole before the contrast
        // (`"192.168.1.0/24 except the router"`): the exception is no part of any value.
        let value = before.trim().trim_end_matches(',').trim();
        if value.is_empty()
            || value.contains(char::is_whitespace)
            || !crate::certainty::accepts(node, &Value::from(value))
        {
            return None;
        }
        (value.to_string(), Vec::new())
    } else {
        return None;
    };
    let clause_words = words(clause);
    let rules_out_a_value = allowed
        .iter()
        .any(|a| position_in_full(&clause_words, &words(a)).is_some());
    (!rules_out_a_value).then(|| Contradiction {
        first: value,
        second: clause.to_string(),
        kind: Kind::Qualified,
    })
}

/// Where the first word that introduces a qualification starts in `text` (a byte index).
fn contrast_at(text: &str) -> Option<usize> {
    let mut start = None;
    for (i, c) in text.char_indices().chain([(text.len(), ' ')]) {
        if c.is_alphanumeric() || c == '\'' {
            start.get_or_insert(i);
        } else if let Some(s) = start.take() {
            if CONTRASTS.contains(&text[s..i].to_lowercase().as_str()) {
                return Some(s);
            }
        }
    }
    None
}

/// Words that introduce a qualification of what was just said.
const CONTRASTS: [&str; 3] = ["but", "except", "unless"];

/// Two enum values of `node` each named in full by `text` (every word of the value, in any
/// form: `provides` names the `Provided` of `CatalogProvided`), neither negated.
fn named_enum_values(
    node: Option<&Value>,
    text: &str,
    old: Option<&Value>,
) -> Option<Contradiction> {
    let allowed = allowed_now(node, old)?;
    // Where nothing is stored the field holds its default: named as what the field was
    // (`"github (was generic: …)"`), it is the past, not a second value asked for.
    let now = without_the_past(text);
    let default = node.and_then(|n| default_allowed(n, &allowed));
    let default_was = old.is_none()
        && default.is_some_and(|d| {
            named_values(text, &allowed).contains(&d) && !named_values(&now, &allowed).contains(&d)
        });
    let text = if default_was { now.as_str() } else { text };
    match named_values(text, &allowed).as_slice() {
        [first, second, ..] => Some(Contradiction {
            first: first.to_string(),
            second: second.to_string(),
            kind: Kind::EnumValues,
        }),
        [] => shared_by_several(text, &allowed).or_else(|| names_none(node?, text, &allowed)),
        _ => None,
    }
}

/// The allowed value a field holds when unset: its `default`, or the one allowed value named
/// in the clause of its description that says so (`"generic (the default when unset) reads
/// them from secretRef; aws, azure and github …"`).
fn default_allowed<'a>(node: &'a Value, allowed: &'a [Value]) -> Option<&'a str> {
    if let Some(default) = schema::default_value(node).and_then(Value::as_str) {
        return allowed
            .iter()
            .filter_map(Value::as_str)
            .find(|a| *a == default);
    }
    let description = node.get("description").and_then(Value::as_str)?;
    let mut named = description
        .split([';', ',', '.'])
        .filter(|clause| {
            let lower = clause.to_lowercase();
            schema::DEFAULT_WORDS.iter().any(|w| lower.contains(w))
        })
        .flat_map(|clause| named_values(clause, allowed));
    let one = named.next()?;
    named.all(|other| other == one).then_some(one)
}

/// The allowed values `text` names as what it asks for now: those it names outside what it
/// says the field was (`"github (was generic)"` names `github`), else all it names.
pub fn named_now<'a>(text: &str, allowed: &'a [Value]) -> Vec<&'a str> {
    let now = named_values(&without_the_past(text), allowed);
    if now.is_empty() {
        named_values(text, allowed)
    } else {
        now
    }
}

/// `text` without what it says the field held before (`"github (was generic: moving off the
/// token)"` is `"github"`): from `was`, `previously` or `formerly` to the end of that clause or
/// bracket. The past is no second value asked for.
fn without_the_past(text: &str) -> String {
    const PAST: [&str; 3] = ["was", "previously", "formerly"];
    let mut out = String::with_capacity(text.len());
    let mut in_past = false;
    let mut word = String::new();
    for c in text.chars().chain([' ']) {
        if c.is_alphanumeric() {
            word.push(c);
            continue;
        }
        if !word.is_empty() {
            in_past |= PAST.contains(&word.to_lowercase().as_str());
            if !in_past {
                out.push_str(&word);
            }
            word.clear();
        }
        if matches!(c, ')' | ';' | ']') {
            in_past = false;
        }
        if !in_past {
            out.push(c);
        }
    }
    out.trim_end().to_string()
}

/// Two allowed values, each in a clause of its own with its condition (`"Manual for minor
/// upgrades, Automatic for patch releases"`): the field holds one value for every case, so
/// the text asks for what no value says; on UPDATE too, where one of them is the stored one.
fn values_per_case(node: Option<&Value>, text: &str) -> Option<Contradiction> {
    let allowed = node.and_then(schema::enum_values)?;
    let clauses: Vec<&str> = text
        .split([',', ';'])
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .collect();
    if clauses.len() < 2 {
        return None;
    }
    let mut named: Vec<&str> = Vec::new();
    for clause in clauses {
        let negated = crate::certainty::negated_words(clause);
        match named_values(clause, allowed).as_slice() {
            // A value the clause negates is ruled out, not asked for (`"don't cut off all the
            // brokers any more, just one"`).
            [one] if words(clause).len() > 1 && !negated.contains(&one.to_lowercase()) => {
                if !named.contains(one) {
                    named.push(one);
                }
            }
            _ => return None,
        }
    }
    // One allowed value that holds them both is what the clauses describe together
    // (`"resize in place …, otherwise recreate the pod"` is `InPlaceOrRecreate`).
    let holds_both = |a: &Value| {
        a.as_str().is_some_and(|a| {
            let a = a.to_lowercase();
            named.len() >= 2
                && named
                    .iter()
                    .all(|n| a.contains(&n.to_lowercase()) && a != n.to_lowercase())
        })
    };
    if allowed.iter().any(holds_both) {
        return None;
    }
    match named.as_slice() {
        [first, second, ..] => Some(Contradiction {
            first: first.to_string(),
            second: second.to_string(),
            kind: Kind::EnumValues,
        }),
        _ => None,
    }
}

/// The allowed value that names the level a well-known topology label of Kubernetes labels
/// nodes by (`kubernetes.io/hostname` → `host`, `topology.kubernetes.io/zone` → `zone`,
/// `topology.kubernetes.io/region` → `region`), where exactly one allowed value names it.
pub fn topology_level<'a>(text: &str, allowed: &[&'a str]) -> Option<&'a str> {
    let levels: &[&str] = match text.trim() {
        "kubernetes.io/hostname" => &["host", "hostname", "node"],
        "topology.kubernetes.io/zone" | "failure-domain.beta.kubernetes.io/zone" => &["zone"],
        "topology.kubernetes.io/region" | "failure-domain.beta.kubernetes.io/region" => &["region"],
        _ => return None,
    };
    let mut named = allowed
        .iter()
        .filter(|a| levels.iter().any(|l| a.eq_ignore_ascii_case(l)));
    let one = named.next()?;
    named.next().is_none().then_some(*one)
}

/// One word that names no allowed value, in any spelling, and that no value's words and
/// description hold ([`described_in_full`]): `compression: "Zstd"` where Gzip and Brotli are
/// allowed is another thing, not a misspelt one, and each allowed value would replace it.
fn names_none(node: &Value, text: &str, allowed: &[Value]) -> Option<Contradiction> {
    if !one_name(text) {
        return None;
    }
    let strings: Vec<&str> = allowed.iter().filter_map(Value::as_str).collect();
    if topology_level(text, &strings).is_some() {
        return None;
    }
    let description = node
        .get("description")
        .and_then(Value::as_str)
        .unwrap_or_default();
    // Allowed numbers are no names: the number readings are theirs.
    if strings.len() < allowed.len() || described_in_full(text, description, &strings).is_some() {
        return None;
    }
    let listed: Vec<String> = strings.iter().take(4).map(|s| format!("{s:?}")).collect();
    let more = if strings.len() > 4 { ", …" } else { "" };
    Some(Contradiction {
        first: text.trim().to_string(),
        second: format!("{}{more}", listed.join(", ")),
        kind: Kind::NamesNone,
    })
}

/// A name: one word, no blank, that states no number or version (`"3.11"` names the `"3"` of
/// allowed versions by its leading part).
pub fn one_name(text: &str) -> bool {
    let text = text.trim();
    !text.is_empty()
        && !text.contains(char::is_whitespace)
        && super::candidates::stated_version(text).is_none()
}

/// The node's allowed values, but the old object's (on UPDATE it is the past, no wish).
fn allowed_now(node: Option<&Value>, old: Option<&Value>) -> Option<Vec<Value>> {
    let allowed = node.and_then(schema::enum_values)?;
    Some(
        allowed
            .iter()
            .filter(|a| Some(*a) != old)
            .cloned()
            .collect(),
    )
}

/// For a list entry (where two values named are two entries): the value names only what
/// several allowed values share ([`shared_by_several`]).
pub fn shared_word(
    node: Option<&Value>,
    value: &Value,
    old: Option<&Value>,
) -> Option<Contradiction> {
    let text = value.as_str().filter(|t| t.chars().count() <= MAX_CHARS)?;
    let allowed = allowed_now(node, old)?;
    named_values(text, &allowed)
        .is_empty()
        .then(|| shared_by_several(text, &allowed))
        .flatten()
}

/// A value whose every word belongs to two or more allowed values, none named in full
/// (`queueingStrategy: "FIFO"` against `StrictFIFO` and `BestEffortFIFO`): it names what they
/// share, so it names none of them.
fn shared_by_several(text: &str, allowed: &[Value]) -> Option<Contradiction> {
    let said = words(text);
    if said.is_empty() {
        return None;
    }
    let mut holding = allowed.iter().filter_map(Value::as_str).filter(|a| {
        let own = words(a);
        said.iter().all(|w| own.iter().any(|o| same_word(o, w)))
    });
    let (first, second) = (holding.next()?, holding.next()?);
    Some(Contradiction {
        first: first.to_string(),
        second: second.to_string(),
        kind: Kind::SharedWord,
    })
}

/// The built-in kinds a reference most often names, their API version and kubectl's short
/// names for them (kubectl also takes the lower-case kind and its plural).
const BUILT_IN_KINDS: [(&str, &str, &[&str]); 15] = [
    ("Deployment", "apps/v1", &["deploy"]),
    ("StatefulSet", "apps/v1", &["sts"]),
    ("DaemonSet", "apps/v1", &["ds"]),
    ("ReplicaSet", "apps/v1", &["rs"]),
    ("Job", "batch/v1", &[]),
    ("CronJob", "batch/v1", &["cj"]),
    ("Pod", "v1", &["po"]),
    ("Service", "v1", &["svc"]),
    ("ConfigMap", "v1", &["cm"]),
    ("Secret", "v1", &[]),
    ("ServiceAccount", "v1", &["sa"]),
    ("ReplicationController", "v1", &["rc"]),
    ("PersistentVolumeClaim", "v1", &["pvc"]),
    ("Ingress", "networking.k8s.io/v1", &["ing"]),
    ("HorizontalPodAutoscaler", "autoscaling/v2", &["hpa"]),
];

/// The plural resource name of a kind, as Kubernetes forms it (`Ingress` → `ingresses`,
/// `GitRepository` → `gitrepositories`, `HelmRelease` → `helmreleases`).
fn resource_plural(kind: &str) -> String {
    let lower = kind.to_ascii_lowercase();
    if lower.ends_with('s') || lower.ends_with('x') || lower.ends_with("ch") {
        format!("{lower}es")
    } else if let Some(stem) = lower
        .strip_suffix('y')
        .filter(|s| !s.ends_with(['a', 'e', 'o', 'u']))
    {
        format!("{stem}ies")
    } else {
        format!("{lower}s")
    }
}

/// The kind and API version kubectl's name `s` (`sts`, `statefulset`, `deployments`) stands
/// for.
pub fn built_in_kind(s: &str) -> Option<(&'static str, &'static str)> {
    let lower = s.to_ascii_lowercase();
    BUILT_IN_KINDS
        .iter()
        .find(|(kind, _, short)| {
            lower == kind.to_ascii_lowercase()
                || lower == resource_plural(kind)
                || short.contains(&lower.as_str())
        })
        .map(|(kind, api_version, _)| (*kind, *api_version))
}

/// Is `written` (a kind or an API version) what kubectl's name for a built-in kind in `said`
/// stands for (`sts/redis-cache` says `StatefulSet` and `apps/v1`)? The user's word, spelt
/// the way the API spells it.
pub fn names_built_in_kind(said: &str, written: &str) -> bool {
    said.split(|c: char| !c.is_ascii_alphanumeric())
        .filter_map(built_in_kind)
        .any(|(kind, api_version)| written == kind || written == api_version)
}

/// The allowed kind that kubectl's name of a resource (`helmreleases`,
/// `helmreleases.helm.toolkit.fluxcd.io`: the kind's plural in lower case, with its API group)
/// stands for: only when exactly one allowed kind has that plural.
fn kind_of_resource<'a>(text: &str, allowed: &'a [Value]) -> Option<&'a str> {
    let text = text.trim();
    let resource = text.split('.').next()?;
    let lower_dns = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
    };
    if !text.split('.').all(lower_dns) || !resource.ends_with('s') {
        return None;
    }
    let mut matching = allowed.iter().filter_map(Value::as_str).filter(|a| {
        a.starts_with(|c: char| c.is_ascii_uppercase())
            && a.chars().all(|c| c.is_ascii_alphanumeric())
            && resource_plural(a) == resource
    });
    let one = matching.next()?;
    matching.next().is_none().then_some(one)
}

/// Is `word` kubectl's lower-case name of the kind `kind`: the kind or its plural, in lower
/// case (`httproute`, `httproutes` for `HTTPRoute`)?
pub(crate) fn names_kind_as_type(word: &str, kind: &str) -> bool {
    word == kind.to_ascii_lowercase() || word == resource_plural(kind)
}

/// Is `text` kubectl's name of the resource whose kind is `kind` (`helmreleases.helm.toolkit.fluxcd.io`
/// for `HelmRelease`)? The kind said in the API's spelling, its group being syntax.
pub(crate) fn names_kind_as_resource(text: &str, kind: &str) -> bool {
    kind_of_resource(text, &[Value::from(kind)]) == Some(kind)
}

/// A number said to be the same as a sibling's value, where the sibling holds another one
/// (`grpc: "9090 (same port as http, one listener)"` beside `http: 8080`): the number and the
/// words contradict each other, so neither is the reading. `siblings` is the object that holds
/// the field `own`.
pub fn same_as_sibling(value: &Value, siblings: &Value, own: &str) -> Option<Contradiction> {
    let text = value.as_str()?;
    let siblings = siblings.as_object()?;
    let words: Vec<String> = text
        .split(|c: char| !(c.is_alphanumeric() || "-_.".contains(c)))
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    let same = words.iter().position(|w| w == "same")?;
    let as_at = same + 1 + words[same + 1..].iter().take(3).position(|w| w == "as")?;
    let name = words.get(as_at + 1)?;
    let (key, other) = siblings
        .iter()
        .find(|(k, _)| k.as_str() != own && k.to_lowercase() == *name)?;
    let other = match other {
        Value::Number(n) => n.as_f64()?,
        Value::String(s) => s.trim().parse::<f64>().ok()?,
        _ => return None,
    };
    let said = numbers_said(text).first()?.value;
    (said != other).then(|| Contradiction {
        first: format!("{said} (the same as {key})"),
        second: format!("{key} is {other}"),
        kind: Kind::Direction,
    })
}

/// The words of `text` as the amount readings compare them: lower case, a number's point kept
/// (`2.5`), a sentence's dropped; `None` for a text too long to read.
fn amount_words(text: &str) -> Option<Vec<String>> {
    (text.chars().count() <= MAX_CHARS).then(|| {
        text.split(|c: char| !(c.is_alphanumeric() || c == '.'))
            .map(|w| w.trim_matches('.').to_lowercase())
            .filter(|w| !w.is_empty())
            .collect()
    })
}

/// The N of a share said as one in every N (`"one in every 200 requests"`, `"1 in 50"`, `"1
/// out of 1000"`): the text says nothing else that is a number.
pub fn one_in(text: &str) -> Option<f64> {
    let said = amount_words(text)?;
    let at = said.iter().position(|w| w == "one" || w == "1")?;
    let mut rest = said[at + 1..].iter().map(String::as_str);
    let n = match (rest.next(), rest.next()) {
        (Some("in"), Some("every")) | (Some("out"), Some("of")) => rest.next(),
        (Some("in"), n) => n,
        _ => None,
    }?;
    let n: f64 = n
        .parse()
        .ok()
        .filter(|n: &f64| *n >= 1.0 && n.is_finite())?;
    // Any other number makes it another statement (`"1 in 200, or 1 in 100 at peak"`).
    (numbers_said(text).len() <= 2).then_some(n)
}

/// The percentage a share said as one in every N is (`"one in every 200 requests"` → 0.5),
/// where the field at `node` counts a percentage (its description says so, up to 100).
pub fn share_as_percentage(text: &str, node: &Value) -> Option<f64> {
    let description = node
        .get("description")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_lowercase();
    let percentage = description.starts_with("percentage")
        || (node.get("maximum").and_then(Value::as_f64) == Some(100.0)
            && description.contains("percent"));
    let number = matches!(schema::type_of(node), "number");
    (percentage && number)
        .then(|| one_in(text).map(|n| 100.0 / n))
        .flatten()
}

/// The percentage a fraction in words states (`"a quarter of the pods at a time"` → 25,
/// `"half"` → 50, `"three tenths"` → 30): one fraction, its count before it (`a`, `one`, a
/// number word or digits; `half` needs none), and no other number; only a whole percentage of
/// at most 100.
pub fn fraction_as_percentage(text: &str) -> Option<f64> {
    let said = amount_words(text)?;
    let count = |w: &str| w.parse::<f64>().ok().or_else(|| number_word(w));
    // Each fraction: its share, and where its count is written.
    let mut found = said.iter().enumerate().filter_map(|(i, w)| {
        let before = i.checked_sub(1).and_then(|j| Some((j, count(&said[j])?)));
        match w.as_str() {
            "half" | "halves" => Some((before.map_or(1.0, |(_, n)| n) / 2.0, before)),
            _ => Some((before?.1 / fraction_denominator(w)?, before)),
        }
    });
    let (share, counted) = found.next()?;
    // No number of its own beside the fraction (`"a quarter of 12 pods"`).
    let other_number = said.iter().enumerate().any(|(i, w)| {
        let article = matches!(w.as_str(), "a" | "an");
        Some(i) != counted.map(|(j, _)| j)
            && (w.parse::<f64>().is_ok() || (number_word(w).is_some() && !article))
    });
    let percent = share * 100.0;
    (found.next().is_none()
        && !other_number
        && percent.fract() == 0.0
        && percent > 0.0
        && percent <= 100.0)
        .then_some(percent)
}

/// The allowed operator a comparison symbol stands for, as selectors write them (kubectl's
/// `key!=value` is a `NotIn` requirement, `key=value` an `In` one; a node selector's `>` is
/// `Gt`): only when exactly one allowed value is that operator.
fn operator_named<'a>(text: &str, allowed: &'a [Value]) -> Option<&'a str> {
    let names: &[&str] = match text.trim() {
        "=" | "==" => &["in", "equal", "equals", "eq"],
        "!=" | "<>" => &["notin", "notequal", "notequals", "ne"],
        ">" => &["gt", "greaterthan"],
        "<" => &["lt", "lessthan"],
        ">=" => &["gte", "ge", "greaterthanorequal"],
        "<=" => &["lte", "le", "lessthanorequal"],
        _ => return None,
    };
    let mut matching = allowed
        .iter()
        .filter_map(Value::as_str)
        .filter(|a| names.contains(&a.to_ascii_lowercase().as_str()));
    let one = matching.next()?;
    matching.next().is_none().then_some(one)
}

/// Does `text` state absence as its whole value, its remark aside (`"none - the gateway
/// checks the token"`, `"null"`)? With `off`, an off switch says so too (`"disabled - the
/// endpoint is gone"`).
pub fn states_absence(text: &str, off: bool) -> bool {
    const ABSENT: [&str; 4] = ["none", "null", "nil", "nothing"];
    const OFF: [&str; 2] = ["disabled", "off"];
    let said = crate::certainty::without_remarks(text)
        .trim()
        .to_lowercase();
    ABSENT.contains(&said.as_str()) || (off && OFF.contains(&said.as_str()))
}

/// The value before a comment glued into it, as YAML writes one after a blank (`"ISRG Root
/// X1   # short chain only"`); `None` without one.
pub fn before_comment(text: &str) -> Option<&str> {
    text.split_once(" #")
        .or_else(|| text.split_once("\t#"))
        .map(|(value, _)| value)
}

/// The part of `text` before a glued comment, or before a remark in brackets that ends it
/// (`"250Gi (grown from 100Gi, the disks were 85% full)"`), when that part states an amount,
/// else `text`. A remark that states another amount of the same kind speaks of the value
/// (`"5s (the 5 second default is too short)"`, `"14d (one month)"`), unless it is the
/// stored value `old` (`"grown from 100Gi"`). A change note from the stored value states its
/// new side (`"10m -> 30m (why)"` over `10m`: `30m`).
pub fn value_before_comment<'t>(text: &'t str, old: Option<&Value>) -> &'t str {
    if let Some(to) = old.and_then(|old| change_note_target(text, old)) {
        return to;
    }
    if let Some(value) = amount_before_comment(text) {
        return value;
    }
    before_remark(text)
        .filter(|(value, remark)| {
            let stated = amounts(value);
            let [amount] = stated.as_slice() else {
                return false;
            };
            amounts(remark)
                .iter()
                .all(|r| r.dimension != amount.dimension || old_amount(r, old, ""))
        })
        .map_or(text, |(value, _)| value)
}

/// The new side of a change note written over the stored value `old` (`"a -> b (why)"`,
/// `=>`, `→`): the text after the arrow, its remark aside, where the text before it is the
/// stored value (its one text, when it is a list or an object holding one), or ends with it
/// after the words of the change (`"rotate flux-gpg-2024 -> flux-gpg-2025"`).
pub fn change_note_target<'t>(text: &'t str, old: &Value) -> Option<&'t str> {
    let stored = match old {
        Value::Bool(b) => vec![b.to_string()],
        _ => super::evidence::leaf_texts(old),
    };
    let [stored] = stored.as_slice() else {
        return None;
    };
    if let Some(to) = was_note_target(text, stored) {
        return Some(to);
    }
    let (from, to) = ["->", "=>", "\u{2192}"]
        .iter()
        .find_map(|arrow| text.split_once(arrow))?;
    let to = crate::certainty::without_remarks(to);
    let mut said = to.split_whitespace();
    let first = said.next()?;
    // A value, then words that say when or why (`"5m -> 1m during demo week"`): the value is
    // the new side; a first word that is a plain word is prose (`"-> the new collector"`).
    // Words, hyphened or ending a clause (`"for the load-test week,"`), and the stored value
    // named as what comes back later (`"2 -> 4 for the load-test week, back to 2 afterwards"`).
    let prose_after = said.all(|w| {
        let w = w.trim_matches(|c: char| !c.is_alphanumeric());
        w.split('-')
            .all(|part| part.chars().all(char::is_alphabetic))
            || w == stored.as_str()
    });
    let looks_like_value = first.contains(|c: char| !c.is_alphabetic());
    // One amount written in parts (`"100ms -> 1s 500ms (follow-up)"`) is one value too.
    let one_amount = single_amount(&to).filter(|a| *a == to.trim());
    // (An amount's unit is no prose after its number: `"1Gi -> 1.5 GiB"` is 1.5 GiB.)
    let to = match to.split_whitespace().count() {
        1 => first,
        _ if one_amount.is_some() => to.trim(),
        _ if prose_after && looks_like_value => first,
        _ => return None,
    };
    let at = text.find(to)?;
    let to = &text[at..at + to.len()];
    let from = from.trim();
    let names_stored = from == stored
        || from
            .strip_suffix(stored.as_str())
            .is_some_and(|before| before.ends_with(char::is_whitespace));
    names_stored.then_some(to)
}

/// The one item a text adds, written as an addition (`"+ reporting (added for the Q3
/// close)"`, a diff's added line, `"plus staging"`, `"add staging"`): the word after the
/// sign or the word, before the text's remarks.
pub fn added_item(text: &str) -> Option<&str> {
    let stated = crate::certainty::without_remarks(text);
    let stated = stated.trim();
    let rest = ["+", "plus ", "add ", "also add ", "and also "]
        .iter()
        .find_map(|sign| stated.strip_prefix(sign))?
        .trim();
    let one_word = !rest.is_empty() && !rest.contains(char::is_whitespace);
    // An amount added (`"+30s"`, `"plus two"`) is a change relative to the stored one.
    let amount = rest.starts_with(|c: char| c.is_ascii_digit())
        || number_word(rest).is_some()
        || states_an_amount(rest);
    let at = text.find(rest)?;
    (one_word && !amount).then(|| &text[at..at + rest.len()])
}

/// A list's change written over the stored list `old` as an addition (`"same as before, plus
/// staging"`, `"+ staging"`, `"as before and also staging"`): the stored items and the added
/// one after them. `None` where `old` is no list of texts or the text adds no one word.
pub fn added_to_stored(text: &str, old: &Value) -> Option<Vec<Value>> {
    let stored = old.as_array()?;
    if !stored.iter().all(Value::is_string) {
        return None;
    }
    // ASCII case only: the lowered text must keep the text's byte offsets (`İ` lowered whole
    // is longer), since the added word is cut from the text itself.
    let lower = text.trim().to_ascii_lowercase();
    let mut rest = lower.as_str();
    for same in [
        "same as before",
        "as before",
        "same as now",
        "unchanged",
        "the same",
    ] {
        if let Some(after) = rest.strip_prefix(same) {
            rest = after.trim_start_matches([',', ';', ' ']);
            break;
        }
    }
    let trimmed = text.trim();
    let added = added_item(&trimmed[trimmed.len() - rest.len()..])?;
    let mut out = stored.clone();
    if !out.iter().any(|v| v.as_str() == Some(added)) {
        out.push(Value::from(added));
    }
    Some(out)
}

/// The new value of a note that names the stored value as the past in brackets (`"8 (was 4;
/// the second node pool is up)"`, `previously`, `formerly`): the one word before the
/// brackets, where the word after `was` is the stored value.
fn was_note_target<'t>(text: &'t str, stored: &str) -> Option<&'t str> {
    let (to, note) = text.split_once('(')?;
    let note = note.trim_start().to_lowercase();
    let past = ["was ", "previously ", "formerly ", "before: "]
        .iter()
        .find_map(|w| note.strip_prefix(w))?;
    let named = past
        .split(|c: char| c.is_whitespace() || matches!(c, ';' | ',' | ')'))
        .next()?;
    let to = to.trim();
    let one_word = !to.is_empty() && !to.contains(char::is_whitespace);
    (one_word && named == stored.to_lowercase() && to != stored).then_some(to)
}

/// The value of the field a text at `p` says it is the same as (`limits.memory: "same as the
/// request"` → the value of `requests.memory`): `same as` and a field's name (its words, in any
/// form), that field beside `p` or beside one of `p`'s parents at the same place below it, and
/// a scalar there. Only one such field; the words after the name are a remark.
pub fn field_referred_to<'v>(object: &'v Value, p: &str, text: &str) -> Option<&'v Value> {
    let lower = text.trim().to_lowercase();
    let rest = lower.strip_prefix("same as ")?;
    let rest = rest
        .strip_prefix("the ")
        .or_else(|| rest.strip_prefix("its "))
        .unwrap_or(rest);
    let named = rest
        .split(|c: char| !(c.is_alphanumeric() || c == '-' || c == '_'))
        .next()
        .filter(|w| w.chars().count() >= 3)?;
    let tokens = crate::pointer::tokens(p);
    let mut found: Vec<&Value> = Vec::new();
    // The field itself, then each parent in turn, is replaced by a sibling of that name.
    for depth in (1..=tokens.len()).rev().take(4) {
        let parent = crate::pointer::from_tokens(&tokens[..depth - 1]);
        let below = &tokens[depth..];
        let Some(siblings) = object.pointer(&parent).and_then(Value::as_object) else {
            continue;
        };
        for (key, _) in siblings.iter().filter(|(k, _)| **k != tokens[depth - 1]) {
            if !matches!(words(key).as_slice(), [w] if same_word(w, named)) {
                continue;
            }
            let at = crate::pointer::push(&parent, key) + &crate::pointer::from_tokens(below);
            if let Some(v) = object
                .pointer(&at)
                .filter(|v| !v.is_object() && !v.is_array())
            {
                found.push(v);
            }
        }
        if !found.is_empty() {
            break;
        }
    }
    match found.as_slice() {
        [one] => Some(one),
        _ => None,
    }
}

/// Of the text fields `keys` of an item of the list named `list`, the one that names the item:
/// `name`, else the one `…Name` named for a word of the list's own name, in any form
/// (`groupName` of `workerGroupSpecs` or of `groups`).
pub fn item_name_key<'k>(keys: impl Iterator<Item = &'k String>, list: &str) -> Option<&'k str> {
    let keys: Vec<&String> = keys.collect();
    if let Some(name) = keys.iter().find(|k| k.as_str() == "name") {
        return Some(name.as_str());
    }
    let list_words = crate::certainty::words_of_name(list);
    let mut named = keys.into_iter().filter(|k| {
        let words = crate::certainty::words_of_name(k);
        words.len() == 2 && words[1] == "name" && list_words.iter().any(|w| same_word(w, &words[0]))
    });
    let one = named.next()?;
    named.next().is_none().then_some(one.as_str())
}

/// Of a text that states an amount per item (`"CPU workers are released after 10 minutes idle;
/// GPU workers after an hour and a half"`), the one clause that names the list item `p` is in
/// (by every word of its `name`, or of its one `…Name` field: `gpu-workers`) and states one
/// amount. `None` where the text states one amount or none, or no clause, or two, name it.
pub fn clause_naming_item(object: &Value, p: &str, text: &str) -> Option<String> {
    if amounts(text).len() < 2 {
        return None;
    }
    let tokens = crate::pointer::tokens(p);
    let at = tokens.iter().rposition(|t| t.parse::<usize>().is_ok())?;
    let list = tokens.get(at.checked_sub(1)?)?;
    let item = object
        .pointer(&crate::pointer::from_tokens(&tokens[..=at]))?
        .as_object()?;
    let texts = item.iter().filter(|(_, v)| v.is_string()).map(|(k, _)| k);
    let name = item.get(item_name_key(texts, list)?)?;
    let name_words = crate::certainty::words_of_name(name.as_str()?);
    let mut found = text
        .split([';', '.', '\n'])
        .map(str::trim)
        .filter(|clause| {
            let said = words(clause);
            amounts(clause).len() == 1
                && !name_words.is_empty()
                && name_words
                    .iter()
                    .all(|n| said.iter().any(|w| same_word(w, n)))
        });
    let one = found.next()?;
    found.next().is_none().then(|| one.to_string())
}

/// The object's annotations with text values, crfix's own and kubectl's last-applied copy
/// aside: what the user wrote about the object.
pub fn user_annotations(object: &Value) -> Vec<(&String, &str)> {
    object
        .pointer("/metadata/annotations")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter(|(key, _)| {
            key.as_str() != crate::guardrails::REPAIR_ANNOTATION
                && key.as_str() != super::prompt::LAST_APPLIED_ANNOTATION
        })
        .filter_map(|(key, v)| Some((key, v.as_str()?)))
        .collect()
}

/// For a missing field whose description is `description`, the one sentence of the object's
/// annotations that states its amount (`"Runs every 6 hours: the release team doesn't want
/// more churn"` for "the shortest time between two runs"): a sentence (cut at `.`, `;` and
/// line breaks, remarks in brackets aside) that shares a word of four letters or more with
/// the description, up to its ending, and states exactly one amount. `None` when no sentence,
/// or two, do: which one is meant is then not certain.
pub fn described_amount(object: &Value, description: &str) -> Option<String> {
    let described: Vec<String> = words(description)
        .into_iter()
        .filter(|w| w.chars().count() >= 4)
        .collect();
    let mut found = user_annotations(object)
        .into_iter()
        .flat_map(|(_, text)| text.split(['.', ';', '\n']))
        .map(crate::certainty::without_remarks)
        .filter(|sentence| {
            amounts(sentence).len() == 1
                && words(sentence)
                    .iter()
                    .any(|w| described.iter().any(|d| same_stem(w, d)))
        });
    let one = found.next()?;
    found.next().is_none().then_some(one)
}

/// The same word up to an inflection on both sides (`scans`/`scanning`, `runs`/`run`), from a
/// shared start of four letters; looser than [`same_word`] about how much the endings add.
fn same_stem(a: &str, b: &str) -> bool {
    a == b || shared_stem(a, b).is_some()
}

/// The text of the annotation a value points to, the user's statement that the value is
/// written there: one whose key the value names (`"see ci.acme.io/wasm-sha256"`), or the
/// object's one annotation where the value says `annotation` (`"per vendor terms (see
/// annotation)"`). crfix's own annotation and kubectl's last-applied copy are not the user's.
pub fn annotation_referred_to<'v>(object: &'v Value, text: &str) -> Option<&'v str> {
    let users = user_annotations(object);
    let is_key_char = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | '/');
    let names_key = |key: &str| {
        text.match_indices(key).any(|(at, _)| {
            let before = text[..at].chars().next_back();
            let after = text[at + key.len()..].chars().next();
            !before.is_some_and(is_key_char) && !after.is_some_and(|c| is_key_char(c) && c != '.')
        })
    };
    let named: Vec<&str> = users
        .iter()
        .filter(|(key, _)| names_key(key))
        .map(|(_, v)| *v)
        .collect();
    match named.as_slice() {
        [one] => return Some(one),
        [] => {}
        _ => return None,
    }
    let says_annotation = text
        .split(|c: char| !c.is_alphabetic())
        .any(|w| w.eq_ignore_ascii_case("annotation") || w.eq_ignore_ascii_case("annotations"));
    match users.as_slice() {
        [(_, only)] if says_annotation => Some(only),
        _ => None,
    }
}

/// The one word of the user's annotations that states `text` in full: `text` cut short at a
/// `.` or `-` of it (`"1.31"` where the description says "Runs Kubernetes 1.31.4"). None
/// when the annotations extend it in two ways or not at all.
pub fn stated_in_full<'v>(object: &'v Value, text: &str) -> Option<&'v str> {
    if text.is_empty() || text.contains(char::is_whitespace) {
        return None;
    }
    let mut found: Vec<&str> = Vec::new();
    for (_, annotation) in user_annotations(object) {
        for word in annotation.split_whitespace() {
            let word =
                word.trim_matches(|c: char| matches!(c, ',' | ';' | ':' | '(' | ')' | '"' | '\''));
            let word = word.trim_end_matches('.');
            let extends = word.strip_prefix(text).is_some_and(|rest| {
                let mut chars = rest.chars();
                matches!(chars.next(), Some('.' | '-'))
                    && chars.next().is_some_and(|c| c.is_ascii_alphanumeric())
            });
            if extends && !found.contains(&word) {
                found.push(word);
            }
        }
    }
    match found.as_slice() {
        [one] => Some(one),
        _ => None,
    }
}

/// A percentage written in words (`"40 percent of the pool"` → `40`): the one number of the
/// text, followed by `percent`, `per cent` or `pct`.
pub fn percent_in_words(text: &str) -> Option<f64> {
    let stated = crate::certainty::without_remarks(text).to_lowercase();
    let words: Vec<&str> = stated
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '.'))
        .filter(|w| !w.is_empty())
        .collect();
    let numbers: Vec<usize> = (0..words.len())
        .filter(|&i| words[i].parse::<f64>().is_ok())
        .collect();
    let [at] = numbers.as_slice() else {
        return None;
    };
    let after = &words[at + 1..];
    let says_percent = matches!(after, ["percent" | "pct", ..] | ["per", "cent", ..]);
    says_percent
        .then(|| words[*at].parse::<f64>().ok())
        .flatten()
}

/// The part before a glued `#` comment, when it states an amount.
fn amount_before_comment(text: &str) -> Option<&str> {
    before_comment(text).filter(|value| !amounts(value).is_empty())
}

/// The value before a remark in brackets that ends the text, set off by a blank, and the
/// remark (`"250Gi (grown from 100Gi)"` → `"250Gi"`, `"grown from 100Gi"`).
fn before_remark(text: &str) -> Option<(&str, &str)> {
    let text = text.trim_end();
    let (value, remark) = text.split_once(" (")?;
    let remark = remark.strip_suffix(')')?;
    (!value.contains(['(', ')'])).then_some((value, remark))
}

/// The truth value a text states, when it states one (`"yes, until the migration"`, `"off
/// (maintenance)"`); `None` when it says none or both. It is stated before the text's remarks:
/// the `no` of `"suspended - no quota yet"` speaks of something else.
pub fn stated_bool(text: &str) -> Option<bool> {
    const TRUE: [&str; 5] = ["yes", "true", "enable", "enabled", "y"];
    const FALSE: [&str; 7] = ["no", "false", "off", "disable", "disabled", "never", "n"];
    let text = crate::certainty::without_remarks(text);
    let said: Vec<String> = text
        .split(|c: char| !c.is_alphabetic())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    // A negation right before a word that states true denies it (`"don't enable"`, `"do not
    // enable"`, `"never enabled"`): that word states false. (The `t` a contraction leaves is
    // no word of its own.)
    let negated = |i: usize| {
        said[..i]
            .iter()
            .rev()
            .find(|w| *w != "t")
            .is_some_and(|w| crate::certainty::is_negation(w))
    };
    let truths = said
        .iter()
        .enumerate()
        .filter(|(_, w)| TRUE.contains(&w.as_str()));
    let (denied, stated): (Vec<_>, Vec<_>) = truths.partition(|(i, _)| negated(*i));
    // `on` is a truth value only as the first word (`"on (for now)"`, not `"off on Fridays"`).
    let yes = !stated.is_empty() || said.first().is_some_and(|w| w == "on");
    // `not` denies the option itself only before a word that asks for it (`"not needed"`);
    // `"not case sensitive"` for `ignoreCase` denies something else.
    const ASKED: [&str; 4] = ["needed", "required", "wanted", "necessary"];
    // `not` as the answer, before when: `"not yet"`, `"not anymore"`, `"not any more"`, `"not
    // now"` (the field's state, denied for now).
    const NOT_NOW: [&str; 4] = ["yet", "anymore", "now", "currently"];
    let not_now = match said.as_slice() {
        [not, any, more, ..] if not == "not" && any == "any" && more == "more" => true,
        [not, when, ..] => not == "not" && NOT_NOW.contains(&when.as_str()),
        _ => false,
    };
    let no = !denied.is_empty()
        || said.iter().any(|w| FALSE.contains(&w.as_str()))
        || not_now
        || matches!(said.as_slice(), [not, asked, ..] if not == "not" && ASKED.contains(&asked.as_str()));
    match (yes, no) {
        (true, false) => Some(true),
        (false, true) => Some(false),
        _ => None,
    }
}

/// The count a text states in words (`"one at a time"` → 1, `"three, spread over the
/// zones"` → 3): the number word the text begins with, before its remarks, where it writes no
/// digit and no other number word. Not a number of something else (`"one per table"`, `"one
/// of them"`, `"two dozen"`), and not a count relative to another (`"one above the catch-all"`,
/// `"one more than now"`): those are other amounts.
pub fn counted_in_words(text: &str) -> Option<f64> {
    const OF_ANOTHER: [&str; 12] = [
        "per", "of", "in", "out", "each", "every", "dozen", "score", "hundred", "thousand",
        "million", "times",
    ];
    const RELATIVE: [&str; 16] = [
        "than", "more", "less", "fewer", "above", "below", "before", "after", "over", "under",
        "plus", "minus", "extra", "higher", "lower", "but",
    ];
    let stated = crate::certainty::without_remarks(text);
    if stated.contains(|c: char| c.is_ascii_digit()) {
        return None;
    }
    let words: Vec<String> = stated
        .split(|c: char| !c.is_alphabetic())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    // `a`/`an` count nothing (`"one at a time"`).
    let counts = |w: &str| number_word(w).filter(|_| !["a", "an"].contains(&w));
    let (first, rest) = words.split_first()?;
    // A dozen or a hundred of them is that many (`"two dozen"` → 24, `"a dozen"` → 12).
    const GROUPS: [(&str, f64); 2] = [("dozen", 12.0), ("hundred", 100.0)];
    let group = rest
        .first()
        .and_then(|next| GROUPS.iter().find(|(g, _)| g == next))
        .map(|(_, size)| *size);
    let (count, rest) = match group {
        Some(size) if ["a", "an"].contains(&first.as_str()) => (size, &rest[1..]),
        Some(size) => (counts(first)? * size, &rest[1..]),
        None => (counts(first)?, rest),
    };
    let another = rest
        .iter()
        .any(|w| counts(w).is_some() || RELATIVE.contains(&w.as_str()))
        || rest
            .first()
            .is_some_and(|next| OF_ANOTHER.contains(&next.as_str()));
    (!another).then_some(count)
}

/// The allowed value that turns the field off, where the text negates the field's own action
/// (`"do not rebalance - replicas are pinned"` for `replicaAutoBalance`, whose values hold one
/// `disabled`): a negation first (`do not`, `don't`, `never`), then a word that holds a word of
/// the field's name (four letters or more) or is held by one. Only where exactly one allowed
/// value is an off value (`disabled`, `off`, `none`, `never`, `false`).
pub fn negated_action_value<'a>(text: &str, field: &str, allowed: &[&'a str]) -> Option<&'a str> {
    const OFF: [&str; 6] = ["disabled", "disable", "off", "none", "never", "false"];
    let stated = crate::certainty::without_remarks(text).to_lowercase();
    let words: Vec<&str> = stated
        .split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .filter(|w| !w.is_empty())
        .collect();
    // The action alone: words after it would be what the negation speaks of (`"don't pull
    // on every start"` negates `every`, not pulling).
    let action = match words.as_slice() {
        ["do", "not", action] => *action,
        [negation, action] if crate::certainty::is_negation(negation) => *action,
        _ => return None,
    };
    let names = crate::certainty::words_of_name(field);
    let of_the_field = names
        .iter()
        .filter(|n| n.len() >= 4)
        .any(|n| action.contains(n.as_str()) || n.contains(action));
    let mut off = allowed
        .iter()
        .filter(|a| OFF.contains(&a.to_lowercase().as_str()));
    match (of_the_field, off.next(), off.next()) {
        (true, Some(one), None) => Some(one),
        _ => None,
    }
}

/// Words that state no limit as a value (`"unlimited"`, `"keep forever"`, `"no cap"`).
const NO_LIMIT: [&str; 10] = [
    "unlimited",
    "no limit",
    "no time limit",
    "without limit",
    "without a limit",
    "no maximum",
    "no cap",
    "infinite",
    "forever",
    "limitless",
];

/// The number that the field's `description` says means no limit (`"-1 means no time
/// limit"`, `"0, the default, means no limit"`; `"any negative number means no limit"` and
/// `"a negative number removes the limit"` are -1), where the user's `text` states no limit as
/// its value (before its remarks, with no number and no negation beside it). A description
/// that names no such number, or two, gives none: no limit is then no value the field holds.
pub fn no_limit_number(text: &str, description: &str) -> Option<i64> {
    let stated = crate::certainty::without_remarks(text).to_lowercase();
    let says_no_limit = NO_LIMIT.iter().any(|w| contains_phrase(&stated, w))
        && !numbers_said(&stated).iter().any(|n| n.decimal)
        // A negation beside them (`"not unlimited"`), but the `no` and `without` of the
        // words themselves.
        && !stated
            .split(|c: char| !c.is_alphabetic())
            .any(|w| crate::certainty::is_negation(w) && !["no", "without"].contains(&w));
    if !says_no_limit {
        return None;
    }
    let description = description.to_lowercase();
    let mut meant: Vec<i64> = Vec::new();
    for sentence in description.split(['.', ';']) {
        let Some(at) = NO_LIMIT
            .iter()
            .chain(&["removes the limit", "no upper bound"])
            .filter_map(|w| phrase_at(sentence, w))
            .min()
        else {
            continue;
        };
        let before = &sentence[..at];
        if before.contains("negative") {
            meant.push(-1);
            continue;
        }
        // The last number said before the words, when what stands between them says that
        // number means them (`"-1 means"`, `"0, the default, means"`, `"-1 for"`).
        let Some(last) = before.rfind(|c: char| c.is_ascii_digit()) else {
            continue;
        };
        let start = before[..last]
            .rfind(|c: char| !(c.is_ascii_digit() || c == '-'))
            .map_or(0, |i| i + 1);
        let between = &before[last + 1..];
        let connects = between
            .split(|c: char| !c.is_alphabetic() && c != '=')
            .any(|w| ["means", "mean", "for", "=", "is", "disables"].contains(&w));
        match before[start..=last].parse::<i64>() {
            Ok(n) if connects && !before[..start].ends_with(char::is_alphanumeric) => meant.push(n),
            _ => {}
        }
    }
    meant.dedup();
    match meant.as_slice() {
        [n] => Some(*n),
        _ => None,
    }
}

/// Does `text` hold `phrase` as whole words?
fn contains_phrase(text: &str, phrase: &str) -> bool {
    phrase_at(text, phrase).is_some()
}

/// Where `text` holds `phrase` as whole words, first.
fn phrase_at(text: &str, phrase: &str) -> Option<usize> {
    text.match_indices(phrase).map(|(i, _)| i).find(|&i| {
        let before = text[..i].chars().next_back();
        let after = text[i + phrase.len()..].chars().next();
        !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric)
    })
}

/// Does `text` begin with the word that ends the state the field `field` names (`resume` for
/// `paused` or `suspend`, as `kubectl rollout resume`, `flux resume` and Argo's `resume` end
/// a pause)? Then it states `false` for that field.
pub fn ends_the_state(field: &str, text: &str) -> bool {
    const STATES: [&str; 2] = ["pause", "suspend"];
    const ENDS: [&str; 3] = ["resume", "unpause", "unsuspend"];
    let field = field.to_lowercase();
    STATES.iter().any(|s| field.starts_with(s))
        && text
            .split(|c: char| !c.is_alphabetic())
            .find(|w| !w.is_empty())
            .is_some_and(|first| ENDS.contains(&first.to_lowercase().as_str()))
}

/// `true` for a boolean whose description says that true stops something (`"When true the
/// operator stops syncing the dashboard"`) where the text negates that thing (`"don't sync
/// until the Loki 3 migration is done"`): what the field does is what the user asks.
pub fn stops_what_is_negated(description: &str, text: &str) -> bool {
    const STOPS: [&str; 7] = [
        "stops", "stop", "disables", "pauses", "suspends", "halts", "skips",
    ];
    let sentence = description
        .split(". ")
        .find(|s| s.to_lowercase().contains("true"));
    let Some(sentence) = sentence else {
        return false;
    };
    let said = words(sentence);
    let stopped: Vec<&String> = said
        .windows(2)
        .filter(|pair| STOPS.contains(&pair[0].as_str()) && pair[1].chars().count() >= 4)
        .map(|pair| &pair[1])
        .collect();
    let [stopped] = stopped.as_slice() else {
        return false;
    };
    stated_bool(text).is_none()
        && crate::certainty::negated_words(text)
            .iter()
            .any(|w| same_stem(w, stopped))
}

/// The state a text gives the thing a field is named for skipping, ignoring or disabling
/// (`skipDependencyResolution: "dependency resolution back on - …"`): the text names that
/// thing (a word of four letters or more of the rest of the field's name) and says it is on
/// or off, once, not negated. The field is the opposite of that state.
pub fn state_of_negated_subject(field: &str, text: &str) -> Option<bool> {
    const NEGATORS: [&str; 5] = ["skip", "ignore", "disable", "omit", "suppress"];
    const ON: [&str; 3] = ["on", "enabled", "active"];
    const OFF: [&str; 3] = ["off", "disabled", "inactive"];
    let name = crate::certainty::words_of_name(field);
    let at = name.iter().position(|w| NEGATORS.contains(&w.as_str()))?;
    let subject: Vec<&String> = name
        .iter()
        .enumerate()
        .filter(|(i, w)| *i != at && w.chars().count() >= 4)
        .map(|(_, w)| w)
        .collect();
    let said_text = crate::certainty::without_remarks(text);
    let said = words(&said_text);
    if !said.iter().any(|w| subject.iter().any(|s| same_word(s, w))) {
        return None;
    }
    let negated = crate::certainty::negated_words(&said_text);
    let stated = |list: &[&str]| {
        said.iter()
            .any(|w| list.contains(&w.as_str()) && !negated.contains(w))
    };
    let mentions = |list: &[&str]| said.iter().any(|w| list.contains(&w.as_str()));
    match (stated(&ON), stated(&OFF)) {
        (true, false) if !mentions(&OFF) => Some(true),
        (false, true) if !mentions(&ON) => Some(false),
        _ => None,
    }
}

/// A count said per item of a list the text gives in brackets (`"3 per zone (eu-west-1a,
/// eu-west-1b, eu-west-1c)"`, `"one per availability zone (a, b, c)"`): the count times the
/// items, the total a field counting the whole takes. `None` where the field's `description`
/// itself counts per that item (`"replicas per shard"`): then the count is the value.
pub fn count_per_listed(text: &str, description: &str) -> Option<f64> {
    let (said, list) = text.trim().strip_suffix(')')?.split_once('(')?;
    let items: Vec<&str> = list.split(',').map(str::trim).collect();
    if items.len() < 2
        || items
            .iter()
            .any(|i| i.is_empty() || i.contains(char::is_whitespace))
    {
        return None;
    }
    let said = said.trim().to_lowercase();
    let (count, unit) = said.split_once(" per ")?;
    let unit = unit.trim();
    let count: Vec<f64> = count
        .split_whitespace()
        .filter_map(|w| w.parse::<f64>().ok().or_else(|| number_word(w)))
        .collect();
    let [n] = count.as_slice() else {
        return None;
    };
    let per_unit = format!("per {}", unit.split_whitespace().last()?);
    if description.to_lowercase().contains(&per_unit) {
        return None;
    }
    Some(n * items.len() as f64)
}

/// [`named_values`], for choosing the values a list holds: a value named only in a remark in
/// parentheses is not chosen when another is named outside it (`"memory only (cpu limits are
/// pinned)"` names `memory`).
pub fn chosen_values<'a>(text: &str, allowed: &'a [Value]) -> Vec<&'a str> {
    let outside = outside_parentheses(text);
    if outside.len() < text.len() {
        let named = named_values(&outside, allowed);
        if !named.is_empty() {
            return named;
        }
    }
    named_values(text, allowed)
}

/// `text` without its parenthesised remarks (an unclosed one runs to the end).
fn outside_parentheses(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut depth = 0usize;
    for c in text.chars() {
        match c {
            '(' => depth += 1,
            ')' if depth > 0 => depth -= 1,
            _ if depth == 0 => out.push(c),
            _ => {}
        }
    }
    out
}

/// The values of `allowed` that `text` names in full and does not negate (`"not Strict"`),
/// those whose words are part of another named value (`Pre` in `PreStop`) left out.
pub fn named_values<'a>(text: &str, allowed: &'a [Value]) -> Vec<&'a str> {
    if let Some(named) = operator_named(text, allowed).or_else(|| kind_of_resource(text, allowed)) {
        return vec![named];
    }
    // `can't` is `can not`: the words drop the apostrophe, and `can` alone negates nothing.
    let said = words(&text.replace("n't", " not").replace("n\u{2019}t", " not"));
    // A negation in the two words before a value, or before the value a list joined by `or`
    // or `nor` leads to (`"can't snapshot or clone"` negates both).
    let negated_at = |at: usize| {
        let mut at = at;
        loop {
            if said[at.saturating_sub(2)..at]
                .iter()
                .any(|w| crate::certainty::is_negation(w))
            {
                return true;
            }
            match at.checked_sub(2) {
                Some(before) if matches!(said[at - 1].as_str(), "or" | "nor") => at = before,
                _ => return false,
            }
        }
    };
    // A word that is itself an allowed value names that one, never another it looks like an
    // inflection of (`https` is no plural of `http` where both are allowed).
    let is_other_value = |w: &str, a: &str| {
        allowed
            .iter()
            .filter_map(Value::as_str)
            .any(|b| b != a && words(b) == [w])
    };
    let mut named: Vec<(&str, Vec<String>)> = allowed
        .iter()
        .filter_map(Value::as_str)
        .filter_map(|a| {
            let needed = words(a);
            let at = position_in_full(&said, &needed)?;
            let negated = negated_at(at);
            let inflected =
                needed.len() == 1 && said[at] != needed[0] && is_other_value(&said[at], a);
            (!negated && !inflected).then_some((a, needed))
        })
        .collect();
    // The words are letters only; a value whose name holds a number (`io2` beside `io1`,
    // `Windows2022` beside `Windows2019`) is named with its number where the text states one.
    let joined = dotted_versions_joined(text);
    let mut digits_said = digit_runs(text);
    digits_said.extend(joined.iter().map(String::as_str));
    let numbers_named = |a: &str| digit_runs(a).iter().all(|d| digits_said.contains(d));
    if named
        .iter()
        .any(|(a, _)| !digit_runs(a).is_empty() && numbers_named(a))
    {
        named.retain(|(a, _)| numbers_named(a));
    }
    let chosen: Vec<(&str, &Vec<String>)> = named
        .iter()
        .filter(|(a, needed)| {
            !named.iter().any(|(b, other)| {
                a != b && other.len() > needed.len() && needed.iter().all(|n| other.contains(n))
            })
        })
        .map(|(a, needed)| (*a, needed))
        .collect();
    // Two values named, and an allowed value that joins them (`"resize in place …, otherwise
    // recreate"` names `InPlace` and `Recreate`; `InPlaceOrRecreate` is both, the one meant).
    if let [_, _, ..] = chosen.as_slice() {
        let mut parts: Vec<&String> = chosen.iter().flat_map(|(_, w)| w.iter()).collect();
        parts.sort();
        let joined = allowed.iter().filter_map(Value::as_str).find(|a| {
            let mut own: Vec<String> = words(a);
            own.retain(|w| !CONNECTIVES.contains(&w.as_str()));
            own.sort();
            !chosen.iter().any(|(c, _)| c == a) && own.iter().eq(parts.iter().copied())
        });
        if let Some(joined) = joined {
            return vec![joined];
        }
    }
    chosen.into_iter().map(|(a, _)| a).collect()
}

/// The dotted versions of `text` with their dots dropped, as names write them (`"TLS 1.3"`
/// → `13`, for `TLS13`).
fn dotted_versions_joined(text: &str) -> Vec<String> {
    text.split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .map(|t| t.trim_matches('.'))
        .filter(|t| t.contains('.') && t.split('.').all(|p| !p.is_empty()))
        .map(|t| t.replace('.', ""))
        .collect()
}

/// The runs of digits in `text` (`"Windows2022"` → `2022`, `"TLS 1.2"` → `1`, `2`).
fn digit_runs(text: &str) -> Vec<&str> {
    text.split(|c: char| !c.is_ascii_digit())
        .filter(|r| !r.is_empty())
        .collect()
}

/// A number written with digits, read with the magnitude word after it.
pub struct NumberSaid {
    pub value: f64,
    /// Written with digits and at most a point (`12`, `1.5`), not `1e3`.
    pub decimal: bool,
    /// Scaled by a magnitude word (`"50 thousand"`).
    pub scaled: bool,
}

/// The numbers written with digits in `text`, each times the magnitude word after it
/// (`"50 thousand"` is 50000, never 50); one followed by a scale crfix does not read
/// (`"50 k"`) is left out. A number is a word of its own (`5xx`, `s3` hold none; nor does a
/// name's version written after a slash, `HTTP/2`, `nginx/1.25`), and a minus sign written
/// before its digits is part of it (`"-1 (never give up)"` says -1, not 1).
pub fn numbers_said(text: &str) -> Vec<NumberSaid> {
    let mut spans: Vec<(usize, usize)> = Vec::new();
    let mut start: Option<usize> = None;
    let is_token_char = |c: char| c.is_alphanumeric() || c == '.' || c == '-';
    for (i, c) in text.char_indices().chain([(text.len(), ' ')]) {
        match (is_token_char(c), start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                // `name/version`: the digits after a slash glued to a word are the name's.
                let after_name = text[..s].ends_with('/')
                    && text[..s - 1]
                        .chars()
                        .next_back()
                        .is_some_and(char::is_alphabetic)
                    && text[s..i].starts_with(|c: char| c.is_ascii_digit());
                if !after_name {
                    spans.push((s, i));
                }
                start = None;
            }
            _ => {}
        }
    }
    let tokens: Vec<&str> = spans
        .into_iter()
        .map(|(s, e)| &text[s..e])
        .map(|t| {
            let t = t.trim_end_matches(['.', '-']).trim_start_matches('.');
            let signed = t.len() > 1
                && t.starts_with('-')
                && t[1..].starts_with(|c: char| c.is_ascii_digit());
            if signed {
                t
            } else {
                t.trim_start_matches(['.', '-'])
            }
        })
        .filter(|t| !t.is_empty())
        .collect();
    let mut out = Vec::new();
    for (i, token) in tokens.iter().enumerate() {
        let magnitude =
            tokens
                .get(i + 1)
                .map_or(Some(1.0), |next| match next.to_lowercase().as_str() {
                    "thousand" => Some(1e3),
                    "million" => Some(1e6),
                    "billion" => Some(1e9),
                    "k" | "m" | "g" | "bn" | "mn" => None,
                    _ => Some(1.0),
                });
        let (Some(magnitude), Ok(n)) = (magnitude, token.parse::<f64>()) else {
            continue;
        };
        let decimal = token
            .strip_prefix('-')
            .unwrap_or(token)
            .chars()
            .all(|c| c.is_ascii_digit() || c == '.');
        out.push(NumberSaid {
            value: n * magnitude,
            decimal,
            scaled: magnitude != 1.0,
        });
    }
    out
}

/// Is `written` the number `said` states with its magnitude word (`"50 thousand"` → `50000`)?
pub fn scaled_number(said: &str, written: &str) -> bool {
    written.parse::<f64>().is_ok_and(|w| {
        numbers_said(said)
            .iter()
            .any(|n| n.scaled && (n.value - w).abs() < f64::EPSILON * w.abs().max(1.0))
    })
}

/// The allowed value the schema describes in the user's words: the one whose own words and
/// the description's words about it (from where the description names it to the end of that
/// sentence or the next value it names) share strictly more of the user's words than any
/// other value's do (`"no polling - only sync when this ExternalSecret is edited"` against
/// "…; OnChange syncs only when this ExternalSecret's metadata or spec changes" → `OnChange`).
/// Words the user negates and words that name nothing do not count. An order for the options
/// offered, not a reading: a description's wording is no certainty.
pub fn best_described<'a>(text: &str, description: &str, allowed: &[&'a str]) -> Option<&'a str> {
    if text.chars().count() > MAX_CHARS {
        return None;
    }
    let negated = crate::certainty::negated_words(text);
    let mut said = words(text);
    said.retain(|w| {
        w.chars().count() >= 3 && !COMMON_WORDS.contains(&w.as_str()) && !negated.contains(w)
    });
    let about = described(description, allowed);
    let mut shared: Vec<(usize, &'a str)> = allowed
        .iter()
        .zip(about)
        .map(|(a, about)| {
            let mut own = words(a);
            own.extend(words(&about));
            let n = said
                .iter()
                .filter(|w| own.iter().any(|o| same_word(o, w)))
                .count();
            (n, *a)
        })
        .collect();
    shared.sort_by_key(|(n, _)| std::cmp::Reverse(*n));
    match shared.as_slice() {
        [(best, value), (next, _), ..] if best > next => Some(*value),
        [(best, value)] if *best > 0 => Some(*value),
        _ => None,
    }
}

/// The one allowed value whose words, with the description's words about it, hold every word
/// of the name `text` (`LEAST_REQUEST` → `WeightedLeastRequest`), or whose first word, the one
/// that sets it apart from its kind, the name says (`cluster-wide` → `ClusterTriggerAuthentication`).
/// A name that shares only the word its kind ends in (`StatefulSet` and `DaemonSet` share
/// `set`, `HelmRepository` and `GitRepository` share `repository`) is another of that kind,
/// described by none.
pub fn described_in_full<'a>(
    text: &str,
    description: &str,
    allowed: &[&'a str],
) -> Option<&'a str> {
    let said = words(text);
    if said.is_empty() || text.chars().count() > MAX_CHARS {
        return None;
    }
    let about = described(description, allowed);
    let only = |found: Vec<&'a str>| match found.as_slice() {
        [one] => Some(*one),
        _ => None,
    };
    let in_full: Vec<&'a str> = allowed
        .iter()
        .zip(&about)
        .filter(|(a, about)| {
            let mut own = words(a);
            own.extend(words(about));
            said.iter().all(|w| own.iter().any(|o| same_word(o, w)))
        })
        .map(|(a, _)| *a)
        .collect();
    if !in_full.is_empty() {
        return only(in_full);
    }
    only(
        allowed
            .iter()
            .filter(|a| {
                let own = words(a);
                own.len() > 1 && said.iter().any(|w| same_word(&own[0], w))
            })
            .copied()
            .collect(),
    )
}

/// Per allowed value, the description's text about it: what follows each place the
/// description names it as a whole word, up to the end of that sentence or the next value
/// named.
fn described(description: &str, allowed: &[&str]) -> Vec<String> {
    let part_of_name = |c: char| c.is_alphanumeric() || c == '_';
    let mut mentions: Vec<(usize, usize, usize)> = Vec::new();
    for (i, a) in allowed.iter().enumerate() {
        if a.chars().count() < 2 {
            continue;
        }
        for (at, _) in description.match_indices(a) {
            let end = at + a.len();
            let before = description[..at].chars().next_back();
            let after = description[end..].chars().next();
            if !before.is_some_and(|c| part_of_name(c) || c == '-')
                && !after.is_some_and(part_of_name)
            {
                mentions.push((at, end, i));
            }
        }
    }
    mentions.sort();
    let mut about = vec![String::new(); allowed.len()];
    for (k, &(_, end, i)) in mentions.iter().enumerate() {
        let until = mentions.get(k + 1).map_or(description.len(), |m| m.0);
        let rest = &description[end..until.max(end)];
        let sentence_end = rest
            .char_indices()
            .find(|&(j, c)| {
                c == ';'
                    || (c == '.' && rest[j + 1..].chars().next().is_none_or(char::is_whitespace))
            })
            .map_or(rest.len(), |(j, _)| j);
        about[i].push(' ');
        about[i].push_str(&rest[..sentence_end]);
    }
    about
}

/// Words too common to tell one value's description from another's.
const COMMON_WORDS: [&str; 40] = [
    "and", "any", "are", "but", "can", "does", "for", "from", "has", "have", "into", "its", "may",
    "must", "not", "our", "should", "than", "that", "the", "their", "them", "then", "there",
    "these", "they", "this", "those", "was", "were", "what", "when", "where", "which", "while",
    "will", "with", "would", "you", "your",
];

/// The version numbers written in `text` (`1.4.2`, `v2.0`), each with where it starts: a
/// run of digits and dots with two parts or more, not inside a word or a longer run.
fn versions_in(text: &str) -> Vec<(usize, &str)> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let starts = bytes[i].is_ascii_digit()
            && (i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'.'))
            || bytes[i] == b'v'
                && bytes.get(i + 1).is_some_and(u8::is_ascii_digit)
                && (i == 0 || !bytes[i - 1].is_ascii_alphanumeric());
        if !starts {
            i += 1;
            continue;
        }
        let start = i;
        i += 1;
        while i < bytes.len() && (bytes[i].is_ascii_digit() || bytes[i] == b'.') {
            i += 1;
        }
        let run = text[start..i].trim_end_matches('.');
        let followed_by_letter = bytes.get(i).is_some_and(u8::is_ascii_alphabetic);
        if run.contains('.') && !run.contains("..") && !followed_by_letter {
            out.push((start, run));
        }
    }
    out
}

/// On UPDATE, a note that names a new version of the one stored value that holds a version
/// (`"TODO: bump to 1.5.0"` over `oci://ghcr.io/acme/jwt-claims:1.4.2`): the stored value with
/// that version in place of its own, the stored `v` kept or left off as stored. Nothing else
/// in the note may look like a value (a path, an address, a name with digits), and the two
/// versions have the same number of parts.
pub fn version_bumped(text: &str, old: &Value) -> Option<String> {
    let stored = old.as_str()?;
    let said = crate::certainty::without_remarks(text);
    let (in_stored, in_note) = (versions_in(stored), versions_in(&said));
    let ([(at, from)], [(_, to)]) = (in_stored.as_slice(), in_note.as_slice()) else {
        return None;
    };
    let (from_bare, to_bare) = (from.trim_start_matches('v'), to.trim_start_matches('v'));
    let plain_words = said
        .split(|c: char| c.is_whitespace() || matches!(c, ',' | ':' | ';' | '!' | '(' | ')'))
        .filter(|w| !w.is_empty() && !w.contains(to_bare))
        .all(|w| w.chars().all(char::is_alphabetic));
    (plain_words
        && from_bare != to_bare
        && from_bare.split('.').count() == to_bare.split('.').count())
    .then(|| {
        let prefix = if from.starts_with('v') { "v" } else { "" };
        format!(
            "{}{prefix}{to_bare}{}",
            &stored[..*at],
            &stored[at + from.len()..]
        )
    })
}

/// On UPDATE, the new value the user states relative to the stored one (`"double it"` over
/// `5m` → `10m`, `"one more than before"` over `2` → `3`, `"twice as often"` over an interval
/// of `5m` → `2m30s`): the stored value is what "it", "before", "the current value" refer to.
/// One change stated, a word that refers to the stored value, and a stored number or a
/// number with a unit (`16Gi`, `90s`); anything else is no reading.
pub fn relative_amount(text: &str, old: &Value) -> Option<Value> {
    let said = amount_words(text)?;
    let signed = plus_signed(&crate::certainty::without_remarks(text));
    let (change, unit) = match (signed, stated_difference(&said)) {
        // A plus sign before the number refers to the stored value by itself (`"+2"`, `"+1h
        // (one hour longer)"`, `"+50%"`), and so does a difference with its direction (`"bump
        // by 2Gi"`, `"another 2Gi"`).
        (Some(signed), _) => signed,
        (None, Some((n, unit))) => (Change::Plus(n), unit),
        (None, None)
            if said.iter().any(|w| REFERS_TO_STORED.contains(&w.as_str()))
                || counted_comparative(&said) =>
        {
            (stated_change(&said)?, String::new())
        }
        // A counter bumped with no amount said is one more (`"bump - redeploy after the
        // secret rotation"` over 4).
        (None, None) if bare_increment(&said) && old.is_i64() => (Change::Plus(1.0), String::new()),
        (None, None) => return None,
    };
    // "Twice as often" halves an interval; said of anything else it is no amount.
    let often = said
        .iter()
        .any(|w| matches!(w.as_str(), "often" | "frequently" | "frequent"));
    match old {
        Value::Number(_) if !unit.is_empty() => None,
        Value::String(old) if !unit.is_empty() && !old.to_lowercase().ends_with(&unit) => None,
        Value::Number(n) if !often => {
            let new = change.apply(n.as_f64()?);
            // A whole result is written whole (`10`, not `10.0`), whatever the stored one was.
            if n.is_f64() && new.fract() != 0.0 {
                serde_json::Number::from_f64(new).map(Value::Number)
            } else {
                crate::repair::coerce::whole_number(new)
            }
        }
        Value::String(old) => changed_amount_with_unit(old, change, often),
        _ => None,
    }
}

/// Does `text` state one amount and no number beside it (`"50 GiB"`, `"2 minutes 30
/// seconds"`; not `"604800000 (30 days)"`)?
pub fn numbers_only_of_one_amount(text: &str) -> bool {
    match amounts(text).as_slice() {
        [amount] => numbers_said(text).len() == amount.numbers,
        _ => false,
    }
}

/// On UPDATE, a difference stated with its unit (`"add another 50Gi"`) over a stored number
/// counted in the unit the field's description names (bytes: `"53687091200"`, as a number or
/// in digits): the stored number and the difference counted in that unit, written as the
/// stored value is. Only a whole difference, and a result above zero.
pub fn relative_amount_in_field_unit(text: &str, old: &Value, description: &str) -> Option<Value> {
    let stored = match old {
        Value::Number(n) => n.as_i64()?,
        Value::String(s) if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) => {
            s.parse().ok()?
        }
        _ => return None,
    };
    let said = amount_words(text)?;
    let signed = plus_signed(&crate::certainty::without_remarks(text));
    let (change, _) =
        signed.or_else(|| stated_difference(&said).map(|(n, unit)| (Change::Plus(n), unit)))?;
    let Change::Plus(n) = change else {
        return None;
    };
    let [amount] = amounts(text).try_into().ok()?;
    let scale = field_unit(description, amount.dimension)?;
    let difference = amount.value / scale;
    let same_number = amount.numbers == 1 && amount.number == n.abs();
    if !same_number || difference.fract() != 0.0 {
        return None;
    }
    let new = stored.checked_add((difference * n.signum()) as i64)?;
    (new > 0).then(|| match old {
        Value::String(_) => Value::from(new.to_string()),
        _ => Value::from(new),
    })
}

/// Does the text start by bumping (`bump`, `increment`) and say no number at all?
fn bare_increment(said: &[String]) -> bool {
    let number = |w: &String| w.chars().any(|c| c.is_ascii_digit()) || number_word(w).is_some();
    said.first()
        .is_some_and(|w| matches!(w.as_str(), "bump" | "increment"))
        && !said.iter().any(number)
}

/// The change a text that starts with a plus sign states (`"+2"`, `"+2 nodes"`, `"+1h"`,
/// `"+5 for the month-end backlog"`; `"+50%"` is half as much again), the rest plain words,
/// and the unit written on the number (`h`; none for `"+2 nodes"`): an amount in another unit
/// than the stored one is no change of it. A minus sign is no such change: `-1` is a value of
/// its own in many fields.
fn plus_signed(text: &str) -> Option<(Change, String)> {
    let rest = text.trim_start().strip_prefix('+')?;
    let end = rest
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(rest.len());
    let n: f64 = rest[..end].parse().ok()?;
    let (change, after) = match rest[end..].strip_prefix('%') {
        Some(after) => (Change::Times(1.0 + n / 100.0), after),
        None => (Change::Plus(n), &rest[end..]),
    };
    let unit: String = after
        .chars()
        .take_while(|c| c.is_alphabetic())
        .collect::<String>()
        .to_lowercase();
    // Plain words: letters, with a hyphen or an apostrophe inside a word (`month-end`).
    let plain = after.split_whitespace().all(|word| {
        word.chars()
            .all(|c| c.is_alphabetic() || c == '-' || c == '\'')
            && word.starts_with(char::is_alphabetic)
            && word.ends_with(char::is_alphabetic)
    });
    plain.then_some((change, unit))
}

/// A difference stated with its direction, which refers to the stored value by itself: `by`
/// after a word that says up or down (`"bump by 2Gi"`, `"reduce it by 2"`), or `another`
/// (`"another 2Gi"`). The number and its unit (`2Gi` → 2, `gi`; a plain number has none).
fn stated_difference(said: &[String]) -> Option<(f64, String)> {
    let number_and_unit = |w: &str| {
        let split = w
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(w.len());
        let (number, unit) = w.split_at(split);
        let n = number.parse::<f64>().ok().or_else(|| number_word(w))?;
        unit.chars()
            .all(|c| c.is_ascii_alphabetic())
            .then(|| (n, if number.is_empty() { "" } else { unit }.to_string()))
    };
    let up = said
        .iter()
        .any(|w| UPWARDS.contains(&w.as_str()) || w == "another");
    let down = said.iter().any(|w| DOWNWARDS.contains(&w.as_str()));
    let mut found = said.windows(2).filter_map(|pair| {
        let (n, unit) = match pair[0].as_str() {
            "by" | "another" => number_and_unit(&pair[1])?,
            _ => return None,
        };
        match (up, down) {
            (true, false) => Some((n, unit)),
            (false, true) => Some((-n, unit)),
            _ => None,
        }
    });
    let first = found.next()?;
    found.next().is_none().then_some(first)
}

/// A count with a comparative (`"add two more workers"`, `"3 fewer"`): more or fewer than
/// what there is, the stored value (`than` is read as referring to it already).
fn counted_comparative(said: &[String]) -> bool {
    let count = |w: &str| w.parse::<f64>().is_ok() || number_word(w).is_some_and(|_| w != "a");
    said.windows(2).any(|pair| {
        count(&pair[0]) && matches!(pair[1].as_str(), "more" | "fewer" | "extra" | "additional")
    })
}

/// Does one of `said` (lower-case words) refer to the stored value (`before`, `current`)?
pub fn refers_to_stored(said: &[&str]) -> bool {
    said.iter().any(|w| REFERS_TO_STORED.contains(w))
}

/// Words that refer to the stored value.
const REFERS_TO_STORED: [&str; 11] = [
    "before",
    "current",
    "currently",
    "now",
    "previous",
    "previously",
    "existing",
    "it",
    "old",
    "stored",
    "than",
];

/// The one change `said` states: a factor (`double`, `3 times`) or a difference (`one more`,
/// `2 fewer`); none when it states none or several.
fn stated_change(said: &[String]) -> Option<Change> {
    let count = |w: &str| w.parse::<f64>().ok().or_else(|| number_word(w));
    let mut changes: Vec<Change> = Vec::new();
    for (i, w) in said.iter().enumerate() {
        let before = i.checked_sub(1).and_then(|j| count(&said[j]));
        let factor = match w.as_str() {
            "double" | "doubled" | "twice" => Some(2.0),
            "triple" | "tripled" | "thrice" => Some(3.0),
            "quadruple" | "quadrupled" => Some(4.0),
            "half" | "halve" | "halved" => Some(0.5),
            "times" | "x" => before,
            // `4x`, `1.5x`: a factor as written in one word.
            _ if w.len() > 1 && w.ends_with('x') => {
                w[..w.len() - 1].parse::<f64>().ok().filter(|f| *f > 0.0)
            }
            // `a tenth of`, `two thirds of`: a fraction, said with its count and `of`.
            _ => fraction_denominator(w).and_then(|d| {
                let of = said.get(i + 1).is_some_and(|next| next == "of");
                of.then_some(before? / d)
            }),
        };
        changes.extend(factor.map(Change::Times));
        match (w.as_str(), before) {
            ("more" | "extra" | "additional", Some(n)) => changes.push(Change::Plus(n)),
            ("fewer" | "less", Some(n)) => changes.push(Change::Plus(-n)),
            _ => {}
        }
    }
    // The same change said twice is one change (`"double the current limit, it runs about
    // twice as long"`); two different ones are no reading.
    let first = *changes.first()?;
    changes.iter().all(|c| *c == first).then_some(first)
}

/// The denominator a fraction word names (`tenth`, `thirds`); `half` is a factor of its own.
fn fraction_denominator(word: &str) -> Option<f64> {
    let d = match word.strip_suffix('s').unwrap_or(word) {
        "third" => 3.0,
        "quarter" | "fourth" => 4.0,
        "fifth" => 5.0,
        "sixth" => 6.0,
        "eighth" => 8.0,
        "tenth" => 10.0,
        "hundredth" => 100.0,
        _ => return None,
    };
    Some(d)
}

/// A stored number with a unit (`16Gi`, `5m`) changed as stated, the unit kept; `often`
/// inverts a factor for a duration (an interval).
fn changed_amount_with_unit(old: &str, change: Change, often: bool) -> Option<Value> {
    let split = old
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(old.len());
    let (number, unit) = old.split_at(split);
    if number.is_empty() || !unit.chars().all(|c| c.is_ascii_alphabetic()) {
        return None;
    }
    let change = match (often, change, unit) {
        (false, _, _) => change,
        (true, Change::Times(f), "ms" | "s" | "m" | "h") => Change::Times(1.0 / f),
        (true, _, _) => return None,
    };
    let new = change.apply(number.parse::<f64>().ok()?);
    let written = (new * 1000.0).round() / 1000.0;
    if new <= 0.0 || (written - new).abs() >= f64::EPSILON * new.max(1.0) {
        return None;
    }
    if written.fract() != 0.0 {
        if let Some(whole) = whole_duration(written, unit) {
            return Some(Value::from(whole));
        }
    }
    Some(Value::from(format!("{written}{unit}")))
}

/// A duration with a fraction (`2.5m`) in whole units, largest first, as Go prints a duration
/// (`2m30s`): a fraction of a unit is refused by many duration patterns (Prometheus'), whole
/// units by none. `None` for a unit that is no time unit, or a fraction of a millisecond.
fn whole_duration(amount: f64, unit: &str) -> Option<String> {
    const UNITS: [(&str, u64); 4] = [("h", 3_600_000), ("m", 60_000), ("s", 1_000), ("ms", 1)];
    let (_, scale) = UNITS.iter().find(|(u, _)| *u == unit)?;
    let millis = amount * *scale as f64;
    if millis.fract() != 0.0 || millis >= 1e15 {
        return None;
    }
    let mut left = millis as u64;
    let mut out = String::new();
    for (u, size) in UNITS {
        if left >= size {
            out.push_str(&format!("{}{u}", left / size));
            left %= size;
        }
    }
    (!out.is_empty()).then_some(out)
}

/// A change stated relative to a stored amount.
#[derive(Clone, Copy, PartialEq)]
enum Change {
    Times(f64),
    Plus(f64),
}

impl Change {
    fn apply(self, old: f64) -> f64 {
        match self {
            Change::Times(f) => old * f,
            Change::Plus(n) => old + n,
        }
    }
}

/// Words that join two values into one (`InPlaceOrRecreate`, `ReadWriteOnce`'s are none).
const CONNECTIVES: [&str; 4] = ["or", "and", "then", "else"];

/// Where the first word of `needed` is said, when every word of it is.
/// The words may also be written together (`selfcertified`).
fn position_in_full(said: &[String], needed: &[String]) -> Option<usize> {
    if needed.is_empty() {
        return None;
    }
    let together = needed.concat();
    if let Some(at) = said.iter().position(|w| same_word(&together, w)) {
        return Some(at);
    }
    if !needed.iter().all(|n| said.iter().any(|w| same_word(n, w))) {
        return None;
    }
    said.iter().position(|w| same_word(&needed[0], w))
}

/// Does `text` name `value` in full: every word of the value, in any form (`"every hour"`
/// names `@hourly`)?
pub fn names_in_full(text: &str, value: &str) -> bool {
    position_in_full(&words(text), &words(value)).is_some()
}

/// Words of two or more letters, lower case, split where a lower-case letter meets an
/// upper-case one (`SelfCertified` → `self`, `certified`).
fn words(text: &str) -> Vec<String> {
    let mut out = super::evidence::tokens(text);
    out.retain(|w| w.chars().count() >= 2);
    out
}

/// Endings that inflect a word without making it another word (`hour`/`hourly`,
/// `retry`/`retries`, `recreate`/`recreating`).
const INFLECTIONS: [&str; 16] = [
    "", "s", "es", "e", "d", "ed", "ing", "y", "ly", "ies", "ied", "er", "ers", "ion", "ions", "al",
];

/// The same word up to its ending (`provides`/`provided`, `catalog`/`catalogs`,
/// `prefer`/`preferred`); short words only when equal. What follows the shared start must be
/// an inflection on both sides: `weekday` is not `weekly`.
fn same_word(a: &str, b: &str) -> bool {
    let longer = a.chars().count().max(b.chars().count());
    a == b
        || shared_stem(a, b).is_some_and(|shared| shared + 3 >= longer)
        || doubled_before_ending(a, b)
        || doubled_before_ending(b, a)
}

/// A short word and its form with its last consonant doubled before an ending (`run` and
/// `running`, `set` and `setting`), which [`shared_stem`]'s four letters leave out.
fn doubled_before_ending(short: &str, long: &str) -> bool {
    let Some(rest) = long.strip_prefix(short) else {
        return false;
    };
    let Some(last) = short.chars().last() else {
        return false;
    };
    let consonant = last.is_ascii_alphabetic() && !"aeiouwxy".contains(last);
    short.chars().count() == 3
        && consonant
        && rest
            .strip_prefix(last)
            .is_some_and(|ending| matches!(ending, "ing" | "ed" | "er" | "ers"))
}

/// The number of letters two words share at their start, when it is four or more and what
/// follows on both sides is an inflection (a doubled last letter allowed: `scanning`).
fn shared_stem(a: &str, b: &str) -> Option<usize> {
    let common: String = a
        .chars()
        .zip(b.chars())
        .take_while(|(x, y)| x == y)
        .map(|(x, _)| x)
        .collect();
    let shared = common.chars().count();
    let last = common.chars().last();
    let inflection = |rest: &str| {
        INFLECTIONS.contains(&rest)
            // A doubled last letter (`preferred`).
            || (rest.chars().next() == last && INFLECTIONS.contains(&&rest[last.map_or(0, char::len_utf8)..]))
    };
    (shared >= 4 && inflection(&a[common.len()..]) && inflection(&b[common.len()..]))
        .then_some(shared)
}

/// Two amounts of the same kind (durations, sizes) that differ: `"14d (one month)"`. The old
/// value's amount is the past, not a second reading: as text, or as a number counted in the
/// unit the field's `description` names (`2097152` bytes is `"2 MiB"`).
fn different_amounts(text: &str, old: Option<&Value>, description: &str) -> Option<Contradiction> {
    // A comment glued into the value (`"100Gi  # TODO: grow to 250Gi"`) is a remark: the
    // amount is the one before it. A remark in brackets still speaks of the value
    // (`"14d (one month)"`).
    let text = amount_before_comment(text).unwrap_or(text);
    // A change note from the stored value states its new side; its remark gives the reason
    // (`"10m -> 20m (PXE boot alone takes ~15 minutes)"`).
    let text = old
        .and_then(|o| change_note_target(text, o))
        .unwrap_or(text);
    let found: Vec<Amount> = amounts(text)
        .into_iter()
        .filter(|a| !old_amount(a, old, description))
        .collect();
    for (i, a) in found.iter().enumerate() {
        if let Some(b) = found[i + 1..]
            .iter()
            .find(|b| b.dimension == a.dimension && !b.same_as(a))
        {
            return Some(Contradiction {
                first: a.said.clone(),
                second: b.said.clone(),
                kind: Kind::Amounts,
            });
        }
    }
    None
}

/// The one amount `text` states, as written (`"2 min"` of `"2 min (the export is slow)"`).
pub fn single_amount(text: &str) -> Option<String> {
    match amounts(text).as_slice() {
        [only] => Some(only.said.clone()),
        _ => None,
    }
}

/// Do `a` and `b` each state one amount, the same one (`"90 days"` and `"2160h"`)?
pub fn same_amount(a: &str, b: &str) -> bool {
    // Cores said in words against a CPU quantity (`"half a core"` and `500m`, whose `m` is
    // milli, not minutes, where cores are counted).
    let cores_as_quantity = |said: &[Amount], written: &str| match said {
        [x] if x.dimension == Dimension::Cpu => crate::validation::quantity_value(written.trim())
            .is_some_and(|q| (q - x.value).abs() < 1e-9 * x.value.max(1.0)),
        _ => false,
    };
    let (found_a, found_b) = (amounts(a), amounts(b));
    match (found_a.as_slice(), found_b.as_slice()) {
        ([x], [y]) if x.equals(y) => true,
        _ => cores_as_quantity(&found_a, b) || cores_as_quantity(&found_b, a),
    }
}

/// Is `written`'s one amount one of the amounts `text` states (`200Mi` of
/// `"cpu=100m,memory=200Mi"`)?
pub fn among_amounts(text: &str, written: &str) -> bool {
    let written = amounts(written);
    let [y] = written.as_slice() else {
        return false;
    };
    amounts(text).iter().any(|x| x.equals(y))
}

/// The number of the one amount `text` states in one part, without its unit (`5` of
/// `"5 minutes"`): written alone, it is another amount.
pub fn bare_number(text: &str) -> Option<f64> {
    match amounts(text).as_slice() {
        [only] if only.numbers == 1 => Some(only.number),
        _ => None,
    }
}

/// An address and its dotted netmask (`"192.168.10.0 255.255.255.0"`, a router's or
/// `ifconfig`'s notation, with or without the word `netmask`, or `192.168.10.0/255.255.255.0`)
/// in CIDR notation, the mask's
/// prefix length counted (`192.168.10.0/24`); `None` for a mask whose ones are not contiguous
/// or anything else.
pub fn cidr_of_netmask(text: &str) -> Option<String> {
    let text = text.trim();
    let (address, mask) = text
        .split_once(char::is_whitespace)
        .or_else(|| text.split_once('/'))?;
    let (address, mask) = (address.trim(), mask.trim());
    // `ifconfig` names it: `"192.168.10.0 netmask 255.255.255.0"`.
    let mask = mask
        .strip_prefix("netmask")
        .or_else(|| mask.strip_prefix("mask"))
        .map_or(mask, str::trim);
    let address: std::net::Ipv4Addr = address.parse().ok()?;
    let mask: std::net::Ipv4Addr = mask.parse().ok()?;
    let bits = u32::from(mask);
    let prefix = bits.leading_ones();
    (bits.checked_shl(prefix).unwrap_or(0) == 0).then(|| format!("{address}/{prefix}"))
}

/// Does `text` state an amount (a number with a unit)?
pub fn states_an_amount(text: &str) -> bool {
    !amounts(text).is_empty()
}

/// The one amount `text` states, however spelt (`"ten seconds"`, `"2 minutes 30 seconds"`),
/// written with unit symbols: a duration with its parts largest first (`2m30s`), then in each
/// unit that holds it as a whole number below 10,000 (`150s`; `2w`, `14d`), a quantity likewise
/// (`20G`; `4Ti`, `4096Gi`). Only whole amounts, durations of fixed-length units (a month has
/// no length in days), and only when the amount is the text's only number; at most four.
pub fn amount_spellings(text: &str) -> Vec<String> {
    let Some(amount) = the_one_amount(text) else {
        return Vec::new();
    };
    let mut out: Vec<String> = Vec::new();
    let whole = |n: f64| n.fract() == 0.0 && (1.0..1e12).contains(&n);
    match amount.dimension {
        Dimension::Time => {
            if !amount.fixed {
                return out;
            }
            if !whole(amount.value) {
                // Less than a second, or no whole number of seconds: in milliseconds (`250ms`).
                let ms = amount.value * 1000.0;
                if whole(ms.round()) && (ms - ms.round()).abs() < 1e-6 {
                    out.push(format!("{}ms", ms.round()));
                }
                return out;
            }
            let mut rest = amount.value;
            let mut parts = String::new();
            for (symbol, scale) in [("h", 3_600.0), ("m", 60.0), ("s", 1.0)] {
                let n = (rest / scale).floor();
                if n >= 1.0 {
                    parts.push_str(&format!("{n}{symbol}"));
                    rest -= n * scale;
                }
            }
            out.push(parts);
            for (symbol, scale) in [
                ("w", 7.0 * DAY),
                ("d", DAY),
                ("h", 3_600.0),
                ("m", 60.0),
                ("s", 1.0),
            ] {
                let n = amount.value / scale;
                if whole(n) && n < 10_000.0 {
                    let spelt = format!("{n}{symbol}");
                    if !out.contains(&spelt) {
                        out.push(spelt);
                    }
                }
            }
        }
        Dimension::Size => {
            for (symbol, scale) in [
                ("Ti", 1_099_511_627_776.0),
                ("T", 1e12),
                ("Gi", 1_073_741_824.0),
                ("G", 1e9),
                ("Mi", 1_048_576.0),
                ("M", 1e6),
                ("Ki", 1024.0),
                ("k", 1e3),
            ] {
                // A size as people write it: a whole number of a unit, below 10,000 of it.
                let n = amount.value / scale;
                if whole(n) && n < 10_000.0 {
                    out.push(format!("{n}{symbol}"));
                }
            }
        }
        Dimension::Cpu => out.extend(cpu_spellings(amount.value)),
    }
    out.truncate(4);
    out
}

/// The one duration `text` states (as [`amount_spellings`] reads it) in ISO 8601's notation,
/// the one some fields take instead of unit symbols (`"1 min 30 s"` → `PT1M30S`, `"500
/// milliseconds"` → `PT0.5S`); days as days, never months or years, whose length varies.
pub fn iso_8601_spelling(text: &str) -> Option<String> {
    let amount = the_one_amount(text).filter(|a| a.dimension == Dimension::Time && a.fixed)?;
    let millis = (amount.value * 1000.0).round();
    if !(1.0..1e15).contains(&millis) {
        return None;
    }
    let days = (millis / (DAY * 1000.0)).floor();
    let mut rest = millis - days * DAY * 1000.0;
    let mut time = String::new();
    for (symbol, scale) in [("H", 3_600_000.0), ("M", 60_000.0)] {
        let n = (rest / scale).floor();
        if n >= 1.0 {
            time.push_str(&format!("{n}{symbol}"));
            rest -= n * scale;
        }
    }
    if rest > 0.0 {
        time.push_str(&format!("{}S", rest / 1000.0));
    }
    let date = if days >= 1.0 {
        format!("{days}D")
    } else {
        String::new()
    };
    let time = if time.is_empty() {
        time
    } else {
        format!("T{time}")
    };
    Some(format!("P{date}{time}"))
}

/// The one amount `text` states, when it is all its numbers say (`two or three days` is not
/// `three days`).
fn the_one_amount(text: &str) -> Option<Amount> {
    let found = amounts(text);
    let [amount] = found.as_slice() else {
        return None;
    };
    let amount = amount.clone();
    // Another number beside the amount (`two or three days`): the amount is not all it says.
    let numbers = text
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '.'))
        .filter(|t| {
            t.starts_with(|c: char| c.is_ascii_digit())
                || (!matches!(t.to_lowercase().as_str(), "a" | "an") && number_word(t).is_some())
        })
        .count();
    // (`a`/`an` are not counted: `an hour` is an amount of one number or of none.)
    (numbers <= amount.numbers).then_some(amount)
}

/// Cores as Kubernetes writes a CPU quantity: in millicores (`500m`) and, for a whole number
/// of cores, that number (`2`) first.
fn cpu_spellings(cores: f64) -> Vec<String> {
    let millis = cores * 1000.0;
    let mut out = Vec::new();
    if cores.fract() == 0.0 && (1.0..1e6).contains(&cores) {
        out.push(format!("{cores}"));
    }
    if millis.fract().abs() < 1e-9 && (1.0..1e9).contains(&millis) {
        out.push(format!("{}m", millis.round()));
    }
    out
}

/// The one amount `text` states (`"5 minutes"`), counted in the unit a number field counts in,
/// named by its description (`"in whole seconds"` → 300). `None`: the text states no amount
/// with a unit, its numbers are plain numbers. `Some(None)`: it states one, but the field names
/// no unit of that kind, or it is no whole number of it, or the text states a rate the field
/// does not count in (`"4 MiB per minute"` for bytes per second): the number alone would be
/// another amount (5 minutes is not 5).
pub fn amount_in_field_unit(
    text: &str,
    description: &str,
    old: Option<&Value>,
) -> Option<Option<f64>> {
    let past = |a: &Amount| old_amount(a, old, description);
    let found: Vec<Amount> = amounts(text).into_iter().filter(|a| !past(a)).collect();
    let rate = per_time_unit(text);
    // A count per a time unit (`"100 per minute"`) is a rate: the count alone is that rate
    // only where the field counts per the same unit (100 per minute is no 100 per second).
    if found.is_empty() && rate.is_some() && !numbers_said(text).is_empty() {
        return counted_per_another_unit(text, description).then_some(None);
    }
    let [amount] = found.as_slice() else {
        return (!found.is_empty()).then_some(None);
    };
    let same_rate = rate.is_none() || rate == per_time_unit(description);
    Some(
        field_unit(description, amount.dimension)
            .filter(|_| same_rate)
            .and_then(|scale| {
                let n = amount.value / scale;
                (n.fract() == 0.0).then_some(n)
            }),
    )
}

/// Is `number` the count of a rate `text` states per a time unit the field's `description`
/// does not count per (`100` of `"100 per minute"` where the field counts per a `period`)?
pub fn rate_dropped(text: &str, description: &str, number: f64) -> bool {
    amounts(text).is_empty()
        && counted_per_another_unit(text, description)
        && numbers_said(text).iter().any(|n| n.value == number)
}

/// The count and the time unit (in seconds) of a rate `text` states as a number per a unit
/// (`"10 per minute"` → 10 and 60); `None` for anything else.
pub fn count_per_time_unit(text: &str) -> Option<(f64, f64)> {
    let scale = per_time_unit(text)?;
    let numbers = numbers_said(text);
    let [number] = numbers.as_slice() else {
        return None;
    };
    amounts(text).is_empty().then_some((number.value, scale))
}

/// The time unit (in seconds) an enum value names (`"Minute"` → 60).
pub fn time_unit_named(word: &str) -> Option<f64> {
    match unit(word)? {
        (Dimension::Time, scale) => Some(scale),
        _ => None,
    }
}

/// Does `text` state a rate per a time unit the field's `description` does not count per?
fn counted_per_another_unit(text: &str, description: &str) -> bool {
    let rate = per_time_unit(text);
    rate.is_some() && rate != per_time_unit(description)
}

/// Is `number`, in a field of that `description`, the one amount `text` states (`300` in a
/// field counted in seconds is `"5 minutes"`)?
pub fn same_amount_in_field_unit(
    text: &str,
    number: f64,
    description: &str,
    old: Option<&Value>,
) -> bool {
    matches!(amount_in_field_unit(text, description, old), Some(Some(n)) if n == number)
}

/// Is `amount` the `old` value (UPDATE), as text or as a number counted in the unit the
/// field's `description` names (`2097152` bytes is `"2 MiB"`)?
fn old_amount(amount: &Amount, old: Option<&Value>, description: &str) -> bool {
    match old {
        Some(Value::String(s)) => amounts(s).iter().any(|o| o.same_as(amount)),
        Some(v) => v.as_f64().is_some_and(|n| {
            field_unit(description, amount.dimension).is_some_and(|scale| amount.value / scale == n)
        }),
        None => false,
    }
}

/// The unit of `dimension` a field's description counts in: its first unit word of that kind.
fn field_unit(description: &str, dimension: Dimension) -> Option<f64> {
    description
        .split(|c: char| !c.is_alphabetic())
        .filter(|w| w.chars().count() >= 3)
        .filter_map(unit)
        .find(|(d, _)| *d == dimension)
        .map(|(_, scale)| scale)
}

/// The time unit a rate is counted per (`"per second"`, `"MiB/s"`), in seconds.
fn per_time_unit(text: &str) -> Option<f64> {
    let tokens: Vec<&str> = text
        .split(|c: char| !(c.is_alphanumeric() || c == '/'))
        .filter(|t| !t.is_empty())
        .collect();
    tokens.iter().enumerate().find_map(|(i, t)| {
        let per = if t.eq_ignore_ascii_case("per") {
            tokens.get(i + 1).copied()
        } else {
            t.rsplit_once('/').map(|(_, after)| after)
        }?;
        match unit(per)? {
            (Dimension::Time, scale) => Some(scale),
            _ => None,
        }
    })
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Dimension {
    Time,
    Size,
    /// Processor time as Kubernetes counts it, in cores.
    Cpu,
}

/// An amount written in the text: `14d`, `30 days`, `one month`, `512 MiB`.
#[derive(Debug, Clone)]
struct Amount {
    said: String,
    dimension: Dimension,
    /// In seconds or bytes.
    value: f64,
    /// Numbers written in it (`2 minutes 30 seconds`: 2).
    numbers: usize,
    /// The number of its first part, as written (`5` of `5 minutes`).
    number: f64,
    /// Every unit of it has a fixed length (months and years do not).
    fixed: bool,
}

impl Amount {
    fn same_as(&self, other: &Amount) -> bool {
        self.dimension == other.dimension
            && (self.value - other.value).abs() <= SAME_AMOUNT * self.value.max(other.value)
    }

    /// The same amount exactly (`90 days` and `2160h`), not only as near as a remark's.
    fn equals(&self, other: &Amount) -> bool {
        self.same_as(other) && (self.value - other.value).abs() < f64::EPSILON * self.value.max(1.0)
    }
}

const DAY: f64 = 86_400.0;

/// Unit words and symbols, case-sensitive where case changes the meaning (`M` mega, `m`
/// minutes; durations and quantities as Kubernetes and people write them).
/// The seconds one of the time unit `word` lasts (`minutes` → 60), for a unit of fixed length.
pub fn seconds_in_unit(word: &str) -> Option<f64> {
    match unit(word)? {
        (Dimension::Time, seconds) if fixed_length(seconds) => Some(seconds),
        _ => None,
    }
}

fn unit(word: &str) -> Option<(Dimension, f64)> {
    use Dimension::{Cpu, Size, Time};
    let lower = word.to_lowercase();
    let cpu = match lower.as_str() {
        "core" | "cores" | "cpu" | "cpus" | "vcpu" | "vcpus" => Some(1.0),
        "millicore" | "millicores" | "millicpu" | "millicpus" => Some(0.001),
        _ => None,
    };
    if let Some(cores) = cpu {
        return Some((Cpu, cores));
    }
    let time = match lower.as_str() {
        "ms" | "msec" | "msecs" | "millis" | "millisecond" | "milliseconds" => Some(0.001),
        "s" | "sec" | "secs" | "second" | "seconds" => Some(1.0),
        "min" | "mins" | "minute" | "minutes" => Some(60.0),
        "h" | "hr" | "hrs" | "hour" | "hours" => Some(3_600.0),
        "d" | "day" | "days" => Some(DAY),
        "w" | "wk" | "wks" | "week" | "weeks" => Some(7.0 * DAY),
        "fortnight" | "fortnights" => Some(14.0 * DAY),
        "mo" | "month" | "months" => Some(30.0 * DAY),
        "y" | "yr" | "yrs" | "year" | "years" => Some(365.0 * DAY),
        _ => None,
    };
    if word == "m" {
        return Some((Time, 60.0));
    }
    if let Some(t) = time {
        return Some((Time, t));
    }
    let spelt = match lower.trim_end_matches('s') {
        "byte" => Some(1.0),
        "kilobyte" => Some(1e3),
        "kibibyte" => Some(1024.0),
        "megabyte" => Some(1e6),
        "mebibyte" => Some(1024.0 * 1024.0),
        "gigabyte" => Some(1e9),
        "gibibyte" => Some(1024.0 * 1024.0 * 1024.0),
        "terabyte" => Some(1e12),
        "tebibyte" => Some(1024.0_f64.powi(4)),
        _ => None,
    };
    if let Some(size) = spelt {
        return Some((Size, size));
    }
    let size = match word {
        "B" | "byte" | "bytes" => 1.0,
        "k" | "K" | "kB" | "KB" => 1e3,
        "Ki" | "KiB" => 1024.0,
        "M" | "MB" => 1e6,
        "Mi" | "MiB" => 1024.0 * 1024.0,
        "G" | "GB" => 1e9,
        "Gi" | "GiB" => 1024.0 * 1024.0 * 1024.0,
        "T" | "TB" => 1e12,
        "Ti" | "TiB" => 1024.0_f64.powi(4),
        _ => return None,
    };
    Some((Size, size))
}

pub fn number_word(word: &str) -> Option<f64> {
    const WORDS: [(&str, f64); 22] = [
        ("a", 1.0),
        ("an", 1.0),
        ("one", 1.0),
        ("two", 2.0),
        ("three", 3.0),
        ("four", 4.0),
        ("five", 5.0),
        ("six", 6.0),
        ("seven", 7.0),
        ("eight", 8.0),
        ("nine", 9.0),
        ("ten", 10.0),
        ("eleven", 11.0),
        ("twelve", 12.0),
        ("fourteen", 14.0),
        ("fifteen", 15.0),
        ("twenty", 20.0),
        ("thirty", 30.0),
        ("forty", 40.0),
        ("sixty", 60.0),
        ("ninety", 90.0),
        ("hundred", 100.0),
    ];
    let lower = word.to_lowercase();
    WORDS.iter().find(|(w, _)| *w == lower).map(|(_, n)| *n)
}

/// A duration unit of one length: not a month or a year.
fn fixed_length(scale: f64) -> bool {
    scale != 30.0 * DAY && scale != 365.0 * DAY
}

/// A duration in ISO 8601's notation (`PT2M30S`, `P1DT12H`, `P2W`), which Java, .NET and
/// many configuration files write: the same amount as `2m30s`, in seconds. Only the units of
/// one length (weeks, days, hours, minutes, seconds): a month or a year in it is no amount.
fn iso_duration(token: &str) -> Option<f64> {
    let body = token.strip_prefix('P')?;
    let (date, time) = body.split_once('T').unwrap_or((body, ""));
    if body.ends_with('T') {
        return None;
    }
    // Weeks and days before the `T`, hours, minutes and seconds after it: then it is glued
    // parts as `1d12h` or `2m30s` write them.
    let only = |part: &str, units: &str| {
        part.chars()
            .all(|c| c.is_ascii_digit() || c == '.' || units.contains(c))
    };
    if !only(date, "WD") || !only(time, "HMS") {
        return None;
    }
    match glued_parts(&format!("{date}{time}").to_lowercase())? {
        (Dimension::Time, seconds) => Some(seconds),
        _ => None,
    }
}

/// A duration or quantity written as glued parts, each a number and a unit of the same kind,
/// largest first (`2m30s`, `1h30m`): one amount, in seconds or bytes.
fn glued_parts(token: &str) -> Option<(Dimension, f64)> {
    let mut rest = token;
    let mut total = 0.0;
    let mut last: Option<(Dimension, f64)> = None;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .filter(|&i| i > 0)?;
        let n: f64 = rest[..digits].parse().ok()?;
        let letters = rest[digits..]
            .find(|c: char| !c.is_ascii_alphabetic())
            .map_or(rest.len(), |i| digits + i);
        let (dimension, scale) = unit(&rest[digits..letters])?;
        if last.is_some_and(|(d, s)| d != dimension || scale >= s) {
            return None;
        }
        total += n * scale;
        last = Some((dimension, scale));
        rest = &rest[letters..];
    }
    last.map(|(dimension, _)| (dimension, total))
}

/// One amount read at `tokens[i]`: its number, unit (kind and scale), the words that say it,
/// and how many tokens they take.
type Read = (f64, (Dimension, f64), String, usize);

/// The amounts of a text: a number with a unit glued on (`14d`, `512Mi`, `2m30s`) or after
/// it (`30 days`), or a number word before a unit word (`one month`, `half a day`). Parts
/// written one after the other, largest unit first (`2 minutes 30 seconds`, `1 hour and 30
/// minutes`), are one amount.
fn amounts(text: &str) -> Vec<Amount> {
    // A cron expression that only steps states the interval it runs at (`*/15 * * * *`), said
    // with each of its numbers (`0 */6 * * *`: the minute it starts at and the step).
    if let Some((value, number)) = super::cron::cron_interval(text) {
        let said_with = text
            .split(|c: char| !c.is_ascii_alphanumeric())
            .filter(|t| t.starts_with(|c: char| c.is_ascii_digit()))
            .count();
        return vec![Amount {
            said: text.trim().to_string(),
            dimension: Dimension::Time,
            value,
            numbers: said_with.max(1),
            number,
            fixed: true,
        }];
    }
    // The words, each marked when it is part of a name (`every-day-backup`, `every_hour`).
    let mut tokens: Vec<&str> = Vec::new();
    let mut in_name: Vec<bool> = Vec::new();
    for chunk in text.split_whitespace() {
        let parts: Vec<&str> = chunk
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '.'))
            .map(|t| t.trim_matches('.'))
            .filter(|t| !t.is_empty())
            .collect();
        let name = parts.len() > 1 && chunk.contains(['-', '_', '/']);
        in_name.extend(parts.iter().map(|_| name));
        tokens.extend(parts);
    }
    let mut out: Vec<Amount> = Vec::new();
    // Where the last amount ended, its unit and its kind.
    let mut previous: Option<(usize, f64, Dimension)> = None;
    let mut i = 0;
    while i < tokens.len() {
        let period = (!in_name[i]).then(|| period_at(&tokens, i)).flatten();
        let Some((n, (dimension, scale), said, used)) = period.or_else(|| amount_at(&tokens, i))
        else {
            i += 1;
            continue;
        };
        // The next part of the amount before (`2 minutes` before `30 seconds`).
        let follows = previous.filter(|&(end, previous_scale, previous_dimension)| {
            let joined = end == i || (end + 1 == i && tokens[end].eq_ignore_ascii_case("and"));
            joined && previous_dimension == dimension && scale < previous_scale
        });
        match (follows, out.last_mut()) {
            (Some((end, ..)), Some(last)) => {
                let and = if end == i { "" } else { " and" };
                last.said = format!("{}{and} {said}", last.said);
                last.value += n * scale;
                last.numbers += 1;
                last.fixed &= fixed_length(scale);
            }
            _ => out.push(Amount {
                said,
                dimension,
                value: n * scale,
                numbers: 1,
                number: n,
                fixed: dimension != Dimension::Time || fixed_length(scale),
            }),
        }
        previous = Some((i + used, scale, dimension));
        i += used;
    }
    out
}

/// What the fraction written before the amount at `tokens[i]` multiplies it by: `half a day`
/// ½, `a quarter of an hour` ¼, `three quarters of a second` ¾; 1 without one. `None` for a
/// fraction whose amount is no whole number of any unit (`a third of a second`): that amount
/// is not read at all, never read as the whole (`a second`).
fn fraction_before(tokens: &[&str], i: usize) -> Option<f64> {
    let mut at = i;
    if at >= 2 && tokens[at - 1].eq_ignore_ascii_case("of") {
        at -= 1;
    }
    let Some(word) = at.checked_sub(1).map(|k| tokens[k].to_lowercase()) else {
        return Some(1.0);
    };
    let part = match word.as_str() {
        "half" | "halves" => 0.5,
        "quarter" | "quarters" => 0.25,
        "third" | "thirds" | "fifth" | "fifths" | "sixth" | "sixths" | "tenth" | "tenths" => {
            return None
        }
        _ => return Some(1.0),
    };
    let times = at
        .checked_sub(2)
        .and_then(|k| number_word(tokens[k]).or_else(|| tokens[k].parse::<f64>().ok()))
        .unwrap_or(1.0);
    Some(part * times)
}

/// The words of the fraction before the amount at `tokens[i]` (`half`, `a quarter of`,
/// `three quarters of`), as [`fraction_before`] reads them.
fn fraction_words(tokens: &[&str], i: usize) -> Option<String> {
    let at = if i >= 2 && tokens[i - 1].eq_ignore_ascii_case("of") {
        i - 1
    } else {
        i
    };
    let first = at.checked_sub(1)?;
    let counted = first
        .checked_sub(1)
        .filter(|&k| number_word(tokens[k]).is_some() || tokens[k].parse::<f64>().is_ok());
    Some(tokens[counted.unwrap_or(first)..i].join(" "))
}

/// An interval said in words at `tokens[i]`: `every day` one of the unit, `every other day` /
/// `every second day` two, `every third week` three (`every 5 minutes` is read at its
/// number). `daily` or `hourly` alone says how often, not the interval: `"daily, during
/// off-peak hours"` is no `24h` from whenever it starts.
fn period_at(tokens: &[&str], i: usize) -> Option<Read> {
    if !tokens[i].eq_ignore_ascii_case("every") {
        return None;
    }
    let ordinal = tokens
        .get(i + 1)
        .and_then(|w| match w.to_lowercase().as_str() {
            "other" | "second" => Some(2.0),
            "third" => Some(3.0),
            _ => None,
        });
    let (n, at) = match ordinal {
        Some(n) if tokens.get(i + 2).is_some_and(|w| unit(w).is_some()) => (n, i + 2),
        _ => (1.0, i + 1),
    };
    let u = tokens
        .get(at)
        .filter(|w| w.chars().count() >= 2)
        .and_then(|w| unit(w))?;
    // `every hour and a half`.
    if ordinal.is_none() && and_a_half(tokens, at + 1) {
        return Some((1.5, u, tokens[i..at + 4].join(" "), at - i + 4));
    }
    Some((n, u, tokens[i..=at].join(" "), at - i + 1))
}

/// `and a half` at `tokens[at..]`.
fn and_a_half(tokens: &[&str], at: usize) -> bool {
    tokens.get(at..at + 3).is_some_and(|t| {
        t[0].eq_ignore_ascii_case("and")
            && t[1].eq_ignore_ascii_case("a")
            && t[2].eq_ignore_ascii_case("half")
    })
}

/// The amount that starts at `tokens[i]`, if one does: `one and a half hours`, `14d`,
/// `2m30s`, `30 days`, `one month` (after `half`: half a month), each with `and a half` after
/// it added (`an hour and a half`).
fn amount_at(tokens: &[&str], i: usize) -> Option<Read> {
    let token = tokens[i];
    if let Some(seconds) = iso_duration(token) {
        return Some((seconds, (Dimension::Time, 1.0), token.to_string(), 1));
    }
    let split = token
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(token.len());
    let (digits, glued) = token.split_at(split);
    let number = if digits.is_empty() {
        None
    } else {
        digits.parse::<f64>().ok()
    };
    let half_first = number
        .filter(|_| glued.is_empty())
        .or_else(|| number_word(token))
        .filter(|_| and_a_half(tokens, i + 1))
        .and_then(|n| {
            let u = tokens.get(i + 4).and_then(|w| unit(w))?;
            Some((
                n + 0.5,
                u,
                format!("{token} and a half {}", tokens[i + 4]),
                5,
            ))
        });
    if half_first.is_some() {
        return half_first;
    }
    let (n, u, said, used) = if let Some(n) = number {
        if glued.is_empty() {
            let u = tokens.get(i + 1).and_then(|w| unit(w))?;
            (n, u, format!("{token} {}", tokens[i + 1]), 2)
        } else {
            let (n, u) = unit(glued)
                .map(|u| (n, u))
                .or_else(|| glued_parts(token).map(|(d, total)| (total, (d, 1.0))))?;
            (n, u, token.to_string(), 1)
        }
    } else {
        let n = number_word(token)?;
        // Only a unit word here (`one m` says nothing).
        let u = tokens
            .get(i + 1)
            .filter(|w| w.chars().count() >= 2)
            .and_then(|w| unit(w))?;
        let part = fraction_before(tokens, i)?;
        let said = format!("{token} {}", tokens[i + 1]);
        // Said as written, its fraction included (`half a minute`, not `a minute`).
        let said = match (part < 1.0, fraction_words(tokens, i)) {
            (true, Some(words)) => format!("{words} {said}"),
            _ => said,
        };
        (n * part, u, said, 2)
    };
    Some(if and_a_half(tokens, i + used) {
        (n + 0.5, u, format!("{said} and a half"), used + 3)
    } else {
        (n, u, said, used)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_negation_governs_the_values_a_list_joined_by_or_leads_to() {
        let allowed = [
            json!("Direct"),
            json!("None"),
            json!("Clone"),
            json!("Snapshot"),
        ];
        assert_eq!(
            named_values("none - the class can't snapshot or clone", &allowed),
            vec!["None"]
        );
        assert_eq!(
            named_values("clone or snapshot", &allowed),
            vec!["Clone", "Snapshot"]
        );
        assert_eq!(
            named_values("never snapshot or clone", &allowed),
            Vec::<&str>::new()
        );
    }

    #[test]
    fn a_change_notes_remark_states_no_second_amount() {
        let old = json!("10m");
        assert!(contradiction(
            None,
            &json!("10m -> 20m (PXE boot alone takes ~15 minutes)"),
            Some(&old)
        )
        .is_none());
        assert!(contradiction(None, &json!("20m (~15 minutes)"), Some(&old)).is_some());
    }

    #[test]
    fn a_percentage_in_words_is_its_number() {
        assert_eq!(percent_in_words("40 percent of the pool"), Some(40.0));
        assert_eq!(percent_in_words("12.5 per cent"), Some(12.5));
        assert_eq!(percent_in_words("40 machines"), None);
        assert_eq!(percent_in_words("40 percent, or 2 of 5"), None);
    }

    #[test]
    fn a_value_cut_short_is_stated_in_full_by_one_word_of_the_annotations() {
        let object = |note: &str| json!({"metadata": {"annotations": {"description": note}}});
        let full = object("Runs Kubernetes 1.31.4, like the ledger-md-0 workers.");
        assert_eq!(stated_in_full(&full, "1.31"), Some("1.31.4"));
        // A longer number is no continuation, nor a word the value does not start.
        assert_eq!(stated_in_full(&full, "1.3"), None);
        assert_eq!(stated_in_full(&full, "31.4"), None);
        // Two ways to extend it: none.
        let two = object("Runs 1.31.4 now and 1.31.5 after the freeze.");
        assert_eq!(stated_in_full(&two, "1.31"), None);
        assert_eq!(stated_in_full(&full, "Runs Kubernetes"), None);
    }

    #[test]
    fn a_dotted_netmask_is_its_prefix_length() {
        assert_eq!(
            cidr_of_netmask("192.168.10.0 255.255.255.0").as_deref(),
            Some("192.168.10.0/24")
        );
        assert_eq!(
            cidr_of_netmask("10.0.0.0/255.255.0.0").as_deref(),
            Some("10.0.0.0/16")
        );
        assert_eq!(
            cidr_of_netmask("10.1.2.3 255.255.255.255").as_deref(),
            Some("10.1.2.3/32")
        );
        assert_eq!(
            cidr_of_netmask("192.168.10.0 netmask 255.255.255.0").as_deref(),
            Some("192.168.10.0/24")
        );
        // Ones that are not contiguous mask no range; a CIDR already is none to read.
        for text in [
            "10.0.0.0 255.0.255.0",
            "10.0.0.0/8",
            "10.0.0.0 24",
            "web 255.255.255.0",
        ] {
            assert_eq!(cidr_of_netmask(text), None, "{text}");
        }
    }

    #[test]
    fn a_change_note_over_the_stored_value_gives_its_new_side() {
        let stored = json!([{"name": "zipkin"}]);
        let note = "zipkin -> otel-tracing (moving to the OpenTelemetry collector, PLAT-412)";
        assert_eq!(change_note_target(note, &stored), Some("otel-tracing"));
        assert_eq!(
            change_note_target("podinfo => podinfo-v2", &json!("podinfo")),
            Some("podinfo-v2")
        );
        // The old side is not what is stored, or the new side is prose: no reading.
        assert_eq!(change_note_target("jaeger -> otel-tracing", &stored), None);
        assert_eq!(
            change_note_target("zipkin -> the new collector", &stored),
            None
        );
        // Words that say when, after the new value.
        assert_eq!(
            change_note_target("5m -> 1m during demo week (revert on Friday)", &json!("5m")),
            Some("1m")
        );
        assert_eq!(change_note_target("5m -> 1m or 2m", &json!("5m")), None);
        // Words of the note after it: hyphened, ending a clause, or the stored value named
        // as what comes back later.
        assert_eq!(
            change_note_target(
                "2 -> 4 for the load-test week, back to 2 afterwards",
                &json!(2)
            ),
            Some("4")
        );
        assert_eq!(
            change_note_target("2 -> 4 for the load-test week, then 6", &json!(2)),
            None
        );
        // One amount written in parts.
        assert_eq!(
            change_note_target("100ms -> 1s 500ms (INC-4471 follow-up)", &json!("100ms")),
            Some("1s 500ms")
        );
        // Words of the change before the stored value.
        assert_eq!(
            change_note_target(
                "rotate flux-gpg-2024 -> flux-gpg-2025 (2024 key expires 31 Jan)",
                &json!({"name": "flux-gpg-2024"})
            ),
            Some("flux-gpg-2025")
        );
        assert_eq!(
            change_note_target("rotate xflux-gpg-2024 -> b", &json!("flux-gpg-2024")),
            None
        );
        assert_eq!(
            change_note_target(note, &json!([{"name": "a"}, {"name": "zipkin"}])),
            None
        );
    }

    #[test]
    fn a_value_that_points_to_an_annotation_refers_to_its_text() {
        let object = json!({"metadata": {"annotations": {
            "ci.acme.io/wasm-sha256": "sha256:071a",
            "ci.acme.io/build": "pipeline 4471",
        }}});
        assert_eq!(
            annotation_referred_to(&object, "see ci.acme.io/wasm-sha256."),
            Some("sha256:071a")
        );
        // Two annotations and no key named: which one is not certain.
        assert_eq!(annotation_referred_to(&object, "see annotation"), None);
        let groups = json!({"spec": {"groups": [{"groupName": "cpu-workers"},
            {"groupName": "gpu-workers", "idle": "see the annotation"}]}});
        let policy = "CPU workers are released after 10 minutes idle; GPU workers after an hour \
            and a half, because reloading the weights takes that long.";
        assert_eq!(
            clause_naming_item(&groups, "/spec/groups/1/idle", policy).as_deref(),
            Some("GPU workers after an hour and a half, because reloading the weights takes that long")
        );
        assert_eq!(
            clause_naming_item(&groups, "/spec/groups/1/idle", "an hour"),
            None
        );
        let resources = json!({"spec": {"resources": {"requests": {"memory": "512 MiB"},
            "limits": {"memory": "same as the request", "cpu": "same as the limit"}}}});
        assert_eq!(
            field_referred_to(
                &resources,
                "/spec/resources/limits/memory",
                "same as the request"
            ),
            Some(&json!("512 MiB"))
        );
        // No field of that name holds a value at the same place.
        assert_eq!(
            field_referred_to(
                &resources,
                "/spec/resources/limits/cpu",
                "same as the requests"
            ),
            None
        );
        assert_eq!(
            field_referred_to(&resources, "/spec/resources/limits/memory", "the request"),
            None
        );
        assert_eq!(annotation_referred_to(&object, "see ci.acme.io/wasm"), None);
        let one = json!({"metadata": {"annotations": {
            "charts.acme.io/vendor-terms": "one download every hour and a half",
            "crfix.dev/repair": "x",
        }}});
        assert_eq!(
            annotation_referred_to(&one, "per vendor terms (see annotation)"),
            Some("one download every hour and a half")
        );
        assert_eq!(annotation_referred_to(&one, "per vendor terms"), None);
    }

    #[test]
    fn a_new_version_of_the_stored_reference() {
        let old = json!("oci://ghcr.io/acme/jwt-claims:1.4.2");
        assert_eq!(
            version_bumped("TODO: bump to 1.5.0", &old).as_deref(),
            Some("oci://ghcr.io/acme/jwt-claims:1.5.0")
        );
        assert_eq!(
            version_bumped("bump to v2.0.1 (CVE fix)", &json!("ghcr.io/x:v1.9.0")).as_deref(),
            Some("ghcr.io/x:v2.0.1")
        );
        // Another value in the note, other parts, or no version stored: no reading.
        assert_eq!(version_bumped("use ghcr.io/other:1.5.0", &old), None);
        assert_eq!(version_bumped("bump to 1.5", &old), None);
        assert_eq!(
            version_bumped("bump to 1.5.0", &json!("oci://ghcr.io/x:latest")),
            None
        );
        assert_eq!(version_bumped("1.4.2", &old), None);
    }

    #[test]
    fn a_state_said_against_its_truth_value() {
        let paused = json!("false - paused until the Nexus migration is finished");
        assert!(state_against_truth("suspend", &paused, &[]).is_some());
        let disabled = json!("disabled");
        assert!(state_against_truth("suspend", &disabled, &["paused until the move"]).is_some());
        assert!(state_against_truth("suspend", &disabled, &["not paused"]).is_none());
        assert!(state_against_truth("suspend", &disabled, &[]).is_none());
        // Another field, or a value that says the object is in the state.
        assert!(state_against_truth("prune", &paused, &[]).is_none());
        assert!(state_against_truth("suspend", &json!("yes, paused"), &[]).is_none());
    }

    #[test]
    fn a_missing_amount_said_in_a_sentence_about_the_field() {
        let runs = json!({"metadata": {"annotations": {"description":
            "Writes image tags back to staging. Runs every 6 hours: no more churn than that. \
             (The GitRepository itself is polled every minute.)"}}});
        let interval = "The shortest time between two runs of the automation.";
        assert_eq!(
            described_amount(&runs, interval)
                .as_deref()
                .map(amount_spellings),
            Some(amount_spellings("every 6 hours"))
        );
        let scans = json!({"metadata": {"annotations": {"description":
            "Builds are pushed around 02:00; scanning once a day, after the build, is plenty."}}});
        let scan_interval = "How long to wait between two scans of the repository.";
        assert!(described_amount(&scans, scan_interval).is_some_and(|s| same_amount(&s, "24h")));
        // No sentence about the field, or two: no reading.
        assert_eq!(described_amount(&scans, "How many replicas to keep."), None);
        let two = json!({"metadata": {"annotations": {"a": "Scans every hour.",
            "b": "Scans every day."}}});
        assert_eq!(described_amount(&two, scan_interval), None);
        assert!(same_stem("scanning", "scans") && same_stem("runs", "runs"));
        assert!(!same_stem("reporting", "repository"));
    }

    #[test]
    fn the_amount_of_a_change_note_is_its_new_side() {
        let old = json!("10m");
        let note = "10m -> 30m (too many bot commits during release week)";
        assert_eq!(value_before_comment(note, Some(&old)), "30m");
        assert_eq!(value_before_comment(note, None), note);
    }

    fn policy_node() -> Value {
        json!({"type": "string", "enum": ["CatalogProvided", "SelfCertified"]})
    }

    #[test]
    fn a_count_per_listed_item_is_the_count_times_the_items() {
        let zones = "3 per zone (eu-west-1a, eu-west-1b, eu-west-1c)";
        assert_eq!(
            count_per_listed(zones, "Number of pods in the pool"),
            Some(9.0)
        );
        assert_eq!(
            count_per_listed("one per availability zone (a, b, c)", ""),
            Some(3.0)
        );
        // The field counts per zone itself: the count is the value.
        assert_eq!(count_per_listed(zones, "Replicas per zone."), None);
        // No list, one item, prose in brackets, two counts: no reading.
        for text in [
            "3 per zone",
            "3 per zone (eu-west-1a)",
            "3 per zone (the three in eu-west-1)",
            "2 or 3 per zone (a, b)",
        ] {
            assert_eq!(count_per_listed(text, ""), None, "{text}");
        }
    }

    #[test]
    fn a_comparison_symbol_names_the_operator_it_stands_for() {
        let selector = json!(["In", "NotIn", "Exists", "DoesNotExist"]);
        let selector = selector.as_array().unwrap();
        assert_eq!(named_values("!=", selector), vec!["NotIn"]);
        assert_eq!(named_values(" = ", selector), vec!["In"]);
        assert!(named_values(">", selector).is_empty());
        let node = json!(["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"]);
        assert_eq!(named_values(">", node.as_array().unwrap()), vec!["Gt"]);
        let toleration = json!(["Exists", "Equal"]);
        assert_eq!(
            named_values("==", toleration.as_array().unwrap()),
            vec!["Equal"]
        );
        // Two allowed values the symbol could stand for: no reading.
        let both = json!(["In", "Equal"]);
        assert!(named_values("=", both.as_array().unwrap()).is_empty());
    }

    #[test]
    fn a_resource_name_names_its_kind() {
        let kinds = json!([
            "Bucket",
            "GitRepository",
            "HelmRelease",
            "HelmChart",
            "HelmRepository"
        ]);
        let kinds = kinds.as_array().unwrap();
        assert_eq!(
            named_values("helmreleases.helm.toolkit.fluxcd.io", kinds),
            vec!["HelmRelease"]
        );
        assert_eq!(
            named_values("gitrepositories", kinds),
            vec!["GitRepository"]
        );
        assert_eq!(
            named_values("buckets.source.toolkit.fluxcd.io", kinds),
            vec!["Bucket"]
        );
        // Not kubectl's lower-case plural: no resource name.
        assert!(kind_of_resource("HelmReleases", kinds).is_none());
        assert!(kind_of_resource("helm", kinds).is_none());
        assert!(names_kind_as_resource(
            "helmreleases.helm.toolkit.fluxcd.io",
            "HelmRelease"
        ));
        assert!(!names_kind_as_resource(
            "helmreleases.helm.toolkit.fluxcd.io",
            "HelmChart"
        ));
    }

    #[test]
    fn one_in_every_n_is_a_share() {
        assert_eq!(one_in("one in every 200 requests"), Some(200.0));
        assert_eq!(one_in("1 in 50"), Some(50.0));
        assert_eq!(one_in("1 out of 1000 calls"), Some(1000.0));
        assert_eq!(one_in("one replica in each zone"), None);
        assert_eq!(one_in("1 in 200, or 1 in 100 at peak"), None);
        let percentage = json!({"type": "number", "maximum": 100,
            "description": "Percentage of requests, from 0 to 100, that start a trace."});
        assert_eq!(
            share_as_percentage("one in every 200 requests", &percentage),
            Some(0.5)
        );
        let count = json!({"type": "integer", "description": "Requests per batch."});
        assert_eq!(
            share_as_percentage("one in every 200 requests", &count),
            None
        );
    }

    #[test]
    fn the_same_as_a_sibling_that_holds_another_number_contradicts() {
        let ports = json!({"http": 8080, "grpc": "9090 (same port as http, one listener)"});
        let grpc = &ports["grpc"];
        assert!(same_as_sibling(grpc, &ports, "grpc").is_some());
        let same = json!({"http": 9090, "grpc": "9090 (same port as http)"});
        assert!(same_as_sibling(&same["grpc"], &same, "grpc").is_none());
        let other = json!({"http": 8080, "grpc": "9090 (the same as before)"});
        assert!(same_as_sibling(&other["grpc"], &other, "grpc").is_none());
    }

    #[test]
    fn resume_ends_a_pause_or_a_suspension() {
        assert!(ends_the_state(
            "paused",
            "resume - the migration is finished"
        ));
        assert!(ends_the_state("suspend", "Resume (maintenance over)"));
        assert!(!ends_the_state("paused", "do not resume yet"));
        assert!(!ends_the_state("enabled", "resume"));
    }

    #[test]
    fn the_amount_before_a_remark_in_brackets_is_the_value() {
        let grown = "250Gi (grown from 100Gi, the disks were 85% full)";
        assert_eq!(value_before_comment(grown, Some(&json!("100Gi"))), "250Gi");
        assert_eq!(value_before_comment("250Gi (grown)", None), "250Gi");
        // Another amount of the same kind in the remark speaks of the value, unless stored.
        assert_eq!(value_before_comment(grown, None), grown);
        let too_short = "5s (the 5 second default is too short, give it more)";
        assert_eq!(value_before_comment(too_short, None), too_short);
        assert_eq!(
            value_before_comment("14d (one month)", None),
            "14d (one month)"
        );
        assert_eq!(
            value_before_comment("100Gi  # grow to 250Gi", None),
            "100Gi "
        );
        assert_eq!(value_before_comment("fast (ssd)", None), "fast (ssd)");
    }

    #[test]
    fn a_number_called_odd_or_even_when_it_is_not_is_a_contradiction() {
        let node = json!({"type": "integer"});
        let c = contradiction(
            Some(&node),
            &json!("4 (an odd number, for the quorum)"),
            None,
        );
        assert!(c.unwrap().to_string().contains("4 is even"));
        assert!(contradiction(
            Some(&node),
            &json!("5 (an odd number, for the quorum)"),
            None
        )
        .is_none());
        assert!(contradiction(Some(&node), &json!("3, never an even count"), None).is_none());
        assert!(contradiction(Some(&node), &json!("7, an even number"), None).is_some());
        // `even` that is no parity.
        assert!(contradiction(Some(&node), &json!("7 (even spread over zones)"), None).is_none());
    }

    #[test]
    fn a_minus_sign_before_digits_is_part_of_the_number() {
        let said = |t: &str| -> Vec<f64> { numbers_said(t).iter().map(|n| n.value).collect() };
        assert_eq!(said("-1 (never give up)"), vec![-1.0]);
        assert_eq!(said("retry (-3)"), vec![-3.0]);
        // A hyphen inside a name, a dash between values, a bullet: no sign.
        assert!(said("prod-1").is_empty());
        assert_eq!(said("5 - 3"), vec![5.0, 3.0]);
        assert_eq!(said("- 4 replicas"), vec![4.0]);
        assert_eq!(said("--retries 2"), vec![2.0]);
        // A name's version after a slash is the name's; a number before one is its own.
        assert!(said("breaks on HTTP/2").is_empty());
        assert_eq!(said("9080/TCP"), vec![9080.0]);
    }

    #[test]
    fn a_qualification_another_allowed_value_says_is_no_contradiction() {
        let node = json!({"type": "string",
            "enum": ["OnNamespace", "OnNamespaceExceptForAlertmanagerNamespace", "None"]});
        let text = json!("on namespace for every team, except our own monitoring namespace");
        assert!(qualified_value(Some(&node), &text).is_none());
        // Without such a value the qualification is still the user's to settle.
        let node = json!({"type": "string", "enum": ["OnNamespace", "None"]});
        assert!(qualified_value(Some(&node), &text).is_some());
    }

    #[test]
    fn the_state_of_what_a_field_is_named_for_skipping_is_its_opposite() {
        let field = "skipDependencyResolution";
        let on = "dependency resolution back on - the family provider is in the lock again";
        assert_eq!(state_of_negated_subject(field, on), Some(true));
        assert_eq!(
            state_of_negated_subject("disableMetrics", "metrics off for now"),
            Some(false)
        );
        // Not named, negated, both states, or a field that skips nothing: no reading.
        assert_eq!(state_of_negated_subject(field, "back on"), None);
        assert_eq!(
            state_of_negated_subject(field, "dependency resolution not on yet"),
            None
        );
        assert_eq!(
            state_of_negated_subject(field, "dependency resolution on, then off"),
            None
        );
        assert_eq!(state_of_negated_subject("dependencyResolution", on), None);
    }

    #[test]
    fn a_change_whose_direction_contradicts_the_stored_value_is_no_reading() {
        let node = json!({"type": "integer"});
        let c = contradiction(Some(&node), &json!("scale down to 12"), Some(&json!(8))).unwrap();
        assert!(c.to_string().contains("\"down\""), "{c}");
        assert!(contradiction(Some(&node), &json!("scale down to 4"), Some(&json!(8))).is_none());
        assert!(contradiction(Some(&node), &json!("raise it to 5"), Some(&json!(8))).is_some());
        // A direction in any inflection; a number said as a change is no new value.
        let raised = json!("2 (raised, the push keeps timing out)");
        assert!(contradiction(Some(&node), &raised, Some(&json!(3))).is_some());
        let noun = json!("5 points below the high threshold");
        assert!(contradiction(Some(&node), &noun, Some(&json!(80))).is_none());
        let more = json!("200 more than now");
        assert!(contradiction(Some(&node), &more, Some(&json!(800))).is_none());
        assert_eq!(
            relative_amount("200 more than now", &json!(800)),
            Some(json!(1000))
        );
        let twice = "double the current limit, the suite runs about twice as long";
        assert_eq!(relative_amount(twice, &json!("45m")), Some(json!("90m")));
        assert_eq!(
            relative_amount("double it, or add 5 more", &json!(10)),
            None
        );
        // A count with a comparative says more than what there is, unless it says than what.
        assert_eq!(
            relative_amount("add two more workers for tonight's backfill", &json!(3)),
            Some(json!(5))
        );
        // No stored value, or no direction: nothing to contradict.
        assert!(contradiction(Some(&node), &json!("scale down to 12"), None).is_none());
        assert!(contradiction(Some(&node), &json!("12 from now on"), Some(&json!(8))).is_none());
        // Amounts with units, compared in their dimension; `up to` states a bound.
        let string = json!({"type": "string"});
        let increase = json!("increase to 5s, the broker is slow during the nightly batch");
        let c = contradiction(Some(&string), &increase, Some(&json!("10s"))).unwrap();
        assert!(
            c.to_string().contains("5s is less than the stored 10s"),
            "{c}"
        );
        let longer = json!("increase to 2m, the broker is slow");
        assert!(contradiction(Some(&string), &longer, Some(&json!("90s"))).is_none());
        let shorter = json!("lower to 2m");
        assert!(contradiction(Some(&string), &shorter, Some(&json!("90s"))).is_some());
        // A change note whose new side is not the change its words state.
        let c = contradiction(Some(&node), &json!("double it: 2 -> 3"), Some(&json!(2))).unwrap();
        assert!(c.to_string().contains("\"3\" and \"4\""), "{c}");
        assert!(contradiction(Some(&node), &json!("double it: 2 -> 4"), Some(&json!(2))).is_none());
        // A value from before the stored one, not stated.
        let earlier = json!("back to what it was before the 45m bump");
        let c = contradiction(Some(&string), &earlier, Some(&json!("45m"))).unwrap();
        assert!(c.to_string().contains("in neither object"), "{c}");
        let stated = json!("back to what it was: 30m");
        assert!(contradiction(Some(&string), &stated, Some(&json!("45m"))).is_none());
        // Two values, each for its own case, on UPDATE too.
        let policy = json!({"type": "string", "enum": ["Automatic", "Manual"]});
        let per_case = json!("Manual for minor upgrades, Automatic for patch releases");
        assert!(contradiction(Some(&policy), &per_case, Some(&json!("Manual"))).is_some());
        let bound = json!("wait up to 5s");
        assert!(contradiction(Some(&string), &bound, Some(&json!("10s"))).is_none());
    }

    #[test]
    fn a_value_said_unchanged_that_differs_from_the_stored_one_is_no_reading() {
        let node = json!({"type": "string"});
        let said = json!("9090 (unchanged, still the app port)");
        let c = contradiction(Some(&node), &said, Some(&json!("8080"))).unwrap();
        assert!(c.to_string().contains("\"unchanged\""), "{c}");
        // The stored value itself, a bare "unchanged", or no stored value: nothing contradicts.
        assert!(contradiction(Some(&node), &said, Some(&json!("9090"))).is_none());
        assert!(contradiction(Some(&node), &json!("unchanged"), Some(&json!("8080"))).is_none());
        assert!(contradiction(Some(&node), &said, None).is_none());
    }

    #[test]
    fn a_word_and_its_inflections_are_the_same_word_and_nothing_else_is() {
        for (a, b) in [
            ("hour", "hourly"),
            ("provides", "provided"),
            ("retry", "retries"),
            ("recreate", "recreating"),
            ("prefer", "preferred"),
            ("catalog", "catalogs"),
        ] {
            assert!(same_word(a, b), "{a} / {b}");
        }
        for (a, b) in [
            ("weekday", "weekly"),
            ("monthly", "monday"),
            ("secure", "security"),
        ] {
            assert!(!same_word(a, b), "{a} / {b}");
        }
        assert!(!names_in_full("every weekday at 6:30", "@weekly"));
        assert!(names_in_full("once every hour", "@hourly"));
    }

    #[test]
    fn two_enum_values_named_in_full_contradict() {
        let c = contradiction(
            Some(&policy_node()),
            &json!("SelfCertified (only take upgrade edges the catalog provides)"),
            None,
        )
        .unwrap();
        assert_eq!(
            (c.first.as_str(), c.second.as_str()),
            ("CatalogProvided", "SelfCertified")
        );
        assert!(c.to_string().contains("two allowed values"));
    }

    #[test]
    fn a_word_shared_with_another_value_is_not_naming_it() {
        // `catalog` alone does not name CatalogProvided.
        let prose = json!("ignore the catalog upgrade graph (self-certified upgrades)");
        assert_eq!(contradiction(Some(&policy_node()), &prose, None), None);
        assert_eq!(
            contradiction(Some(&policy_node()), &json!("self certified"), None),
            None
        );
        let hooks = json!({"enum": ["Pre", "PreStop", "Post"]});
        assert_eq!(
            contradiction(Some(&hooks), &json!("PreStop hook"), None),
            None
        );
        assert!(contradiction(Some(&hooks), &json!("Pre (or Post)"), None).is_some());
    }

    #[test]
    fn a_word_several_values_share_names_none_of_them() {
        let node = json!({"type": "string", "enum": ["StrictFIFO", "BestEffortFIFO"]});
        let c = contradiction(Some(&node), &json!("FIFO"), None).expect("ambiguous");
        assert_eq!(
            (c.first.as_str(), c.second.as_str()),
            ("StrictFIFO", "BestEffortFIFO")
        );
        assert!(c.to_string().contains("share"), "{c}");
        // A list entry too (where two values named would be two entries).
        assert!(shared_word(Some(&node), &json!("FIFO"), None).is_some());
        assert!(shared_word(Some(&node), &json!("StrictFIFO and BestEffortFIFO"), None).is_none());
        // A word only one of them holds, or one named in full, is a reading.
        for value in ["best effort", "strict fifo", "StrictFIFO", "FIFO please"] {
            assert_eq!(
                contradiction(Some(&node), &json!(value), None),
                None,
                "{value}"
            );
        }
    }

    #[test]
    fn a_value_whose_name_holds_a_number_is_named_with_it() {
        let volume = [json!("io1"), json!("io2"), json!("gp3")];
        assert_eq!(named_values("Provisioned IOPS SSD (io2)", &volume), ["io2"]);
        let family = [json!("Windows2019"), json!("Windows2022"), json!("AL2023")];
        assert_eq!(named_values("windows 2022", &family), ["Windows2022"]);
        // No number stated: the letters name both, as before (only the user can say which).
        assert_eq!(
            named_values("a windows node", &family),
            ["Windows2019", "Windows2022"]
        );
    }

    #[test]
    fn a_negated_value_is_not_a_reading() {
        let value = json!("SelfCertified, not CatalogProvided");
        assert_eq!(contradiction(Some(&policy_node()), &value, None), None);
        let allowed = [json!("None"), json!("Strict")];
        assert_eq!(named_values("not Strict", &allowed), Vec::<&str>::new());
        assert_eq!(named_values("None instead of Strict", &allowed), ["None"]);
        assert_eq!(named_values("strict, don't skip", &allowed), ["Strict"]);
        let policy = [json!("CatalogProvided"), json!("SelfCertified")];
        assert_eq!(
            named_values("selfcertified please", &policy),
            ["SelfCertified"]
        );
    }

    #[test]
    fn a_value_qualified_by_a_negation_is_no_reading() {
        let node = json!({"type": "string", "enum": ["Off", "Initial", "Recreate", "InPlace"]});
        let c = contradiction(
            Some(&node),
            &json!("Recreate, but never evict running pods"),
            None,
        )
        .unwrap();
        assert!(c.to_string().contains("qualifies it"), "{c}");
        // Ruling out another allowed value qualifies nothing; nor does a plain remark.
        assert_eq!(
            contradiction(Some(&node), &json!("Recreate, but not InPlace"), None),
            None
        );
        assert_eq!(
            contradiction(Some(&node), &json!("Recreate (pods restart)"), None),
            None
        );
        // A truth value qualified the same way, with or without a negation.
        let flag = json!({"type": "boolean"});
        for qualified in [
            "yes, but keep manual kubectl hotfixes in place",
            "true (but orphan whatever gets removed, never delete it)",
        ] {
            let c = contradiction(Some(&flag), &json!(qualified), None);
            assert!(c.is_some_and(|c| c.first == "true"), "{qualified}");
        }
        assert_eq!(
            contradiction(Some(&flag), &json!("yes (the default)"), None),
            None
        );
        // A whole value of a checked syntax, then an exception no value can hold.
        let cidr = json!({"type": "string", "pattern": "^[0-9./]+$"});
        let c = contradiction(
            Some(&cidr),
            &json!("192.168.1.0/24 except the router"),
            None,
        );
        assert!(c.is_some_and(|c| c.first == "192.168.1.0/24"));
        for plain in ["192.168.1.0/24 (the home lan)", "the lan except the router"] {
            assert_eq!(
                contradiction(Some(&cidr), &json!(plain), None),
                None,
                "{plain}"
            );
        }
        // "but" inside a word is no contrast.
        assert_eq!(
            contradiction(Some(&flag), &json!("yes, distribute it"), None),
            None
        );
    }

    #[test]
    fn two_values_named_are_the_allowed_value_that_joins_them() {
        let allowed = [
            json!("Off"),
            json!("Recreate"),
            json!("InPlaceOrRecreate"),
            json!("InPlace"),
        ];
        assert_eq!(
            named_values(
                "resize in place where the node allows it, otherwise recreate the pod",
                &allowed
            ),
            ["InPlaceOrRecreate"]
        );
        // Without a value that joins them, two values named stay two.
        let two = [json!("Recreate"), json!("InPlace")];
        assert_eq!(named_values("in place or recreate", &two).len(), 2);
    }

    #[test]
    fn a_value_named_only_in_a_remark_is_not_chosen() {
        let allowed = [json!("cpu"), json!("memory")];
        assert_eq!(
            chosen_values(
                "memory only (cpu limits are pinned by the platform team)",
                &allowed
            ),
            ["memory"]
        );
        assert_eq!(
            chosen_values("(cpu and memory)", &allowed),
            ["cpu", "memory"]
        );
        assert_eq!(chosen_values("cpu, memory", &allowed), ["cpu", "memory"]);
    }

    #[test]
    fn the_old_value_named_on_update_is_the_past() {
        let value = json!("CatalogProvided (was SelfCertified)");
        assert!(contradiction(Some(&policy_node()), &value, None).is_some());
        assert_eq!(
            contradiction(Some(&policy_node()), &value, Some(&json!("SelfCertified"))),
            None
        );
        // Nothing stored: the default is what the field held.
        let with_default = json!({"type": "string", "enum": ["generic", "github"],
            "default": "generic"});
        let value = json!("github (was generic: moving to the app)");
        assert_eq!(contradiction(Some(&with_default), &value, None), None);
        let described = json!({"type": "string", "enum": ["generic", "github"],
            "description": "generic (the default when unset) reads them; github asks the app."});
        let value = json!("github (was generic: moving to the app)");
        assert_eq!(contradiction(Some(&described), &value, None), None);
        let value = json!("github (was azure)");
        let without = json!({"type": "string", "enum": ["azure", "github"]});
        assert!(contradiction(Some(&without), &value, None).is_some());
    }

    #[test]
    fn two_different_amounts_contradict() {
        for (text, first, second) in [
            ("14d (one month)", "14d", "one month"),
            ("keep 7 days, i.e. two weeks", "7 days", "two weeks"),
            ("512Mi (1 GiB)", "512Mi", "1 GiB"),
            ("every 6h (an hour)", "6h", "an hour"),
            // A fraction is said with its amount.
            ("half a minute - it needs ~20s", "half a minute", "20s"),
            ("2s, a quarter of a second", "2s", "a quarter of a second"),
        ] {
            let c = contradiction(None, &json!(text), None).unwrap_or_else(|| panic!("{text}"));
            assert_eq!(
                (c.first.as_str(), c.second.as_str()),
                (first, second),
                "{text}"
            );
            assert!(c.to_string().contains("two different amounts"));
        }
        assert!(among_amounts("cpu=100m,memory=200Mi,storage=1Gi", "200Mi"));
        assert!(!among_amounts("cpu=100m,memory=200Mi,storage=1Gi", "2Gi"));
        // A map or a list holds one amount per key or item.
        let map = json!({"type": "object", "additionalProperties": {"type": "string"}});
        let flag = json!("--system-reserved=cpu=100m,memory=200Mi,ephemeral-storage=1Gi");
        assert_eq!(contradiction(Some(&map), &flag, None), None);
        let scalar = json!({"type": "string"});
        assert!(contradiction(Some(&scalar), &json!("512Mi (1 GiB)"), None).is_some());
    }

    #[test]
    fn the_same_amount_said_twice_or_one_amount_is_fine() {
        for text in [
            "30d (a month)",
            "14d (two weeks)",
            "30 days",
            "512 MiB",
            "512Mi (half a GiB)",
            "1w or 7 days",
            ">= 1.2 AND < 2",
            "candidate (was stable)",
            "6h (512Mi)",
            "daily at midnight",
            "s3://acme-media-backups/uploads/daily",
        ] {
            assert_eq!(contradiction(None, &json!(text), None), None, "{text}");
        }
    }

    #[test]
    fn an_amount_equal_to_the_old_value_is_the_past() {
        assert_eq!(
            contradiction(None, &json!("30d (was 14d)"), Some(&json!("14d"))),
            None
        );
        assert!(contradiction(None, &json!("30d (was 14d)"), None).is_some());
    }

    #[test]
    fn the_value_described_in_the_users_words_is_offered_first() {
        let refresh = "refreshPolicy says when the Secret is synced again. CreatedOnce creates \
            it if missing and never updates it; Periodic syncs every refreshInterval; OnChange \
            syncs only when this ExternalSecret's metadata or spec changes.";
        let policies = ["CreatedOnce", "Periodic", "OnChange"];
        assert_eq!(
            best_described(
                "only sync when this ExternalSecret is edited",
                refresh,
                &policies
            ),
            Some("OnChange")
        );
        // A value named inside a longer one is no mention of it; a value's own words count.
        let stop = "Anything but None makes the queue inactive. Hold lets admitted workloads \
            run to completion; HoldAndDrain also evicts them.";
        let stops = ["None", "Hold", "HoldAndDrain"];
        assert_eq!(
            best_described("stop it and evict what still runs", stop, &stops),
            Some("HoldAndDrain")
        );
        assert_eq!(
            best_described("the east nodes get drained", "", &stops),
            Some("HoldAndDrain")
        );
        // Words the user negates do not count.
        assert_eq!(best_described("never evict anything", stop, &stops), None);
        // Two values described as well as each other: no order.
        let retry = "Always retries every failure; OnError retries on an error; \
            OnTransientError retries on a transient error only.";
        assert_eq!(
            best_described(
                "retry on any error",
                retry,
                &["Always", "OnError", "OnTransientError"]
            ),
            None
        );
        // Nothing shared: no order.
        assert_eq!(best_described("--cascade=false", "", &policies), None);
    }

    #[test]
    fn a_number_is_read_with_its_magnitude_word() {
        assert!(scaled_number("50 thousand samples per scrape", "50000"));
        assert!(!scaled_number("50 thousand samples per scrape", "50"));
        assert!(!scaled_number("50 samples", "50"));
        assert!(numbers_said("50 k samples").is_empty());
    }

    #[test]
    fn an_amount_stated_relative_to_the_stored_one() {
        let rel = |text: &str, old: Value| relative_amount(text, &old);
        assert_eq!(
            rel(
                "double it - the migration hook alone takes ~8m",
                json!("5m")
            ),
            Some(json!("10m"))
        );
        assert_eq!(
            rel("one more than before - we run 6 replicas now", json!(2)),
            Some(json!(3))
        );
        assert_eq!(
            rel("twice as often as now", json!("5m")),
            Some(json!("2m30s"))
        );
        // A fraction of a unit in whole units, as duration patterns take them.
        assert_eq!(
            rel("twice as often as now", json!("1m")),
            Some(json!("30s"))
        );
        assert_eq!(
            rel("4 times as often as now", json!("1m")),
            Some(json!("15s"))
        );
        assert_eq!(
            rel("half as often as now", json!("45s")),
            Some(json!("90s"))
        );
        assert_eq!(rel("double it", json!("1.5Gi")), Some(json!("3Gi")));
        assert_eq!(
            rel("double the current quota", json!("16Gi")),
            Some(json!("32Gi"))
        );
        // A plus sign states a change by itself; a minus sign is a value of its own (`-1`).
        assert_eq!(rel("+2", json!(3)), Some(json!(5)));
        // A difference with its direction refers to the stored value by itself, in its unit.
        assert_eq!(rel("bump by another 2Gi", json!("4Gi")), Some(json!("6Gi")));
        assert_eq!(rel("reduce by 2", json!(5)), Some(json!(3)));
        assert_eq!(rel("bump by another 2Gi", json!("4096Mi")), None);
        assert_eq!(rel("bump by another 2Gi", json!(4)), None);
        assert_eq!(rel("signed by 2 people", json!(4)), None);
        assert_eq!(rel("+2 nodes", json!(3)), Some(json!(5)));
        // Its remark aside; in the stored value's unit only (`+30m` is no 30 more hours).
        assert_eq!(
            rel(
                "+1h (one hour longer than it is now: the run is late)",
                json!("2h")
            ),
            Some(json!("3h"))
        );
        assert_eq!(rel("+30m", json!("2h")), None);
        assert_eq!(rel("+2Gi", json!(4)), None);
        assert_eq!(rel("-1", json!(3)), None);
        assert_eq!(rel("+2, then -1", json!(3)), None);
        // The words after it may be hyphenated; another number among them is no plain word.
        assert_eq!(
            rel("+5 for the month-end close backlog", json!(10)),
            Some(json!(15))
        );
        assert_eq!(rel("+5 for 2 weeks", json!(10)), None);
        // A percentage is a share of the stored amount, and must leave a whole number.
        assert_eq!(
            rel(
                "+50% (v2.3 adds per-route latency histograms)",
                json!(20000)
            ),
            Some(json!(30000))
        );
        assert_eq!(rel("+50%", json!("16Gi")), Some(json!("24Gi")));
        assert_eq!(rel("+10%", json!(3)), None);
        assert_eq!(rel("half of it", json!(8)), Some(json!(4)));
        assert_eq!(
            rel("3 times the current value", json!(100)),
            Some(json!(300))
        );
        assert_eq!(
            rel("4x the current rate while INC-2291 is open", json!(2.5)),
            Some(json!(10))
        );
        assert_eq!(rel("max it, as now", json!(2)), None);
        // No word refers to the stored value, or two changes, or no amount stored.
        assert_eq!(rel("double", json!(2)), None);
        assert_eq!(rel("double it, then one more than before", json!(2)), None);
        assert_eq!(rel("double it", json!("fast")), None);
        assert_eq!(rel("twice as often as now", json!(5)), None);
        assert_eq!(rel("half of it", json!(3)), None);
        // A fraction said with its count and `of`; one that leaves no whole number is none.
        assert_eq!(
            rel(
                "a tenth of what it is now - resolvers must pick it up fast",
                json!(3600)
            ),
            Some(json!(360))
        );
        assert_eq!(
            rel("two thirds of the current size", json!(90)),
            Some(json!(60))
        );
        assert_eq!(rel("a third of it", json!(100)), None);
        assert_eq!(
            rel("a quarter of the current value", json!("8Gi")),
            Some(json!("2Gi"))
        );
        // Without `of`, or without a count, a fraction word is no change.
        assert_eq!(rel("the third one, as now", json!(3)), None);
        assert_eq!(rel("tenth of it", json!(100)), None);
    }

    #[test]
    fn truth_values_stated_in_words() {
        assert_eq!(
            stated_bool("yes, until the storage migration is finished"),
            Some(true)
        );
        assert_eq!(
            stated_bool("off (maintenance window until Friday)"),
            Some(false)
        );
        assert_eq!(stated_bool("yes, this is the intermediate CA"), Some(true));
        assert_eq!(stated_bool("only for the mesh"), None);
        assert_eq!(stated_bool("yes and no"), None);
        // `not` before when answers no.
        assert_eq!(
            stated_bool("not yet - keep serving it until the claims moved"),
            Some(false)
        );
        assert_eq!(
            stated_bool("not anymore, the migration is finished"),
            Some(false)
        );
        assert_eq!(stated_bool("not any more"), Some(false));
        assert_eq!(stated_bool("not case sensitive"), None);
        // A remark's no speaks of something else; the value is stated before it.
        assert_eq!(stated_bool("suspended - no quota yet"), None);
        assert_eq!(stated_bool("enabled (no TLS on this port)"), Some(true));
        assert_eq!(
            stated_bool("no longer suspended - quota approved"),
            Some(false)
        );
        assert_eq!(stated_bool("on (for now)"), Some(true));
        assert_eq!(stated_bool("off on Fridays"), Some(false));
        assert_eq!(stated_bool("not needed, leave it as it is"), Some(false));
        assert_eq!(stated_bool("enabled, do not wait"), Some(true));
        assert_eq!(stated_bool("not case sensitive"), None);
    }

    #[test]
    fn amounts_in_other_units() {
        assert!(same_amount("90 days", "2160h"));
        assert!(same_amount("512 MiB", "512Mi"));
        assert!(!same_amount("90 days", "2159h"));
        assert!(!same_amount("90 days (two weeks)", "2160h"));
        assert_eq!(amount_spellings("90 days"), ["2160h", "90d"]);
        assert_eq!(amount_spellings("90 minutes"), ["1h30m", "90m", "5400s"]);
        assert_eq!(amount_spellings("512 MiB"), ["512Mi"]);
        assert_eq!(
            without_the_past("github (was generic: moving off the token) now"),
            "github () now"
        );
        assert_eq!(without_the_past("Retain; previously Delete"), "Retain;");
        let tls = [json!("TLS10"), json!("TLS12"), json!("TLS13")];
        assert_eq!(named_values("TLS 1.3 from now on", &tls), ["TLS13"]);
        assert!(same_word("run", "running") && same_word("setting", "set"));
        let suspend =
            "When true the operator stops syncing the dashboard and ignores changes to it.";
        assert!(stops_what_is_negated(
            suspend,
            "don't sync until the migration is done"
        ));
        assert!(!stops_what_is_negated(
            suspend,
            "sync again, the migration is done"
        ));
        assert!(!stops_what_is_negated(
            "Stops syncing when set.",
            "don't sync"
        ));
        assert!(!same_word("run", "runner-up") && !same_word("sea", "seaing"));
        // Cores, as a CPU quantity counts them.
        assert_eq!(amount_spellings("half a core"), ["500m"]);
        assert_eq!(amount_spellings("2 cores"), ["2", "2000m"]);
        assert!(same_amount("half a core", "500m"));
        assert!(same_amount("0.5", "half a core"));
        assert!(!same_amount("half a core", "5m"));
        assert!(!same_amount("2 cores", "2m"));
        // A duration in ISO 8601's notation, for the fields that take only that.
        assert_eq!(iso_8601_spelling("1 min 30 s").as_deref(), Some("PT1M30S"));
        assert_eq!(
            iso_8601_spelling("500 milliseconds").as_deref(),
            Some("PT0.5S")
        );
        assert_eq!(
            iso_8601_spelling("2 days and 3 hours").as_deref(),
            Some("P2DT3H")
        );
        assert_eq!(iso_8601_spelling("6 months"), None);
        assert_eq!(iso_8601_spelling("two or three days"), None);
        assert_eq!(
            amount_spellings("2 min (the export endpoint is slow)"),
            ["2m", "120s"]
        );
        // Months and years have no fixed length: no other unit says them.
        assert!(amount_spellings("6 months").is_empty());
    }

    #[test]
    fn a_name_that_is_none_of_the_allowed_values_is_the_users_to_replace() {
        let node = json!({"type": "string", "enum": ["Gzip", "Brotli"]});
        let c = contradiction(Some(&node), &json!("Zstd"), None).expect("names none");
        assert!(c.to_string().contains("\"Zstd\""), "{c}");
        // Spelt otherwise, described in full, a version, or several words: no such statement.
        let lb = json!({"type": "string", "enum": ["RoundRobin", "WeightedLeastRequest"]});
        assert!(contradiction(Some(&lb), &json!("LEAST_REQUEST"), None).is_none());
        assert!(contradiction(Some(&node), &json!("gzip"), None).is_none());
        let versions = json!({"type": "string", "enum": ["2", "3"]});
        assert!(contradiction(Some(&versions), &json!("3.11"), None).is_none());
        assert!(contradiction(Some(&node), &json!("the smallest one"), None).is_none());
        let numbers = json!({"type": "integer", "enum": [1, 3, 5]});
        assert!(contradiction(Some(&numbers), &json!("three"), None).is_none());
    }

    #[test]
    fn an_amount_and_a_count_beside_it_must_agree() {
        let seconds =
            json!({"type": "integer", "description": "Lifetime of the cookie in seconds."});
        let said = |t: &str| contradiction(Some(&seconds), &json!(t), None);
        assert!(said("30 minutes (3600)").is_some());
        assert!(said("3600 (30 minutes)").is_some());
        assert!(said("5 minutes (300)").is_none());
        assert!(said("30 minutes").is_none());
        // A field with no unit, or a text field: nothing to compare with.
        let count = json!({"type": "integer", "description": "How many replicas."});
        assert!(contradiction(Some(&count), &json!("3 hours (2 replicas)"), None).is_none());
        let text = json!({"type": "string", "description": "Lifetime in seconds."});
        assert!(contradiction(Some(&text), &json!("30 minutes (3600)"), None).is_none());
    }

    #[test]
    fn a_period_said_in_words_is_an_amount() {
        assert!(same_amount("every other day", "48h"));
        assert!(same_amount("every second day", "2d"));
        assert!(same_amount("every hour", "1h"));
        assert!(same_amount("poll every hour as a fallback", "60m"));
        assert!(same_amount("every day", "24h"));
        // How often is no interval: `daily` says no time of day.
        assert!(amounts("daily, during off-peak hours").is_empty());
        assert!(amounts("hourly").is_empty());
        assert!(same_amount("every 5 minutes", "5m"));
        assert!(same_amount("every third week", "21d"));
        assert!(same_amount("one download every hour and a half", "90m"));
        assert!(!same_amount("one download every hour and a half", "1h"));
        assert_eq!(amount_spellings("every other day")[0], "48h");
        // `every second` alone is one second; a month has no fixed length.
        assert!(same_amount("every second", "1s"));
        assert!(amount_spellings("every month").is_empty());
        // Not a period: `every replica`, `every-day-backup` as a name.
        assert!(amounts("every replica").is_empty());
        assert!(amounts("every-day-backup").is_empty());
    }

    #[test]
    fn an_amount_is_counted_in_the_unit_its_field_counts_in() {
        let seconds = "How long, in whole seconds, to wait. An integer number of seconds.";
        let rate = "Bytes per second the clients may send (a plain number of bytes).";
        assert_eq!(
            amount_in_field_unit("5 minutes", seconds, None),
            Some(Some(300.0))
        );
        assert_eq!(amount_in_field_unit("15s", seconds, None), Some(Some(15.0)));
        assert_eq!(
            amount_in_field_unit("one MiB per second", rate, None),
            Some(Some(1048576.0))
        );
        assert_eq!(
            amount_in_field_unit("4 MiB/s", rate, None),
            Some(Some(4194304.0))
        );
        // A rate per another time unit, a unit the field does not name, a part of a unit:
        // no number says it.
        assert_eq!(
            amount_in_field_unit("4 MiB per minute", rate, None),
            Some(None)
        );
        assert_eq!(
            amount_in_field_unit("5 minutes", "How long to wait.", None),
            Some(None)
        );
        assert_eq!(
            amount_in_field_unit("1.5s", "In whole minutes.", None),
            Some(None)
        );
        // A count per a time unit is a rate: the count alone only per the field's own unit.
        let per_period = "Requests allowed per period on average.";
        assert_eq!(
            amount_in_field_unit("100 per minute", per_period, None),
            Some(None)
        );
        assert_eq!(
            amount_in_field_unit("100 requests/min", "Requests per second.", None),
            Some(None)
        );
        assert_eq!(
            amount_in_field_unit("100 per second", "Requests per second.", None),
            None
        );
        assert!(rate_dropped("100 per minute", per_period, 100.0));
        assert!(!rate_dropped(
            "100 per second",
            "Requests per second.",
            100.0
        ));
        // Plain numbers are not amounts.
        assert_eq!(amount_in_field_unit("3 replicas", seconds, None), None);
        assert!(same_amount_in_field_unit(
            "five minutes",
            300.0,
            seconds,
            None
        ));
        assert!(!same_amount_in_field_unit("5 minutes", 5.0, seconds, None));
    }

    #[test]
    fn an_old_number_in_the_fields_unit_is_the_past() {
        let node = json!({"type": "integer", "description": "Bytes per second, per broker."});
        let text = json!("8 MiB/s (raised from 2 MiB/s for the backfill)");
        assert_eq!(
            contradiction(Some(&node), &text, Some(&json!(2097152))),
            None
        );
        let rate = node["description"].as_str().unwrap();
        assert_eq!(
            amount_in_field_unit(text.as_str().unwrap(), rate, Some(&json!(2097152))),
            Some(Some(8388608.0))
        );
        // Another old value leaves the two amounts to choose from.
        assert!(contradiction(Some(&node), &text, Some(&json!(1048576))).is_some());
    }

    #[test]
    fn an_amount_in_parts_is_one_amount_however_spelt() {
        assert_eq!(
            single_amount("2 minutes 30 seconds").as_deref(),
            Some("2 minutes 30 seconds")
        );
        assert_eq!(
            single_amount("1 hour and 30 minutes").as_deref(),
            Some("1 hour and 30 minutes")
        );
        assert!(same_amount("2 minutes 30 seconds", "2m30s"));
        assert!(same_amount("1h30m", "90 minutes"));
        assert!(!same_amount("2m30s", "2m"));
        // Not parts of one amount: a smaller unit first, or words between.
        assert!(contradiction(None, &json!("30 seconds 2 minutes"), None).is_some());
        assert!(contradiction(None, &json!("10m, keep firing for 5m"), None).is_some());
        assert_eq!(amount_spellings("2 minutes 30 seconds"), ["2m30s", "150s"]);
        assert_eq!(amount_spellings("ten seconds"), ["10s"]);
        assert_eq!(
            amount_spellings("an hour and a half"),
            ["1h30m", "90m", "5400s"]
        );
        assert_eq!(
            amount_spellings("one and a half hours"),
            ["1h30m", "90m", "5400s"]
        );
        assert_eq!(amount_spellings("2 days and a half"), ["60h", "3600m"]);
        // A fraction before an amount multiplies it, never is left out; one that gives no
        // whole number of milliseconds makes no amount at all.
        assert_eq!(amount_spellings("a quarter of a second"), ["250ms"]);
        assert_eq!(amount_spellings("*/15 * * * *"), ["15m", "900s"]);
        // Started at minute 0, said with two numbers: the interval still.
        assert_eq!(amount_spellings("0 */6 * * *"), ["6h", "360m"]);
        assert_eq!(
            amount_spellings("three quarters of an hour"),
            ["45m", "2700s"]
        );
        assert_eq!(amount_spellings("half a minute"), ["30s"]);
        assert!(amount_spellings("a third of a second").is_empty());
        assert_eq!(amount_spellings("250ms"), ["250ms"]);
        assert_eq!(amount_spellings("two weeks"), ["336h", "2w", "14d"]);
        assert_eq!(amount_spellings("20 gigabytes"), ["20G"]);
        assert_eq!(amount_spellings("4 tebibytes"), ["4Ti", "4096Gi"]);
        assert!(amount_spellings("two or three days").is_empty());
        assert_eq!(amount_spellings("half a second"), ["500ms"]);
    }

    #[test]
    fn an_iso_8601_duration_is_the_same_amount() {
        assert_eq!(amount_spellings("PT2M30S"), ["2m30s", "150s"]);
        assert_eq!(amount_spellings("PT0.5S"), ["500ms"]);
        assert_eq!(amount_spellings("P1DT12H"), ["36h", "2160m"]);
        assert_eq!(amount_spellings("P2W"), ["336h", "2w", "14d"]);
        assert!(same_amount("PT90M", "1h30m"));
        // A month or a year has no one length; units out of order or repeated, a `T` with
        // nothing after it, and words that only begin with P are no durations.
        for text in ["P1M", "P1Y", "PT", "P", "PT30S2M", "PT1H1H", "Pods", "P1DT"] {
            assert!(amount_spellings(text).is_empty(), "{text}");
        }
    }

    #[test]
    fn non_strings_and_long_text_are_not_read() {
        assert_eq!(contradiction(Some(&policy_node()), &json!(14), None), None);
        let long = format!("14d {} one month", "x ".repeat(400));
        assert_eq!(contradiction(None, &json!(long), None), None);
    }
    #[test]
    fn no_limit_is_the_number_the_description_says_means_it() {
        let negative =
            "Retries before giving up. 0 by default; any negative number means no limit.";
        assert_eq!(
            no_limit_number("unlimited - keep retrying", negative),
            Some(-1)
        );
        assert_eq!(
            no_limit_number(
                "keep forever (legal hold)",
                "-1 means no time limit. Default 7 days."
            ),
            Some(-1)
        );
        assert_eq!(
            no_limit_number(
                "unlimited",
                "Caps the series; 0, the default, means no limit."
            ),
            Some(0)
        );
        assert_eq!(
            no_limit_number("no limit", "Set to -1 for unlimited, 0 to disable."),
            Some(-1)
        );
        // A description that names no number for it: no limit is no value of the field.
        assert_eq!(
            no_limit_number("unlimited", "Highest replica count; 100 when unset."),
            None
        );
        // A number beside the words, or a negation, is not "no limit" alone.
        assert_eq!(no_limit_number("unlimited, at most 500", negative), None);
        assert_eq!(no_limit_number("not unlimited", negative), None);
        // A number glued to a word is no number said (`int64`).
        assert_eq!(
            no_limit_number("unlimited", "An int64 for unlimited growth."),
            None
        );
        // Two numbers said to mean it: which one is not certain.
        assert_eq!(
            no_limit_number(
                "unlimited",
                "0 means no limit. Legacy: -1 means no limit too."
            ),
            None
        );
    }
    #[test]
    fn a_count_in_words_is_that_number_unless_it_counts_another_thing() {
        assert_eq!(counted_in_words("one at a time"), Some(1.0));
        assert_eq!(counted_in_words("three (one per zone)"), Some(3.0));
        assert_eq!(counted_in_words("one per table"), None);
        assert_eq!(counted_in_words("one of them"), None);
        assert_eq!(counted_in_words("two or three"), None);
        assert_eq!(counted_in_words("a few"), None);
        assert_eq!(counted_in_words("one replica, 2 in prod"), None);
        assert_eq!(counted_in_words("two dozen"), Some(24.0));
        assert_eq!(counted_in_words("a dozen (one per shard)"), Some(12.0));
        assert_eq!(counted_in_words("three hundred"), Some(300.0));
        assert_eq!(counted_in_words("two dozen of them"), None);
        assert_eq!(counted_in_words("a dozen or two"), None);
        assert_eq!(counted_in_words("all but one"), None);
        assert_eq!(counted_in_words("the one before the leak"), None);
        assert_eq!(counted_in_words("one above the catch-all route"), None);
    }

    #[test]
    fn a_note_that_names_the_stored_value_as_past_gives_the_new_one() {
        let old = Value::from(4);
        assert_eq!(
            change_note_target("8 (was 4; second A100 node pool is up)", &old),
            Some("8")
        );
        assert_eq!(change_note_target("8 (previously 4)", &old), Some("8"));
        // The past named is not what is stored: no note over it.
        assert_eq!(change_note_target("8 (was 6)", &old), None);
        assert_eq!(change_note_target("8 or 9 (was 4)", &old), None);
    }

    #[test]
    fn an_addition_to_the_stored_list_is_the_list_and_the_item() {
        assert_eq!(
            added_item("+ reporting (added for the Q3 close)"),
            Some("reporting")
        );
        assert_eq!(added_item("plus staging"), Some("staging"));
        assert_eq!(added_item("reporting"), None);
        assert_eq!(added_item("+ two namespaces"), None);
        assert_eq!(added_item("+30s (the image is large)"), None);
        assert_eq!(added_item("plus two"), None);
        let old = serde_json::json!(["prod"]);
        assert_eq!(
            added_to_stored("same as before, plus staging", &old),
            Some(vec![Value::from("prod"), Value::from("staging")])
        );
        assert_eq!(added_to_stored("staging", &old), None);
        // A letter whose lower case is longer than itself is no place to cut the text at.
        assert_eq!(added_to_stored("İstanbul plus staging", &old), None);
        assert_eq!(
            added_to_stored("AS BEFORE, plus İzmir", &old),
            Some(vec![Value::from("prod"), Value::from("İzmir")])
        );
        assert_eq!(
            added_to_stored("plus staging", &serde_json::json!("prod")),
            None
        );
    }

    #[test]
    fn a_negation_before_a_word_of_truth_states_false() {
        assert_eq!(
            stated_bool("Don't enable - TLS ends at the ingress"),
            Some(false)
        );
        assert_eq!(stated_bool("do not enable"), Some(false));
        assert_eq!(stated_bool("enable"), Some(true));
        // A negation elsewhere says nothing of the word of truth.
        assert_eq!(stated_bool("enable, not for staging though"), Some(true));
    }

    #[test]
    fn a_difference_with_its_unit_over_a_stored_count_of_that_unit() {
        let bytes = "Size of the volume in bytes.";
        let grown = relative_amount_in_field_unit("add another 50Gi", &json!("53687091200"), bytes);
        assert_eq!(grown, Some(json!("107374182400")));
        assert_eq!(
            relative_amount_in_field_unit("+1 MiB", &json!(1048576), bytes),
            Some(json!(2097152))
        );
        // Down; a description naming no unit of that kind; no difference stated.
        assert_eq!(
            relative_amount_in_field_unit("reduce by 1Ki", &json!(4096), bytes),
            Some(json!(3072))
        );
        assert_eq!(
            relative_amount_in_field_unit("+1Gi", &json!(5), "How many."),
            None
        );
        assert_eq!(
            relative_amount_in_field_unit("50Gi", &json!(5), bytes),
            None
        );
        assert!(numbers_only_of_one_amount("2 minutes 30 seconds"));
        assert!(!numbers_only_of_one_amount("604800000 (30 days)"));
    }

    #[test]
    fn a_change_notes_new_side_is_an_amount_with_its_unit_or_a_truth_value() {
        let grown = "1Gi -> 1.5 GiB (OOMKilled at the 18:00 report peak)";
        assert_eq!(change_note_target(grown, &json!("1Gi")), Some("1.5 GiB"));
        let resumed = "true -> false: resume the rollout, canary error rate is flat";
        let to = change_note_target(resumed, &json!(true));
        assert_eq!(to.and_then(stated_bool), Some(false));
        // A counter bumped with no amount is one more; a number said is no bare bump.
        let bump = "bump - redeploy after rotating the registry pull secret";
        assert_eq!(relative_amount(bump, &json!(4)), Some(json!(5)));
        assert_eq!(relative_amount(bump, &json!("v1.2")), None);
        assert_eq!(relative_amount("bump to 7", &json!(4)), None);
    }

    #[test]
    fn a_fraction_in_words_is_its_percentage() {
        assert_eq!(
            fraction_as_percentage("a quarter of the pods at a time"),
            Some(25.0)
        );
        assert_eq!(fraction_as_percentage("half of them"), Some(50.0));
        assert_eq!(fraction_as_percentage("three tenths"), Some(30.0));
        // No whole percentage, two fractions, another number beside it.
        assert_eq!(fraction_as_percentage("a third"), None);
        assert_eq!(fraction_as_percentage("a quarter, then half"), None);
        assert_eq!(fraction_as_percentage("a quarter of 12 pods"), None);
    }

    #[test]
    fn a_well_known_topology_label_names_its_level() {
        let domains = ["osd", "host", "rack", "zone", "region"];
        assert_eq!(
            topology_level("kubernetes.io/hostname", &domains),
            Some("host")
        );
        assert_eq!(
            topology_level("topology.kubernetes.io/zone", &domains),
            Some("zone")
        );
        // A label nobody wrote for topology, or no allowed value for its level.
        assert_eq!(topology_level("app.kubernetes.io/name", &domains), None);
        assert_eq!(
            topology_level("kubernetes.io/hostname", &["rack", "row"]),
            None
        );
    }

    #[test]
    fn a_word_that_is_an_allowed_value_names_no_other_it_inflects() {
        let protocols: Vec<Value> = ["grpc", "grpcs", "http", "https", "tcp", "tls"]
            .iter()
            .map(|p| json!(p))
            .collect();
        assert_eq!(named_values("https only", &protocols), vec!["https"]);
        assert_eq!(
            named_values("http and grpc", &protocols),
            vec!["grpc", "http"]
        );
    }

    #[test]
    fn the_fields_action_negated_is_its_off_value() {
        let allowed = ["ignored", "disabled", "least-effort", "best-effort"];
        assert_eq!(
            negated_action_value(
                "do not rebalance - pinned to NVMe",
                "replicaAutoBalance",
                &allowed
            ),
            Some("disabled")
        );
        // A negation of something else than the field's action: no reading.
        assert_eq!(
            negated_action_value(
                "never two replicas in one zone",
                "replicaZoneSoftAntiAffinity",
                &allowed
            ),
            None
        );
        assert_eq!(
            negated_action_value("rebalance", "replicaAutoBalance", &allowed),
            None
        );
        // Words after the action are what the negation speaks of.
        let pull = ["Always", "Never", "IfNotPresent"];
        assert_eq!(
            negated_action_value("don't pull on every pod start", "imagePullPolicy", &pull),
            None
        );
        assert_eq!(
            negated_action_value("don't pull", "imagePullPolicy", &pull),
            Some("Never")
        );
    }
}
