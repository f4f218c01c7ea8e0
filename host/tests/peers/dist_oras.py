"""Pull the write-tool artifact back with an independent OCI client (PyPI
`oras`) and check its cosign signature with another implementation of the
check (PyPI `cryptography`).

Usage: python dist_oras.py HOST:PORT REPO TAG SIGNATURE_TAG PUBLIC_KEY OUT

Prints the manifest's digest as the registry served it, writes every blob
into OUT named by its hex digest (each checked against its digest), and
says "signature verifies" once the signature over the simple-signing
payload checks with the key and names that manifest.
"""

import base64
import hashlib
import json
import os
import sys

import oras.client
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec

MANIFEST = "application/vnd.oci.image.manifest.v1+json"

addr, repo, tag, signature_tag, public_key, out = sys.argv[1:7]
client = oras.client.OrasClient(hostname=addr, insecure=True)


def manifest(reference):
    container = client.get_container(f"{addr}/{repo}:{reference}")
    response = client.do_request(
        f"http://{container.manifest_url()}", "GET", headers={"Accept": MANIFEST}
    )
    response.raise_for_status()
    body = response.content
    return "sha256:" + hashlib.sha256(body).hexdigest(), json.loads(body), container


def blob(container, descriptor):
    data = client.get_blob(container, descriptor["digest"]).content
    digest = "sha256:" + hashlib.sha256(data).hexdigest()
    assert digest == descriptor["digest"], f"{descriptor['digest']} served as {digest}"
    assert len(data) == descriptor["size"], descriptor
    return data


digest, parsed, container = manifest(tag)
print("manifest", digest)
for descriptor in [parsed["config"], *parsed["layers"]]:
    with open(os.path.join(out, descriptor["digest"][7:]), "wb") as f:
        f.write(blob(container, descriptor))

_, signature_manifest, signature_container = manifest(signature_tag)
key = serialization.load_pem_public_key(open(public_key, "rb").read())
(layer,) = signature_manifest["layers"]
assert layer["mediaType"] == "application/vnd.dev.cosign.simplesigning.v1+json", layer
payload = blob(signature_container, layer)
signature = base64.b64decode(layer["annotations"]["dev.cosignproject.cosign/signature"])
key.verify(signature, payload, ec.ECDSA(hashes.SHA256()))
critical = json.loads(payload)["critical"]
assert critical["type"] == "cosign container image signature", critical
assert critical["image"]["docker-manifest-digest"] == digest, critical
print("signature verifies")
