//! RFC 6901 JSON pointers and the API server's dotted field paths.

/// Escapes one reference token.
pub fn escape(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

/// Unescapes one reference token.
pub fn unescape(token: &str) -> String {
    token.replace("~1", "/").replace("~0", "~")
}

/// Appends a token to a pointer.
pub fn push(pointer: &str, token: &str) -> String {
    let mut out = String::with_capacity(pointer.len() + token.len() + 1);
    out.push_str(pointer);
    out.push('/');
    out.push_str(&escape(token));
    out
}

/// The unescaped tokens of a pointer (`""` → none).
pub fn tokens(pointer: &str) -> Vec<String> {
    if pointer.is_empty() {
        return Vec::new();
    }
    pointer
        .strip_prefix('/')
        .unwrap_or(pointer)
        .split('/')
        .map(unescape)
        .collect()
}

/// The pointer of these unescaped tokens (`["spec", "a/b"]` → `/spec/a~1b`).
pub fn from_tokens<S: AsRef<str>>(tokens: &[S]) -> String {
    tokens
        .iter()
        .fold(String::new(), |at, t| push(&at, t.as_ref()))
}

/// Parent pointer and last token; `None` for the root.
pub fn split_last(pointer: &str) -> Option<(&str, String)> {
    let idx = pointer.rfind('/')?;
    Some((&pointer[..idx], unescape(&pointer[idx + 1..])))
}

/// `/spec/channels/0/name` → `spec.channels[0].name`, as the API server writes field paths.
pub fn to_field_path(pointer: &str) -> String {
    let mut out = String::with_capacity(pointer.len());
    for token in tokens(pointer) {
        if !token.is_empty() && token.bytes().all(|b| b.is_ascii_digit()) {
            out.push('[');
            out.push_str(&token);
            out.push(']');
        } else {
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(&token);
        }
    }
    if out.is_empty() {
        out.push_str("<root>");
    }
    out
}

/// Is `pointer` an item of a list (its last token an index)?
pub fn is_list_item(pointer: &str) -> bool {
    split_last(pointer).is_some_and(|(_, last)| last.parse::<usize>().is_ok())
}

/// True when `pointer` is `root` or lies below it.
pub fn is_under(pointer: &str, root: &str) -> bool {
    pointer == root
        || (pointer.starts_with(root) && pointer.as_bytes().get(root.len()) == Some(&b'/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_paths() {
        assert_eq!(
            to_field_path("/spec/source/catalog/packageName"),
            "spec.source.catalog.packageName"
        );
        assert_eq!(to_field_path("/spec/channels/0"), "spec.channels[0]");
        assert_eq!(to_field_path("/a~1b/c~0d"), "a/b.c~d");
        assert_eq!(to_field_path(""), "<root>");
    }

    #[test]
    fn push_and_split_round_trip() {
        let p = push("/spec", "a/b");
        assert_eq!(p, "/spec/a~1b");
        assert_eq!(split_last(&p), Some(("/spec", "a/b".to_string())));
        assert_eq!(tokens(&p), vec!["spec".to_string(), "a/b".to_string()]);
    }

    #[test]
    fn under() {
        assert!(is_under("/spec/a", "/spec"));
        assert!(is_under("/spec", "/spec"));
        assert!(!is_under("/specx", "/spec"));
        assert!(!is_under("/metadata", "/spec"));
    }
}
