"""PipelineBuilder: compose a pipeline from pieces whose authors never meet (MLIR's "Pass Manager Builder" proposal).

A framework builds its pipeline with `add`, `nest` and bundles, and then hands the
builder to extensions. An extension places its passes relative to passes it can
name, either by argument (`"one-shot-bufferize"`) or by kind
(`PassKind.BUFFERIZATION`), using `insert_before`, `insert_after`, `replace` and
`remove`. Ordering constraints are checked after every call, or at the end of an
`extension()` block, and whatever breaks one fails and leaves the builder unchanged.
`build()` checks them again, flattens the result into an ordinary `PassManager`, and
records what it did in `report`. `explain()` says who placed each pass and why it is
where it is.
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Callable, Generator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TypeAlias, cast

from xdsl.passes import ModulePass

from passflow.builder.bundles import Bundle, cleanup
from passflow.builder.checks import Check, Evaluation, Rule, evaluate, unknown_kinds
from passflow.builder.compare import PipelineDiff, diff_pass_managers
from passflow.builder.constraints import (
    CONSTRAINT_TYPES,
    Constraint,
    ContradictionError,
    FollowedByCleanup,
    OrderingError,
    PrecededByCleanup,
    Violation,
)
from passflow.builder.discovery import (
    EXTENSION_GROUP,
    Extension,
    extension_error,
    find_extensions,
)
from passflow.builder.entries import (
    Entry,
    Level,
    NestedEntry,
    Origin,
    PassEntry,
    PointEntry,
    copy_level,
    entries_from,
    pass_entries,
)
from passflow.builder.errors import (
    AnchorNotFoundError,
    BuilderError,
    OrderingWarning,
    UnknownKindWarning,
)
from passflow.builder.explain import render
from passflow.builder.kinds import Anchor, anchor_code, is_anchor
from passflow.builder.plan import make_plan
from passflow.builder.quick import quick_check
from passflow.builder.search import (
    Occurrence,
    Site,
    boundary,
    matching_in,
    misfit,
    misplaced,
    placement,
    select,
    unwrap,
)
from passflow.builder.source import python_source
from passflow.builder.tree import Tree
from passflow.diagnostics import Severity
from passflow.ir import Context
from passflow.manager import OpPassManager
from passflow.pass_base import Pass
from passflow.pass_manager import PassManager
from passflow.pipeline_text import parse_pass_pipeline, parse_pipeline_elements
from passflow.xdsl_adapter import adapt, is_module_pass

__all__ = ["BuildReport", "PipelineBuilder", "diff_pipelines"]

Item: TypeAlias = "Pass | ModulePass | type[ModulePass] | Bundle | str"
"""What can be added or inserted: a pass, a bundle, or pipeline text such as
`"canonicalize{max-iterations=3}"` or `"func.func(cse)"`."""


@dataclass(frozen=True)
class BuildReport:
    """What the last `build()` did besides flattening.

    `notes` lists the bundles it collapsed and the empty pipelines it dropped, and
    `warnings` lists the weak constraints it let through at WARNING severity.
    """

    notes: tuple[str, ...]
    warnings: tuple[Violation, ...]

    def __str__(self) -> str:
        lines = [f"note: {note}" for note in self.notes]
        lines.extend(str(w) for w in self.warnings)
        return "\n".join(lines) if lines else "nothing to report"


@dataclass(eq=False)
class _Shared:
    """State shared by a builder and the views `nest()` returns on its nested pipelines."""

    root: Level
    framework: str
    weak_severity: Severity
    rules: list[Rule] = field(default_factory=lambda: list[Rule]())
    extensions: list[str] = field(default_factory=lambda: list[str]())
    history: list[str] = field(default_factory=lambda: list[str]())
    splits: list[str] = field(default_factory=lambda: list[str]())
    warned: set[tuple[object, ...]] = field(
        default_factory=lambda: set[tuple[object, ...]]()
    )
    report: BuildReport | None = None
    auto_cleanup: Bundle | None = None
    has_broken: bool = False
    """The last full evaluation found broken weak constraints (warned about)."""
    marks: list[tuple[int, int, int, dict[str, PointEntry], int]] = field(
        default_factory=lambda: list[tuple[int, int, int, dict[str, PointEntry], int]]()
    )
    points: dict[str, PointEntry] = field(default_factory=lambda: {})
    scopes: list[tuple[dict[str, frozenset[str]], dict[type, frozenset[str]]]] = field(
        default_factory=lambda: list[
            tuple[dict[str, frozenset[str]], dict[type, frozenset[str]]]
        ]()
    )
    """The builder's kind tags at each `begin`, to put back on rollback."""
    tree: Tree = field(init=False)

    def __post_init__(self) -> None:
        self.tree = Tree(self.root)

    def copy(self) -> _Shared:
        """An independent copy of the pipeline and its state, passes cloned."""
        copies: dict[int, Entry] = {}
        root = copy_level(self.root, copies)
        new = _Shared(
            root,
            self.framework,
            self.weak_severity,
            list(self.rules),
            history=list(self.history),
            splits=list(self.splits),
            warned={
                tuple(copies.get(id(part), part) for part in key) for key in self.warned
            },
            report=self.report,
            auto_cleanup=self.auto_cleanup,
            has_broken=self.has_broken,
            points={
                name: cast(PointEntry, copies[id(entry)])
                for name, entry in self.points.items()
            },
        )
        new.tree.scope = self.tree.scope.copy()
        new.tree.renumber()
        new.tree.dirty = self.tree.dirty
        return new

    def placed_by(self) -> str:
        if self.extensions:
            return f"extension '{'/'.join(self.extensions)}'"
        return self.framework

    def evaluate(self) -> Evaluation:
        return evaluate(make_plan(self.root), self.rules, self.weak_severity)

    def begin(self) -> None:
        """Start a transaction: a call, an extension block, a build."""
        self.tree.begin()
        self.marks.append(
            (
                len(self.rules),
                len(self.history),
                len(self.splits),
                dict(self.points),
                self.tree.scope.generation,
            )
        )
        self.scopes.append(self.tree.scope.snapshot())

    def commit(self) -> None:
        self.tree.commit()
        self.marks.pop()
        self.scopes.pop()

    def rollback(self) -> None:
        """Put every level, bundle, rule, tag and log back as they were at `begin`."""
        self.tree.rollback()
        rules, history, splits, points, generation = self.marks.pop()
        saved = self.scopes.pop()
        if self.tree.scope.generation != generation:
            self.tree.scope.restore(saved)
            self.tree.dirty = True
        self.points = points
        if len(self.rules) != rules:
            self.tree.dirty = True
        del self.rules[rules:]
        del self.history[history:]
        del self.splits[splits:]

    def check(self, what: str) -> None:
        """Raise for errors in the pipeline as it stands, then warn about new weak violations.

        A pass that needs a cleanup and has none after it is not reported yet,
        because a later call may append one. `build()` reports it.
        """
        tree = self.tree
        if not (tree.dirty or self.has_broken) and quick_check(tree, self.rules):
            tree.added.clear()
            return
        evaluation = self.settle(final=False)
        self.raise_broken(what, evaluation, final=False)
        self.warn_new(evaluation, final=False)
        self.settled(evaluation)

    def settled(self, evaluation: Evaluation) -> None:
        """Record that the pipeline was fully evaluated as it stands."""
        self.has_broken = any(c.broken and not c.pending for c in evaluation.checks)
        self.tree.added.clear()
        self.tree.dirty = False

    def settle(self, *, final: bool) -> Evaluation:
        """Evaluate, letting the cleanup policy (if enabled) insert the cleanups that
        constraints need first; pending needs only when `final`."""
        evaluation = self.evaluate()
        if self.auto_cleanup is None:
            return evaluation
        tried: set[tuple[int, type]] = set()
        while True:
            need = _cleanup_need(evaluation, final, tried)
            if need is None:
                return evaluation
            tried.add((id(need.subject.entry), type(need.constraint)))
            after = isinstance(need.constraint, FollowedByCleanup)
            target: Entry = need.subject.bundle or need.subject.entry
            level = target.home
            assert isinstance(level, Level)
            origin = Origin(
                "the cleanup policy",
                f"auto_cleanup() for {need.constraint} of '{need.subject.display}'",
            )
            index = level.position(target) + after
            units = entries_from(self.auto_cleanup, origin, ())
            self.tree.insert(level, index, units)
            evaluation = self.evaluate()

    def raise_broken(self, what: str, evaluation: Evaluation, *, final: bool) -> None:
        """Raise ContradictionError or OrderingError if the evaluation has errors."""
        broken = evaluation.broken(Severity.ERROR, final=final)
        if evaluation.cycle:
            violations = tuple(c.violation() for c in evaluation.checks if c.broken)
            chain = "\n".join(f"  {link}" for link in evaluation.cycle)
            raise ContradictionError(
                f"{what}: no order of these passes satisfies their constraints, "
                f"because they form a cycle:\n{chain}\n  fix: remove one of these "
                "passes or drop one of these constraints; moving passes cannot help",
                violations,
                evaluation.cycle,
            )
        if broken:
            count = f"{len(broken)} ordering constraint{'s' * (len(broken) > 1)}"
            body = "\n".join(f"- {c.message}" for c in broken)
            raise OrderingError(
                f"{what}: {count} broken:\n{body}",
                tuple(c.violation() for c in broken),
            )

    def warn_new(self, evaluation: Evaluation, *, final: bool) -> None:
        """Issue an OrderingWarning for each weak violation not warned about yet."""
        for check in evaluation.broken(Severity.WARNING, final=final):
            key = check.key()
            if key not in self.warned:
                self.warned.add(key)
                warnings.warn(
                    OrderingWarning(check.message), stacklevel=_user_stacklevel()
                )


