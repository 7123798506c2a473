"""Pass managers: ordered passes anchored on an op name, nested by op.

`OpPassManager` is MLIR's: a list of passes for ops called `anchor` (or any op,
for `any`), where `nest("func.func")` adds an `OpToOpPassAdaptor` that runs a
nested pipeline on the matching direct children. This module is the data of a
pass tree and its scheduling rules (which pass may run on which op, MLIR's
adaptor checks; which children an adaptor's pipelines run on), decided once
per pipeline and op name; it runs nothing. The runner (`passflow.runner`),
the layer above, applies the rules: it runs pipelines on ops and adaptors over
their children.

The top-level `PassManager`, which owns the context and the instruments, is in
`passflow.pass_manager`.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator, Sequence
from enum import Enum
from typing import TextIO

from xdsl.passes import ModulePass

from passflow import ir
from passflow.callable_pass import PassCallable, callable_pass, check_undescribed
from passflow.diagnostics import Diagnostic, PassflowError, PassNestingError, Severity
from passflow.ir import Context, Operation, OperationName
from passflow.pass_base import Pass, PassRun
from passflow.xdsl_adapter import adapt, is_module_pass

__all__ = [
    "Nesting",
    "OpPassManager",
    "OpToOpPassAdaptor",
    "anchor_mismatch",
    "op_schedule_error",
    "schedule_error",
]

_NOT_REGISTERED = "trying to schedule a pass on an unregistered operation"
_NOT_ISOLATED = (
    "trying to schedule a pass on an operation not marked as 'IsolatedFromAbove'"
)


def schedule_error(pass_: Pass, name: OperationName) -> str | None:
    """Why `pass_` may not run on ops called `name` (MLIR's adaptor checks), or None."""
    if not name.is_registered:
        return _NOT_REGISTERED
    if not name.has_trait(ir.IsolatedFromAbove):
        return _NOT_ISOLATED
    if not pass_.can_schedule_on(name):
        return f"trying to schedule pass '{pass_.name}' on an unsupported operation"
    return None


def op_schedule_error(pass_: Pass, op: Operation) -> str | None:
    """The per-op half of MLIR's check (`canScheduleOn(Operation *)`), or None."""
    if pass_.can_schedule_on_op(op):
        return None
    return f"trying to schedule pass '{pass_.name}' on an unsupported operation"


class Nesting(Enum):
    """What `add` does with a pass restricted to another op than the manager's.

    IMPLICIT nests it in a new `op_name(...)` pipeline (mlir-opt's pass flags);
    EXPLICIT refuses it with MLIR's "did you intend to nest?" error.
    """

    IMPLICIT = "implicit"
    EXPLICIT = "explicit"


class OpPassManager:
    """An ordered list of passes that runs on ops called `anchor` (`any`: every op)."""

    def __init__(
        self,
        anchor: str = "any",
        nesting: Nesting = Nesting.EXPLICIT,
        *,
        recursive: bool = False,
    ) -> None:
        self._anchor = "any" if anchor in ("", "any") else anchor
        self.nesting = nesting
        self.recursive = recursive
        """Runs on matching ops at any depth (`**anchor(...)`), not only children."""
        self._passes: tuple[Pass, ...] = ()
        self._generation = 0
        self._errors_cache: dict[OperationName, tuple[str | None, ...] | None] = {}
        self._adaptor_flags: tuple[bool, ...] | None = None

    @property
    def anchor(self) -> str:
        """The op name this pipeline runs on, or `any`."""
        return self._anchor

    @property
    def op_name(self) -> str | None:
        """The anchor, or None for an op-agnostic pipeline."""
        return None if self._anchor == "any" else self._anchor

    @property
    def passes(self) -> tuple[Pass, ...]:
        """The passes, in order (read-only: edit with `add`, `insert`, `remove`,
        `replace`, `extend` and `clear`, which keep the cached scheduling
        decisions right)."""
        return self._passes

    def __len__(self) -> int:
        return len(self._passes)

    def __iter__(self) -> Iterator[Pass]:
        return iter(self._passes)

    # --- building -----------------------------------------------------------

    def nest(self, op_name: str, *, recursive: bool = False) -> OpPassManager:
        """A new pipeline for the direct children called `op_name` (MLIR's `nest`);
        `recursive=True` (`**op_name(...)` in text) runs it on such ops at any
        depth, the outermost ones only, as MLIR's recursive anchors."""
        nested = OpPassManager(op_name, self.nesting, recursive=recursive)
        self.add(OpToOpPassAdaptor([nested]))
        return nested

    def nest_any(self) -> OpPassManager:
        """A new op-agnostic pipeline for every schedulable direct child."""
        return self.nest("any")

    def add(
        self,
        pass_: Pass | PassCallable | ModulePass | type[ModulePass],
        name: str | None = None,
        argument: str | None = "",
        description: str | None = "",
        op_name: str | None = "",
    ) -> None:
        """Append a pass; an op-restricted one for another op is nested or refused.

        A callable `run(op, pass_)` is added as a pass, described by `name`,
        `argument`, `description` and `op_name` (MLIR's Python-defined passes,
        `passflow.callable_pass`). An xDSL `ModulePass` instance, or a class
        without required fields, runs as it is (`passflow.xdsl_adapter`).
        Anything else is a `TypeError` that says what to add instead.
        """
        if is_module_pass(pass_):
            check_undescribed(
                f"the xDSL pass '{pass_.name}'", name, argument, description, op_name
            )
            pass_ = adapt(pass_)
        elif not isinstance(pass_, Pass):
            pass_ = callable_pass(pass_, name, argument, description, op_name)
        else:
            check_undescribed(
                f"the pass '{pass_.name}'", name, argument, description, op_name
            )
        pass_op = pass_.op_name
        if pass_op is not None and self.op_name is not None and pass_op != self.op_name:
            if self.nesting is Nesting.IMPLICIT:
                self.nest(pass_op).add(pass_)
                return
            raise PassNestingError(
                f"Can't add pass '{pass_.name}' restricted to '{pass_op}' on a "
                f"PassManager intended to run on '{self._anchor}', did you intend to nest?"
            )
        self._set_passes((*self._passes, pass_))

    def insert(self, index: int, pass_: Pass) -> None:
        """Put `pass_` at `index` exactly as given (no implicit nesting)."""
        passes = list(self._passes)
        passes.insert(index, pass_)
        self._set_passes(passes)

    def extend(self, passes: Iterable[Pass]) -> None:
        """Append `passes` exactly as given (no implicit nesting)."""
        self._set_passes((*self._passes, *passes))

    def remove(self, index: int) -> Pass:
        """Take out and return the pass at `index`."""
        passes = list(self._passes)
        removed = passes.pop(index)
        self._set_passes(passes)
        return removed

    def replace(self, index: int, pass_: Pass) -> Pass:
        """Put `pass_` in place of the pass at `index`; returns the old one."""
        passes = list(self._passes)
        old, passes[index] = passes[index], pass_
        self._set_passes(passes)
        return old

    def clear(self) -> None:
        self._set_passes(())

    def clone(self) -> OpPassManager:
        """A deep copy: every pass cloned, options kept, statistics fresh."""
        new = OpPassManager(self._anchor, self.nesting, recursive=self.recursive)
        new.extend(p.clone() for p in self._passes)
        return new

    def _set_passes(self, passes: Iterable[Pass]) -> None:
        self._passes = tuple(passes)
        self._errors_cache.clear()
        self._adaptor_flags = None
        self._generation = 0

    # --- scheduling ---------------------------------------------------------

    def can_schedule_on(self, name: OperationName) -> bool:
        """Whether this pipeline runs on a child called `name` (MLIR 2.4)."""
        if self._anchor != "any":
            return name.name == self._anchor
        return (
            name.is_registered
            and name.has_trait(ir.IsolatedFromAbove)
            and all(p.can_schedule_on(name) for p in self.passes)
        )

    def schedule_errors(self, name: OperationName) -> tuple[str | None, ...] | None:
        """Per pass, why it may not run on `name`; None when every pass may."""
        cache = self._errors_cache
        if name in cache:
            return cache[name]
        errors = tuple(schedule_error(p, name) for p in self._passes)
        result = errors if any(e is not None for e in errors) else None
        cache[name] = result
        return result

    def op_schedule_error(self, index: int, op: Operation) -> str | None:
        """Why pass `index` may not run on `op` itself (checked per op)."""
        return op_schedule_error(self._passes[index], op)

    def adaptor_flags(self) -> tuple[bool, ...]:
        """Per pass, whether it is an adaptor (verified non-recursively)."""
        flags = self._adaptor_flags
        if flags is None:
            flags = self._adaptor_flags = tuple(p.is_adaptor for p in self._passes)
        return flags

    def dependent_dialects(self) -> list[str]:
        """Every dialect a pass of this pipeline (nested ones included) may create."""
        names: list[str] = []
        for p in self._passes:
            names.extend(p.get_dependent_dialects())
        return names

    def finalize(self, run: PassRun) -> bool:
        """Merge adjacent adaptors and check op-specific pipelines (MLIR 2.3)."""
        merged: list[Pass] = []
        last: OpToOpPassAdaptor | None = None
        ok = True
        for p in self._passes:
            if isinstance(p, OpToOpPassAdaptor):
                if last is not None and p.try_merge_into(last, run.context):
                    continue
                if last is not None:
                    ok = last.finalize(run) and ok
                last = p
            else:
                if last is not None:
                    ok = last.finalize(run) and ok
                    last = None
            merged.append(p)
        if last is not None:
            ok = last.finalize(run) and ok
        if len(merged) != len(self._passes):
            self._set_passes(merged)
        if not ok:
            return False
        if self.op_name is not None:
            name = ir.lookup_operation_name(run.context, self.op_name)
            if name.is_registered:
                for p in self._passes:
                    if not p.can_schedule_on(name):
                        run.emit(
                            Diagnostic(
                                Severity.ERROR,
                                f"unable to schedule pass '{p.name}' on a PassManager "
                                f"intended to run on '{self._anchor}'!",
                            )
                        )
                        return False
        return True

    def initialize(self, run: PassRun, generation: int) -> bool:
        """Call `initialize` on every pass once per generation."""
        if self._generation == generation:
            return True
        self._generation = generation
        for p in self._passes:
            if isinstance(p, OpToOpPassAdaptor):
                if not all(pm.initialize(run, generation) for pm in p.managers):
                    return False
                continue
            try:
                if p.initialize(run.context) is False:
                    return False
            except Exception as err:
                run.emit(
                    Diagnostic(
                        Severity.ERROR,
                        f"pass '{p.name}' crashed in initialize: {type(err).__name__}: {err}",
                    )
                )
                return False
        return True

    # --- printing -----------------------------------------------------------

    def __str__(self) -> str:
        """The textual pipeline, anchor included: `builtin.module(func.func(cse))`."""
        return f"{self.textual_anchor}({','.join(str(p) for p in self._passes)})"

    @property
    def textual_anchor(self) -> str:
        """The anchor as pipeline text writes it: `**` first when recursive."""
        return f"**{self._anchor}" if self.recursive else self._anchor

    def pretty(self, indent: int = 0) -> str:
        """The multi-line form `--dump-pass-pipeline` prints."""
        pad = " " * indent
        inner: list[str] = []
        for p in self._passes:
            if isinstance(p, OpToOpPassAdaptor):
                inner.append(",\n".join(pm.pretty(indent + 2) for pm in p.managers))
            else:
                inner.append(p.pretty(indent + 2))
        return f"{pad}{self.textual_anchor}(\n" + ",\n".join(inner) + f"\n{pad})"

    def dump(self, stream: TextIO | None = None) -> None:
        """MLIR's `OpPassManager::dump`: the count of top-level entries, then `pretty`."""
        out = stream if stream is not None else sys.stderr
        out.write(f"Pass Manager with {len(self._passes)} passes:\n{self.pretty()}\n")


class OpToOpPassAdaptor(Pass):
    """The pass that runs nested pipelines on the direct children of its op:
    its pipelines and which children they run on (`children_to_run`); the
    runner runs them (`passflow.runner.run_adaptor`)."""

    name = "OpToOpPassAdaptor"
    is_adaptor = True

    def __init__(self, managers: list[OpPassManager]) -> None:
        super().__init__()
        self.managers = managers
        self._by_name: dict[OperationName, int | None] = {}
        self._by_class: dict[type[Operation], int | None] = {}
        """`manager_index_for` by the class of a registered op: one lookup per
        child in `children_to_run`."""

    @property
    def display_name(self) -> str:
        """`Pipeline Collection : ['a', 'b']`, as MLIR's timing and statistics show."""
        names = ", ".join(f"'{pm.textual_anchor}'" for pm in self.managers)
        return f"Pipeline Collection : [{names}]"

    def __str__(self) -> str:
        return ",".join(str(pm) for pm in self.managers)

    def manager_index_for(self, name: OperationName) -> int | None:
        """Index of the first pipeline (in sorted order) that runs on ops called `name`."""
        cache = self._by_name
        if name in cache:
            return cache[name]
        found = next(
            (i for i, pm in enumerate(self.managers) if pm.can_schedule_on(name)), None
        )
        cache[name] = found
        return found

    def children_to_run(self, op: Operation) -> list[tuple[int, Operation]]:
        """(pipeline index, op) for every op the pipelines run on, in program order:
        the direct children of `op`, and for recursive pipelines the outermost
        matching ops at any depth."""
        by_class = self._by_class
        index_of = self._index_of
        deep = any(pm.recursive for pm in self.managers)
        items: list[tuple[int, Operation]] = []
        pending = [op]
        while pending:
            parent = pending.pop()
            found: list[tuple[int, Operation]] = []
            below: list[Operation] = []
            for region in parent.regions:
                for block in region.blocks:
                    child = block.first_op
                    while child is not None:
                        kind = type(child)
                        index = by_class[kind] if kind in by_class else index_of(child)
                        if index is not None and (
                            parent is op or self.managers[index].recursive
                        ):
                            found.append((index, child))
                        elif deep:
                            below.append(child)
                        child = child.next_op
            items.extend(found)
            pending.extend(reversed(below))
        if deep:
            order = {id(o): i for i, o in enumerate(op.walk())}
            items.sort(key=lambda item: order[id(item[1])])
        return items

    def _index_of(self, child: Operation) -> int | None:
        """`manager_index_for` the name of `child`, remembered by its class
        when the class is the name's (a registered op: every op of the class
        has the name)."""
        name = ir.operation_name(child)
        index = self.manager_index_for(name)
        kind = type(child)
        if name.op_class is kind:
            self._by_class[kind] = index
        return index

    def _forget_indices(self) -> None:
        """Drop what `manager_index_for` and `_index_of` remember: the
        pipelines changed."""
        self._by_name.clear()
        self._by_class.clear()

    def run_on_operation(self) -> None:
        """Never called: the runner runs an adaptor itself
        (`passflow.runner.run_adaptor`), as MLIR's `OpToOpPassAdaptor::run` calls
        the adaptor's own `runOnOperation(verifyPasses)`, not `runOnOperation()`."""
        raise PassflowError(
            f"pass '{self.name}' runs through passflow.runner.run_adaptor, "
            "not run_on_operation"
        )

    def nested_pipelines(self) -> Sequence[OpPassManager]:
        return self.managers

    def get_dependent_dialects(self) -> list[str]:
        return [d for pm in self.managers for d in pm.dependent_dialects()]

    def clone(self) -> OpToOpPassAdaptor:
        return OpToOpPassAdaptor([pm.clone() for pm in self.managers])

    def finalize(self, run: PassRun) -> bool:
        self._forget_indices()
        return all(pm.finalize(run) for pm in self.managers)

    def try_merge_into(self, rhs: OpToOpPassAdaptor, context: Context) -> bool:
        """Merge this (later) adaptor into `rhs` unless an `any` pipeline conflicts."""
        if _generic_conflicts(
            self.managers, rhs.managers, context
        ) or _generic_conflicts(rhs.managers, self.managers, context):
            return False
        for pm in self.managers:
            target = next(
                (
                    other
                    for other in rhs.managers
                    if other.op_name is not None
                    and other.anchor == pm.anchor
                    and other.recursive == pm.recursive
                ),
                None,
            )
            if target is None:
                rhs.managers.append(pm)
            else:
                target.extend(pm.passes)
        rhs.managers.sort(key=lambda pm: (pm.op_name is None, pm.op_name or ""))
        rhs._forget_indices()
        return True


def _generic_conflicts(
    lhs: list[OpPassManager], rhs: list[OpPassManager], context: Context
) -> bool:
    """An `any` pipeline in `lhs` conflicts with `rhs` if it could run on one of
    rhs's anchors, or if rhs has an `any` pipeline too."""
    for generic in (pm for pm in lhs if pm.op_name is None):
        for other in rhs:
            if other.op_name is None:
                return True
            if generic.can_schedule_on(
                ir.lookup_operation_name(context, other.op_name)
            ):
                return True
    return False


def anchor_mismatch(pipeline: OpPassManager, op: Operation) -> Diagnostic | None:
    """MLIR's refusal to run a pipeline anchored on another op than `op`, or None
    when the anchor fits.

    mlir-opt's line leaves a newcomer guessing (`-p 'func.func(cse)'` on a
    module), so a note gives the pipeline that does run: wrapped in the op's
    name when the op holds ops of the anchor's name (`**` when only deeper).
    """
    name = ir.operation_name(op).name
    if pipeline.op_name is None or pipeline.op_name == name:
        return None
    error = Diagnostic(
        Severity.ERROR,
        f"can't run '{pipeline.anchor}' pass manager on '{name}' op",
        ir.location(op),
    )
    anchor = pipeline.op_name
    if any(ir.operation_name(c).name == anchor for c in ir.direct_children(op)):
        fixed = f"{name}({pipeline})"
        where = f"the '{anchor}' ops in '{name}'"
    elif any(ir.operation_name(d).name == anchor for d in op.walk()):
        fixed = (
            f"{name}(**{pipeline})" if not pipeline.recursive else f"{name}({pipeline})"
        )
        where = f"the '{anchor}' ops at any depth in '{name}'"
    else:
        error.attach_note(
            f"the input's top-level op is '{name}', which holds no '{anchor}' op: "
            f"anchor the pipeline on it, as `{name}(...)`"
        )
        return error
    error.attach_note(f"to run it on {where}, write `{fixed}`")
    return error
