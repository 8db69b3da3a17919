//! Compiles the patterns of `src/validation/precompiled_patterns.txt` into DFAs, serialised
//! into `OUT_DIR`, with the table `src/validation/regex.rs` includes: a pattern many CRDs share
//! then costs a load, not a compile, in every fresh instance.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::{env, fs};

use regex_automata::dfa::{dense, StartKind};
use regex_automata::nfa::thompson;
use regex_automata::util::syntax;

const LIST: &str = "src/validation/precompiled_patterns.txt";

fn main() {
    println!("cargo:rerun-if-changed={LIST}");
    println!("cargo:rerun-if-changed=build.rs");
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let list = fs::read_to_string(LIST).unwrap_or_else(|e| panic!("{LIST}: {e}"));
    let patterns: Vec<&str> = list
        .lines()
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .collect();
    // A dense DFA is read in place as `u32`s, so its bytes need that alignment.
    let mut table = String::from("#[repr(C, align(4))]\npub struct Aligned<T: ?Sized>(pub T);\n");
    let mut entries = String::new();
    for (i, pattern) in patterns.iter().enumerate() {
        // ASCII classes, as regex-lite reads them; a pattern that needs Unicode (`.`, a
        // negated class) cannot be built in this mode and stops the build here.
        let dfa = dense::Builder::new()
            .syntax(syntax::Config::new().unicode(false))
            .thompson(thompson::Config::new().which_captures(thompson::WhichCaptures::None))
            .configure(
                dense::Config::new()
                    .minimize(true)
                    .start_kind(StartKind::Unanchored),
            )
            .build(pattern)
            .unwrap_or_else(|e| panic!("{LIST}: {pattern:?}: {e}"));
        let (bytes, padding) = dfa.to_bytes_little_endian();
        let bytes = &bytes[padding..];
        let file = out.join(format!("pattern{i}.dfa"));
        fs::write(&file, bytes).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        writeln!(
            table,
            "static PATTERN{i}: Aligned<[u8; {}]> = Aligned(*include_bytes!({:?}));",
            bytes.len(),
            file.display().to_string()
        )
        .expect("writing to a String");
        writeln!(entries, "    ({pattern:?}, &PATTERN{i}.0),").expect("writing to a String");
    }
    writeln!(
        table,
        "pub const COUNT: usize = {};\npub static PRECOMPILED: [(&str, &[u8]); COUNT] = [\n{entries}];",
        patterns.len()
    )
    .expect("writing to a String");
    fs::write(out.join("precompiled_patterns.rs"), table).expect("writing the pattern table");
}
