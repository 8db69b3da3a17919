//! Regular expressions: schema `pattern`s and CEL's `matches`, `find` and `findAll`.
//!
//! One cache of compiled regular expressions per instance (= per evaluation in wasm), so a
//! pattern is compiled by regex-lite on every request that reaches it. The patterns many CRDs
//! share (`precompiled_patterns.txt`) are compiled at build time into DFAs (`build.rs`): for
//! them [`is_match`] loads the DFA instead (a check of its bytes, no compile). The DFAs answer
//! matching only; `find`/`findAll` compile with regex-lite.

use std::cell::{OnceCell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;

use regex_automata::dfa::{dense, Automaton};
use regex_automata::Input;

/// Most distinct regular expressions kept compiled at once.
const MAX_CACHED_REGEXES: usize = 512;

mod table {
    include!(concat!(env!("OUT_DIR"), "/precompiled_patterns.rs"));
}

type Compiled = Result<Rc<regex_lite::Regex>, String>;

type Dfa = dense::DFA<&'static [u32]>;

thread_local! {
    static CACHE: RefCell<HashMap<String, Compiled>> = RefCell::new(HashMap::new());
    /// The precompiled DFAs loaded so far, by their index in the table (`None`: its bytes were
    /// refused, e.g. on a big-endian host; regex-lite then compiles the pattern).
    static LOADED: [OnceCell<Option<Dfa>>; table::COUNT] =
        const { [const { OnceCell::new() }; table::COUNT] };
}

/// Whether `text` matches `pattern` anywhere (CEL's `matches`, a schema's `pattern`).
pub fn is_match(pattern: &str, text: &str) -> Result<bool, String> {
    if let Some(dfa) = precompiled(pattern) {
        // A DFA built without quit bytes or look-around gives no error; were it to,
        // regex-lite answers instead.
        if let Ok(found) = dfa.try_search_fwd(&Input::new(text).earliest(true)) {
            return Ok(found.is_some());
        }
    }
    get(pattern).map(|re| re.is_match(text))
}

/// The DFA built for `pattern` at build time, if it is one of the precompiled patterns.
fn precompiled(pattern: &str) -> Option<Dfa> {
    let index = table::PRECOMPILED
        .iter()
        .position(|(known, _)| *known == pattern)?;
    LOADED.with(|loaded| {
        loaded[index]
            .get_or_init(|| load(table::PRECOMPILED[index].1))
            .clone()
    })
}

/// A DFA from the bytes `build.rs` wrote. Checking the bytes walks every transition of the
/// table (3 % of a valid ClusterExtension's evaluation, for its semver range); they come from
/// this crate's build, written by the same regex-automata, little-endian: on a little-endian
/// target they are loaded unchecked, elsewhere checked (and refused).
fn load(bytes: &'static [u8]) -> Option<Dfa> {
    if cfg!(target_endian = "little") {
        // SAFETY: `bytes` are `to_bytes_little_endian` of a DFA built by build.rs with the
        // regex-automata this crate links (Cargo.lock holds one 0.4 for both), 4-aligned by
        // the table's `Aligned` wrapper, and this target is little-endian.
        unsafe { dense::DFA::from_bytes_unchecked(bytes) }
            .ok()
            .map(|(dfa, _)| dfa)
    } else {
        dense::DFA::from_bytes(bytes).ok().map(|(dfa, _)| dfa)
    }
}

#[cfg(test)]
pub fn clear() {
    CACHE.with(|cache| cache.borrow_mut().clear());
}

/// `pattern` with its capturing groups made non-capturing. Only matching is ever asked
/// of these regexes, and regex-lite's matcher allocates per state and capture slot: for a
/// large pattern with many groups (a semver range) that is most of a millisecond.
pub fn without_captures(pattern: &str) -> std::borrow::Cow<'_, str> {
    if !pattern.contains('(') {
        return std::borrow::Cow::Borrowed(pattern);
    }
    // Every byte that matters is ASCII, so a byte index after one is a char boundary;
    // the text between insertions is copied in runs.
    let bytes = pattern.as_bytes();
    let mut out = String::with_capacity(pattern.len() + 16);
    let mut copied = 0;
    let mut in_class = false;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            // The escaped character (its first byte; any others are not ASCII).
            b'\\' => i += 1,
            b'[' if !in_class => {
                in_class = true;
                // A `]` right after `[` or `[^` is a literal.
                if bytes.get(i + 1) == Some(&b'^') {
                    i += 1;
                }
                if bytes.get(i + 1) == Some(&b']') {
                    i += 1;
                }
            }
            // A POSIX class `[:alpha:]` inside a class.
            b'[' if bytes.get(i + 1) == Some(&b':') => {
                i += bytes[i..]
                    .iter()
                    .position(|&b| b == b']')
                    .unwrap_or(bytes.len() - i);
            }
            b']' if in_class => in_class = false,
            b'(' if !in_class && bytes.get(i + 1) != Some(&b'?') => {
                out.push_str(&pattern[copied..=i]);
                out.push_str("?:");
                copied = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    out.push_str(&pattern[copied..]);
    std::borrow::Cow::Owned(out)
}

/// The compiled `pattern`, or why `regex-lite` cannot compile it.
pub fn get(pattern: &str) -> Compiled {
    CACHE.with(|cache| {
        if let Some(hit) = cache.borrow().get(pattern) {
            return hit.clone();
        }
        let compiled = regex_lite::Regex::new(&without_captures(pattern))
            .map(Rc::new)
            .map_err(|e| e.to_string());
        let mut cache = cache.borrow_mut();
        if cache.len() >= MAX_CACHED_REGEXES {
            cache.clear();
        }
        cache.insert(pattern.to_string(), compiled.clone());
        compiled
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Strings over the characters the precompiled patterns care about (and a few they do
    /// not, a non-ASCII one among them), from a fixed-seed generator.
    fn samples() -> Vec<String> {
        const CHARS: &[char] = &[
            'a', 'z', 'A', 'Z', 'v', 'x', 'X', 'y', 'w', 'd', 'h', 'm', 's', 'i', 'K', 'M', 'G',
            'e', 'E', '0', '1', '2', '9', '-', '.', '_', ',', ':', '/', '*', '+', '^', '~', '<',
            '>', '=', '!', ' ', '|', '\n', '\u{e9}',
        ];
        let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut out: Vec<String> = [
            "",
            "a",
            "my-app",
            "a.b-c.d",
            "-a",
            "a-",
            "Ab",
            "example.com/ready",
            "Ready",
            "a,b:c_d",
            "500Mi",
            "1.5",
            "+1e3",
            "2Gi",
            "1h30m",
            "10ms",
            "1.5h",
            "0",
            "1d12h",
            "*.example.com",
            "example.com",
            "1.2.3",
            ">=1.2.3, <2.0.0",
            "1.2.3 - 1.4.x",
            "~1.2",
            "^1.2.3-rc.1+build.5",
            "v1.x || >=2",
            " 1.2",
            "1.2.3.4",
            "01.2",
        ]
        .map(String::from)
        .to_vec();
        for _ in 0..4000 {
            let len = (next() % 16) as usize;
            out.push(
                (0..len)
                    .map(|_| CHARS[(next() % CHARS.len() as u64) as usize])
                    .collect(),
            );
        }
        out
    }

    #[test]
    fn every_precompiled_pattern_loads_and_agrees_with_regex_lite() {
        let samples = samples();
        assert!(!table::PRECOMPILED.is_empty());
        for (pattern, bytes) in table::PRECOMPILED {
            // What `load` takes unchecked passes the check.
            assert!(dense::DFA::from_bytes(bytes).is_ok(), "{pattern}");
            assert!(precompiled(pattern).is_some(), "{pattern}");
            let lite = regex_lite::Regex::new(pattern).unwrap();
            let mut matched = 0;
            for text in &samples {
                let expected = lite.is_match(text);
                assert_eq!(
                    is_match(pattern, text),
                    Ok(expected),
                    "{pattern} on {text:?}"
                );
                matched += usize::from(expected);
            }
            // The comparison means something only where both answers occur.
            assert!(
                matched > 0 && matched < samples.len(),
                "{pattern}: {matched}"
            );
        }
    }

    #[test]
    fn other_patterns_are_compiled() {
        assert!(precompiled("^[a-z]+$").is_none());
        assert_eq!(is_match("^[a-z]+$", "abc"), Ok(true));
        assert_eq!(is_match("^[a-z]+$", "ab1"), Ok(false));
        assert!(is_match("(", "x").is_err());
    }

    #[test]
    fn the_precompiled_list_is_the_table() {
        let list = include_str!("precompiled_patterns.txt");
        let listed: Vec<&str> = list
            .lines()
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .collect();
        let built: Vec<&str> = table::PRECOMPILED.iter().map(|(p, _)| *p).collect();
        assert_eq!(listed, built);
    }
}
