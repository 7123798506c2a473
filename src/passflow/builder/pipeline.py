"""PipelineBuilder: compose a pipeline from pieces whose authors never meet (seed 003).

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

from passflow.builder.bundles import Bundle
from passflow.builder.checks import Evaluation, Rule, evaluate
from passflow.builder.constraints import (
    AfterLast,
    BeforeFirst,
    Constraint,
    FollowedByCleanup,
    Requires,
    Violation,
)
from passflow.builder.entries import (
    BundleEntry,
    Entry,
    Level,
    NestedEntry,
    Origin,
    PassEntry,
    entries_from,
    pass_entries,
)
from passflow.builder.errors import (
    BuilderError,
    ContradictionError,
    OrderingError,
    OrderingWarning,
)
from passflow.builder.explain import render
from passflow.builder.kinds import Anchor, anchor_code, matches
from passflow.builder.plan import make_plan
from passflow.builder.search import (
    Occurrence,
    Site,
    find_sites,
    misfit,
    placement,
    select,
    unwrap,
)
from passflow.diagnostics import Severity
from passflow.ir import Context
from passflow.manager import OpPassManager
from passflow.pass_base import Pass
from passflow.pass_manager import PassManager
from passflow.pipeline_text import parse_pipeline_elements

__all__ = ["BuildReport", "PipelineBuilder"]

Item: TypeAlias = "Pass | Bundle | str"
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
    warned: set[tuple[object, ...]] = field(
        default_factory=lambda: set[tuple[object, ...]]()
    )
    report: BuildReport | None = None

    def placed_by(self) -> str:
        if self.extensions:
            return f"extension '{'/'.join(self.extensions)}'"
        return self.framework

    def evaluate(self) -> Evaluation:
        return evaluate(make_plan(self.root), self.rules, self.weak_severity)

    def snapshot(self) -> Callable[[], None]:
        """A function that puts every level, bundle, rule and log back as they are now."""
        levels: list[tuple[Level, list[Entry]]] = []
        bundles: list[tuple[BundleEntry, list[PassEntry]]] = []

        def save(level: Level) -> None:
            levels.append((level, list(level.entries)))
            for entry in level.entries:
                if isinstance(entry, BundleEntry):
                    bundles.append((entry, list(entry.members)))
                elif isinstance(entry, NestedEntry):
                    save(entry.level)

        save(self.root)
        rules, history = len(self.rules), len(self.history)

        def restore() -> None:
            for level, entries in levels:
                level.entries[:] = entries
            for bundle, members in bundles:
                bundle.members[:] = members
            del self.rules[rules:]
            del self.history[history:]

        return restore

    def check(self, what: str) -> None:
        """Raise for errors in the pipeline as it stands, then warn about new weak violations.

        A pass that needs a cleanup and is still the last pass is not reported yet,
        because the next call may add that cleanup. `build()` reports it.
        """
        evaluation = self.evaluate()
        self.raise_broken(what, evaluation, final=False)
        self.warn_new(evaluation, final=False)

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
        return isinstance(anchor, str) and any(
            matches(anchor, s.entry.pass_, s.entry.kinds)
            for s in find_sites(self._level)
        )

    # --- building, for the framework -----------------------------------------

    def add(self, item: Item, *, kinds: tuple[str, ...] = ()) -> None:
        """Append a pass, a bundle or pipeline text to this pipeline.

        `kinds` adds kinds to the added passes, for passes whose class declares none.
        Those kinds carry over when another pass replaces one of these passes.
        """
        what = f"add({_item_code(item)})"
        self._check_item(what, item, kinds)
        entries = entries_from(item, self._origin("add"), kinds)
        passes = [e for e in entries if not isinstance(e, NestedEntry)]
        op = misfit(passes, self.anchor, (*self._enclosing, self.anchor))
        if op is not None:
            raise BuilderError(
                f"{what}: it runs on '{op}' ops, which enclose this '{self.anchor}' "
                f"pipeline, so it would never run here; fix: add it to the builder "
                f"of the '{op}' pipeline"
            )
        self._apply(what, lambda: self._level.entries.extend(entries))

    def nest(self, op_name: str) -> PipelineBuilder:
        """Append a nested pipeline on `op_name` ops and return a builder for it.

        The returned builder adds to the nested pipeline, and its searches stay
        inside it. It shares everything else (rules, extensions, checks) with this
        builder. Build from the builder you created.
        """
        level = Level("any" if op_name in ("", "any") else op_name)
        via = f'nest("{op_name}")'
        entry = NestedEntry(level, self._origin(via))
        self._apply(via, lambda: self._level.entries.append(entry))
        return PipelineBuilder._view(
            level, self._shared, (*self._enclosing, self.anchor)
        )

    def require(self, subject: Anchor, *constraints: Constraint) -> None:
        """Make every pass matching `subject` satisfy `constraints`, now and later.

        This is how a framework states pipeline-wide policy, for example
        `require(PassKind.EARLY_OPTIMIZATION, FollowedByCleanup())`. A pass's own
        needs belong in its class: `ordering = (Requires(PassKind.BUFFERIZATION),)`.
        """
        what = f"require({anchor_code(subject)}, ...)"
        given = cast(tuple[object, ...], constraints)  # callers may be untyped
        if not given or not all(
            isinstance(c, Requires | AfterLast | BeforeFirst | FollowedByCleanup)
            for c in given
        ):
            raise BuilderError(
                f"{what} needs one or more constraints; fix: pass Requires(...), "
                "AfterLast(...), BeforeFirst(...) or FollowedByCleanup()"
            )
        rules = [Rule(subject, c, self._shared.placed_by()) for c in constraints]
        self._apply(what, lambda: self._shared.rules.extend(rules))

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
        restore = shared.snapshot()
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
            restore()
            raise

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

        This mirrors `insert_before`: seed 003's rule searches from the end, so that
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
    ) -> None:
        """Put `new` where the pass matching `anchor` is, inside its bundle if it has one.

        By default exactly one pass may match. Otherwise AmbiguousAnchorError lists
        the matches; pass `occurrence` to choose. Kinds given to the old pass with
        `add(..., kinds=...)` carry over to `new`, so that kind anchors of other
        extensions still find it. Every constraint is checked again.
        """
        via = _call("replace", anchor, occurrence, None)
        self._check_item(via, new, kinds)
        sites = select(via, anchor, occurrence, self._level, self._shared.root)
        origin = self._origin(via)

        def change() -> None:
            for site in sites:
                tags = (*kinds, *site.entry.tags)
                units = entries_from(_fresh(new, site is sites[0]), origin, tags)
                self._replace_at(via, site, units)
                self._shared.history.append(
                    f"replaced {site.describe()} with {_item_code(new)}: "
                    f"{origin.placed_by} via {via}"
                )

        self._apply(via, change)

    def remove(self, anchor: Anchor, *, occurrence: Occurrence | None = None) -> None:
        """Remove the pass matching `anchor` (exactly one by default, as `replace`).

        A bundle that loses its last pass disappears. Every constraint is checked
        again, so removing a pass that another pass requires fails and says which.
        """
        via = _call("remove", anchor, occurrence, None)
        sites = select(via, anchor, occurrence, self._level, self._shared.root)
        placed_by = self._shared.placed_by()

        def change() -> None:
            for site in sites:
                level, container = site.steps[-1]
                if site.bundle is not None:
                    members = site.bundle.members
                    del members[_position(members, site.entry)]
                    if not members:
                        del level.entries[level.position(container)]
                else:
                    del level.entries[level.position(site.entry)]
                self._shared.history.append(
                    f"removed {site.describe()}: {placed_by} via {via}"
                )

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
        evaluation = self._shared.evaluate()
        self._shared.raise_broken("build() failed", evaluation, final=True)
        self._shared.warn_new(evaluation, final=True)
        self._shared.report = BuildReport(
            tuple(evaluation.plan.notes),
            tuple(
                c.violation() for c in evaluation.broken(Severity.WARNING, final=True)
            ),
        )
        pm = PassManager(self.anchor, context)
        evaluation.plan.emit(pm)
        return pm

    def explain(self) -> str:
        """The pipeline `build()` would return, one pass at a time, with provenance.

        For each pass it shows who placed it (the framework, which extension, which
        bundle) and with which call, and which constraints it satisfies or breaks.
        It also lists collapsed bundles, removed and replaced passes, and every
        violation. It never raises on violations, since it is the tool for finding
        them.
        """
        self._require_root("explain()")
        return render(self._shared.evaluate(), self._shared.history)

    # --- internals -------------------------------------------------------------

    def _origin(self, via: str) -> Origin:
        return Origin(self._shared.placed_by(), via)

    def _apply(self, what: str, change: Callable[[], None]) -> None:
        """Run `change` and check the result; undo the change if anything fails.

        Inside an `extension()` block the checks wait for the end of the block, so
        that a multi-step edit is judged as a whole and not by its middle states.
        """
        shared = self._shared
        restore = shared.snapshot()
        try:
            change()
            if not shared.extensions:
                shared.check(f"{what} was undone (the builder is unchanged)")
        except BaseException:
            restore()
            raise

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
        self._check_item(what, new, kinds)
        sites = select(what, anchor, occurrence, self._level, self._shared.root)
        origin = self._origin(via)
        placements: list[tuple[Level, Entry, list[Entry]]] = []
        for site in sites:
            units = entries_from(_fresh(new, site is sites[0]), origin, kinds)
            level, target = placement(what, site, units, self._enclosing)
            if not any(lv is level and t is target for lv, t, _ in placements):
                placements.append((level, target, unwrap(units, level)))

        def change() -> None:
            for level, target, units in placements:
                index = level.position(target) + (1 if after else 0)
                level.entries[index:index] = units

        self._apply(what, change)

    def _check_item(self, what: str, item: object, kinds: object) -> None:
        """Refuse, at the call, an item or kinds this builder cannot take: what
        was given, what was expected, and the fix."""
        if isinstance(item, type) and issubclass(item, Pass):
            raise BuilderError(
                f"{what}: {item.__name__} is a pass class; fix: pass an instance, "
                f"{item.__name__}()"
            )
        if isinstance(item, OpPassManager):
            raise BuilderError(
                f"{what}: got a pass manager, '{item}'; expected a pass, a Bundle or "
                f"pipeline text; fix: give the text of its passes, without its "
                f"'{item.textual_anchor}(...)' anchor"
            )
        if not isinstance(item, Pass | Bundle | str):
            got = f"{type(item).__name__} {item!r}"  # pyright: ignore[reportUnknownArgumentType]
            raise BuilderError(
                f"{what}: got {got}; expected a pass, a Bundle or pipeline text"
            )
        if isinstance(item, str):
            elements = parse_pipeline_elements(item)
            if (
                len(elements) == 1
                and elements[0].inner is not None
                and elements[0].name.strip() == self.anchor
            ):
                raise BuilderError(
                    f"{what}: the text is anchored on '{self.anchor}', this "
                    f"pipeline's own anchor, so its passes would run on nested "
                    f"'{self.anchor}' ops, never on this one; fix: give the passes "
                    f'without the anchor, or nest("{self.anchor}") for nested ops'
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

    def _replace_at(self, what: str, site: Site, units: list[Entry]) -> None:
        level, _ = site.steps[-1]
        path = (*self._enclosing, *(lv.anchor for lv, _ in site.steps))
        op = misfit(units, level.anchor, path)
        if op is not None:
            raise BuilderError(
                f"{what}: the replacement runs on '{op}' ops, which enclose the "
                f"'{level.anchor}' pipeline holding {site.describe()}; fix: "
                "remove() the old pass and insert the new one next to the "
                f"'{level.anchor}' pipeline"
            )
        units = unwrap(units, level)
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
        index = _position(members, site.entry)
        members[index : index + 1] = list(pass_entries(units))


def _position(members: list[PassEntry], entry: PassEntry) -> int:
    return next(i for i, m in enumerate(members) if m is entry)


def _fresh(item: Item, first: bool) -> Item:
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
