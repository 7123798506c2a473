"""Pass timing: which pass took the time (`--mlir-timing`).

`PassTiming` is an instrumentation that builds MLIR's timer tree while a
pipeline runs; `TimingManager` owns the tree, the tool's own top-level timers
(`Parser`, `Output`) and the report. The tree follows MLIR's PassTiming:

* every thread keeps a stack of active timers; a pass nests under the top of
  its thread's stack (or the root), an analysis under the running pass
  (`(A) DominanceInfo`), a nested pipeline under the timer of the pass that
  spawned it (`'func.func' Pipeline`, found from `PipelineParentInfo`);
* a timer is identified under its parent by a key, so the same pass (or
  analysis, or pipeline anchor) under the same parent accumulates into one line
  over every op it ran on: one line per pass instance per parent. Inside a
  nested pipeline the key of a pass is its position in that pipeline, which is
  what MLIR's "threading sibling" key amounts to: the per-worker clones of the
  k-th pass fold into the original's line;
* the nested-pipeline adaptor gets a timer named `Pipeline Collection : [...]`
  that is hidden (its children shown at its level) unless it holds more than
  one pipeline;
* a timer created from another thread than its parent's is an async child; at
  report time its user time is added to its ancestors' and it is merged into
  the normal children by key (wall = max, user = sum, recursively). Children
  keep first-creation order.

Wall time is `time.perf_counter`; user time is the CPU time of the thread that
did the work (`time.thread_time`), summed over threads. Both clocks can be
replaced, which is how the tests get exact reports.

Hooks do a few dictionary lookups, append or pop one frame and read two clocks;
names are formatted only when a timer is first created.

Differences from mlir-opt
-------------------------
* The list view shows only what the tree shows: mlir-opt also prints the hidden
  root (as a 100 % `root` line at the top) and hidden adaptor timers
  (`Pipeline Collection : ['func.func']`), which are bookkeeping, not work.
  Equal wall times keep first-creation order (mlir-opt's sort is unstable).
* The JSON output is valid JSON: no `{}` sentinel entries, no trailing commas,
  names escaped. Field names, their order and the number layout are
  mlir-opt's.
* User time is measured CPU time, not mlir-opt's "wall time summed over
  threads". The user column is shown, as in mlir-opt, only when work ran on
  other threads than the one that owns the timer above it.
* A dynamic pipeline (`Pass.run_pipeline`) nests under the pass that ran it,
  as in MLIR after llvm/llvm-project#169615; LLVM 22.1.8 shows it at the root,
  where it is counted twice and can make `Rest` negative (issue #169443).
* `Rest` is the total minus the lines shown at the top level, so the lines add
  up to `Total`; mlir-opt subtracts hidden adaptor timers whole, which loses
  the adaptor's own time (scheduling, starting workers) from the report.
* A nested pipeline that stops on a failing pass gets no `run_after_pipeline`
  (MLIR's rule); its timer is closed when the failing pass ends instead of
  staying on the stack, which in mlir-opt misattributes the adaptor's time.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal, TextIO

from passflow.instrumentation import PassInstrumentation, PipelineParentInfo
from passflow.ir import Operation
from passflow.pass_base import Pass

__all__ = [
    "Clock",
    "PassTiming",
    "TimingDisplay",
    "TimingFormat",
    "TimingManager",
    "TimingScope",
]

TimingDisplay = Literal["tree", "list"]
"""`tree` mirrors the pipeline nesting; `list` merges timers by name, slowest first."""

TimingFormat = Literal["text", "json"]
"""mlir-opt's `--mlir-output-format`."""

Clock = Callable[[], float]
"""A clock in seconds."""

_BANNER = "===" + "-" * 73 + "==="
_TITLE = "... Execution time report ..."

_get_ident = threading.get_ident


@dataclass(eq=False, slots=True)
class _Timer:
    """A node of the live timer tree; `thread_id` is the thread that created it."""

    name: str
    thread_id: int
    hidden: bool = False
    wall: float = 0.0
    user: float = 0.0
    children: dict[object, _Timer] = field(default_factory=lambda: {})
    async_children: dict[int, dict[object, _Timer]] = field(default_factory=lambda: {})

    def children_for(self, thread_id: int) -> dict[object, _Timer]:
        """Where a child created by `thread_id` goes: normal or async children."""
        if thread_id == self.thread_id:
            return self.children
        found = self.async_children.get(thread_id)
        if found is None:
            found = self.async_children[thread_id] = {}
        return found


@dataclass(eq=False, slots=True)
class _Frame:
    """An active timer on a thread's stack, with the clock readings at its start.

    `pass_` is set for pass frames (so the end of a pass can find its frame);
    `count` numbers the passes started in a pipeline frame (their keys).
    """

    timer: _Timer
    pass_: Pass | None
    pipeline: bool
    wall0: float
    user0: float
    count: int = 0