def _cleanup_need(
    evaluation: Evaluation, final: bool, tried: set[tuple[int, type]]
) -> Check | None:
    """The broken cleanup constraint the policy fixes next, if any.

    A FollowedByCleanup is "eventually", so one cleanup after the last pass that
    needs one serves every earlier one: the last is fixed first, and adjacent
    bundles share its cleanup. Each need is tried once, so a need that a cleanup
    cannot meet is reported, not looped on.
    """
    needs = [
        c
        for c in evaluation.checks
        if c.broken
        and (final or not c.pending)
        and isinstance(c.constraint, FollowedByCleanup | PrecededByCleanup)
        and (id(c.subject.entry), type(c.constraint)) not in tried
    ]
    followed = [c for c in needs if isinstance(c.constraint, FollowedByCleanup)]
    if followed:
        return max(followed, key=lambda c: c.subject.number)
    return needs[0] if needs else None


def _user_stacklevel() -> int:
    """The stacklevel of the first caller outside passflow.builder, for warnings.warn.

    contextlib is skipped too, so that a warning issued when an `extension()` block
    ends points at the `with` statement.
    """
    frame = inspect.currentframe()
    level = 0
    while frame is not None:
        module = str(frame.f_globals.get("__name__", ""))
        if level > 0 and not module.startswith(("passflow.builder", "contextlib")):
            return level
        frame = frame.f_back
        level += 1
    return level


