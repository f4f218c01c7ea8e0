#!/usr/bin/env python3
"""Vendor the Kubernetes schemas the deploy manifests' test needs.

From the `kubernetes-validate` wheel on PyPI (which packages the schemas of
https://github.com/yannh/kubernetes-json-schema), version v1.37.0,
`local-strict` flavour (unknown fields refused): the top-level schemas of
the kinds in `deploy/k8s/`, and the definitions they reach, trimmed from
`_definitions.json` to those (JSON Schema 2020-12; `$id`s as published).

Usage: pip download --no-deps kubernetes-validate==1.37.0 && unzip the
wheel, then extract.py UNZIPPED/kubernetes_validate/kubernetes-json-schema/v1.37.0-local-strict
"""

import json
import os
import sys

KINDS = ["deployment-apps-v1.json", "pod-v1.json", "networkpolicy-networking-v1.json"]


def refs(node, found):
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and "#/$defs/" in ref:
            found.add(ref.split("#/$defs/")[1])
        for value in node.values():
            refs(value, found)
    elif isinstance(node, list):
        for value in node:
            refs(value, found)


def main(source):
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(source, "_definitions.json")) as f:
        whole = json.load(f)
    definitions = whole["$defs"]
    wanted = set()
    for kind in KINDS:
        with open(os.path.join(source, kind)) as f:
            schema = json.load(f)
        refs(schema, wanted)
        with open(os.path.join(here, kind), "w") as f:
            json.dump(schema, f, indent=1, sort_keys=True)
            f.write("\n")
    done = set()
    while wanted - done:
        name = sorted(wanted - done)[0]
        done.add(name)
        refs(definitions[name], wanted)
    trimmed = {key: value for key, value in whole.items() if key != "$defs"}
    trimmed["$defs"] = {name: definitions[name] for name in sorted(done)}
    with open(os.path.join(here, "_definitions.json"), "w") as f:
        json.dump(trimmed, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main(sys.argv[1])
