"""Forked workers die with their parent: killing only the parent (an OOM kill,
`kill PID`, a harness's `proc.kill()`) leaves no worker holding its pipes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

SCRIPT = """
import os, sys, time
from passflow import OperationPass, PassManager, ir
from passflow.executors import ProcessExecutor

class Stall(OperationPass):
    argument = "stall"
    op_name = "func.func"

    def run_on_operation(self) -> None:
        open(os.path.join(sys.argv[1], str(os.getpid())), "w").close()
        time.sleep(120)

text = "".join(f"func.func @f{i}() {{ func.return }}\\n" for i in range(8))
module = ir.parse_module(text)
pm = PassManager("builtin.module")
pm.executor = ProcessExecutor(3, serial_budget=0, parent_runs_children=False)
pm.nest("func.func").add(Stall())
pm.run(module)
"""


def _alive(pid: int) -> bool:
    """Running, and not a zombie waiting for a reaper."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def test_killing_the_parent_leaves_no_worker(tmp_path: Path) -> None:
    script = tmp_path / "stall.py"
    script.write_text(SCRIPT)
    parent = subprocess.Popen(
        [sys.executable, str(script), str(tmp_path)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 60
        workers: list[int] = []
        while len(workers) < 2 and time.monotonic() < deadline:
            workers = [int(p.name) for p in tmp_path.iterdir() if p.name.isdigit()]
            time.sleep(0.05)
        assert len(workers) >= 2, "the workers never started"
        time.sleep(0.5)
        workers = [int(p.name) for p in tmp_path.iterdir() if p.name.isdigit()]
        assert parent.pid not in workers
        assert all(_alive(pid) for pid in workers)
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait(timeout=10)
        deadline = time.monotonic() + 10
        while any(_alive(pid) for pid in workers) and time.monotonic() < deadline:
            time.sleep(0.05)
        survivors = [pid for pid in workers if _alive(pid)]
        assert survivors == []
        # Nothing holds the caller's pipes any more: they read to EOF at once.
        assert parent.stdout is not None
        assert parent.stdout.read() == b""
    finally:
        for pid in [int(p.name) for p in tmp_path.iterdir() if p.name.isdigit()]:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
        if parent.poll() is None:
            parent.kill()
        parent.communicate()


def test_ctrl_c_stops_the_workers_quietly(tmp_path: Path) -> None:
    # Ctrl-C reaches the whole process group. The workers leave it to the parent,
    # which stops them at once: no worker prints a KeyboardInterrupt traceback,
    # and none survives.
    script = tmp_path / "stall.py"
    script.write_text(
        SCRIPT.replace(
            "pm.run(module)",
            "try:\n    pm.run(module)\nexcept KeyboardInterrupt:\n    sys.exit(130)",
        )
    )
    parent = subprocess.Popen(
        [sys.executable, str(script), str(tmp_path)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    workers: list[int] = []
    try:
        deadline = time.monotonic() + 60
        while len(workers) < 3 and time.monotonic() < deadline:
            workers = [int(p.name) for p in tmp_path.iterdir() if p.name.isdigit()]
            time.sleep(0.05)
        assert len(workers) == 3, "the workers never started"
        os.killpg(parent.pid, signal.SIGINT)
        _, err = parent.communicate(timeout=30)
        assert parent.returncode == 130
        assert err == b""
        deadline = time.monotonic() + 10
        while any(_alive(pid) for pid in workers) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert [pid for pid in workers if _alive(pid)] == []
    finally:
        for pid in workers:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
        if parent.poll() is None:
            parent.kill()
            parent.communicate()
