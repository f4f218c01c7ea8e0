"""Validate deploy/k8s/*.yaml against the published schemas vendored in
host/tests/peers/schemas/ (the agent-sandbox CRD; the Kubernetes v1.37
schemas, strict), and check what the sidecar needs of its pod.

Usage: k8s_validate.py WORKSPACE. Exits non-zero with the reason on any
failure; prints one line per document validated.
"""

import copy
import glob
import json
import os
import sys

import yaml
from jsonschema import Draft202012Validator, Draft7Validator
from referencing import Registry, Resource

KUBERNETES = {
    "Deployment": "deployment-apps-v1.json",
    "Pod": "pod-v1.json",
    "NetworkPolicy": "networkpolicy-networking-v1.json",
}
CRDS = {"SandboxTemplate": "agent-sandbox/extensions.agents.x-k8s.io_sandboxtemplates.yaml"}


def strict(node):
    """An OpenAPI schema of a CRD, refusing fields it does not name (as
    the API server prunes them: a misspelt field would silently vanish)."""
    if isinstance(node, dict):
        if (
            "properties" in node
            and "additionalProperties" not in node
            and not node.get("x-kubernetes-preserve-unknown-fields")
        ):
            node["additionalProperties"] = False
        for value in node.values():
            strict(value)
    elif isinstance(node, list):
        for value in node:
            strict(value)


def validators(schemas):
    base = os.path.join(schemas, "kubernetes")
    resources = []
    loaded = {}
    for name in os.listdir(base):
        if name.endswith(".json"):
            with open(os.path.join(base, name)) as f:
                schema = json.load(f)
            loaded[name] = schema
            resources.append((schema["$id"], Resource.from_contents(schema)))
    registry = Registry().with_resources(resources)
    found = {
        kind: Draft202012Validator(loaded[file], registry=registry)
        for kind, file in KUBERNETES.items()
    }
    for kind, file in CRDS.items():
        with open(os.path.join(schemas, file)) as f:
            crd = yaml.safe_load(f)
        for version in crd["spec"]["versions"]:
            schema = copy.deepcopy(version["schema"]["openAPIV3Schema"])
            strict(schema)
            api = f"{crd['spec']['group']}/{version['name']}"
            found[(kind, api)] = Draft7Validator(schema)
    return found


def fail(message):
    print(message, file=sys.stderr)
    sys.exit(1)


def pod_spec(doc):
    if doc["kind"] == "Deployment":
        return doc["spec"]["template"]["spec"]
    if doc["kind"] == "SandboxTemplate":
        return doc["spec"]["podTemplate"]["spec"]
    if doc["kind"] == "Pod":
        return doc["spec"]
    return None


def quantity(text):
    """A Kubernetes quantity in bytes (the binary suffixes)."""
    for suffix, factor in [("Ki", 1 << 10), ("Mi", 1 << 20), ("Gi", 1 << 30), ("Ti", 1 << 40)]:
        if text.endswith(suffix):
            return int(text[: -len(suffix)]) * factor
    return int(text)


def check_policy(name, policy):
    """Ingress only to the probe port, and only from the scraper's pods."""
    for rule in policy.get("ingress", []):
        ports = [p.get("port") for p in rule.get("ports", [])]
        if ports != [9090]:
            fail(f"{name}: ingress must admit only the probe port 9090, not {ports}")
        for peer in rule.get("from", []):
            if "podSelector" not in peer:
                fail(f"{name}: ingress from a whole namespace; name the scraper's pods")


