//! Bounded text for messages, warnings, prompts and audit annotations: every stage that
//! quotes user input cuts it with these, so nothing a user sends can grow a response unbounded.

use serde_json::Value;

/// A text of more words than this is prose, not a value: a name or a setting is written in
/// at most three (`"My App"`, `"ISRG Root X1"`); `"the new name from ticket PAY-1432"` is a
/// sentence about one.
pub const MAX_VALUE_WORDS: usize = 3;

/// Marks that, at the start of a name, are part of it, never stray punctuation: a domain and
/// its subdomains (`.example.com`), a flag (`-x`), a service record (`_http._tcp`), an HTTP/2
/// pseudo-header (`:authority`), a macro or a handle (`@daily`, `@team`), a variable or a
/// colour (`$HOME`, `#ff0000`). The DNS-1123 rule, the words offered to the model and the
/// certainty check all keep them.
pub const NAME_MARKS: [char; 7] = ['.', '-', '_', ':', '@', '$', '#'];

/// Cuts at a character boundary and marks the cut with `…` (at most `max` characters).
pub fn truncate_chars(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut out: String = s.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// Cuts at a character boundary and marks the cut with `…` (at most `max` bytes).
pub fn truncate_bytes(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut end = max.saturating_sub('…'.len_utf8());
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

/// Which end of a part of a message [`fit`] keeps when it must shorten it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keep {
    /// The beginning (a sentence: what it says first matters most).
    Head,
    /// The end (a field path: its last segments name the field).
    Tail,
    /// Both ends, the middle cut (a message or a rule).
    Ends,
}

/// One part of a message for [`fit`]: never shortened below `min` characters.
#[derive(Debug, Clone, Copy)]
pub struct Part<'a> {
    pub text: &'a str,
    pub min: usize,
    pub keep: Keep,
}

impl<'a> Part<'a> {
    /// A part kept whole.
    pub fn whole(text: &'a str) -> Self {
        Part {
            text,
            min: usize::MAX,
            keep: Keep::Head,
        }
    }

    /// A field path: shortened from the left, at least `min` characters of its end kept.
    pub fn path(text: &'a str, min: usize) -> Self {
        Part {
            text,
            min,
            keep: Keep::Tail,
        }
    }

    /// Shortened in the middle, at least `min` characters kept.
    pub fn ends(text: &'a str, min: usize) -> Self {
        Part {
            text,
            min,
            keep: Keep::Ends,
        }
    }

    /// Cut at its end, possibly to nothing.
    pub fn rest(text: &'a str) -> Self {
        Part {
            text,
            min: 0,
            keep: Keep::Head,
        }
    }
}

