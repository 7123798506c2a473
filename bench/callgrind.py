"""Machine instructions counted under valgrind's callgrind: the figure a
benchmark quotes when the load of a shared machine would move its times."""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Mapping, Sequence


def collected(stderr: str) -> int:
    """The instruction count callgrind printed on `stderr`."""
    found = re.search(r"Collected : (\d+)", stderr)
    if found is None:
        raise SystemExit(f"no instruction count from callgrind:\n{stderr}")
    return int(found.group(1))


def instructions(command: Sequence[str], env: Mapping[str, str] | None = None) -> int:
    """The instructions `command` executes, run under callgrind."""
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        raise SystemExit("--instructions needs valgrind (apt-get install valgrind)")
    done = subprocess.run(
        [valgrind, "--tool=callgrind", "--callgrind-out-file=/dev/null", *command],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )
    return collected(done.stderr)
