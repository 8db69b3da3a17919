//! How `crfix fix` reports: text (a line per finding and a summary on stderr, the diff on
//! stdout), JSON, or SARIF 2.1.0 for code-scanning annotations on pull requests.

use std::io::Write;

use anyhow::Result;
use serde_json::{json, Value};

use crate::fix::{Finding, Report, Status};

/// `file:line: Kind/name: kind: message`.
pub fn finding_line(f: &Finding) -> String {
    format!(
        "{}:{}: {}: {}: {}",
        f.file, f.line, f.object, f.kind, f.message
    )
}

/// `crfix: 24 objects in 21 files: 12 valid, 5 fixed, 3 invalid, 4 not checked`.
pub fn summary(report: &Report, written: bool) -> String {
    let objects: usize = report.files.iter().map(|f| f.objects.len()).sum();
    let fixed = if written { "fixed" } else { "fixable" };
    let plural = |n: usize, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
    format!(
        "crfix: {} in {}: {} valid, {} {fixed}, {} invalid, {} not checked",
        plural(objects, "object"),
        plural(report.files.len(), "file"),
        report.count(Status::Valid),
        report.count(Status::Fixed),
        report.count(Status::Invalid),
        report.count(Status::NotChecked),
    )
}

pub fn json(report: &Report, out: &mut impl Write) -> Result<()> {
    serde_json::to_writer_pretty(&mut *out, report)?;
    writeln!(out)?;
    Ok(())
}

/// SARIF 2.1.0: one result per finding; invalid objects are errors, fixes warnings.
pub fn sarif(report: &Report, out: &mut impl Write) -> Result<()> {
    let rule = |id: &str, text: &str| json!({"id": id, "shortDescription": {"text": text}});
    let results: Vec<Value> = report
        .findings
        .iter()
        .map(|f| {
            let level = match f.kind {
                "fixed" | "reformatted" => "warning",
                "proposal" | "warning" | "not-checked" => "note",
                _ => "error",
            };
            json!({
                "ruleId": f.kind,
                "level": level,
                "message": {"text": format!("{}: {}", f.object, f.message)},
                "locations": [{
                    "physicalLocation": {
                        "artifactLocation": {"uri": f.file},
                        "region": {"startLine": f.line},
                    }
                }],
            })
        })
        .collect();
    let log = json!({
        "version": "2.1.0",
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "runs": [{
            "tool": {"driver": {
                "name": "crfix",
                "informationUri": "https://github.com/kubewarden",
                "rules": [
                    rule("invalid", "The object is invalid against its CRD"),
                    rule("fixed", "crfix fixes the object (crfix fix --write)"),
                    rule("proposal", "A fix crfix proposes but is not certain of"),
                    rule("not-written", "A fix that cannot be written keeping the layout"),
                    rule("reformatted", "A fix written by rewriting the whole document"),
                    rule("not-checked", "The object could not be checked against its CRD"),
                    rule("warning", "A warning of the check (e.g. a rule not evaluated)"),
                ],
            }},
            "results": results,
        }],
    });
    serde_json::to_writer_pretty(&mut *out, &log)?;
    writeln!(out)?;
    Ok(())
}
