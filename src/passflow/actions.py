"""Actions: MLIR's hook for watching, and vetoing, what the compiler does.

An *action* is one unit of work the compiler is about to do, described before it
is done: MLIR wraps every pass execution in a `pass-execution` action
(`PassExecutionAction`) on the op the pass runs on. The work itself is handed to
the run's *action handler* as a callable (`transform`), so the handler decides
whether it happens at all. That one indirection is what makes three debugging
tools possible without touching any pass:

- `DebugCounter` runs only a window of the actions (`skip` the first N, then let
  `count` of them through): bisecting a pipeline for the pass application that
  breaks the IR;
- `ExecutionContext` notifies *observers* before and after each action, which is
  how the action log (`passflow.instruments.action_logging`) and the action
  profile (`passflow.instruments.action_profiler`) are written;
- breakpoint managers (`LocationBreakpointManager`) pick out actions by the
  source location of the IR they touch, for a filtered log.

With no handler installed (the default) the runner does not build an action at
all, so the feature costs one attribute test per pass dispatch.

A skipped pass-execution action means the pass body did not run; everything
around the body still happens, as in MLIR: the instrumentation hooks fire, the
op's analyses are invalidated (the pass preserved nothing), and the verifier
runs.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar, Protocol

from passflow import ir
from passflow.deep_stack import stands_in_for_main_thread
from passflow.diagnostics import PassflowError
from passflow.ir import Operation
from passflow.llvm_integers import parse_llvm_integer

if TYPE_CHECKING:
    from passflow.pass_base import Pass

__all__ = [
    "Action",
    "ActionActiveStack",
    "ActionHandler",
    "Breakpoint",
    "BreakpointManager",
    "CounterState",
    "DebugCounter",
    "DebugCounterError",
    "ExecutionContext",
    "ExecutionObserver",
    "LocationBreakpoint",
    "LocationBreakpointManager",
    "LocationFilterError",
    "PassExecutionAction",
    "describe_ir_unit",
    "parse_location_filter",
    "thread_name",
]

Transform = Callable[[], None]
"""The work an action stands for; the handler calls it, or does not."""


# --- actions -----------------------------------------------------------------


class Action:
    """One unit of work, described for handlers and observers before it is done.

    Subclasses set `tag`, a stable name for the kind of work (`pass-execution`):
    debug counters are keyed by it. `ir_units` are the ops the action touches,
    which location filters match and the action log prints.
    """

    __slots__ = ()

    tag: ClassVar[str] = "action"

    @property
    def ir_units(self) -> Sequence[Operation]:
        return ()

    def __str__(self) -> str:
        """How logs and profiles describe the action (MLIR's `Action::print`)."""
        return f'Action "{self.tag}"'


ADAPTOR_NAME = "mlir::detail::OpToOpPassAdaptor"
"""The name MLIR's action print gives the nested-pipeline adaptor (its C++ type
name), kept so that action logs read the same as mlir-opt's."""


@dataclass(eq=False, repr=False, slots=True)
class PassExecutionAction(Action):
    """The execution of one pass on one op (MLIR's `PassExecutionAction`).

    The nested-pipeline adaptor is a pass too, so running `func.func(cse)` on a
    module is one action for the adaptor on the module, and one per function
    for CSE, nested inside it. `is_adaptor` is the runner's to say (it knows).
    """

    tag: ClassVar[str] = "pass-execution"

    pass_: Pass
    op: Operation
    is_adaptor: bool = False

    @property
    def pass_name(self) -> str:
        """The pass's display name, as MLIR's `Pass::getName` gives it."""
        return ADAPTOR_NAME if self.is_adaptor else self.pass_.display_name

    @property
    def ir_units(self) -> Sequence[Operation]:
        return (self.op,)

    def __str__(self) -> str:
        name = ir.operation_name(self.op).name
        return f"`{self.tag}` running `{self.pass_name}` on Operation `{name}`"

    def __repr__(self) -> str:
        return f"<PassExecutionAction {self.pass_name} on {ir.operation_name(self.op).name}>"


class ActionHandler(Protocol):
    """Executes an action: calls `transform` to do the work, or skips it.

    Installed with `PassManager.register_action_handler`. A handler is called on
    the thread that runs the pass; nested pipelines run serially, in program
    order, while one is installed (`docs/decisions.md`).
    """

    def __call__(self, transform: Transform, action: Action, /) -> None: ...


# --- IR units ------------------------------------------------------------------


def describe_ir_unit(op: Operation) -> str:
    """`op` on one line, regions elided: `func.func @f(%a: i32) -> i32 {...}`.

    Builtin ops lose their `builtin.` prefix (`module {...}`), as MLIR's printer
    writes them; everything else is xDSL's custom form.
    """
    text = ir.print_op_without_regions(op)
    return text[len("builtin.") :] if text.startswith("builtin.") else text


# --- breakpoints ---------------------------------------------------------------


class Breakpoint:
    """A condition on actions that can be switched off without being removed."""

    enabled: bool = True

    def __str__(self) -> str:
        return type(self).__name__


class BreakpointManager(Protocol):
    """Finds the breakpoint an action hits, if any (MLIR's `BreakpointManager`)."""

    def match(self, action: Action) -> Breakpoint | None: ...


@dataclass(eq=False)
class LocationBreakpoint(Breakpoint):
    """Matches actions on ops at `file:line:col`; -1 for `line` or `col` is any."""

    file: str
    line: int = -1
    col: int = -1

    def __str__(self) -> str:
        return f"Location: {self.file}:{self.line}:{self.col}"


class LocationFilterError(PassflowError):
    """A location filter that names no file (`--log-mlir-actions-filter=`)."""


class LocationBreakpointManager:
    """MLIR's `FileLineColLocBreakpointManager`: breakpoints on source locations.

    An action hits a breakpoint when one of its ops was parsed at (or carries
    `loc(...)` of) the breakpoint's file, line and column, the most specific
    breakpoint first. File names compare exactly as the input was named.
    """

    def __init__(self) -> None:
        self._breakpoints: dict[tuple[str, int, int], LocationBreakpoint] = {}

    def add_breakpoint(
        self, file: str, line: int = -1, col: int = -1
    ) -> LocationBreakpoint:
        key = (file, line, col)
        found = self._breakpoints.get(key)
        if found is None:
            found = self._breakpoints[key] = LocationBreakpoint(file, line, col)
        return found

    def add_filter(self, text: str) -> LocationBreakpoint:
        """Add the breakpoint a `file[:line[:col]]` filter describes."""
        return self.add_breakpoint(*parse_location_filter(text))

    @property
    def breakpoints(self) -> list[LocationBreakpoint]:
        return list(self._breakpoints.values())

    def match(self, action: Action) -> Breakpoint | None:
        found = self._breakpoints
        if not found:
            return None
        for op in action.ir_units:
            where = ir.location(op)
            if where.file is None:
                continue
            for key in (
                (where.file, where.line, where.column),
                (where.file, where.line, -1),
                (where.file, -1, -1),
            ):
                breakpoint = found.get(key)
                if breakpoint is not None and breakpoint.enabled:
                    return breakpoint
        return None


def _rsplit(text: str) -> tuple[str, str]:
    """LLVM's `StringRef::rsplit(':')`: around the last colon, or (text, '')."""
    head, colon, tail = text.rpartition(":")
    return (head, tail) if colon else (text, "")


def parse_location_filter(text: str) -> tuple[str, int, int]:
    """`file`, `file:line` or `file:line:col` as (file, line, col), -1 for absent.

    As in MLIR, anything that does not parse as numbers stays part of the file
    name (so `C:\\x.mlir` is a file); only an empty filter is an error.
    """
    if not text:
        raise LocationFilterError(
            "error: initializing FileLineColLocBreakpoint with empty file name"
        )
    file_line, col_text = _rsplit(text)
    file, line_text = _rsplit(file_line)
    line = col = -1
    if not line_text:
        file = file_line
        if col_text:
            parsed = parse_llvm_integer(col_text)
            if parsed is None:
                file = text
            else:
                line = parsed
    else:
        parsed_line = parse_llvm_integer(line_text)
        if parsed_line is None:
            file = file_line
            parsed = parse_llvm_integer(col_text)
            if parsed is None:
                file = text
            else:
                line = parsed
        else:
            line = parsed_line
            parsed_col = parse_llvm_integer(col_text)
            if parsed_col is None:
                file, line = text, -1
            else:
                col = parsed_col
    return file, line, col


# --- the execution context -----------------------------------------------------


@dataclass(eq=False)
class ActionActiveStack:
    """The actions under way on one thread: this one, and the one it is nested in."""

    action: Action
    parent: ActionActiveStack | None = None
    depth: int = 0
    breakpoint: Breakpoint | None = None

    def __iter__(self) -> Iterator[ActionActiveStack]:
        """This entry, then its parents, innermost first."""
        current: ActionActiveStack | None = self
        while current is not None:
            yield current
            current = current.parent


class ExecutionObserver:
    """Watches the actions an `ExecutionContext` executes; override either hook.

    `before_execute` is told whether the action will run (`will_execute`);
    `after_execute` is called only for actions that ran.
    """

    def before_execute(
        self,
        stack: ActionActiveStack,
        breakpoint: Breakpoint | None,
        will_execute: bool,
    ) -> None:
        pass

    def after_execute(self, stack: ActionActiveStack) -> None:
        pass


ActionGate = Callable[[Action], bool]
"""Decides whether an action runs (a `DebugCounter`'s `allows`, for instance)."""

BreakpointCallback = Callable[[ActionActiveStack], bool]
"""Called when an action hits a breakpoint; returns whether it runs."""


@dataclass(eq=False)
class ExecutionContext:
    """An action handler that observers watch (MLIR's `tracing::ExecutionContext`).

    Each action is pushed on a per-thread stack (so observers see nesting), its
    breakpoint looked up, its fate decided (by `gate`, then by `on_breakpoint`
    when a breakpoint was hit), observers told, and the work done or skipped.
    mlir-opt installs one for `--log-actions-to` and `--profile-actions-to`;
    from Python, `gate=counter.allows` adds a debug counter to it, which
    mlir-opt refuses to do.
    """

    observers: list[ExecutionObserver] = field(
        default_factory=lambda: list[ExecutionObserver]()
    )
    breakpoint_managers: list[BreakpointManager] = field(
        default_factory=lambda: list[BreakpointManager]()
    )
    gate: ActionGate | None = None
    on_breakpoint: BreakpointCallback | None = None
    _local: threading.local = field(default_factory=threading.local, repr=False)

    def register_observer(self, observer: ExecutionObserver) -> None:
        self.observers.append(observer)

    def add_breakpoint_manager(self, manager: BreakpointManager) -> None:
        self.breakpoint_managers.append(manager)

    @property
    def active(self) -> ActionActiveStack | None:
        """The innermost action under way on this thread, if any."""
        return getattr(self._local, "stack", None)

    def __call__(self, transform: Transform, action: Action, /) -> None:
        local = self._local
        parent: ActionActiveStack | None = getattr(local, "stack", None)
        stack = ActionActiveStack(
            action, parent, 0 if parent is None else parent.depth + 1
        )
        local.stack = stack
        try:
            breakpoint: Breakpoint | None = None
            for manager in self.breakpoint_managers:
                breakpoint = manager.match(action)
                if breakpoint is not None:
                    break
            stack.breakpoint = breakpoint
            execute = self.gate is None or self.gate(action)
            if breakpoint is not None and self.on_breakpoint is not None:
                execute = self.on_breakpoint(stack) and execute
            for observer in self.observers:
                observer.before_execute(stack, breakpoint, execute)
            if execute:
                transform()
                for observer in self.observers:
                    observer.after_execute(stack)
        finally:
            local.stack = parent


# --- the debug counter ---------------------------------------------------------


class DebugCounterError(PassflowError):
    """A malformed `--mlir-debug-counter` argument; the message is MLIR's."""


@dataclass
class CounterState:
    """One tag's counter: actions seen so far, how many to skip, how many to run
    after that (-1: no limit; a negative `skip` runs everything)."""

    count: int = 0
    skip: int = 0
    stop_after: int = -1

    def __str__(self) -> str:
        return f"{{{self.count},{self.skip},{self.stop_after}}}"


class DebugCounter:
    """An action handler that runs only a window of the actions of each tag.

    With `skip=S` and `count=C` for a tag, the first S actions of that tag are
    skipped, the next C run, and all later ones are skipped (MLIR's
    `tracing::DebugCounter`). Actions of tags without a counter always run.
    Actions are numbered in execution order, from 1; `report()` shows how many
    each counter saw. Bisecting with it is described in `docs/guide.md`.
    """

    def __init__(self) -> None:
        self._counters: dict[str, CounterState] = {}
        self._lock = threading.Lock()

    @classmethod
    def from_arguments(cls, arguments: Iterable[str]) -> DebugCounter:
        """A counter from `--mlir-debug-counter` values: comma-separated
        `TAG-skip=N` and `TAG-count=N` entries (N read as LLVM reads integers).
        Raises `DebugCounterError` with MLIR's message for a malformed entry."""
        counter = cls()
        for argument in arguments:
            for entry in argument.split(","):
                if entry:
                    counter._apply(entry)
        return counter

    def _apply(self, entry: str) -> None:
        name, _, value_text = entry.partition("=")
        if not value_text:
            raise DebugCounterError(
                "error: expected DebugCounter argument to have an `=` separating "
                "the counter name and value, but the provided argument was: "
                f"`{entry}`"
            )
        value = parse_llvm_integer(value_text)
        if value is None:
            raise DebugCounterError(
                "error: expected DebugCounter counter value to be numeric, but got "
                f"`{value_text}`"
            )
        if name.endswith("-skip"):
            self._state(name[: -len("-skip")]).skip = value
        elif name.endswith("-count"):
            self._state(name[: -len("-count")]).stop_after = value
        else:
            raise DebugCounterError(
                "error: expected DebugCounter counter name to end with either "
                f"`-skip` or `-count`, but got`{name}`"
            )

    def _state(self, tag: str) -> CounterState:
        state = self._counters.get(tag)
        if state is None:
            state = self._counters[tag] = CounterState()
        return state

    def add_counter(self, tag: str, skip: int = 0, count: int = -1) -> None:
        """Count actions tagged `tag`: skip the first `skip`, then run `count`
        (-1: all the rest)."""
        if tag in self._counters:
            raise ValueError(f"a counter for action '{tag}' was already registered")
        self._counters[tag] = CounterState(skip=skip, stop_after=count)

    @property
    def counters(self) -> dict[str, CounterState]:
        """A snapshot of every counter, by tag."""
        with self._lock:
            return {
                tag: CounterState(s.count, s.skip, s.stop_after)
                for tag, s in self._counters.items()
            }

    def should_execute(self, tag: str) -> bool:
        """Count one action tagged `tag` and say whether it may run."""
        state = self._counters.get(tag)
        if state is None:
            return True
        with self._lock:
            state.count += 1
            count = state.count
        if state.skip < 0:
            return True
        if state.skip >= count:
            return False
        if state.stop_after < 0:
            return True
        return state.stop_after + state.skip >= count

    def allows(self, action: Action) -> bool:
        """`should_execute` for `action`: an `ExecutionContext` gate."""
        return self.should_execute(action.tag)

    def __call__(self, transform: Transform, action: Action, /) -> None:
        if self.should_execute(action.tag):
            transform()

    def report(self) -> str:
        """MLIR's `--mlir-print-debug-counter` text: `{count,skip,count-limit}`
        per tag, sorted by tag."""
        lines = ["DebugCounter counters:\n"]
        for tag, state in sorted(self.counters.items()):
            lines.append(f"{tag:<32}: {state}\n")
        return "".join(lines)


@functools.cache
def _main_thread_name() -> str:
    """The OS name of the main thread (the program's name), as LLVM reads it."""
    try:
        with open("/proc/self/comm", encoding="utf-8") as stream:
            return stream.read().strip()
    except OSError:
        return ""


def thread_name() -> str:
    """This thread's name as MLIR's action log shows it: the OS thread name
    (the program's, on the main thread and on the deep-stack thread that does
    the main thread's work), else the Python thread name, else the native
    thread id."""
    thread = threading.current_thread()
    if thread is threading.main_thread() or stands_in_for_main_thread(thread):
        return _main_thread_name() or str(threading.get_native_id())
    return thread.name or str(threading.get_native_id())
