"""A PostgreSQL server of one's own on a spare loopback port (the embedded server's code, in a temp folder), which a
bench or test may freeze with SIGSTOP: never the shared server other sessions use."""

from __future__ import annotations

import os
import shutil
import signal
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from benchmark_platform.store.embedded import EmbeddedPostgres, EmbeddedState


class ScratchServer:
    def __init__(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="bp_scratch_pg_"))
        self.root.chmod(0o755)  # the server runs as `nobody` when we are root: it must reach its data folder
        self.server = EmbeddedPostgres(self.root / "pg")
        self.state: EmbeddedState = self.server.up()
        self.stopped = False

    def url(self, database: str = "benchmark_platform") -> str:
        return self.state.url(database)

    def _pids(self) -> list[int]:
        """The postmaster and every process it started (backends, background workers)."""
        postmaster = int((Path(self.state.data_dir) / "postmaster.pid").read_text().split()[0])
        children = []
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                fields = stat.read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == postmaster:
                children.append(int(stat.parent.name))
        return [postmaster, *children]

    @contextmanager
    def frozen(self) -> Iterator[None]:
        """Every process of this server stopped (SIGSTOP) for the body, then resumed."""
        pids = self._pids()
        try:
            for pid in pids:
                _signal(pid, signal.SIGSTOP)
            yield
        finally:
            for pid in pids:
                _signal(pid, signal.SIGCONT)

    def stop(self) -> None:
        """The server shut down (a lost database), its folder kept for close()."""
        self.server.down()
        self.stopped = True

    def close(self) -> None:
        try:
            if not self.stopped:
                self.server.down()
        except RuntimeError:  # pg_ctl could not stop it: a fast shutdown signal to the postmaster itself
            _signal(self._pids()[0], signal.SIGINT)
        finally:
            shutil.rmtree(self.root, ignore_errors=True)


def _signal(pid: int, signum: int) -> None:
    try:
        os.kill(pid, signum)
    except ProcessLookupError:  # a backend that ended meanwhile
        pass
