//! DNS-1123 normalisation, when a `pattern` or a CEL `matches()` rule asks for a DNS-1123
//! name. Conservative: case, surrounding whitespace, quotes and separators, and `_`/space (and `.`
//! for labels) as `-`; a value with other characters inside, too long, or prose (more words
//! than a name has), is left alone, because dropping or cutting characters, or joining a
//! sentence's words, would name a different object.

/// Does this pattern / rule ask for a DNS-1123 label or subdomain? Lower case letters, digits
/// and no upper case, as Kubernetes names objects; a pattern that also takes `_` is another
/// system's identifier (a plugin ID: `grafana-postgresql-datasource`, `postgres`), whose case
/// may be all there is of its spelling, so lower-casing a product name there names nothing.
pub fn asks_for_dns(text: &str) -> bool {
    text.contains("a-z0-9") && !text.contains("A-Z") && !text.contains('_')
}

/// Subdomains allow dots; labels do not.
pub fn allows_dots(text: &str) -> bool {
    text.contains("\\.") || text.contains("[.]")
}

/// The DNS-1123 spelling of `value`, or `None` when there is none without losing
/// information (or it would not change anything).
pub fn normalise(value: &str, dots: bool, max_len: usize) -> Option<String> {
    // Only quotes and stray separators around the name; any other mark (`${...}`, `<...>`,
    // brackets) says the text is something else than a name. A mark that starts a name is
    // meaning, not a stray separator: `.shop.example.com` is a domain and its subdomains
    // (nginx, cookies, `no_proxy`), `_http._tcp` a service record, `-x` a flag or an exclusion;
    // only a list item's `- ` before it is syntax.
    let value_start = value.trim_start();
    let value_start = value_start
        .strip_prefix("- ")
        .map_or(value_start, str::trim_start);
    let unquoted =
        value_start.trim_start_matches(|c: char| c.is_whitespace() || "\"'`".contains(c));
    let mut chars = unquoted.chars();
    if chars
        .next()
        .is_some_and(|m| crate::text::NAME_MARKS.contains(&m))
        && chars.next().is_some_and(char::is_alphanumeric)
    {
        return None;
    }
    let trimmed = value_start
        .trim_start_matches(|c: char| c.is_whitespace() || "\"'`,;:".contains(c))
        .trim_end_matches(|c: char| c.is_whitespace() || "\"'`-_.,;:".contains(c));
    if trimmed.starts_with(crate::text::NAME_MARKS) {
        return None;
    }
    // Prose is no name written with blanks: joining a sentence's words names nothing the user
    // named (`"the new name from ticket PAY-1432"`).
    if trimmed.split_whitespace().count() > crate::text::MAX_VALUE_WORDS {
        return None;
    }
    let mut out = String::with_capacity(trimmed.len());
    for c in trimmed.chars() {
        match c {
            'a'..='z' | '0'..='9' | '-' => out.push(c),
            'A'..='Z' => out.push(c.to_ascii_lowercase()),
            '.' if dots => out.push('.'),
            '.' | '_' | ' ' => out.push('-'),
            _ => return None,
        }
    }
    if out.is_empty() || out.len() > max_len || out == value {
        return None;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const LABEL: &str = r#"self.matches("^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")"#;
    const SUBDOMAIN: &str =
        r#"self.matches("^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")"#;

    #[test]
    fn recognises_dns_rules() {
        assert!(asks_for_dns(LABEL) && !allows_dots(LABEL));
        assert!(asks_for_dns(SUBDOMAIN) && allows_dots(SUBDOMAIN));
        assert!(asks_for_dns("^[a-z][a-z0-9-]*$"));
        assert!(!asks_for_dns("^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$"));
        assert!(!asks_for_dns("self.size() > 2"));
        // Another system's identifier, which takes `_`.
        assert!(!asks_for_dns("^[a-z0-9]+([._-][a-z0-9]+)*$"));
    }

    #[test]
    fn normalises() {
        assert_eq!(normalise("ArgoCD", false, 63).as_deref(), Some("argocd"));
        assert_eq!(normalise(" My_App ", false, 63).as_deref(), Some("my-app"));
        assert_eq!(normalise("a.b", false, 63).as_deref(), Some("a-b"));
        assert_eq!(normalise("A.b", true, 253).as_deref(), Some("a.b"));
        assert_eq!(normalise("- stable-", true, 253).as_deref(), Some("stable"));
        assert_eq!(normalise("\"alpha\"", true, 253).as_deref(), Some("alpha"));
    }

    #[test]
    fn refuses_lossy_or_useless_changes() {
        assert_eq!(normalise("argocd", false, 63), None);
        assert_eq!(normalise("alpha,beta", true, 253), None);
        assert_eq!(normalise("café", true, 253), None);
        // A mark that starts a name is meaning: the domain and its subdomains, a flag.
        assert_eq!(normalise(".shop.example.com", true, 253), None);
        assert_eq!(normalise("-stable", true, 253), None);
        assert_eq!(normalise("_http._tcp", true, 253), None);
        assert_eq!(normalise(":authority", true, 253), None);
        assert_eq!(normalise("@daily", false, 63), None);
        assert_eq!(normalise("!!!", true, 253), None);
        assert_eq!(normalise("${STOREFRONT_HOST}", true, 253), None);
        assert_eq!(normalise("<my-app>", false, 63), None);
        assert_eq!(normalise(&"A".repeat(64), false, 63), None);
        assert_eq!(
            normalise("payments db creds", false, 63).as_deref(),
            Some("payments-db-creds")
        );
        assert_eq!(
            normalise("the new name from ticket PAY-1432", true, 253),
            None
        );
    }
}