@dataclass(eq=False, slots=True)
class _Node:
    """A timer of the report: the live tree with async children merged in."""

    name: str
    hidden: bool
    wall: float
    user: float
    children: dict[object, _Node]


class TimingScope:
    """A running top-level timer (`Parser`, `Output`); stop it or use `with`."""

    __slots__ = ("_frame", "_manager")

    def __init__(self, manager: TimingManager, frame: _Frame | None) -> None:
        self._manager = manager
        self._frame = frame

    def stop(self) -> None:
        """Add the time since the start to the timer; later calls do nothing."""
        frame = self._frame
        if frame is None:
            return
        self._frame = None
        manager = self._manager
        frame.timer.wall += manager.wall_clock() - frame.wall0
        frame.timer.user += manager.user_clock() - frame.user0

    def __enter__(self) -> TimingScope:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


class TimingManager:
    """Owns the timer tree and prints MLIR's execution time report.

    The hidden root timer runs from construction (or `clear`) until `stop` or
    the report; its time is the report's `Total`, and what the top-level timers
    do not cover is `Rest`. One manager may serve several pass managers and
    runs (passflow-opt shares one across `--split-input-file` chunks, as
    mlir-opt does), which is why the report is printed on request rather than
    after each run.
    """

    def __init__(
        self,
        display: TimingDisplay = "tree",
        output_format: TimingFormat = "text",
        *,
        wall_clock: Clock = time.perf_counter,
        user_clock: Clock = time.thread_time,
    ) -> None:
        if display not in ("tree", "list"):
            raise ValueError(f"unknown timing display '{display}'")
        if output_format not in ("text", "json"):
            raise ValueError(f"unknown timing output format '{output_format}'")
        self.display: TimingDisplay = display
        self.output_format: TimingFormat = output_format
        self.wall_clock = wall_clock
        self.user_clock = user_clock
        self.root = _Timer("root", _get_ident(), hidden=True)
        self._root_frame: _Frame | None = self._start_frame(self.root)

    def _start_frame(self, timer: _Timer) -> _Frame:
        return _Frame(timer, None, False, self.wall_clock(), self.user_clock())

    def start_timer(self, name: str) -> TimingScope:
        """Start the top-level timer `name` (accumulating if it ran before).

        Tools time their own phases with it, as mlir-opt's `Parser` and `Output`.
        """
        tid = _get_ident()
        children = self.root.children_for(tid)
        key = ("timer", name)
        timer = children.get(key)
        if timer is None:
            timer = children[key] = _Timer(name, tid)
        return TimingScope(self, self._start_frame(timer))

    def stop(self) -> None:
        """Stop the root timer: the report's `Total` ends here."""
        frame = self._root_frame
        if frame is not None:
            self._root_frame = None
            self.root.wall += self.wall_clock() - frame.wall0
            self.root.user += self.user_clock() - frame.user0

    def clear(self) -> None:
        """Forget every timer and restart the root timer."""
        self.root = _Timer("root", _get_ident(), hidden=True)
        self._root_frame = self._start_frame(self.root)

    def report(self) -> str:
        """The report in the manager's display and format (the root keeps running)."""
        root, _ = _finalize(self.root)
        frame = self._root_frame
        if frame is not None:
            root.wall += self.wall_clock() - frame.wall0
            root.user += self.user_clock() - frame.user0
        threaded = _has_async(self.root)
        if self.output_format == "json":
            return _json_report(root, self.display, threaded)
        return _text_report(root, self.display, threaded)

    def print_report(self, stream: TextIO | None = None) -> None:
        """Stop, write the report (default stderr) and start afresh, as MLIR's
        `DefaultTimingManager::print`."""
        self.stop()
        out = stream if stream is not None else sys.stderr
        out.write(self.report())
        out.flush()
        self.clear()


def _has_async(timer: _Timer) -> bool:
    if any(timer.async_children.values()):
        return True
    return any(_has_async(child) for child in timer.children.values())


def _finalize(timer: _Timer) -> tuple[_Node, float]:
    """A report node for `timer` and the user time its async descendants added.

    MLIR's `addAsyncUserTime` then `mergeAsyncChildren`, on a copy, so that the
    live tree can keep accumulating and be reported again.
    """
    children: dict[object, _Node] = {}
    added = 0.0
    for key, child in timer.children.items():
        node, child_added = _finalize(child)
        children[key] = node
        added += child_added
    merged: list[tuple[object, _Node]] = []
    for per_thread in timer.async_children.values():
        for key, child in per_thread.items():
            node, _ = _finalize(child)
            added += node.user
            merged.append((key, node))
    for key, node in merged:
        _merge_child(children, key, node)
    return _Node(
        timer.name, timer.hidden, timer.wall, timer.user + added, children
    ), added


