//! The manifests `crfix fix` reads: files, directories and standard input, each split into its
//! YAML documents with their place in the file, and each document read as kubectl reads it
//! (merge keys applied).

use std::io::Read as _;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use serde_json::Value;

/// One input: a file, or standard input (`-`).
#[derive(Debug)]
pub struct Manifest {
    /// As the user named it (`-` for standard input); used in findings and diffs.
    pub name: String,
    /// The file to write back; none for standard input.
    pub path: Option<PathBuf>,
    pub text: String,
    pub documents: Vec<Document>,
}

/// One YAML document of a manifest: its bytes in the file and what it holds.
#[derive(Debug)]
pub struct Document {
    /// Byte range of the document in the manifest's text, its `---` line included.
    pub start: usize,
    pub end: usize,
    /// Line (0-based) of the manifest where the document's text begins.
    pub first_line: usize,
    /// The document read as JSON; `Null` for an empty document (comments only).
    pub value: Value,
}

impl Manifest {
    pub fn document_text(&self, document: &Document) -> &str {
        &self.text[document.start..document.end]
    }
}

/// YAML and JSON files named on the command line; directories are walked (sorted, hidden
/// entries skipped) for `*.yaml`, `*.yml` and `*.json`.
pub fn collect_paths(paths: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for path in paths {
        if path.as_os_str() == "-" {
            files.push(path.clone());
        } else if path.is_dir() {
            walk(path, &mut files)?;
        } else if path.exists() {
            files.push(path.clone());
        } else {
            bail!("{}: no such file or directory", path.display());
        }
    }
    Ok(files)
}

fn walk(dir: &Path, files: &mut Vec<PathBuf>) -> Result<()> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .map(|e| e.map(|e| e.path()))
        .collect::<std::io::Result<_>>()
        .with_context(|| format!("reading {}", dir.display()))?;
    entries.sort();
    for entry in entries {
        let hidden = entry
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with('.'));
        if hidden {
            continue;
        }
        if entry.is_dir() {
            walk(&entry, files)?;
        } else if is_manifest_file(&entry) {
            files.push(entry);
        }
    }
    Ok(())
}

fn is_manifest_file(path: &Path) -> bool {
    matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("yaml" | "yml" | "json")
    )
}

/// Reads and splits one input.
pub fn read(path: &Path) -> Result<Manifest> {
    let (name, file, text) = if path.as_os_str() == "-" {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .context("reading standard input")?;
        ("-".to_string(), None, text)
    } else {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        (path.display().to_string(), Some(path.to_path_buf()), text)
    };
    let documents = split(&text).with_context(|| name.clone())?;
    Ok(Manifest {
        name,
        path: file,
        text,
        documents,
    })
}

/// Splits a YAML stream at its `---` lines; each document keeps its own `---` line so that
/// its text, edited alone, is put back in place.
pub fn split(text: &str) -> Result<Vec<Document>> {
    let mut starts = vec![(0usize, 0usize)];
    let mut offset = 0;
    for (line_no, line) in text.split_inclusive('\n').enumerate() {
        if offset > 0 && is_document_start(line) {
            starts.push((offset, line_no));
        }
        offset += line.len();
    }
    let mut documents = Vec::with_capacity(starts.len());
    for (i, &(start, first_line)) in starts.iter().enumerate() {
        let end = starts.get(i + 1).map_or(text.len(), |&(s, _)| s);
        let value = parse(&text[start..end])
            .with_context(|| format!("the YAML document at line {}", first_line + 1))?;
        documents.push(Document {
            start,
            end,
            first_line,
            value,
        });
    }
    Ok(documents)
}

/// `---` alone on its line, or followed by a space, a tab or a comment.
fn is_document_start(line: &str) -> bool {
    let Some(rest) = line.strip_prefix("---") else {
        return false;
    };
    rest.is_empty() || rest.starts_with([' ', '\t', '\n', '\r', '#'])
}

/// One YAML document as JSON, the way kubectl reads it: merge keys (`<<: *anchor`) applied.
pub fn parse(text: &str) -> Result<Value> {
    let mut yaml: serde_yaml::Value = serde_yaml::from_str(text)?;
    yaml.apply_merge()?;
    let value: Value = serde_yaml::from_value(yaml)?;
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_at_document_lines_only() {
        let text = "# head\na: 1\n---\nb: |\n  ---x\n--- # c\nc: 3\n---\n";
        let docs = split(text).unwrap();
        let bodies: Vec<&str> = docs.iter().map(|d| &text[d.start..d.end]).collect();
        assert_eq!(
            bodies,
            [
                "# head\na: 1\n",
                "---\nb: |\n  ---x\n",
                "--- # c\nc: 3\n",
                "---\n"
            ]
        );
        assert_eq!(docs[2].first_line, 5);
        assert_eq!(docs[1].value["b"], "---x\n");
        assert_eq!(docs[3].value, Value::Null);
    }

    #[test]
    fn merge_keys_are_applied() {
        let value = parse("base: &b {x: 1}\nuse:\n  <<: *b\n  y: 2\n").unwrap();
        assert_eq!(value["use"], serde_json::json!({"x": 1, "y": 2}));
    }

    #[test]
    fn a_broken_document_names_its_line() {
        let err = split("a: 1\n---\nb: [\n").unwrap_err();
        assert!(format!("{err:#}").contains("line 2"), "{err:#}");
    }
}
