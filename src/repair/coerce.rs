//! Lossless scalar coercion between the schema types, and a scalar where an array is expected.

use serde_json::{Number, Value};

/// Integers beyond this are not exactly representable as `f64`.
const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_992.0;

/// Why `value` must never become a string: a number with a fraction has lost the way it was
/// written before a webhook sees it (YAML reads `1.10` as 1.1, and kubectl sends JSON), so the
/// string made of it may mean something else (`"1.1"` is another version range than `"1.10"`).
pub fn lost_text(value: &Value, expected: &str) -> Option<String> {
    let n = match value {
        Value::Array(items) if items.len() == 1 && expected != "array" => {
            return lost_text(&items[0], expected)
        }
        Value::Number(n) if is_fraction(n) => n,
        _ => return None,
    };
    matches!(expected, "string" | "int-or-string").then(|| {
        format!(
            "the number {n} is not turned into a string: how it was written is lost (YAML reads 1.10 as 1.1); quote the value as you meant it, e.g. \"{n}\""
        )
    })
}

/// Why the number `value`, as the text `new`, would be no value of this string field: the
/// schema's own value for it (its `default`) is text that is not a bare number
/// (`refreshInterval: 30` where the default is `"1h0m0s"`: a unit is missing, and `"30"` would
/// pass the schema and fail where the value is read). The number's digits are kept either way;
/// what is missing only the user knows.
pub fn unlike_the_schemas_own(value: &Value, new: &Value, node: &Value) -> Option<String> {
    let (Value::Number(n), Some(_)) = (value, new.as_str()) else {
        return None;
    };
    let shown = node.get("default")?.as_str()?;
    let bare_number = |s: &str| !s.is_empty() && s.parse::<f64>().is_ok();
    (!bare_number(shown)).then(|| {
        format!(
            "the number {n} is not turned into text: this field's own default, {shown:?}, is not a bare number (a unit or a syntax is missing); write the value as you meant it"
        )
    })
}

/// Why the number `value`, as the text `new`, would be unlike the other items of its list:
/// every other item is text that is not a bare number (`entryPoints: [web, websecure, 443]`:
/// `"443"` would name an entry point nobody defined; the number is something else, a port).
pub fn unlike_its_list(value: &Value, new: &Value, others: &[&Value]) -> Option<String> {
    let (Value::Number(n), Some(_)) = (value, new.as_str()) else {
        return None;
    };
    let texts: Vec<&str> = others.iter().filter_map(|v| v.as_str()).collect();
    let named = !texts.is_empty()
        && texts.len() == others.len()
        && texts.iter().all(|s| s.trim().parse::<f64>().is_err());
    named.then(|| {
        format!(
            "the number {n} is not turned into text: the other items of its list are names, not numbers ({}); write the value as you meant it",
            texts.iter().take(3).map(|t| format!("{t:?}")).collect::<Vec<_>>().join(", ")
        )
    })
}

/// A number that JSON carries as a float: its digits as written are gone.
pub fn is_fraction(n: &Number) -> bool {
    !(n.is_i64() || n.is_u64())
}

/// `value` as the schema type `expected`, when nothing is lost on the way.
pub fn coerce(value: &Value, expected: &str) -> Option<Value> {
    match (expected, value) {
        (_, Value::Array(items)) if expected != "array" && items.len() == 1 => {
            let item = &items[0];
            if item.is_array() || item.is_object() || item.is_null() {
                return None;
            }
            if matches_type(item, expected) {
                Some(item.clone())
            } else {
                coerce(item, expected)
            }
        }
        ("string", Value::Number(n)) if !is_fraction(n) => Some(Value::String(n.to_string())),
        ("string", Value::Bool(b)) => Some(Value::String(b.to_string())),
        ("integer", Value::String(s)) => parse_integer(s.trim()),
        ("integer", Value::Number(n)) => integral(n),
        ("number", Value::String(s)) => parse_number(s.trim()),
        ("boolean", Value::String(s)) => match s.trim().to_ascii_lowercase().as_str() {
            "true" => Some(Value::Bool(true)),
            "false" => Some(Value::Bool(false)),
            _ => None,
        },
        ("int-or-string", Value::Number(n)) => integral(n),
        ("int-or-string", Value::Bool(b)) => Some(Value::String(b.to_string())),
        ("array", Value::String(s)) if holds_list_separator(s) => None,
        ("array", Value::String(_) | Value::Number(_) | Value::Bool(_)) => {
            Some(Value::Array(vec![value.clone()]))
        }
        _ => None,
    }
}

