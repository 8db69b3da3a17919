//! Picking the one allowed name (enum value, property name) a user's spelling stands for,
//! or refusing: when none is close, or when two are about as close (a guess would be a
//! hallucination).

/// Longer strings are never matched fuzzily (bounded time, and no sensible typo is that long).
const MAX_FUZZY_LEN: usize = 128;
/// Shorter spellings only match by case, whitespace and separators.
const MIN_FUZZY_LEN: usize = 3;

/// How a spelling matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Closeness {
    /// Equal once case, whitespace and separators (`-`, `_`, `.`) are ignored.
    Canonical,
    /// Within a small edit distance (optimal string alignment) of the canonical forms.
    Distance(usize),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pick<'a> {
    One(&'a str, Closeness),
    /// Two or more candidates are about as close.
    Ambiguous(Vec<&'a str>),
    NoneClose,
}

/// Lower case, without whitespace and the separators `-`, `_`, `.`.
pub fn canonical(s: &str) -> String {
    s.chars()
        .filter(|c| !c.is_whitespace() && !matches!(c, '-' | '_' | '.'))
        .flat_map(char::to_lowercase)
        .collect()
}

/// The largest edit distance accepted for a name of `len` characters. Two edits in a name of
/// five or six letters change a third of it: that is another name (`gitea` is no `gitlab`),
/// not a typo of one.
fn max_distance(len: usize) -> usize {
    match len {
        0..=6 => 1,
        7..=9 => 2,
        _ => 3,
    }
}

/// The one candidate `value` stands for.
pub fn pick<'a>(value: &str, candidates: &[&'a str]) -> Pick<'a> {
    if value.len() > MAX_FUZZY_LEN * 4 {
        return Pick::NoneClose;
    }
    let cv = canonical(value);
    if cv.is_empty() {
        return Pick::NoneClose;
    }
    let canon: Vec<String> = candidates.iter().map(|c| canonical(c)).collect();
    let exact: Vec<&'a str> = candidates
        .iter()
        .zip(&canon)
        .filter(|(_, c)| **c == cv)
        .map(|(name, _)| *name)
        .collect();
    match exact.len() {
        0 => {}
        1 => return Pick::One(exact[0], Closeness::Canonical),
        _ => return Pick::Ambiguous(exact),
    }
    let len = cv.chars().count();
    if !(MIN_FUZZY_LEN..=MAX_FUZZY_LEN).contains(&len) {
        return Pick::NoneClose;
    }
    let mut scored: Vec<(usize, &'a str, usize)> = candidates
        .iter()
        .zip(&canon)
        .filter(|(_, c)| !c.is_empty() && c.len() <= MAX_FUZZY_LEN * 4)
        .filter(|(name, _)| !a_word_replaced(value, name))
        .map(|(name, c)| (strsim::osa_distance(&cv, c), *name, c.chars().count()))
        .collect();
    scored.sort_by_key(|(d, _, _)| *d);
    let Some(&(best, name, clen)) = scored.first() else {
        return Pick::NoneClose;
    };
    if best > max_distance(len.min(clen)) || best >= clen {
        return Pick::NoneClose;
    }
    // Rivals: the others that are close in their own right and about as close.
    let rivals: Vec<&'a str> = scored
        .iter()
        .filter(|(d, _, l)| *d <= best + 1 && *d <= max_distance(len.min(*l)) && d < l)
        .map(|(_, n, _)| *n)
        .collect();
    if rivals.len() > 1 {
        return Pick::Ambiguous(rivals);
    }
    // A short name with one letter replaced is another name (`SMTP` is not `SCTP`, `GET` not
    // `SET`); two letters swapped, or one doubled or dropped, is a typo of it.
    if len.min(clen) <= SHORT_NAME && len == clen && !same_letters(&cv, &canonical(name)) {
        return Pick::NoneClose;
    }
    Pick::One(name, Closeness::Distance(best))
}

/// Names this short are not corrected by replacing a letter.
const SHORT_NAME: usize = 4;

/// The words of a name: split at separators and blanks, where a lower-case letter or digit
/// meets an upper-case one, and where an acronym ends (`OCIRepository` is `oci`, `repository`).
fn words(s: &str) -> Vec<String> {
    let chars: Vec<char> = s.chars().collect();
    let mut words: Vec<String> = Vec::new();
    let mut current = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if c.is_whitespace() || matches!(c, '-' | '_' | '.') {
            words.extend((!current.is_empty()).then(|| std::mem::take(&mut current)));
            continue;
        }
        let previous = i.checked_sub(1).map(|p| chars[p]);
        let next_lower = chars.get(i + 1).is_some_and(|n| n.is_lowercase());
        let boundary = c.is_uppercase()
            && previous.is_some_and(|p| {
                p.is_lowercase() || p.is_ascii_digit() || (p.is_uppercase() && next_lower)
            });
        if boundary && !current.is_empty() {
            words.push(std::mem::take(&mut current));
        }
        current.extend(c.to_lowercase());
    }
    words.extend((!current.is_empty()).then_some(current));
    words
}