class PipelineBuilder:
    """A pipeline under construction, in which passes can be placed anywhere.

    `PipelineBuilder("builtin.module")` starts an empty pipeline on module ops. The
    framework that creates it is named `framework` in `explain()`. Weak constraints
    that are broken are warnings unless `weak_severity=Severity.ERROR`; strong ones
    and contradictions are always errors.

    Every call is all-or-nothing. A call that raises leaves the builder exactly as it
    was, so an extension can catch the error and try something else.
    """

    def __init__(
        self,
        anchor: str = "builtin.module",
        *,
        framework: str | None = None,
        weak_severity: Severity = Severity.WARNING,
    ) -> None:
        if weak_severity not in (Severity.WARNING, Severity.ERROR):
            raise BuilderError(
                f"weak_severity={weak_severity} is not a severity the builder can "
                "apply; fix: use Severity.WARNING (the default) or Severity.ERROR"
            )
        self._level = Level("any" if anchor in ("", "any") else anchor)
        label = "framework" if framework is None else f"framework '{framework}'"
        self._shared = _Shared(self._level, label, weak_severity)
        self._enclosing: tuple[str, ...] = ()

    @classmethod
    def from_pass_manager(
        cls,
        pm: OpPassManager,
        *,
        framework: str | None = None,
        weak_severity: Severity = Severity.WARNING,
    ) -> PipelineBuilder:
        """A builder holding copies of `pm`'s passes, anchored where `pm` is.

        This is how a framework that already has a pass manager opens it to
        extensions: `PipelineBuilder.from_pass_manager(pm)` then `insert_before`
        and friends, then `build()`. `pm` itself is left unchanged. Nested
        pipelines become nested levels that anchors search, as if built with
        `nest()`. Constraints are checked once, on the whole pipeline.
        """
        given = cast(object, pm)  # callers may be untyped
        if not isinstance(given, OpPassManager):
            raise BuilderError(
                f"from_pass_manager({given!r}): expected a PassManager or "
                "OpPassManager; fix: for pipeline text use "
                "PipelineBuilder.from_text(text)"
            )
        builder = cls(pm.anchor, framework=framework, weak_severity=weak_severity)
        builder._load("from_pass_manager", [p.clone() for p in pm.passes])
        return builder

    @classmethod
    def from_text(
        cls,
        text: str,
        *,
        framework: str | None = None,
        weak_severity: Severity = Severity.WARNING,
    ) -> PipelineBuilder:
        """A builder for anchored pipeline text, `"builtin.module(func.func(cse))"`.

        The text is MLIR's textual pass pipeline, anchor included, exactly what
        `str(pm)` prints and `mlir-opt --pass-pipeline` takes; the builder is
        anchored on that op. Text without an anchor is refused with MLIR's parse
        error, since the builder cannot guess which op it runs on.
        """
        given = cast(object, text)  # callers may be untyped
        if not isinstance(given, str):
            raise BuilderError(
                f"from_text({given!r}): expected anchored pipeline text such as "
                '"builtin.module(cse)"; fix: for a pass manager use '
                "PipelineBuilder.from_pass_manager(pm)"
            )
        pm = parse_pass_pipeline(text)
        builder = cls(pm.anchor, framework=framework, weak_severity=weak_severity)
        builder._load("from_text", list(pm.passes))
        return builder

    def _load(self, via: str, passes: list[Pass]) -> None:
        origin = self._origin(via)
        entries = [e for p in passes for e in entries_from(p, origin, ())]
        self._apply(via, lambda: self._append(entries))

    def _append(self, entries: list[Entry]) -> None:
        self._shared.tree.insert(self._level, len(self._level.entries), entries)

    def copy(self) -> PipelineBuilder:
        """An independent builder holding clones of this one's passes.

        Rules, extension points, the cleanup policy, provenance and the warnings
        already issued come along, so the copy builds the same pipeline and
        `explain()` tells the same story; editing either never changes the
        other. A pipeline graph copies the builders of its stages this way, so
        that an extension inserting into a stage edits the copy of one schedule
        build, never the framework's builder.
        """
        self._require_root("copy()")
        if self._shared.marks:
            raise BuilderError(
                "copy() was called inside an extension() block, whose changes are "
                "not settled yet; fix: copy the builder before or after the block"
            )
        shared = self._shared.copy()
        return PipelineBuilder._view(shared.root, shared, ())

    @classmethod
    def _view(
        cls, level: Level, shared: _Shared, enclosing: tuple[str, ...]
    ) -> PipelineBuilder:
        view = cls.__new__(cls)
        view._level = level
        view._shared = shared
        view._enclosing = enclosing
        return view

    @property
    def anchor(self) -> str:
        """The op this pipeline runs on (`builtin.module`, `func.func`, or `any`)."""
        return self._level.anchor

    @property
    def report(self) -> BuildReport | None:
        """What the last `build()` collapsed, dropped and warned about (None before)."""
        return self._shared.report

    def __contains__(self, anchor: object) -> bool:
        """`"one-shot-bufferize" in builder`: whether a pass matches, nested ones included."""
        return is_anchor(anchor) and bool(
            matching_in(self._shared.tree, cast(Anchor, anchor), self._level)
        )

    # --- building, for the framework -----------------------------------------

    def add(self, item: Item, *, kinds: tuple[str, ...] = ()) -> None:
        """Append a pass, a bundle or pipeline text to this pipeline.

        `kinds` adds kinds to the added passes, for passes whose class declares none.
        Those kinds carry over when another pass replaces one of these passes.
        """
        what = f"add({_item_code(item)})"
        item = self._check_item(what, item, kinds)
        entries = entries_from(item, self._origin("add"), kinds)
        path = (*self._enclosing, self.anchor)
        op = misfit(entries, self.anchor, path)
        if op is not None:
            raise BuilderError(f"{what}: {misplaced(op, self.anchor, path)}")
        self._apply(what, lambda: self._append(entries))

    def nest(self, op_name: str) -> PipelineBuilder:
        """Append a nested pipeline on `op_name` ops and return a builder for it.

        The returned builder adds to the nested pipeline, and its searches stay
        inside it. It shares everything else (rules, extensions, checks) with this
        builder. Build from the builder you created.
        """
        level = Level("any" if op_name in ("", "any") else op_name)
        via = f'nest("{op_name}")'
        entry = NestedEntry(level, self._origin(via))
        self._apply(via, lambda: self._append([entry]))
        return PipelineBuilder._view(
            level, self._shared, (*self._enclosing, self.anchor)
        )

    def require(self, subject: Anchor, *constraints: Constraint) -> None:
        """Make every pass matching `subject` satisfy `constraints`, now and later.

        This is how a framework states pipeline-wide policy, for example
        `require(PassKind.EARLY_OPTIMIZATION, FollowedByCleanup())`. A pass's own
        needs belong in its class: `ordering = (Requires(PassKind.BUFFERIZATION),)`.
        """
        if not is_anchor(subject):
            raise BuilderError(
                f"require({subject!r}, ...): the subject is not a pass argument, a "
                "PassKind or a pass class; fix: e.g. require(PassKind.LOWERING, ...)"
            )
        what = f"require({anchor_code(subject)}, ...)"
        given = cast(tuple[object, ...], constraints)  # callers may be untyped
        if not given or not all(isinstance(c, CONSTRAINT_TYPES) for c in given):
            raise BuilderError(
                f"{what} needs one or more constraints; fix: pass Requires(...), "
                "AfterLast(...), BeforeFirst(...), FollowedByCleanup() or "
                "PrecededByCleanup()"
            )
        rules = [Rule(subject, c, self._shared.placed_by()) for c in constraints]

        def change() -> None:
            self._shared.rules.extend(rules)
            self._shared.tree.dirty = True

        self._apply(what, change)

    def tag_kinds(
        self, target: str | type[Pass] | type[ModulePass], *kinds: str
    ) -> None:
        """Give kinds to passes you don't own, in this builder only (and its copies).

        `builder.tag_kinds("convert-foo-to-spirv", PassKind.LOWERING)` by argument,
        or `builder.tag_kinds(VendorTiling, PassKind("Tiling"))` by class
        (subclasses too; an xDSL `ModulePass` class tags the adapter that runs
        it). The tags apply to the passes already placed and to those placed
        later, and are undone with the call or `extension()` block that made them
        if it fails. Another builder is not affected: for a pass's own kinds,
        everywhere, its author uses `passflow.builder.tag_kinds` or its class's
        `kinds`.
        """
        scope = self._shared.tree.scope

        def change() -> None:
            scope.tag(target, kinds, "tag_kinds")
            self._shared.tree.dirty = True

        self._apply(f"tag_kinds({_item_code(target)}, ...)", change)

    def extension_point(self, name: str) -> None:
        """Declare, here, a named place where extensions add passes with `add_at`.

        This is the LLVM-style alternative to anchoring on passes: a framework
        names the places it offers ("after-bufferization", "before-lowering"),
        empty until an extension adds something, and an extension that knows the
        name needs to know nothing about the passes around it. Passes added at a
        point run in the order they were added, right where the point was
        declared. Names are unique within a builder (nested pipelines included).
        """
        given = cast(object, name)  # callers may be untyped
        if not isinstance(given, str) or not given.strip():
            raise BuilderError(
                f"extension_point({given!r}): expected a name; fix: "
                'extension_point("after-bufferization")'
            )
        via = f'extension_point("{name}")'
        existing = self._shared.points.get(name)
        if existing is not None:
            raise BuilderError(
                f"{via}: the extension point '{name}' is already declared (placed by "
                f"{existing.origin}); fix: give this one another name"
            )
        entry = PointEntry(name, self._origin(via))

        def change() -> None:
            self._append([entry])
            self._shared.points[name] = entry

        self._apply(via, change)

    @property
    def extension_points(self) -> tuple[str, ...]:
        """The names of the extension points declared so far, in declaration order."""
        return tuple(self._shared.points)

    def add_at(self, point: str, item: Item, *, kinds: tuple[str, ...] = ()) -> None:
        """Add a pass, a bundle or pipeline text at the extension point `point`.

        It runs after whatever was added at the point before, in the pipeline
        where the point was declared. Raises AnchorNotFoundError, listing the
        points declared, when there is no such point, so an extension can fall
        back as it does for a missing pass.
        """
        what = f'add_at("{point}", {_item_code(item)})'
        item = self._check_item(what, item, kinds)
        shared = self._shared
        entry = shared.points.get(point)
        if entry is None:
            declared = ", ".join(f"'{p}'" for p in shared.points) or "(none)"
            raise AnchorNotFoundError(
                f"{what}: no extension point '{point}' in this pipeline\n"
                f"  extension points declared: {declared}\n"
                "  fix: use one of these, or catch AnchorNotFoundError to fall back "
                f"when a framework offers no '{point}' point",
                anchor=point,
                arguments=(),
                kinds=(),
            )
        level = entry.home
        assert level is not None
        units = entries_from(item, self._origin(f'add_at("{point}")'), kinds)
        path = _anchors_to(level)
        op = misfit(units, level.anchor, path)
        if op is not None and op in path:
            raise BuilderError(
                f"{what}: it runs on '{op}' ops, which enclose the '{level.anchor}' "
                f"pipeline of the point '{point}', so it would never run there; "
                f"fix: add it at a point of the '{op}' pipeline"
            )
        if op is not None:
            raise BuilderError(f"{what}: {misplaced(op, level.anchor, path)}")
        units = unwrap(units, level)

        def change() -> None:
            shared.tree.insert(level, shared.tree.position(level, entry), units)

        self._apply(what, change)

    def load_extensions(
        self, *extra: Extension[PipelineBuilder], group: str = EXTENSION_GROUP
    ) -> tuple[str, ...]:
        """Run every extension declared in the entry-point group `group`, and `extra`.

        Each runs as `register(builder)` inside `extension(name)`, in name order,
        so it is attributed and all-or-nothing. Every extension runs, whatever
        the others do: one whose module is missing or fails to import is skipped,
        one that raises is undone alone, and then one `ExtensionError` lists every
        failure (the extension, its entry point and distribution, the error),
        the builder keeping what the others did. A discovered extension wins
        over an `extra` one of the same name. Returns the names run.
        """
        found = {extension.name: extension for extension in extra}
        discovered, failures = find_extensions(group)
        found.update((e.name, e) for e in discovered)
        ran: list[str] = []
        for name in sorted(found):
            extension = found[name]
            try:
                with self.extension(name):
                    extension.register(self)
            except Exception as err:
                failures.append(extension.failure(err))
            else:
                ran.append(name)
        if failures:
            failures.sort(key=lambda failure: failure.name)
            raise extension_error(
                "load_extensions()", failures, len(ran) + len(failures), tuple(ran)
            )
        return tuple(ran)

    def auto_cleanup(
        self, bundle: Bundle | None = None, *, enabled: bool = True
    ) -> None:
        """Opt in to a policy that inserts `bundle` (default `cleanup()`) wherever a
        `FollowedByCleanup` or `PrecededByCleanup` constraint needs one.

        Without it, such a need is a violation whose fix line says where to put
        a cleanup; with it, the builder puts one there, attributed in `explain()` to
        "the cleanup policy" and the constraint that needed it. Since
        FollowedByCleanup means "eventually", one cleanup after the last pass that
        needs one serves all the passes (and adjacent bundles) before it. A need
        still waiting for a cleanup at the end of the pipeline is met by `build()`.
        `enabled=False` turns the policy off again.
        """
        given = cast(object, bundle)  # callers may be untyped
        if given is not None and not isinstance(given, Bundle):
            raise BuilderError(
                f"auto_cleanup({given!r}): expected a Bundle, or nothing for "
                "cleanup(); fix: auto_cleanup() or auto_cleanup(Bundle(...))"
            )
        shared = self._shared
        shared.auto_cleanup = (bundle or cleanup()) if enabled else None

        def change() -> None:
            shared.tree.dirty = True

        self._apply("auto_cleanup()", change)

    @contextmanager
    def extension(self, name: str) -> Generator[None, None, None]:
        """Attribute what happens inside the block to extension `name`, all-or-nothing.

        If the block raises, every change made inside it is undone before the
        exception propagates. An extension can therefore try one integration and
        fall back to another, and a framework can drop an extension that fails.
        Ordering constraints are checked when the block ends, not after each call
        in it, so an edit made of several calls (a pass, then the cleanup it needs)
        is judged as a whole. Anchors are still resolved call by call. Nested blocks
        are shown as `outer/inner`, and each block is checked when it ends.
        """
        if not name.strip():
            raise BuilderError(
                "extension() needs a name, which explain() shows for every pass "
                'placed in the block; fix: builder.extension("my-extension")'
            )
        shared = self._shared
        shared.begin()
        pushed = not shared.extensions or shared.extensions[-1] != name
        if pushed:
            shared.extensions.append(name)
        try:
            try:
                yield
            finally:
                if pushed:
                    shared.extensions.pop()
            shared.check(
                f"the changes of extension '{name}' were undone (the builder is "
                "unchanged)"
            )
        except BaseException:
            shared.rollback()
            raise
        shared.commit()

    # --- editing, for extensions ---------------------------------------------

    def insert_before(
        self,
        new: Item,
        anchor: Anchor,
        *,
        occurrence: Occurrence = 0,
        kinds: tuple[str, ...] = (),
    ) -> None:
        """Insert `new` before the first pass matching `anchor` (or the occurrence asked).

        The position is resolved now. A pass matching `anchor` that is added later
        does not move `new`; to keep `new` before every such pass whatever happens
        later, give its class `ordering = (BeforeFirst(anchor),)`. Anchoring on a pass
        inside a bundle inserts before the whole bundle. A pass restricted to an op
        goes into the innermost pipeline around the anchor that can run it.
        Raises AnchorNotFoundError if nothing matches.
        """
        self._insert("insert_before", new, anchor, occurrence, kinds, after=False)

    def insert_after(
        self,
        new: Item,
        anchor: Anchor,
        *,
        occurrence: Occurrence = -1,
        kinds: tuple[str, ...] = (),
    ) -> None:
        """Insert `new` after the last pass matching `anchor` (or the occurrence asked).

        This mirrors `insert_before`: the "Pass Manager Builder" proposal's rule searches from the end, so that
        "after bufferization" means after all of it.
        """
        self._insert("insert_after", new, anchor, occurrence, kinds, after=True)

    def replace(
        self,
        anchor: Anchor,
        new: Item,
        *,
        occurrence: Occurrence | None = None,
        kinds: tuple[str, ...] = (),
        keep_kinds: bool = False,
    ) -> None:
        """Put `new` where the pass matching `anchor` is, inside its bundle if it has one.

        By default exactly one pass may match. Otherwise AmbiguousAnchorError lists
        the matches; pass `occurrence` to choose. `new` has its own kinds (its
        class's, the table's, its tags) plus `kinds`; with `keep_kinds=True` it
        also takes those given to the old pass with `add(..., kinds=...)`, so that
        kind anchors of other extensions still find it. Every constraint is
        checked again.
        """
        via = _call("replace", anchor, occurrence, None)
        placed = self._check_item(via, new, kinds)
        sites = select(via, anchor, occurrence, self._level, self._shared.tree)
        origin = self._origin(via)

        def change() -> None:
            for site in sites:
                tags = (*kinds, *site.entry.tags) if keep_kinds else kinds
                units = entries_from(_fresh(placed, site is sites[0]), origin, tags)
                self._replace_at(via, site, units)
                self._shared.history.append(
                    f"replaced {site.describe()} with {_item_code(new)}: "
                    f"{origin.placed_by} via {via}"
                )
            self._shared.tree.changed()

        self._apply(via, change)

    def remove(self, anchor: Anchor, *, occurrence: Occurrence | None = None) -> None:
        """Remove the pass matching `anchor` (exactly one by default, as `replace`).

        A bundle that loses its last pass disappears. Every constraint is checked
        again, so removing a pass that another pass requires fails and says which.
        """
        via = _call("remove", anchor, occurrence, None)
        sites = select(via, anchor, occurrence, self._level, self._shared.tree)
        placed_by = self._shared.placed_by()
        tree = self._shared.tree

        def change() -> None:
            for site in sites:
                level, container = site.steps[-1]
                tree.touch(level.entries)
                if site.bundle is not None:
                    members = site.bundle.members
                    tree.touch(members)
                    del members[_position(members, site.entry)]
                    if not members:
                        del level.entries[level.position(container)]
                else:
                    del level.entries[level.position(site.entry)]
                self._shared.history.append(
                    f"removed {site.describe()}: {placed_by} via {via}"
                )
            tree.changed()

        self._apply(via, change)

    # --- results ---------------------------------------------------------------

    def build(self, context: Context | None = None) -> PassManager:
        """Check every constraint, then return the flat pipeline as a new PassManager.

        Raises ContradictionError or OrderingError for errors. Weak violations at
        WARNING severity are issued as OrderingWarning and listed in `report`, along
        with the bundles that were collapsed. The manager holds copies of the
        passes, so the builder can be built again, or edited and rebuilt.
        """
        self._require_root("build()")
        shared = self._shared
        shared.begin()
        try:
            evaluation = shared.settle(final=True)
            shared.raise_broken("build() failed", evaluation, final=True)
        except BaseException:
            shared.rollback()
            raise
        shared.commit()
        shared.settled(evaluation)
        self._shared.warn_new(evaluation, final=True)
        tagged = shared.tree.scope.all_kinds()
        for key, message in unknown_kinds(evaluation.plan, shared.rules, tagged):
            if key not in shared.warned:
                shared.warned.add(key)
                warnings.warn(
                    UnknownKindWarning(message), stacklevel=_user_stacklevel()
                )
        self._shared.report = BuildReport(
            tuple(evaluation.plan.notes),
            tuple(
                c.violation() for c in evaluation.broken(Severity.WARNING, final=True)
            ),
        )
        pm = PassManager(self.anchor, context)
        evaluation.plan.emit(pm)
        return pm

    def to_text(self) -> str:
        """The built pipeline as MLIR's textual pipeline, anchored:
        `PipelineBuilder.from_text` (or `--pass-pipeline`) reads it back."""
        return str(self.build())

    def to_python(self, variable: str = "builder") -> str:
        """The built pipeline as Python source: the `PipelineBuilder` calls that
        build it again (`add` per pass, `nest` per nested pipeline), for a
        framework to check in or edit. Running it defines `variable`."""
        return python_source(self.build(), variable=variable)

    def explain(self) -> str:
        """The pipeline `build()` would return, one pass at a time, with provenance.

        For each pass it shows who placed it (the framework, which extension, which
        bundle) and with which call, and which constraints it satisfies or breaks.
        It also lists collapsed bundles, removed and replaced passes, and every
        violation. It never raises on violations, since it is the tool for finding
        them.
        """
        self._require_root("explain()")
        shared = self._shared
        shared.begin()
        try:
            evaluation = shared.settle(final=True)
            points = _point_lines(shared, evaluation)
            return render(evaluation, shared.history, shared.splits, points)
        finally:
            shared.rollback()

    # --- internals -------------------------------------------------------------

    def _origin(self, via: str) -> Origin:
        return Origin(self._shared.placed_by(), via)

    def _apply(self, what: str, change: Callable[[], None]) -> None:
        """Run `change` and check the result; undo the change if anything fails.

        Inside an `extension()` block the checks wait for the end of the block, so
        that a multi-step edit is judged as a whole and not by its middle states.
        """
        shared = self._shared
        shared.begin()
        try:
            change()
            if not shared.extensions:
                shared.check(f"{what} was undone (the builder is unchanged)")
        except BaseException:
            shared.rollback()
            raise
        shared.commit()

    def _require_root(self, what: str) -> None:
        if self._level is not self._shared.root:
            raise BuilderError(
                f"{what} was called on the nested '{self.anchor}' pipeline; fix: call "
                "it on the PipelineBuilder you created, which includes this pipeline"
            )

    def _insert(
        self,
        name: str,
        new: Item,
        anchor: Anchor,
        occurrence: Occurrence,
        kinds: tuple[str, ...],
        *,
        after: bool,
    ) -> None:
        via = _call(name, anchor, occurrence, -1 if after else 0)
        what = f"{name}({_item_code(new)}, {anchor_code(anchor)})"
        placed = self._check_item(what, new, kinds)
        tree = self._shared.tree
        sites = select(what, anchor, occurrence, self._level, tree)
        origin = self._origin(via)
        placements: list[tuple[int, Entry, list[Entry], Site]] = []
        for site in sites:
            units = entries_from(_fresh(placed, site is sites[0]), origin, kinds)
            depth = placement(what, site, units, self._enclosing)
            level = site.steps[depth][0]
            depth += len(tree.path(site.entry)) - len(site.steps)  # from the root
            target = site.steps[-1][1]
            if not any(d == depth and t is target for d, t, _, _ in placements):
                placements.append((depth, target, unwrap(units, level), site))

        def change() -> None:
            for depth, _, units, site in placements:
                splits: list[str] = []
                steps = tree.path(site.entry)[depth:]
                index = boundary(tree, steps, after=after, splits=splits)
                tree.insert(steps[0][0], index, units)
                self._shared.splits.extend(
                    f"split the '{anchor}' pipeline {'after' if after else 'before'} "
                    f"{site.describe()} to place {_item_code(new)} exactly there: "
                    f"{origin}"
                    for anchor in splits
                )

        self._apply(what, change)

    def _check_item(
        self, what: str, item: object, kinds: object
    ) -> Pass | Bundle | str:
        """The item as the builder stores it (an xDSL `ModulePass` adapted); an
        item or kinds this builder cannot take are refused, at the call: what was
        given, what was expected, and the fix."""
        if is_module_pass(item):
            try:
                item = adapt(item)
            except TypeError as err:
                raise BuilderError(f"{what}: {err}") from None
        if isinstance(item, type) and issubclass(item, Pass):
            raise BuilderError(
                f"{what}: {item.__name__} is a pass class; fix: pass an instance, "
                f"{item.__name__}()"
            )
        if isinstance(item, OpPassManager):
            raise BuilderError(
                f"{what}: got a pass manager, '{item}'; expected a pass, a Bundle or "
                f"pipeline text; fix: to start from it, use "
                f"PipelineBuilder.from_pass_manager(pm); to add its passes here, give "
                f"their text without its '{item.textual_anchor}(...)' anchor"
            )
        if not isinstance(item, Pass | Bundle | str):
            got = f"{type(item).__name__} {item!r}"  # pyright: ignore[reportUnknownArgumentType]
            raise BuilderError(
                f"{what}: got {got}; expected a pass, a Bundle or pipeline text"
            )
        if isinstance(item, str):
            around = (*self._enclosing, self.anchor)
            for element in parse_pipeline_elements(item):
                op = element.name.strip()
                if element.inner is None or op not in around:
                    continue
                if op == self.anchor:
                    raise BuilderError(
                        f"{what}: the text is anchored on '{op}', this pipeline's "
                        f"own anchor, so its passes would run on nested '{op}' ops, "
                        "never on this one; fix: give the passes without the anchor "
                        f"(or start from the whole pipeline with "
                        f'PipelineBuilder.from_text(...)), or nest("{op}") for '
                        "nested ops"
                    )
                raise BuilderError(
                    f"{what}: the text is anchored on '{op}', which encloses this "
                    f"'{self.anchor}' pipeline, so its passes would never run on the "
                    f"'{op}' op; fix: add it to the builder of the '{op}' pipeline, "
                    "without the anchor"
                )
        given = kinds  # callers may be untyped
        if isinstance(given, str) or not (
            isinstance(given, tuple | list)
            and all(isinstance(k, str) for k in cast(tuple[object, ...], given))
        ):
            raise BuilderError(
                f"{what}: kinds={given!r}; expected a tuple of kind names, "
                f'e.g. kinds=("{given}",)'
                if isinstance(given, str)
                else f"{what}: kinds={given!r}; expected a tuple of kind names"
            )
        return item

    def _replace_at(self, what: str, site: Site, units: list[Entry]) -> None:
        level, _ = site.steps[-1]
        path = (*self._enclosing, *(lv.anchor for lv, _ in site.steps))
        op = misfit(units, level.anchor, path)
        if op is not None and op in path:
            raise BuilderError(
                f"{what}: the replacement runs on '{op}' ops, which enclose the "
                f"'{level.anchor}' pipeline holding {site.describe()}; fix: "
                "remove() the old pass and insert the new one next to the "
                f"'{level.anchor}' pipeline"
            )
        if op is not None:
            raise BuilderError(f"{what}: {misplaced(op, level.anchor, path)}")
        units = unwrap(units, level)
        self._shared.tree.touch(level.entries)
        if site.bundle is None:
            index = level.position(site.entry)
            level.entries[index : index + 1] = units
            return
        if any(isinstance(u, NestedEntry) for u in units):
            raise BuilderError(
                f"{what}: a nested pipeline cannot replace {site.describe()}, because "
                "bundles hold passes only; fix: replace it with the pass itself"
            )
        members = site.bundle.members
        self._shared.tree.touch(members)
        index = _position(members, site.entry)
        members[index : index + 1] = list(pass_entries(units))


