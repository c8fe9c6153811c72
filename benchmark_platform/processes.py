"""Whether an operating-system process is still the one that started something (a run, a batch): a leaf module.

A pid alone is not enough, pids are reused: a process counts as the same only when it started no later than the
thing it is said to have started. Linux's /proc gives the start time; elsewhere only existence is checked.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path

_CLOCK_SLACK_S = 2.0  # /proc/stat's boot time has whole seconds; process start times are in clock ticks


def hostname() -> str:
    return socket.gethostname()


def _boot_time() -> float | None:
    try:
        for line in Path("/proc/stat").read_text().splitlines():
            if line.startswith("btime "):
                return float(line.split()[1])
    except OSError:
        return None
    return None


def process_start_time(pid: int) -> float | None:
    """Epoch seconds at which `pid` started; None when there is no such live process (a zombie counts as gone);
    -inf when the process exists but this system does not say when it started."""
    if pid <= 0:
        return None
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return None
    except OSError:
        stat = ""
    boot = _boot_time()
    if stat and boot is not None:
        fields = stat.rsplit(")", 1)[1].split()  # after "pid (comm)": state is field 3, starttime field 22
        if fields[0] in {"Z", "X"}:
            return None
        return boot + int(fields[19]) / os.sysconf("SC_CLK_TCK")
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:
        pass
    return float("-inf")


def process_alive(pid: int, started_by: float) -> bool:
    """True when `pid` is a live process that started no later than `started_by` (epoch seconds)."""
    start = process_start_time(pid)
    return start is not None and start <= started_by + _CLOCK_SLACK_S
