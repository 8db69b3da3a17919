#!/usr/bin/env python3
"""Check one `kwctl run` output (an AdmissionResponse) against a case's expect.json.

    check.py REQUEST.json EXPECT.json OUTPUT.json

kwctl prints what policy-server would send back to the API server: `allowed`, `patchType` and
a base64 JSON Patch (computed from the policy's mutated_object), `warnings`, `status.message`.
The patch is applied to the request's object here, and the expectations are checked on the
result. Standard library only.
"""
import base64
import copy
import json
import sys


def unescape(token):
    return token.replace("~1", "/").replace("~0", "~")


def split(pointer):
    if pointer == "":
        return []
    if not pointer.startswith("/"):
        raise ValueError(f"bad JSON pointer {pointer!r}")
    return [unescape(t) for t in pointer[1:].split("/")]


def resolve(doc, pointer):
    """(found, value)"""
    cur = doc
    for token in split(pointer):
        if isinstance(cur, dict) and token in cur:
            cur = cur[token]
        elif isinstance(cur, list) and token.isdigit() and int(token) < len(cur):
            cur = cur[int(token)]
        else:
            return False, None
    return True, cur


def parent(doc, pointer):
    tokens = split(pointer)
    found, container = resolve(doc, "".join("/" + t.replace("~", "~0").replace("/", "~1") for t in tokens[:-1]))
    if not found:
        raise ValueError(f"patch path {pointer!r} has no parent")
    return container, tokens[-1]


def apply_patch(doc, ops):
    doc = copy.deepcopy(doc)
    for op in ops:
        kind, path = op["op"], op["path"]
        if kind in ("move", "copy"):
            found, value = resolve(doc, op["from"])
            if not found:
                raise ValueError(f"{kind} from missing {op['from']!r}")
            value = copy.deepcopy(value)
            if kind == "move":
                apply_patch_in_place(doc, {"op": "remove", "path": op["from"]})
            apply_patch_in_place(doc, {"op": "add", "path": path, "value": value})
        elif kind == "test":
            found, value = resolve(doc, path)
            if not found or value != op["value"]:
                raise ValueError(f"test failed at {path!r}")
        else:
            apply_patch_in_place(doc, op)
    return doc


def apply_patch_in_place(doc, op):
    container, key = parent(doc, op["path"])
    if isinstance(container, list):
        index = len(container) if key == "-" else int(key)
        if op["op"] == "add":
            container.insert(index, op["value"])
        elif op["op"] == "remove":
            del container[index]
        else:
            container[index] = op["value"]
    else:
        if op["op"] == "remove":
            del container[key]
        elif op["op"] == "replace" and key not in container:
            raise ValueError(f"replace of missing {op['path']!r}")
        else:
            container[key] = op["value"]


def main():
    request_path, expect_path, output_path = sys.argv[1:4]
    with open(request_path) as f:
        review = json.load(f)
    request = review.get("request", review)
    with open(expect_path) as f:
        expect = json.load(f)
    with open(output_path) as f:
        text = f.read()
    # kwctl prints the response as the last JSON document on stdout.
    start = text.find("{")
    if start < 0:
        sys.exit(f"no JSON in kwctl output: {text!r}")
    response = json.loads(text[start:])

    failures = []
    allowed = response.get("allowed")
    if allowed != expect["allowed"]:
        failures.append(f"allowed is {allowed}, expected {expect['allowed']}")
    patch = response.get("patch")
    mutated = patch is not None
    if mutated != expect.get("mutated", mutated):
        failures.append(f"mutated is {mutated}, expected {expect['mutated']}")
    obj = request["object"]
    if patch is not None:
        if response.get("patchType") != "JSONPatch":
            failures.append(f"patchType is {response.get('patchType')!r}")
        ops = json.loads(base64.b64decode(patch))
        obj = apply_patch(obj, ops)
        for key in ("apiVersion", "kind"):
            if obj.get(key) != request["object"].get(key):
                failures.append(f"{key} changed")
    for pointer, value in expect.get("equals", {}).items():
        found, actual = resolve(obj, pointer)
        if not found or actual != value:
            failures.append(f"{pointer} is {actual!r}, expected {value!r}")
    warnings = response.get("warnings") or []
    for word in expect.get("warningsContain", []):
        if not any(word in w for w in warnings):
            failures.append(f"no warning mentions {word!r}: {warnings}")
    if mutated and not warnings:
        failures.append("the object was changed but no warning reports it")
    message = (response.get("status") or {}).get("message") or ""
    for word in expect.get("messageContains", []):
        if word not in message:
            failures.append(f"message does not mention {word!r}: {message!r}")
    if failures:
        print("\n".join("  - " + f for f in failures))
        sys.exit(1)


if __name__ == "__main__":
    main()
