"""One build of a spec at a time: a PostgreSQL advisory lock per spec, held by a connection for the build's life.

Two builds of one spec at once write the same rows and Dagster's pool slots: one deadlocks, the other fails on a
unique key. The second build stops at once, saying which process holds the spec and since when; the first is not
disturbed. The lock is the session's, so a build killed by any means frees it when its connection closes.
"""

from __future__ import annotations

import hashlib
import os
import socket
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import psycopg2

from benchmark_platform.store.settings import with_timeouts

LOCK_CLASS = 0x62706C  # advisory locks of this platform: (LOCK_CLASS, spec key) in pg_locks' (classid, objid)


class SpecBusy(ValueError):
    """A build of the spec is in progress elsewhere (an expected failure: one line, exit 2)."""


def spec_key(spec: str) -> int:
    return int.from_bytes(hashlib.sha256(spec.encode()).digest()[:4], "big") & 0x7FFFFFFF


@contextmanager
def spec_lock(url: str, specs: Sequence[str], what: str = "run") -> Iterator[None]:
    """Hold every spec in `specs` for the body, or raise SpecBusy naming who holds one."""
    label = f"benchmark-platform {what} of {','.join(specs)} (pid {os.getpid()} on {socket.gethostname()})"
    conn = psycopg2.connect(with_timeouts(url), application_name=label[:63])
    conn.autocommit = True
    try:
        with conn.cursor() as cur:
            for spec in sorted(set(specs)):  # one order, so two builds of overlapping specs cannot deadlock
                cur.execute("SELECT pg_try_advisory_lock(%s, %s)", (LOCK_CLASS, spec_key(spec)))
                if not (cur.fetchone() or (False,))[0]:
                    raise SpecBusy(_holder(cur, spec))
        yield
    finally:
        conn.close()  # frees the locks


def _holder(cur: psycopg2.extensions.cursor, spec: str) -> str:
    cur.execute(
        "SELECT a.application_name, a.backend_start FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid "
        "WHERE l.locktype = 'advisory' AND l.granted AND l.classid = %s AND l.objid = %s AND l.objsubid = 2",
        (LOCK_CLASS, spec_key(spec)),
    )
    row = cur.fetchone()
    who = row[0] if row and row[0] else "another build"
    since = f" since {row[1]:%Y-%m-%d %H:%M:%S %Z}" if row and row[1] else ""
    return (
        f"{spec}: {who} is in progress{since}; this build stopped and changed nothing. Wait for it to finish "
        "(or stop it) and run again"
    )
