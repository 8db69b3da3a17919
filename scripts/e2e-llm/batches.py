#!/usr/bin/env python3
"""Per-batch summary of a `make e2e-llm` results file (the runner's --json-out): for each batch
(the case file's letter prefix; h* hostile cases go with their batch), how many cases were right
by fix, right by suggestion (the expected change proposed), rightly rejected with no fix
proposed, rejected as expected but proposing a fix the case says does not exist (a guess put
before the user: not right, not wrong), refused with another proposal, refused without one, and
WRONG (a stored fix that misses its expectation).

    python3 scripts/e2e-llm/batches.py target/e2e-llm/results.json [--markdown]
"""
import json
import re
import sys

WRONG = {"wrong-fix", "accepted-invalid", "unclean-rejection"}


def batch(file):
    m = re.match(r"h?([a-z]*)\d", file)
    letters = m.group(1) if m else ""
    return letters or "ClusterExtension (01-18, h1-h5)"


def main():
    path = sys.argv[1]
    markdown = "--markdown" in sys.argv
    with open(path) as fh:
        data = json.load(fh)
    rows = {}
    for r in data["cases"]:
        b = batch(r["file"])
        row = rows.setdefault(b, {"cases": 0, "fix": 0, "suggested": 0, "rejected": 0,
                                  "proposing": 0, "other": 0, "refused": 0, "wrong": 0,
                                  "error": 0})
        row["cases"] += 1
        v = r["verdict"]
        if v == "pass" and r["outcome"] == "fixed":
            row["fix"] += 1
        elif v == "rejected-proposing" or (v == "pass" and r["outcome"] == "suggested"):
            # Results written before the runner had its own verdict for it: the same reading.
            row["proposing"] += 1
        elif v == "pass":
            row["rejected"] += 1
        elif v == "suggested":
            row["suggested"] += 1
        elif v == "suggested-other":
            row["other"] += 1
        elif v in ("model-failed-rejected-cleanly", "llm-unavailable"):
            row["refused"] += 1
        elif v in WRONG:
            row["wrong"] += 1
        else:
            row["error"] += 1
    total = {k: sum(r[k] for r in rows.values()) for k in next(iter(rows.values()))}
    rows["all"] = total
    head = ["batch", "cases", "right", "by fix", "by suggestion", "rightly rejected",
            "rejected, proposing a guess", "other proposal", "refused", "WRONG", "bad/error"]
    out = []
    for b, r in rows.items():
        right = r["fix"] + r["suggested"] + r["rejected"]
        out.append([b, r["cases"], f"{right} ({100 * right // max(r['cases'], 1)} %)", r["fix"],
                    r["suggested"], r["rejected"], r["proposing"], r["other"], r["refused"],
                    r["wrong"], r["error"]])
    if markdown:
        print("| " + " | ".join(head) + " |")
        print("|" + " --- |" * len(head))
        for o in out:
            print("| " + " | ".join(str(x) for x in o) + " |")
    else:
        for o in [head] + out:
            print("  ".join(f"{str(x):>16}" for x in o))
    return 0


if __name__ == "__main__":
    sys.exit(main())
