"""Passwords as slow salted hashes (scrypt), random tokens, and their constant-time checks."""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets

# scrypt cost: N=2^15, r=8, p=1 is 32 MiB and tens of milliseconds per guess (OWASP's scrypt floor is N=2^17/r=8 or
# an equivalent memory-time product; 2^15 with r=8 keeps a 2-core test machine responsive).
SCRYPT_N, SCRYPT_R, SCRYPT_P = 2**15, 8, 1
_MAXMEM = 64 * 1024 * 1024
MIN_PASSWORD_LENGTH = 12


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def hash_password(password: str) -> str:
    """'scrypt$N$r$p$salt$hash' with a fresh 16-byte salt."""
    if len(password) < MIN_PASSWORD_LENGTH:
        raise ValueError(f"passwords need at least {MIN_PASSWORD_LENGTH} characters")
    salt = secrets.token_bytes(16)
    digest = hashlib.scrypt(password.encode(), salt=salt, n=SCRYPT_N, r=SCRYPT_R, p=SCRYPT_P, maxmem=_MAXMEM, dklen=32)
    return f"scrypt${SCRYPT_N}${SCRYPT_R}${SCRYPT_P}${_b64(salt)}${_b64(digest)}"


def verify_password(password: str, stored: str) -> bool:
    try:
        scheme, n, r, p, salt, digest = stored.split("$")
    except ValueError:
        return False
    if scheme != "scrypt":
        return False
    candidate = hashlib.scrypt(
        password.encode(), salt=_unb64(salt), n=int(n), r=int(r), p=int(p), maxmem=_MAXMEM, dklen=32
    )
    return hmac.compare_digest(candidate, _unb64(digest))


# Checked when the login name is unknown, so a wrong name costs as long as a wrong password (no user oracle).
DUMMY_HASH = hash_password(secrets.token_urlsafe(24))


def new_token() -> str:
    return secrets.token_urlsafe(32)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def same(a: str | None, b: str | None) -> bool:
    if not a or not b:
        return False
    return hmac.compare_digest(a.encode(), b.encode())