/// Two names of the same number of words, one of which is replaced whole (`OCIRepository` is
/// no misspelling of `GitRepository`: a typo stays inside a word, another word is another name).
fn a_word_replaced(value: &str, name: &str) -> bool {
    let (a, b) = (words(value), words(name));
    a.len() > 1
        && a.len() == b.len()
        && a.iter().zip(&b).any(|(x, y)| {
            let shorter = x.chars().count().min(y.chars().count());
            x != y && strsim::osa_distance(x, y) >= shorter
        })
}

/// The same letters in another order.
fn same_letters(a: &str, b: &str) -> bool {
    let sorted = |s: &str| {
        let mut c: Vec<char> = s.chars().collect();
        c.sort_unstable();
        c
    };
    sorted(a) == sorted(b)
}

/// Same name up to case and separators, one a plural of the other, or one ending in the
/// other (`installNamespace` / `namespace`).
pub fn similar_name(a: &str, b: &str) -> bool {
    let (ca, cb) = (canonical(a), canonical(b));
    if ca.is_empty() || cb.is_empty() {
        return false;
    }
    ca == cb
        || format!("{ca}s") == cb
        || format!("{cb}s") == ca
        || (cb.len() >= 4 && ca.ends_with(&cb))
        || (ca.len() >= 4 && cb.ends_with(&ca))
}

/// Are two property names the same name, up to case, separators and a typo?
pub fn same_name(a: &str, b: &str) -> bool {
    a == b || matches!(pick(a, &[b]), Pick::One(..))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_matches_ignore_case_and_separators() {
        assert_eq!(
            pick("catalog", &["Catalog"]),
            Pick::One("Catalog", Closeness::Canonical)
        );
        assert_eq!(
            pick(" self_certified ", &["CatalogProvided", "SelfCertified"]),
            Pick::One("SelfCertified", Closeness::Canonical)
        );
        assert_eq!(
            pick("Foo", &["foo", "FOO"]),
            Pick::Ambiguous(vec!["foo", "FOO"])
        );
    }

    #[test]
    fn typos_match_the_unique_close_value() {
        assert_eq!(
            pick("Catalg", &["Catalog"]),
            Pick::One("Catalog", Closeness::Distance(1))
        );
        assert_eq!(
            pick("Strct", &["None", "Strict"]),
            Pick::One("Strict", Closeness::Distance(1))
        );
        assert_eq!(
            pick("gren", &["red", "green", "blue"]),
            Pick::One("green", Closeness::Distance(1))
        );
    }

    #[test]
    fn far_or_ambiguous_values_are_refused() {
        assert_eq!(pick("Image", &["Catalog"]), Pick::NoneClose);
        assert_eq!(pick("grey", &["red", "green", "blue"]), Pick::NoneClose);
        // Another product's name, two edits from an allowed one.
        assert_eq!(
            pick("gitea", &["github", "gitlab", "bitbucket", "generic"]),
            Pick::NoneClose
        );
        // A short name with a letter replaced is another name; swapped letters are a typo.
        assert_eq!(
            pick("SMTP", &["TCP", "UDP", "SCTP", "ANY"]),
            Pick::NoneClose
        );
        assert_eq!(pick("SET", &["GET", "POST"]), Pick::NoneClose);
        assert_eq!(
            pick("UPD", &["TCP", "UDP", "SCTP"]),
            Pick::One("UDP", Closeness::Distance(1))
        );
        assert_eq!(pick("", &["a"]), Pick::NoneClose);
        assert_eq!(pick("x", &["y"]), Pick::NoneClose);
        assert_eq!(
            pick("stepz", &["step", "steps"]),
            Pick::Ambiguous(vec!["step", "steps"])
        );
        // A whole word of the name replaced is another name, however long the rest.
        assert_eq!(pick("OCIRepository", &["GitRepository"]), Pick::NoneClose);
        assert_eq!(pick("oci-repository", &["GitRepository"]), Pick::NoneClose);
        assert_eq!(
            pick("GitRepositry", &["GitRepository"]),
            Pick::One("GitRepository", Closeness::Distance(1))
        );
        assert_eq!(
            words("OCIRepository v2_beta-x"),
            ["oci", "repository", "v2", "beta", "x"]
        );
        let long = "a".repeat(10_000);
        assert_eq!(pick(&long, &["a"]), Pick::NoneClose);
    }

    #[test]
    fn same_name_is_symmetric_enough() {
        assert!(same_name("serviceAccount", "serviceAccount"));
        assert!(same_name("serviceAcount", "serviceAccount"));
        assert!(same_name("service_account", "serviceAccount"));
        assert!(!same_name("owner", "serviceAccount"));
        assert!(!same_name("name", "namespace"));
    }
}