/// `parts` joined in at most `max` characters: when they do not fit, the last parts are
/// shortened first, each down to its `min` (so the parts that matter most come first), each
/// from the end it does not [`Keep`]; only then is the whole cut at its end. A cut is marked
/// with `…`. Warnings are cut at 120 characters; this keeps what names the problem (the
/// field path's tail, the rule's message) inside them.
pub fn fit(parts: &[Part<'_>], max: usize) -> String {
    let lens: Vec<usize> = parts.iter().map(|p| p.text.chars().count()).collect();
    let mut sizes = lens.clone();
    let mut excess = lens.iter().sum::<usize>().saturating_sub(max);
    for (i, part) in parts.iter().enumerate().rev() {
        if excess == 0 {
            break;
        }
        let floor = part.min.min(lens[i]);
        let give = (sizes[i] - floor).min(excess);
        sizes[i] -= give;
        excess -= give;
    }
    // A sentence cut to a few characters says nothing: left out.
    for (i, part) in parts.iter().enumerate() {
        if part.keep == Keep::Head && part.min == 0 && sizes[i] < lens[i] && sizes[i] < 16 {
            sizes[i] = 0;
        }
    }
    let joined: String = parts
        .iter()
        .zip(&sizes)
        .map(|(p, &n)| shorten(p.text, n, p.keep))
        .collect();
    truncate_chars(&joined, max)
}

/// `s` in at most `n` characters, keeping `keep`.
pub fn shorten(s: &str, n: usize, keep: Keep) -> String {
    let count = s.chars().count();
    if count <= n {
        return s.to_string();
    }
    if n == 0 {
        return String::new();
    }
    let tail = |k: usize| -> String { s.chars().skip(count - k).collect() };
    match keep {
        Keep::Head => truncate_chars(s, n),
        Keep::Tail => {
            let mut kept = tail(n - 1);
            // Start at a segment when that loses little.
            if let Some(at) = kept.find(['.', '/']) {
                if at > 0 && at <= kept.len() / 3 {
                    kept = kept[at..].to_string();
                }
            }
            format!("…{kept}")
        }
        Keep::Ends => {
            let head = (n - 1) / 2;
            let head: String = s.chars().take(head).collect();
            let rest = n - 1 - head.chars().count();
            format!("{head}…{}", tail(rest))
        }
    }
}

/// A warning of any shape in at most `max` characters: cut in the middle, so that both what
/// it is (most of its beginning, where warnings put what matters) and its last words survive.
pub fn cut_middle(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let head = max * 4 / 5;
    let head_text: String = s.chars().take(head).collect();
    let count = s.chars().count();
    let rest = max - head - 1;
    let tail: String = s.chars().skip(count - rest).collect();
    format!("{head_text}…{tail}")
}

/// A value as JSON, short, for a warning.
pub fn short_value(v: &Value) -> String {
    truncate_chars(&v.to_string(), 32)
}

/// Control characters (newlines included) become spaces, the ends are trimmed, and the
/// result is at most `max` characters: a user's text can never start a new line of a message.
pub fn one_line(s: &str, max: usize) -> String {
    let cleaned: String = s
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    truncate_chars(cleaned.trim(), max)
}

/// A value quoted for a message: strings in double quotes, other values as JSON; at most
/// `max` characters of the value.
pub fn quote(v: &Value, max: usize) -> String {
    match v {
        Value::String(s) => format!("{:?}", truncate_chars(s, max)),
        other => truncate_chars(&other.to_string(), max),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn truncation_respects_char_boundaries() {
        assert_eq!(truncate_bytes("ééé", 4), "…");
        assert_eq!(truncate_bytes("abc", 3), "abc");
        assert_eq!(truncate_chars("abcdef", 4), "abc…");
        assert_eq!(truncate_chars("abcd", 4), "abcd");
    }

    #[test]
    fn one_line_removes_control_characters_and_bounds() {
        assert_eq!(one_line("  a\nb\tc  ", 10), "a b c");
        assert_eq!(one_line("abcdef", 4), "abc…");
    }

    #[test]
    fn fit_shortens_the_last_parts_first_and_keeps_path_tails() {
        let path = "spec.rules[*].matches[*].path.value.segments[*].name";
        let parts = [
            Part::whole("crfix: CEL rule at "),
            Part::path(path, 24),
            Part::whole(" not evaluated: "),
            Part::ends("the rule's own message, which says what is wrong", 30),
            Part::rest(": and a long explanation nobody needs to read to the very end"),
        ];
        let w = fit(&parts, 120);
        assert_eq!(w.chars().count(), 120, "{w}");
        assert!(
            w.contains("segments[*].name not evaluated: the rule's own"),
            "{w}"
        );
        assert!(w.ends_with("what is wrong"), "{w}");
        let w = fit(&parts, 90);
        assert!(w.chars().count() <= 90, "{w}");
        assert!(w.starts_with("crfix: CEL rule at …"), "{w}");
        assert!(w.contains("[*].name not evaluated: the rule's"), "{w}");
        assert!(w.ends_with("is wrong"), "{w}");
        // What fits is untouched.
        assert_eq!(fit(&[Part::whole("a"), Part::path("b.c", 1)], 10), "ab.c");
        assert_eq!(shorten("abcdefgh", 5, Keep::Ends), "ab…gh");
    }

    #[test]
    fn cut_middle_keeps_both_ends() {
        let s = format!("crfix: start {} the end", "x".repeat(200));
        let w = cut_middle(&s, 120);
        assert_eq!(w.chars().count(), 120);
        assert!(
            w.starts_with("crfix: start ") && w.ends_with(" the end"),
            "{w}"
        );
        assert_eq!(cut_middle("short", 120), "short");
    }

    #[test]
    fn quote_marks_strings_and_bounds() {
        assert_eq!(quote(&json!("a\"b"), 10), "\"a\\\"b\"");
        assert_eq!(quote(&json!(12), 10), "12");
        assert_eq!(quote(&json!("abcdef"), 4), "\"abc…\"");
        assert_eq!(short_value(&json!("x".repeat(100))).chars().count(), 32);
    }
}
