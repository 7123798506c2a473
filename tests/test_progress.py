"""The progress bar: counts every (pass, op) step, and stays silent off a terminal."""

from __future__ import annotations

import io
from collections.abc import Callable

from passflow import PassManager, ir
from passflow.testing import TestFunctionPass, TestModulePass

Parse = Callable[[str], ir.ModuleOp]

THREE = "".join(f"func.func @f{i}() {{\n  func.return\n}}\n" for i in range(3))


def build() -> PassManager:
    pm = PassManager()
    fpm = pm.nest("func.func")
    fpm.add(TestFunctionPass())
    fpm.add(TestFunctionPass())
    pm.add(TestModulePass())
    return pm


def test_bar_counts_each_pass_on_each_child(parse: Parse) -> None:
    pm = build()
    stream = io.StringIO()
    bar = pm.enable_progress(stream, force=True)
    pm.run(parse(THREE))
    (task,) = bar._progress.tasks  # pyright: ignore[reportPrivateUsage]
    assert task.total == 6 and task.completed == 6
    assert stream.getvalue()  # something was drawn


def test_bar_is_silent_when_not_a_terminal(parse: Parse) -> None:
    pm = build()
    stream = io.StringIO()
    bar = pm.enable_progress(stream)
    assert not bar.enabled
    pm.run(parse(THREE))
    assert stream.getvalue() == ""
