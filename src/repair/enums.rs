//! Enum values: case, whitespace and separators, a scalar of the wrong type spelling an
//! allowed value, and the single unambiguous nearest allowed value.

use serde_json::Value;

use crate::nearest::{self, Closeness, Pick};

/// How an enum value was repaired.
pub struct EnumFix {
    pub value: Value,
    pub reason: &'static str,
}

fn scalar_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.trim().to_string()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// What the schema says of the field an enum value is written in.
#[derive(Default)]
pub struct Field<'a> {
    pub name: &'a str,
    pub description: &'a str,
}

/// `Ok(None)`: nothing to say; `Err`: a repair considered and refused, and why.
pub fn repair(value: &Value, allowed: &[Value], field: &Field) -> Result<Option<EnumFix>, String> {
    let Some(text) = scalar_text(value) else {
        return Ok(None);
    };
    // The same text as an allowed value of another JSON type (`1` for `"1"`).
    let same_text: Vec<&Value> = allowed
        .iter()
        .filter(|a| scalar_text(a).as_deref() == Some(text.as_str()))
        .collect();
    if let [only] = same_text.as_slice() {
        if *only != value {
            return Ok(Some(EnumFix {
                value: (*only).clone(),
                reason: "enum",
            }));
        }
    }
    let names: Vec<&str> = allowed.iter().filter_map(Value::as_str).collect();
    if names.is_empty() || !value.is_string() {
        return Ok(None);
    }
    let pick = nearest::pick(&text, &names);
    if !matches!(pick, Pick::One(..)) {
        if let Some(name) = constant_name(&text, &names, field) {
            return Ok(Some(EnumFix {
                value: Value::from(name),
                reason: "enum: the allowed value a constant's name spells",
            }));
        }
        if let Some(name) = abbreviation_written_out(&text, &names) {
            return Ok(Some(EnumFix {
                value: Value::from(name),
                reason: "enum: the allowed value with its shortened word written out",
            }));
        }
        if let Some(name) = initials_of(&text, &names) {
            return Ok(Some(EnumFix {
                value: Value::from(name),
                reason: "enum: the allowed value that is the other's initials",
            }));
        }
    }
    match pick {
        Pick::One(name, closeness) => Ok(Some(EnumFix {
            value: Value::String(name.to_string()),
            reason: match closeness {
                Closeness::Canonical => "enum",
                Closeness::Distance(_) => "enum: closest allowed value",
            },
        })),
        Pick::Ambiguous(names) => Err(format!(
            "ambiguous, as close to {} as to {}",
            names[0], names[1]
        )),
        Pick::NoneClose => Err(format!(
            "no allowed value is close ({})",
            names.iter().take(6).copied().collect::<Vec<_>>().join(", ")
        )),
    }
}

/// The allowed value whose last word is shortened, written with that word in full
/// (`ClusterFirstWithHostNetwork` for `ClusterFirstWithHostNet`): the same words but the last,
/// which begins with the allowed value's last word (two letters or more). Only when exactly
/// one allowed value is written so.
fn abbreviation_written_out<'a>(text: &str, names: &[&'a str]) -> Option<&'a str> {
    let words = crate::certainty::words_of_name(text);
    let (last, first) = words.split_last()?;
    let mut written = names.iter().filter(|name| {
        let allowed = crate::certainty::words_of_name(name);
        allowed.split_last().is_some_and(|(short, same)| {
            same == first
                && short.len() >= 2
                && last.len() > short.len()
                && last.starts_with(short.as_str())
        })
    });
    match (written.next(), written.next()) {
        (Some(one), None) => Some(one),
        _ => None,
    }
}