def _point_lines(shared: _Shared, evaluation: Evaluation) -> list[str]:
    """For explain(): each extension point, where it is, and what was added at it."""
    numbers = {id(slot.entry): slot for slot in evaluation.plan.slots}
    lines: list[str] = []
    for name, entry in shared.points.items():
        via = f'add_at("{name}")'
        before = shared.tree.pass_before(entry)
        while before is not None and before.origin.via == via:
            before = shared.tree.pass_before(before)
        slot = numbers.get(id(before)) if before is not None else None
        where = (
            "at the start" if slot is None else f"after #{slot.number} {slot.display}"
        )
        via = f'add_at("{name}")'
        added = [s for s in evaluation.plan.slots if s.entry.origin.via == via]
        holds = (
            ", ".join(
                f"#{s.number} {s.display} ({s.entry.origin.placed_by})" for s in added
            )
            or "nothing yet"
        )
        lines.append(f"'{name}' (placed by {entry.origin}), {where}: {holds}")
    return lines


def _anchors_to(level: Level) -> tuple[str, ...]:
    """The anchors of the levels from the root down to `level`."""
    anchors: list[str] = []
    current: Level | None = level
    while current is not None:
        anchors.append(current.anchor)
        owner = current.owner
        current = owner.home if owner is not None else None
    return tuple(reversed(anchors))