/// A string that separates items (`a, b`, `a; b`, one per line) is several values, or one value
/// with a separator in it: wrapped whole into a one-item list it would be neither (docs/repair.md,
/// "Meaning kept").
pub fn holds_list_separator(s: &str) -> bool {
    s.trim().contains([',', ';', '\n'])
}

/// A string with blanks inside may be several items (`"web websecure"`) or one item with a
/// remark (`"websecure  # not web"`): wrapped whole it is one reading of several. Certain only
/// where the item's schema itself takes exactly such values (an enum, a pattern or a format:
/// validation then decides, `"server auth"` is one usage); for free text it is a proposal.
pub fn may_be_several_items(s: &str, item_node: Option<&Value>) -> bool {
    !constrained(item_node) && s.trim().contains(char::is_whitespace)
}

/// Names joined by `:` or `|` ([`names_separator`]) wrapped whole into a list of free text: one
/// reading of several, as [`may_be_several_items`]. Inside an item of a list already divided
/// by a stronger separator the mark is the item's own (`"User:alice;User:bob"`).
pub fn may_be_several_names(s: &str, item_node: Option<&Value>) -> bool {
    !constrained(item_node) && names_separator(s).is_some()
}

/// An item schema that itself says which strings are items (an enum, a pattern or a format):
/// validation then decides.
fn constrained(item_node: Option<&Value>) -> bool {
    item_node.is_some_and(|n| {
        n.get("enum").is_some() || n.get("pattern").is_some() || n.get("format").is_some()
    })
}

/// The `:` or `|` a string joins names with, as lists are written where commas are not used
/// (OpenSSL's cipher list `"ECDHE-RSA-AES256-GCM-SHA384:ECDHE-RSA-CHACHA20-POLY1305"`, a
/// `PATH`, an alternation `"GET|HEAD"`): every part it cuts is a name of its own (letters,
/// digits, `-`, `_`, `.`, with a letter). A part that is a number (`host:8443`, `nginx:1.25`)
/// or holds a `/` (`https://host`) makes the mark part of one value.
pub fn names_separator(s: &str) -> Option<char> {
    let s = s.trim();
    let name = |p: &str| {
        p.chars().any(char::is_alphabetic)
            && p.chars()
                .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.'))
    };
    [':', '|'].into_iter().find(|&c| {
        let parts: Vec<&str> = s.split(c).collect();
        parts.len() > 1 && parts.iter().all(|p| name(p))
    })
}

/// The separator a string divides its items with: the strongest it holds (a line break, then
/// `;`, then `,`). A weaker one inside belongs to an item (`"hostssl a,b app; host all"` is two
/// rules, the first naming two databases).
/// A separator inside double quotes belongs to the quoted value (`a="x,y"` holds no `,` of
/// its own).
pub fn item_separator(s: &str) -> Option<char> {
    let s = s.trim();
    ['\n', ';', ',']
        .into_iter()
        .find(|c| split_outside_quotes(s, |x| x == *c).len() > 1)
}