/// The allowed value that is the initials of the written value's words (`rwop` for
/// `ReadWriteOncePod`), or whose words the written initials stand for (`ReadWriteOnce` for
/// `RWO`, written in capitals as an acronym is): three words or more, case aside. Only when
/// exactly one allowed value is written so.
fn initials_of<'a>(text: &str, names: &[&'a str]) -> Option<&'a str> {
    let initials = |s: &str| -> Option<String> {
        let words = crate::certainty::words_of_name(s);
        (words.len() >= 3).then(|| words.iter().filter_map(|w| w.chars().next()).collect())
    };
    let plain = |s: &str| s.chars().all(|c| c.is_ascii_alphabetic());
    let same = |a: &str, b: &str| plain(a) && a.eq_ignore_ascii_case(b);
    let acronym = text.chars().all(|c| c.is_ascii_uppercase());
    let mut written = names.iter().filter(|name| {
        initials(text).is_some_and(|i| same(name, &i))
            || (acronym && initials(name).is_some_and(|i| same(text, &i)))
    });
    match (written.next(), written.next()) {
        (Some(one), None) => Some(one),
        _ => None,
    }
}

/// The allowed value that a constant's name from code spells (`DiscardNew`, `FileStorage`,
/// `WorkQueuePolicy`, `DISCARD_NEW`): the words of `text` hold one run that is an allowed value
/// (its letters, any case or separators), and every other word names the constant's type: a
/// word of the field's name (`Discard` of `discard`), or the word the description puts right
/// after that name (`Policy` of "Retention policy …" for `retention`). Any other word says
/// something of its own (`BEFORE_AUTHZ` is not `AUTHZ`). Only when exactly one allowed value is
/// spelt so.
fn constant_name<'a>(text: &str, names: &[&'a str], field: &Field) -> Option<&'a str> {
    // An identifier, as code writes one (`UDP/TCP` or `kv-v2` are no constant's name).
    if !text.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return None;
    }
    let words = crate::certainty::words_of_name(text);
    let mut said = crate::certainty::words_of_name(field.name);
    if words.len() < 2 || said.is_empty() {
        return None;
    }
    // A word that is itself an allowed value names two values, not a value and its type.
    let values_named = words
        .iter()
        .filter(|w| names.iter().any(|n| nearest::canonical(n) == **w))
        .count();
    if values_named > 1 {
        return None;
    }
    let described: Vec<String> = field
        .description
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    let type_word = described
        .windows(said.len() + 1)
        .find(|w| w[..said.len()] == said[..])
        .map(|w| w[said.len()].clone());
    said.extend(type_word);
    let mut spelt: Vec<&str> = Vec::new();
    for start in 0..words.len() {
        for end in start + 1..=words.len() {
            let rest_said = words[..start]
                .iter()
                .chain(&words[end..])
                .all(|w| said.contains(w));
            if end - start == words.len() || !rest_said {
                continue;
            }
            let run = words[start..end].concat();
            spelt.extend(names.iter().filter(|n| nearest::canonical(n) == run));
        }
    }
    spelt.sort_unstable();
    spelt.dedup();
    match spelt.as_slice() {
        [one] => Some(one),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn field<'a>(name: &'a str, description: &'a str) -> Field<'a> {
        Field { name, description }
    }

    fn allowed() -> Vec<Value> {
        vec![json!("CatalogProvided"), json!("SelfCertified")]
    }

    #[test]
    fn an_allowed_value_that_is_the_written_words_initials() {
        let modes = [json!("rwo"), json!("rwop"), json!("rwx")];
        let fix = repair(&json!("ReadWriteOncePod"), &modes, &Field::default()).unwrap();
        assert_eq!(fix.unwrap().value, json!("rwop"));
        let long = [json!("ReadWriteOnce"), json!("ReadWriteMany")];
        let fix = repair(&json!("RWO"), &long, &Field::default()).unwrap();
        assert_eq!(fix.unwrap().value, json!("ReadWriteOnce"));
        // Initials in lower case are a word of their own (`on`, `off`), and two words are too
        // few to tell initials from a word.
        assert_eq!(initials_of("rwo", &["ReadWriteOnce"]), None);
        assert_eq!(initials_of("OnNode", &["on", "off"]), None);
    }

    #[test]
    fn repairs_spelling_and_types() {
        let fix = repair(&json!("catalog-provided"), &allowed(), &Field::default())
            .unwrap()
            .unwrap();
        assert_eq!(fix.value, json!("CatalogProvided"));
        assert_eq!(fix.reason, "enum");
        let fix = repair(&json!("SelfCertifed"), &allowed(), &Field::default())
            .unwrap()
            .unwrap();
        assert_eq!(fix.value, json!("SelfCertified"));
        assert_eq!(fix.reason, "enum: closest allowed value");
        let fix = repair(&json!(2), &[json!("1"), json!("2")], &Field::default())
            .unwrap()
            .unwrap();
        assert_eq!(fix.value, json!("2"));
        let fix = repair(&json!("3"), &[json!(3), json!(4)], &Field::default())
            .unwrap()
            .unwrap();
        assert_eq!(fix.value, json!(3));
    }

    #[test]
    fn refuses_far_and_ambiguous_values() {
        let e = repair(&json!("Image"), &[json!("Catalog")], &Field::default())
            .err()
            .unwrap();
        assert!(e.contains("no allowed value is close"), "{e}");
        let e = repair(
            &json!("ab-c"),
            &[json!("abd"), json!("abe")],
            &Field::default(),
        )
        .err()
        .unwrap();
        assert!(e.contains("ambiguous"), "{e}");
        assert!(repair(&json!({"a": 1}), &allowed(), &Field::default())
            .unwrap()
            .is_none());
    }

    #[test]
    fn a_constants_name_from_code_is_the_allowed_value_it_spells() {
        let discard = [json!("old"), json!("new")];
        let fix = repair(
            &json!("DiscardNew"),
            &discard,
            &field("discard", "What happens at a limit."),
        )
        .unwrap()
        .unwrap();
        assert_eq!(fix.value, json!("new"));
        let retention = [json!("limits"), json!("interest"), json!("workqueue")];
        let described = field(
            "retention",
            "Retention policy deciding when messages may be dropped.",
        );
        let fix = repair(&json!("WorkQueuePolicy"), &retention, &described)
            .unwrap()
            .unwrap();
        assert_eq!(fix.value, json!("workqueue"));
        // A word the field does not say is more than the constant's type: no reading, even
        // where the description uses it.
        assert!(repair(&json!("NeverDiscardNew"), &discard, &field("discard", "")).is_err());
        let class = [json!("AUTHN"), json!("AUTHZ"), json!("STATS")];
        let described = field(
            "filterClass",
            "Where the filter goes: before or after authorization, stats.",
        );
        assert!(repair(&json!("BEFORE_AUTHZ"), &class, &described).is_err());
        // Two allowed values, even where the description puts one after the field's name.
        let protocol = [json!("TCP"), json!("UDP"), json!("ANY")];
        let described = field("protocol", "Protocol TCP, UDP or ANY.");
        assert!(repair(&json!("UDP_TCP"), &protocol, &described).is_err());
        assert!(repair(&json!("UDP/TCP"), &protocol, &described).is_err());
        // Two allowed values spelt: which one is not certain.
        assert!(repair(&json!("OldNew"), &discard, &field("discard", "")).is_err());
    }

    #[test]
    fn an_allowed_values_shortened_word_written_out_is_that_value() {
        let dns = [
            json!("ClusterFirstWithHostNet"),
            json!("ClusterFirst"),
            json!("Default"),
        ];
        let fix = repair(
            &json!("ClusterFirstWithHostNetwork"),
            &dns,
            &field("dnsPolicy", ""),
        )
        .unwrap()
        .unwrap();
        assert_eq!(fix.value, json!("ClusterFirstWithHostNet"));
        // Another word than the shortened one: no reading.
        assert!(repair(
            &json!("ClusterFirstWithNetwork"),
            &dns,
            &field("dnsPolicy", "")
        )
        .is_err());
    }
}