def _merge_child(children: dict[object, _Node], key: object, other: _Node) -> None:
    into = children.get(key)
    if into is None:
        children[key] = other
        return
    into.wall = max(into.wall, other.wall)
    into.user += other.user
    for child_key, child in other.children.items():
        _merge_child(into.children, child_key, child)


# --- report layouts ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Entry:
    name: str
    wall: float
    user: float
    depth: int = 0
    children: tuple[_Entry, ...] = ()


def _visible(node: _Node, depth: int) -> list[_Entry]:
    """The tree as printed: hidden timers replaced by their children."""
    entries: list[_Entry] = []
    for child in node.children.values():
        if child.hidden:
            entries.extend(_visible(child, depth))
        else:
            entries.append(
                _Entry(
                    child.name,
                    child.wall,
                    child.user,
                    depth,
                    tuple(_visible(child, depth + 1)),
                )
            )
    return entries


def _flatten(entries: list[_Entry]) -> list[_Entry]:
    """Every visible timer merged by name, slowest (wall) first, ties in tree order."""
    merged: dict[str, list[float]] = {}
    stack = list(reversed(entries))
    while stack:
        entry = stack.pop()
        times = merged.get(entry.name)
        if times is None:
            merged[entry.name] = [entry.wall, entry.user]
        else:
            times[0] += entry.wall
            times[1] += entry.user
        stack.extend(reversed(entry.children))
    flat = [_Entry(name, wall, user) for name, (wall, user) in merged.items()]
    flat.sort(key=lambda e: -e.wall)
    return flat


def _closing(root: _Node, entries: list[_Entry]) -> tuple[_Entry, _Entry]:
    """`Rest` (the root minus its visible top-level timers) and `Total`."""
    rest_wall = root.wall - sum(e.wall for e in entries)
    rest_user = root.user - sum(e.user for e in entries)
    return _Entry("Rest", rest_wall, rest_user), _Entry("Total", root.wall, root.user)


def _percent(part: float, whole: float) -> float:
    return 100.0 * part / whole if whole else 0.0