/// `s` cut at every character `is_separator` takes that is not inside double quotes, as a
/// shell or kubectl reads `k="a,b",k2=c` (two parts), nor escaped by a backslash, as Helm's
/// `--set` writes a comma inside a value (`topics=a\,b`). A quote left open quotes nothing:
/// then every separator cuts.
pub fn split_outside_quotes(s: &str, is_separator: impl Fn(char) -> bool) -> Vec<&str> {
    let balanced = s.matches('"').count().is_multiple_of(2);
    let mut parts = Vec::new();
    let (mut start, mut quoted, mut escaped) = (0, false, false);
    for (i, c) in s.char_indices() {
        if escaped {
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if c == '"' && balanced {
            quoted = !quoted;
        } else if !quoted && is_separator(c) {
            parts.push(&s[start..i]);
            start = i + c.len_utf8();
        }
    }
    parts.push(&s[start..]);
    parts
}

fn matches_type(value: &Value, expected: &str) -> bool {
    match expected {
        "string" => value.is_string(),
        "integer" => value.is_i64() || value.is_u64(),
        "number" => value.is_number(),
        "boolean" => value.is_boolean(),
        "int-or-string" => value.is_string() || value.is_i64() || value.is_u64(),
        _ => false,
    }
}

fn integral(n: &Number) -> Option<Value> {
    if n.is_i64() || n.is_u64() {
        return Some(Value::Number(n.clone()));
    }
    whole_number(n.as_f64()?)
}

/// `f` as an integer when it is one exactly (|f| ≤ 2^53 and no fraction).
pub(crate) fn whole_number(f: f64) -> Option<Value> {
    (f.fract() == 0.0 && f.abs() <= MAX_SAFE_INTEGER).then(|| Value::Number(Number::from(f as i64)))
}

/// Only the canonical spelling (`"42"`, `"-7"`; not `"042"` or `"+7"`) round-trips.
fn parse_integer(s: &str) -> Option<Value> {
    if let Ok(i) = s.parse::<i64>() {
        return (i.to_string() == s).then(|| Value::Number(i.into()));
    }
    let u = s.parse::<u64>().ok()?;
    (u.to_string() == s).then(|| Value::Number(u.into()))
}

/// `f` as a JSON number, a whole one written as an integer (`600`, not `600.0`: Kubernetes
/// reads both alike, a user reads the second as a slip).
pub(crate) fn number_value(f: f64) -> Option<Value> {
    whole_number(f).or_else(|| Number::from_f64(f).map(Value::Number))
}

fn parse_number(s: &str) -> Option<Value> {
    if s.is_empty()
        || s.starts_with('+')
        || !s
            .chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '-' | '.' | 'e' | 'E' | '+'))
    {
        return None;
    }
    if let Some(v) = parse_integer(s) {
        return Some(v);
    }
    let f = s.parse::<f64>().ok().filter(|f| f.is_finite())?;
    Number::from_f64(f).map(Value::Number)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_separator_inside_double_quotes_belongs_to_the_value() {
        let parts = split_outside_quotes(r#"a=true,b="storefront,checkout",c=1"#, |c| c == ',');
        assert_eq!(parts, ["a=true", r#"b="storefront,checkout""#, "c=1"]);
        assert_eq!(item_separator(r#"b="storefront,checkout""#), None);
        assert_eq!(item_separator(r#"a, "b; c""#), Some(','));
        // A quote left open quotes nothing.
        assert_eq!(split_outside_quotes(r#"say "a,b"#, |c| c == ',').len(), 2);
    }

    #[test]
    fn a_whole_number_is_written_as_an_integer() {
        assert_eq!(number_value(600.0), Some(json!(600)));
        assert_eq!(number_value(-3.0), Some(json!(-3)));
        assert_eq!(number_value(1.5), Some(json!(1.5)));
        assert_eq!(number_value(1e300), Some(json!(1e300)));
        assert_eq!(number_value(f64::NAN), None);
    }

    #[test]
    fn a_number_is_not_made_a_name_among_names() {
        let (web, secure, two) = (json!("web"), json!("websecure"), json!("2"));
        assert!(unlike_its_list(&json!(443), &json!("443"), &[&web, &secure]).is_some());
        assert!(unlike_its_list(&json!(443), &json!("443"), &[&web, &two]).is_none());
        assert!(unlike_its_list(&json!(443), &json!("443"), &[]).is_none());
        assert!(unlike_its_list(&json!("443"), &json!(443), &[&web]).is_none());
    }

    #[test]
    fn a_string_with_blanks_is_one_item_only_where_the_items_schema_says_so() {
        let free = json!({"type": "string"});
        assert!(may_be_several_items("websecure   # not web", Some(&free)));
        assert!(may_be_several_items("web websecure", None));
        assert!(!may_be_several_items(" websecure ", Some(&free)));
        let usages = json!({"type": "string", "enum": ["server auth", "client auth"]});
        assert!(!may_be_several_items("server auth", Some(&usages)));
    }

    #[test]
    fn names_joined_by_a_colon_or_a_bar_may_be_several_items() {
        let free = json!({"type": "string"});
        let ciphers = "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-CHACHA20-POLY1305";
        assert_eq!(names_separator(ciphers), Some(':'));
        assert!(may_be_several_names(ciphers, Some(&free)));
        assert!(!may_be_several_items(ciphers, Some(&free)));
        assert_eq!(names_separator("GET|HEAD"), Some('|'));
        // A port, a tag, a URL: the mark belongs to one value.
        for one in [
            "web.example.com:8443",
            "nginx:1.25",
            "https://example.com",
            "a::b",
            "x",
        ] {
            assert_eq!(names_separator(one), None, "{one}");
            assert!(!may_be_several_names(one, Some(&free)), "{one}");
        }
        let pattern = json!({"type": "string", "pattern": "^[A-Z:]+$"});
        assert!(!may_be_several_names("A:B", Some(&pattern)));
    }

    #[test]
    fn lossless_coercions() {
        assert_eq!(coerce(&json!(3), "string"), Some(json!("3")));
        assert_eq!(coerce(&json!(-3), "string"), Some(json!("-3")));
        assert_eq!(coerce(&json!(true), "string"), Some(json!("true")));
        assert_eq!(coerce(&json!("42"), "integer"), Some(json!(42)));
        assert_eq!(coerce(&json!(" 42 "), "integer"), Some(json!(42)));
        assert_eq!(coerce(&json!(5.0), "integer"), Some(json!(5)));
        assert_eq!(coerce(&json!("0.5"), "number"), Some(json!(0.5)));
        assert_eq!(coerce(&json!("7"), "number"), Some(json!(7)));
        assert_eq!(coerce(&json!("True"), "boolean"), Some(json!(true)));
        assert_eq!(coerce(&json!(8080.0), "int-or-string"), Some(json!(8080)));
        assert_eq!(coerce(&json!(false), "int-or-string"), Some(json!("false")));
        assert_eq!(coerce(&json!("alpha"), "array"), Some(json!(["alpha"])));
        assert_eq!(coerce(&json!("alpha, beta"), "array"), None);
        // A number is no value of a string field whose own default is not a bare number.
        let interval = json!({"type": "string", "default": "1h0m0s"});
        let hint = unlike_the_schemas_own(&json!(30), &json!("30"), &interval).unwrap();
        assert!(hint.contains("\"1h0m0s\""), "{hint}");
        let version = json!({"type": "string", "default": "2"});
        assert_eq!(
            unlike_the_schemas_own(&json!(3), &json!("3"), &version),
            None
        );
        assert_eq!(
            unlike_the_schemas_own(&json!(3), &json!("3"), &json!({"type": "string"})),
            None
        );
        assert_eq!(coerce(&json!("a;b"), "array"), None);
        assert_eq!(coerce(&json!("one\ntwo"), "array"), None);
        assert_eq!(
            coerce(&json!(["Catalog"]), "string"),
            Some(json!("Catalog"))
        );
        assert_eq!(coerce(&json!(["3"]), "integer"), Some(json!(3)));
    }

    #[test]
    fn numbers_with_a_fraction_never_become_strings() {
        // `version: 1.10` reaches a webhook as 1.1: "1.1" would be another version range.
        for (value, expected) in [
            (json!(1.1), "string"),
            (json!(1.2), "int-or-string"),
            (json!([1.1]), "string"),
            (json!(1.0), "string"),
            (json!(1e300), "string"),
        ] {
            assert_eq!(coerce(&value, expected), None, "{value} as {expected}");
            let hint = lost_text(&value, expected).expect("a hint");
            assert!(hint.contains("quote the value"), "{hint}");
        }
        assert_eq!(lost_text(&json!(3), "string"), None);
        assert_eq!(lost_text(&json!(1.5), "number"), None);
        assert_eq!(lost_text(&json!(true), "string"), None);
    }

    #[test]
    fn lossy_coercions_are_refused() {
        assert_eq!(coerce(&json!("042"), "integer"), None);
        assert_eq!(coerce(&json!("+7"), "integer"), None);
        assert_eq!(coerce(&json!("seven"), "integer"), None);
        assert_eq!(coerce(&json!(2.5), "integer"), None);
        assert_eq!(coerce(&json!("1e400"), "number"), None);
        assert_eq!(coerce(&json!("NaN"), "number"), None);
        assert_eq!(coerce(&json!("yes"), "boolean"), None);
        assert_eq!(coerce(&json!(1), "boolean"), None);
        assert_eq!(coerce(&json!({"a": 1}), "string"), None);
        assert_eq!(coerce(&json!(["a", "b"]), "string"), None);
        assert_eq!(coerce(&json!({"a": 1}), "array"), None);
        assert_eq!(coerce(&json!(null), "array"), None);
        assert_eq!(coerce(&json!(1e300), "integer"), None);
    }
}
