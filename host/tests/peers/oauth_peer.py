"""The port as an OAuth resource server, from outside (`oauth.rs`).

`mint DIR ISSUER RESOURCE`: an authorization server's keys (Ed25519, RSA,
EC P-256) written to DIR/jwks.json as its JWKS, and access tokens signed
with them by `cryptography`, not by the library the server checks them
with, printed as one JSON object: good ones of each key, and each way a
token can be wrong.

`short DIR ISSUER RESOURCE SECONDS`: a good token of the Ed25519 key
minted by `mint`, expiring SECONDS from now.

`discover MCP_URL`: what the MCP Python SDK does on a 401 (SEP-985): the
`resource_metadata` of the challenge, else the well-known URLs, read as
the SDK's `ProtectedResourceMetadata`.
"""

import base64
import json
import sys
import time

import httpx2
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, padding, rsa
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature
from mcp.client.auth.utils import (
    build_protected_resource_metadata_discovery_urls,
    extract_resource_metadata_from_www_auth,
)
from mcp.shared.auth import ProtectedResourceMetadata


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def number(n: int) -> str:
    return b64(n.to_bytes((n.bit_length() + 7) // 8, "big"))


def sign(key, alg: str, data: bytes) -> bytes:
    if alg == "EdDSA":
        return key.sign(data)
    if alg == "RS256":
        return key.sign(data, padding.PKCS1v15(), hashes.SHA256())
    if alg == "PS256":
        pss = padding.PSS(mgf=padding.MGF1(hashes.SHA256()), salt_length=32)
        return key.sign(data, pss, hashes.SHA256())
    if alg == "ES256":
        r, s = decode_dss_signature(key.sign(data, ec.ECDSA(hashes.SHA256())))
        return r.to_bytes(32, "big") + s.to_bytes(32, "big")
    raise ValueError(alg)


def jwt(key, header: dict, claims: dict) -> str:
    signing = f"{b64(json.dumps(header).encode())}.{b64(json.dumps(claims).encode())}"
    return f"{signing}.{b64(sign(key, header['alg'], signing.encode()))}"


def mint(out: str, issuer: str, resource: str) -> None:
    ed = ed25519.Ed25519PrivateKey.generate()
    rs = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    es = ec.generate_private_key(ec.SECP256R1())
    other = ed25519.Ed25519PrivateKey.generate()
    raw = ed.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    rn = rs.public_key().public_numbers()
    en = es.public_key().public_numbers()
    jwks = {
        "keys": [
            {"kty": "OKP", "crv": "Ed25519", "x": b64(raw), "kid": "ed", "use": "sig", "alg": "EdDSA"},
            {"kty": "RSA", "n": number(rn.n), "e": number(rn.e), "kid": "rs", "use": "sig", "alg": "RS256"},
            # A shared secret beside the keys: never taken.
            {"kty": "oct", "k": b64(b"a shared secret, thirty-two bytes"), "kid": "oct"},
            {
                "kty": "EC",
                "crv": "P-256",
                "x": b64(en.x.to_bytes(32, "big")),
                "y": b64(en.y.to_bytes(32, "big")),
                "kid": "ec",
            },
        ]
    }
    with open(f"{out}/jwks.json", "w") as f:
        json.dump(jwks, f)
    # For `short`, later.
    with open(f"{out}/ed.pem", "wb") as f:
        f.write(ed.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    now = int(time.time())
    good = {"iss": issuer, "aud": resource, "sub": "agent", "exp": now + 600, "iat": now, "scope": "files mcp"}

    def with_(**changes):
        claims = dict(good, **changes)
        return {k: v for k, v in claims.items() if v is not None}

    head = lambda kid, alg: {"typ": "at+jwt", "alg": alg, "kid": kid}  # noqa: E731
    tokens = {
        "good_ed": jwt(ed, head("ed", "EdDSA"), good),
        "good_rs": jwt(rs, head("rs", "RS256"), good),
        "good_ec": jwt(es, head("ec", "ES256"), good),
        "good_aud_list": jwt(ed, head("ed", "EdDSA"), with_(aud=["other", resource])),
        "expired": jwt(ed, head("ed", "EdDSA"), with_(exp=now - 3600)),
        "not_yet": jwt(ed, head("ed", "EdDSA"), with_(nbf=now + 3600)),
        "other_issuer": jwt(ed, head("ed", "EdDSA"), with_(iss=issuer + "/other")),
        "other_audience": jwt(ed, head("ed", "EdDSA"), with_(aud="https://elsewhere.example/mcp")),
        "no_exp": jwt(ed, head("ed", "EdDSA"), with_(exp=None)),
        "other_key": jwt(other, head("ed", "EdDSA"), good),
        "unknown_kid": jwt(ed, head("nope", "EdDSA"), good),
        "no_scope": jwt(ed, head("ed", "EdDSA"), with_(scope="mcp")),
        "scp_array": jwt(ed, head("ed", "EdDSA"), with_(scope=None, scp=["files", "mcp"])),
        "scope_prefix": jwt(ed, head("ed", "EdDSA"), with_(scope="filesystem mcp")),
        "scp_prefix": jwt(ed, head("ed", "EdDSA"), with_(scope=None, scp=["files-read"])),
        "no_kid": jwt(ed, {"typ": "at+jwt", "alg": "EdDSA"}, good),
        "alg_not_the_keys": jwt(rs, head("rs", "PS256"), good),
        "typ_jwt": jwt(ed, {"typ": "JWT", "alg": "EdDSA", "kid": "ed"}, good),
        "typ_id_token": jwt(ed, {"typ": "id_token+jwt", "alg": "EdDSA", "kid": "ed"}, good),
        # Another caller: its own share of the port's slots.
        "other_subject": jwt(ed, head("ed", "EdDSA"), with_(sub="another agent")),
    }
    # A claim changed after signing.
    h, _, s = tokens["good_ed"].split(".")
    tokens["tampered"] = f"{h}.{b64(json.dumps(with_(sub='admin')).encode())}.{s}"
    # No signature at all.
    none = f"{b64(json.dumps({'alg': 'none', 'kid': 'ed'}).encode())}.{b64(json.dumps(good).encode())}."
    tokens["alg_none"] = none
    # The RSA key's public bytes as an HMAC secret: the old algorithm
    # confusion.
    import hmac

    pem = rs.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    signing = f"{b64(json.dumps(head('rs', 'HS256')).encode())}.{b64(json.dumps(good).encode())}"
    mac = hmac.new(pem, signing.encode(), "sha256").digest()
    tokens["hs256_confusion"] = f"{signing}.{b64(mac)}"
    # Signed with the EC key but saying RSA's algorithm under its kid.
    tokens["alg_mismatch"] = jwt(es, head("rs", "ES256"), good)
    # HS256 with the shared secret the JWKS holds.
    signing = f"{b64(json.dumps(head('oct', 'HS256')).encode())}.{b64(json.dumps(good).encode())}"
    mac = hmac.new(b"a shared secret, thirty-two bytes", signing.encode(), "sha256").digest()
    tokens["hs256_oct"] = f"{signing}.{b64(mac)}"
    print(json.dumps(tokens))


def short(out: str, issuer: str, resource: str, seconds: str) -> None:
    """A good token of the Ed25519 key that expires `seconds` from now."""
    with open(f"{out}/ed.pem", "rb") as f:
        ed = serialization.load_pem_private_key(f.read(), password=None)
    now = int(time.time())
    claims = {"iss": issuer, "aud": resource, "exp": now + int(seconds), "scope": "files"}
    print(jwt(ed, {"typ": "at+jwt", "alg": "EdDSA", "kid": "ed"}, claims))


def discover(url: str) -> None:
    with httpx2.Client() as client:
        refused = client.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
        assert refused.status_code == 401, refused.status_code
        pointed = extract_resource_metadata_from_www_auth(refused)
        assert pointed, refused.headers.get("WWW-Authenticate")
        urls = build_protected_resource_metadata_discovery_urls(pointed, url)
        assert len(urls) == 3, urls
        for each in urls:
            answer = client.get(each)
            assert answer.status_code == 200, (each, answer.status_code)
            meta = ProtectedResourceMetadata.model_validate_json(answer.content)
            assert str(meta.resource) == url, (meta.resource, url)
            assert meta.bearer_methods_supported == ["header"], meta
            assert len(meta.authorization_servers) == 1, meta
    print("oauth discover: ok")


if __name__ == "__main__":
    if sys.argv[1] == "mint":
        mint(*sys.argv[2:5])
    elif sys.argv[1] == "short":
        short(*sys.argv[2:6])
    else:
        discover(sys.argv[2])
