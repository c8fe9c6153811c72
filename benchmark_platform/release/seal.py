"""Contamination control: an open development split and an optional test split sealed with Fernet.

An item's split is a pure function of (spec seed, item id), so it never moves between releases. The sealed file is
deterministic too, so a rebuild reproduces it byte for byte: Fernet normally draws a random IV and stamps the current
time; here the IV is an HMAC of the plaintext under the key (equal plaintexts give equal tokens, which reveals nothing
else) and the timestamp is 0 (tokens are decrypted without a TTL). The key is never written anywhere.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json

from cryptography.fernet import Fernet, InvalidToken

DEV, TEST = "dev", "test"


def split_of(item_id: str, seed: int, test_share: float) -> str:
    """'test' for a stable `test_share` of the items, else 'dev'."""
    digest = hashlib.sha256(f"{seed}:{item_id}".encode()).digest()
    return TEST if int.from_bytes(digest[:8], "big") / 2**64 < test_share else DEV


def new_key() -> str:
    return Fernet.generate_key().decode()


def _fernet(key: str) -> Fernet:
    try:
        return Fernet(key)
    except (ValueError, TypeError) as exc:
        raise ValueError("the release key is not a Fernet key (32 url-safe base64-encoded bytes)") from exc


def seal(plaintext: bytes, key: str, canary: str, name: str) -> bytes:
    """A JSON envelope (carrying the canary in the clear) around a deterministic Fernet token of `plaintext`."""
    fernet = _fernet(key)
    signing_key = base64.urlsafe_b64decode(key)[:16]
    iv = hmac.new(signing_key, plaintext, hashlib.sha256).digest()[:16]
    token = fernet._encrypt_from_parts(plaintext, 0, iv)  # deterministic on purpose; see the module docstring
    envelope = {"canary": canary, "cipher": "fernet", "content": name, "token": token.decode()}
    return (json.dumps(envelope, indent=1, sort_keys=True) + "\n").encode()


def unseal(envelope: bytes, key: str) -> bytes:
    """The sealed plaintext; a wrong key is a clear error."""
    token = json.loads(envelope)["token"].encode()
    try:
        return _fernet(key).decrypt(token)
    except InvalidToken as exc:
        raise ValueError("the release key does not open this sealed file (wrong key or altered file)") from exc
