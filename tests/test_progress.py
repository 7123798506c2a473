"""The progress bar: counts every (pass, op) step, and stays silent off a terminal.

Tested through what it draws on its stream: each frame rich writes is one line
`<pass> <bar> <done>/<total> <elapsed>`, separated by carriage returns and
wrapped in ANSI control sequences. The frame drawn when the task is added and
the one drawn when the bar stops are always there; rich's refresh thread may
draw more in between, at moments a test does not control.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable

import pytest

from passflow import PassManager, ir
from passflow.diagnostics import PassPipelineError
from passflow.testing import TestFailurePass, TestFunctionPass, TestModulePass

Parse = Callable[[str], ir.ModuleOp]

THREE = "".join(f"func.func @f{i}() {{\n  func.return\n}}\n" for i in range(3))

_CONTROL = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_FRAME = re.compile(r"(?P<label>\S+) +\S+ (?P<done>\d+)/(?P<total>\d+) \d+:\d\d:\d\d")

Frame = tuple[str, int, int]


@pytest.fixture(autouse=True)
def terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """A terminal rich draws on, wide enough for every frame on one line."""
    monkeypatch.setenv("TERM", "xterm")
    monkeypatch.setenv("COLUMNS", "100")
    monkeypatch.delenv("TTY_INTERACTIVE", raising=False)


def frames(drawn: str) -> list[Frame]:
    """The (label, done, total) of every frame drawn, in order."""
    found: list[Frame] = []
    for line in re.split(r"[\r\n]", _CONTROL.sub("", drawn)):
        if not line.strip():
            continue
        match = _FRAME.fullmatch(line.rstrip())
        assert match is not None, f"not a progress frame: {line!r}"
        found.append((match["label"], int(match["done"]), int(match["total"])))
    return found


def assert_consistent(found: list[Frame], labels: set[str]) -> None:
    """Whatever frames the refresh thread drew: known labels, a count that
    never goes back, never past the total."""
    assert {label for label, _, _ in found} <= {"starting", *labels}
    done = [d for _, d, _ in found]
    assert done == sorted(done)
    assert all(d <= total for _, d, total in found)


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
    pm.enable_progress(stream, force=True)
    pm.run(parse(THREE))
    found = frames(stream.getvalue())
    # Starts empty; ends on the last pass that ran, with 3 funcs x 2 passes done.
    assert found[0] == ("starting", 0, 0)
    assert found[-1] == ("TestModulePass", 6, 6)
    assert_consistent(found, {"TestFunctionPass", "TestModulePass"})


def test_a_second_run_draws_one_bar_not_the_first_beside_it(parse: Parse) -> None:
    pm = build()
    stream = io.StringIO()
    pm.enable_progress(stream, force=True)
    pm.run(parse(THREE))
    first = len(stream.getvalue())
    pm.run(parse(THREE))
    found = frames(stream.getvalue()[first:])
    assert found[0] == ("starting", 0, 0)
    assert found[-1] == ("TestModulePass", 6, 6)
    # The first run's finished bar is never drawn again.
    assert found.count(("TestModulePass", 6, 6)) == 1
    assert_consistent(found, {"TestFunctionPass", "TestModulePass"})


def test_bar_adds_up_every_pipeline_nested_on_the_root(parse: Parse) -> None:
    pm = PassManager()
    pm.nest("func.func").add(TestFunctionPass())
    pm.add(TestModulePass())  # ends the first nested pipeline
    second = pm.nest("func.func")
    second.add(TestFunctionPass())
    second.add(TestFunctionPass())
    stream = io.StringIO()
    pm.enable_progress(stream, force=True)
    pm.run(parse(THREE))
    found = frames(stream.getvalue())
    assert found[-1] == ("TestFunctionPass", 9, 9)  # 3 funcs x (1 + 2) passes
    assert_consistent(found, {"TestFunctionPass", "TestModulePass"})


def test_children_without_a_pipeline_are_not_counted(parse: Parse) -> None:
    pm = build()
    stream = io.StringIO()
    pm.enable_progress(stream, force=True)
    pm.run(parse(THREE + '"test.op"() : () -> ()\n'))
    assert frames(stream.getvalue())[-1] == ("TestModulePass", 6, 6)


def test_a_failed_pass_is_a_step_and_the_bar_still_stops(parse: Parse) -> None:
    pm = PassManager()
    fpm = pm.nest("func.func")
    fpm.add(TestFailurePass())
    fpm.add(TestFunctionPass())
    stream = io.StringIO()
    pm.enable_progress(stream, force=True)
    with pytest.raises(PassPipelineError):
        pm.run(parse("func.func @f() {\n  func.return\n}\n"))
    drawn = stream.getvalue()
    # The failing pass counts; the pass after it never ran on @f.
    assert frames(drawn)[-1] == ("TestFailurePass", 1, 2)
    assert drawn.endswith("\x1b[2K")  # erased, as after a successful run


def test_bar_erases_itself_and_shows_the_cursor_again(parse: Parse) -> None:
    pm = build()
    stream = io.StringIO()
    pm.enable_progress(stream, force=True)
    pm.run(parse(THREE))
    drawn = stream.getvalue()
    assert drawn.startswith("\x1b[?25l")  # cursor hidden while drawing
    after_last_frame = drawn[drawn.rindex("6/6") :]
    assert "\x1b[?25h" in after_last_frame  # cursor shown again
    # Transient: the cursor goes back up to the bar's line and clears it.
    assert after_last_frame.endswith("\x1b[1A\x1b[2K")
    assert frames(after_last_frame[after_last_frame.index("\n") :]) == []


def test_bar_is_silent_when_not_a_terminal(parse: Parse) -> None:
    pm = build()
    stream = io.StringIO()
    bar = pm.enable_progress(stream)
    assert not bar.enabled
    pm.run(parse(THREE))
    assert stream.getvalue() == ""