def _position(members: list[PassEntry], entry: PassEntry) -> int:
    return next(i for i, m in enumerate(members) if m is entry)


def _fresh(item: Pass | Bundle | str, first: bool) -> Pass | Bundle | str:
    """The item for one more placement: a pass instance is used once, then cloned."""
    return item.clone() if isinstance(item, Pass) and not first else item


def _item_code(item: object) -> str:
    """The item as the caller wrote it, roughly: `TensorFold()`, `Bundle("cleanup", ...)`."""
    if isinstance(item, Bundle):
        return f'Bundle("{item.name}", ...)'
    if isinstance(item, Pass):
        return f"{type(item).__name__}()"
    if isinstance(item, type):
        return item.__name__
    if isinstance(item, OpPassManager):
        return "pm"
    if isinstance(item, str):
        return f'"{item}"'
    return repr(item)


def _call(
    name: str, anchor: Anchor, occurrence: Occurrence | None, default: int | None
) -> str:
    """The call as code, for origins: `insert_after("cse", occurrence="every")`."""
    suffix = ""
    if occurrence != default:
        suffix = f", occurrence={occurrence!r}".replace("'", '"')
    return f"{name}({anchor_code(anchor)}{suffix})"


Version: TypeAlias = "PipelineBuilder | OpPassManager | str"
"""A version of a pipeline: a builder (built), a pass manager, or anchored text."""


def diff_pipelines(old: Version, new: Version) -> PipelineDiff:
    """Which passes moved, came, went or changed options from `old` to `new`.

    Each side is a `PipelineBuilder` (its `build()`), a pass manager, or
    anchored pipeline text (`"builtin.module(func.func(cse))"`). `str()` of the
    result has one line per change; it is false when nothing changed.
    """
    return diff_pass_managers(_version(old), _version(new))


def _version(given: Version) -> OpPassManager:
    if isinstance(given, PipelineBuilder):
        return given.build()
    if isinstance(given, str):
        return parse_pass_pipeline(given)
    return given