def _text_report(root: _Node, display: TimingDisplay, threaded: bool) -> str:
    total_wall, total_user = root.wall, root.user

    def line(entry: _Entry, indent: int) -> str:
        text = ""
        if threaded:
            text = f"  {entry.user:8.4f} ({_percent(entry.user, total_user):5.1f}%)"
        return (
            f"{text}  {entry.wall:8.4f} ({_percent(entry.wall, total_wall):5.1f}%)  "
            f"{' ' * indent}{entry.name}"
        )

    lines = [
        _BANNER,
        " " * ((80 - len(_TITLE)) // 2) + _TITLE,
        _BANNER,
        f"  Total Execution Time: {total_wall:.4f} seconds",
        "",
        ("  ----User Time----" if threaded else "")
        + "  ----Wall Time----  ----Name----",
    ]
    entries = _visible(root, 0)
    if display == "tree":
        stack = list(reversed(entries))
        while stack:
            entry = stack.pop()
            lines.append(line(entry, 2 * entry.depth))
            stack.extend(reversed(entry.children))
    else:
        lines.extend(line(entry, 0) for entry in _flatten(entries))
    lines.extend(line(entry, 0) for entry in _closing(root, entries))
    return "\n".join(lines) + "\n"


def _json_report(root: _Node, display: TimingDisplay, threaded: bool) -> str:
    import json  # only for `--mlir-output-format=json`, not at every start-up

    total_wall, total_user = root.wall, root.user

    def head(entry: _Entry) -> str:
        text = ""
        if threaded:
            text = (
                f'"user": {{"duration": {entry.user:8.4f}, "percentage": '
                f"{_percent(entry.user, total_user):5.1f}}}, "
            )
        return (
            f'{{{text}"wall": {{"duration": {entry.wall:8.4f}, "percentage": '
            f'{_percent(entry.wall, total_wall):5.1f}}}, "name": {json.dumps(entry.name)}'
        )

    def tree(entry: _Entry) -> str:
        # mlir-opt closes every "passes" list with an `{}` element, children or not.
        indent = "  " * entry.depth
        inner = "".join(tree(child) for child in entry.children)
        return f'{indent}{head(entry)}, "passes": [\n{inner}{indent}{{}}]}},\n'

    entries = _visible(root, 0)
    closing = ",\n".join(head(entry) + "}" for entry in _closing(root, entries))
    if display == "tree":
        # mlir-opt's layout, opening bracket (absent in mlir-opt 22.1.8) aside.
        return "[\n" + "".join(tree(entry) for entry in entries) + closing + "\n]\n"
    items = [head(entry) + "}" for entry in _flatten(entries)]
    return "[\n" + "".join(item + ",\n" for item in items) + closing + "\n]\n"


# --- the instrumentation ------------------------------------------------------------


class PassTiming(PassInstrumentation):
    """Times passes, nested pipelines and analyses into a `TimingManager`.

    Register it last, after IR printing and crash reproduction, so that their
    work is not counted in the passes' times (mlir-opt's order): its "before"
    hooks then run last and its "after" hooks first.
    """

    def __init__(self, manager: TimingManager) -> None:
        self.manager = manager
        self._wall = manager.wall_clock
        self._user = manager.user_clock
        self._stacks: dict[int, list[_Frame]] = {}

    def _stack(self, thread_id: int) -> list[_Frame]:
        stack = self._stacks.get(thread_id)
        if stack is None:
            stack = self._stacks[thread_id] = []
        return stack

    def _spawner(self, parent: PipelineParentInfo) -> _Timer:
        """The timer of the pass that spawned a pipeline, on the spawning thread."""
        stack = self._stacks.get(parent.parent_thread_id)
        if stack:
            wanted = parent.parent_pass
            for frame in reversed(stack):
                if frame.pass_ is wanted:
                    return frame.timer
        return self.manager.root

    def run_before_pipeline(
        self, op_name: str | None, parent: PipelineParentInfo
    ) -> None:
        tid = _get_ident()
        children = self._spawner(parent).children_for(tid)
        label = (
            parent.parent_pass.pipeline_label(parent.pipeline)
            if parent.pipeline is not None
            else f"'{op_name or 'any'}' Pipeline"
        )
        timer = children.get(label)
        if timer is None:
            timer = children[label] = _Timer(label, tid)
        self._stack(tid).append(_Frame(timer, None, True, self._wall(), self._user()))

    def run_after_pipeline(
        self, op_name: str | None, parent: PipelineParentInfo
    ) -> None:
        wall, user = self._wall(), self._user()
        stack = self._stacks.get(_get_ident())
        while stack:
            frame = stack.pop()
            frame.timer.wall += wall - frame.wall0
            frame.timer.user += user - frame.user0
            if frame.pipeline:
                return

    def run_before_pass(self, pass_: Pass, op: Operation) -> None:
        tid = _get_ident()
        stack = self._stack(tid)
        key: object = pass_
        if stack:
            top = stack[-1]
            parent = top.timer
            if top.pipeline:
                key = (top.count, type(pass_))
                top.count += 1
        else:
            parent = self.manager.root
        children = parent.children_for(tid)
        timer = children.get(key)
        if timer is None:
            if pass_.is_adaptor:
                timer = _Timer(
                    pass_.display_name, tid, len(pass_.nested_pipelines()) <= 1
                )
            else:
                timer = _Timer(pass_.display_name, tid)
            children[key] = timer
        stack.append(_Frame(timer, pass_, False, self._wall(), self._user()))

    def run_after_pass(self, pass_: Pass, op: Operation) -> None:
        self._end_pass(pass_, failed=False)

    def run_after_pass_failed(self, pass_: Pass, op: Operation) -> None:
        self._end_pass(pass_, failed=True)

    def _end_pass(self, pass_: Pass, failed: bool) -> None:
        """Stop the pass's timer (and anything left open above it); a failed pass
        also ends its pipeline, which gets no `run_after_pipeline`."""
        wall, user = self._wall(), self._user()
        stack = self._stacks.get(_get_ident())
        if not stack:
            return
        while stack:
            frame = stack.pop()
            frame.timer.wall += wall - frame.wall0
            frame.timer.user += user - frame.user0
            if frame.pass_ is pass_:
                break
        if failed and stack and stack[-1].pipeline:
            frame = stack.pop()
            frame.timer.wall += wall - frame.wall0
            frame.timer.user += user - frame.user0

    def run_before_analysis(self, name: str, analysis: type, op: Operation) -> None:
        tid = _get_ident()
        stack = self._stack(tid)
        parent = stack[-1].timer if stack else self.manager.root
        children = parent.children_for(tid)
        timer = children.get(analysis)
        if timer is None:
            timer = children[analysis] = _Timer(f"(A) {name}", tid)
        stack.append(_Frame(timer, None, False, self._wall(), self._user()))

    def run_after_analysis(self, name: str, analysis: type, op: Operation) -> None:
        wall, user = self._wall(), self._user()
        stack = self._stacks.get(_get_ident())
        if stack:
            frame = stack.pop()
            frame.timer.wall += wall - frame.wall0
            frame.timer.user += user - frame.user0
