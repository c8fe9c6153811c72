"""Passwords as slow salted hashes (scrypt), random tokens, constant-time checks, and the login backoff policy."""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from functools import cache

from benchmark_platform.review.config import LoginThrottle

# scrypt cost: N=2^17, r=8, p=1 is 128 MiB per guess, OWASP's floor for scrypt. Hashes stored at a lower cost are
# rehashed at this cost on the owner's next successful login (needs_rehash).
SCRYPT_N, SCRYPT_R, SCRYPT_P = 2**17, 8, 1
_MAXMEM = 256 * 1024 * 1024  # scrypt needs 128 * r * N bytes; OpenSSL refuses more than maxmem
MIN_PASSWORD_LENGTH = 12


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def hash_password(password: str, n: int | None = None) -> str:
    """'scrypt$N$r$p$salt$hash' with a fresh 16-byte salt, at today's cost SCRYPT_N unless ``n`` (to test rehashing)."""
    if len(password) < MIN_PASSWORD_LENGTH:
        raise ValueError(f"passwords need at least {MIN_PASSWORD_LENGTH} characters")
    n = n or SCRYPT_N  # read at call time: the test suite lowers it for its fixture accounts (tests' conftest.py)
    salt = secrets.token_bytes(16)
    digest = hashlib.scrypt(password.encode(), salt=salt, n=n, r=SCRYPT_R, p=SCRYPT_P, maxmem=_MAXMEM, dklen=32)
    return f"scrypt${n}${SCRYPT_R}${SCRYPT_P}${_b64(salt)}${_b64(digest)}"


def verify_password(password: str, stored: str) -> bool:
    try:
        scheme, n, r, p, salt, digest = stored.split("$")
        cost = int(n), int(r), int(p)
    except ValueError:
        return False
    if scheme != "scrypt":
        return False
    candidate = hashlib.scrypt(
        password.encode(), salt=_unb64(salt), n=cost[0], r=cost[1], p=cost[2], maxmem=_MAXMEM, dklen=32
    )
    return hmac.compare_digest(candidate, _unb64(digest))


def needs_rehash(stored: str) -> bool:
    """True for a hash made at another cost than today's (it is replaced on the next successful login)."""
    parts = stored.split("$")
    return len(parts) != 6 or parts[0] != "scrypt" or parts[1:4] != [str(SCRYPT_N), str(SCRYPT_R), str(SCRYPT_P)]


@cache
def dummy_hash() -> str:
    """Checked when the login name is unknown, so a wrong name costs as long as a wrong password (no user oracle)."""
    return hash_password(secrets.token_urlsafe(24))


def backoff_seconds(failures: int, free_failures: int, policy: LoginThrottle) -> float:
    """How long to refuse further attempts after ``failures`` consecutive failures: none for the first
    ``free_failures``, then first_delay, doubling with each further failure, capped at max_delay."""
    if failures < free_failures:
        return 0.0
    return min(policy.first_delay_seconds * 2.0 ** min(failures - free_failures, 40), policy.max_delay_seconds)


def new_token() -> str:
    return secrets.token_urlsafe(32)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def same(a: str | None, b: str | None) -> bool:
    if not a or not b:
        return False
    return hmac.compare_digest(a.encode(), b.encode())