def check_sidecar(name, spec, claims):
    containers = {c["name"]: c for c in spec["containers"]}
    tool = containers.get("write-tool") or fail(f"{name}: no write-tool container")
    context = tool.get("securityContext", {})
    for key, want in [
        ("runAsNonRoot", True),
        ("allowPrivilegeEscalation", False),
        ("readOnlyRootFilesystem", True),
    ]:
        if context.get(key) is not want:
            fail(f"{name}: write-tool securityContext.{key} must be {want}")
    if context.get("capabilities", {}).get("drop") != ["ALL"]:
        fail(f"{name}: write-tool must drop all capabilities")
    if context.get("runAsUser", 0) == 0:
        fail(f"{name}: write-tool must run as a non-root uid")
    resources = tool.get("resources", {})
    if not {"cpu", "memory"} <= set(resources.get("requests", {})):
        fail(f"{name}: write-tool needs cpu and memory requests")
    if "memory" not in resources.get("limits", {}):
        fail(f"{name}: write-tool needs a memory limit")
    ports = {p.get("name"): p["containerPort"] for p in tool.get("ports", [])}
    for probe, path in [("livenessProbe", "/healthz"), ("readinessProbe", "/readyz")]:
        get = tool.get(probe, {}).get("httpGet") or fail(f"{name}: write-tool {probe}")
        port = ports.get(get["port"], get["port"])
        if get["path"] != path or port != 9090:
            fail(f"{name}: write-tool {probe} must GET {path} on the probe port 9090")
    args = tool.get("args", [])
    listen = args[args.index("--ws") + 1] if "--ws" in args else fail(f"{name}: --ws")
    # The port that writes stays inside the pod: loopback, not published.
    if listen != "127.0.0.1:8080" or "--ws-allow-remote" in args:
        fail(f"{name}: write-tool must serve on 127.0.0.1:8080 only, not {listen}")
    if 8080 in ports.values():
        fail(f"{name}: the port that writes must not be published")
    # Every process of the pod reaches loopback: the port asks for the
    # token of a Secret mounted where the flag says.
    token = args[args.index("--ws-token-file") + 1] if "--ws-token-file" in args else fail(
        f"{name}: write-tool must ask for a token (--ws-token-file)")
    mounts = {m["name"]: m["mountPath"] for m in tool.get("volumeMounts", [])}
    secrets = {v["name"] for v in spec.get("volumes", []) if "secret" in v}
    if not any(token.startswith(mounts.get(v, "//") + "/") for v in secrets):
        fail(f"{name}: the token file {token} must be on a mounted Secret")
    # Not where the model's commands run: a token they can read is none.
    for other in spec.get("containers", []):
        if other is not tool and any(m["name"] in secrets for m in other.get("volumeMounts", [])):
            fail(f"{name}: the port's token must not be mounted in {other['name']}")
    probes = args[args.index("--probe-listen") + 1] if "--probe-listen" in args else fail(
        f"{name}: --probe-listen")
    if not probes.endswith(":9090"):
        fail(f"{name}: probes must listen on 9090, not {probes}")
    # The journal's bound below the volume's size limit, so that the
    # bound drops old changes before the kubelet evicts the pod.
    volumes = {v["name"]: v for v in spec.get("volumes", [])}
    # The workspace and the journal outlive the pod (a suspended sandbox's
    # pod is deleted, its claims kept): claims, not emptyDirs.
    for volume in ("workspace", "journal"):
        if volume not in claims and "persistentVolumeClaim" not in volumes.get(volume, {}):
            fail(f"{name}: the {volume} must be on a claim that outlives the pod")
    limit = claims.get("journal") or volumes.get("journal", {}).get("emptyDir", {}).get("sizeLimit")
    if limit is not None:
        bound = int(args[args.index("--journal-max-bytes") + 1]) if "--journal-max-bytes" in args \
            else fail(f"{name}: --journal-max-bytes below the journal volume's sizeLimit")
        if bound > quantity(limit) * 0.8:
            fail(f"{name}: --journal-max-bytes {bound} leaves no room below sizeLimit {limit}")
    mounts = {m["name"]: m["mountPath"] for m in tool.get("volumeMounts", [])}
    root = args[args.index("--root") + 1]
    journal = args[args.index("--journal") + 1]
    if mounts.get("workspace") != root or mounts.get("journal") != journal:
        fail(f"{name}: the workspace and journal volumes at --root and --journal")
    for other in containers.values():
        if other is not tool and any(m["name"] == "journal" for m in other.get("volumeMounts", [])):
            fail(f"{name}: only the sidecar mounts the journal")
    if spec.get("terminationGracePeriodSeconds", 30) <= 30:
        fail(f"{name}: the grace period must outlast a call (30 s) for the drain")


def main(workspace):
    schemas = os.path.join(workspace, "host/tests/peers/schemas")
    found = validators(schemas)
    count = 0
    for path in sorted(glob.glob(os.path.join(workspace, "deploy/k8s/*.yaml"))):
        with open(path) as f:
            docs = [d for d in yaml.safe_load_all(f) if d]
        for doc in docs:
            name = f"{os.path.basename(path)}: {doc['kind']} {doc['metadata']['name']}"
            validator = found.get((doc["kind"], doc["apiVersion"])) or found.get(doc["kind"])
            if validator is None:
                fail(f"{name}: no schema for {doc['apiVersion']} {doc['kind']}")
            errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.path))
            if errors:
                fail(f"{name}: " + "; ".join(f"{list(e.path)}: {e.message}" for e in errors[:5]))
            # The validation is strict: a misspelt field is refused.
            typo = copy.deepcopy(doc)
            typo["spec"]["replicaz"] = 1
            if not list(validator.iter_errors(typo)):
                fail(f"{name}: the schema let an unknown field through")
            spec = pod_spec(doc)
            if spec is not None:
                claims = {
                    c["metadata"]["name"]: c["spec"]["resources"]["requests"]["storage"]
                    for c in doc["spec"].get("volumeClaimTemplates", [])
                }
                check_sidecar(name, spec, claims)
            if doc["kind"] == "NetworkPolicy":
                check_policy(name, doc["spec"])
            if doc["kind"] == "SandboxTemplate":
                check_policy(name, doc["spec"].get("networkPolicy", {}))
            print(f"validated {name}")
            count += 1
    if count == 0:
        fail("no manifests found")


if __name__ == "__main__":
    main(sys.argv[1])
