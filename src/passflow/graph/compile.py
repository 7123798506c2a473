"""From an expanded graph to a schedule: check names, choices and jumps, then order.

Every check names the pipeline and the edge or jump at fault. The order is
Kahn's topological sort with ties broken by registration order, so the same
graph always gives the same schedule.
"""

from __future__ import annotations

import difflib
import heapq
from collections.abc import Iterable, Iterator, Mapping

from passflow.graph.declaration import Declaration, Expanded
from passflow.graph.errors import (
    AmbiguousJumpError,
    ChoiceError,
    PipelineCycleError,
    SkippedPredecessorError,
    SubgraphBoundaryError,
    UnknownPipelineError,
)
from passflow.graph.schedule import PipelineSchedule
from passflow.graph.scheduled import Dependency, ScheduledChoice, ScheduledPipeline

__all__ = ["compile_schedule"]

_EDGE_FIELDS = ("predecessors", "successors")


def compile_schedule(expanded: Expanded, max_jumps: int) -> PipelineSchedule:
    """The schedule of `expanded`, whose populate callbacks have all run."""
    return _compile(expanded, (), max_jumps)


def _compile(
    level: Expanded, enclosing: tuple[Expanded, ...], max_jumps: int
) -> PipelineSchedule:
    _check_names(level, enclosing)
    owner = _choice_owners(level)
    dependencies = _dependencies(level, owner)
    units = [d.name for d in level.declarations if d.name not in owner]
    order = _linearize(level.name, units, dependencies)
    _check_jumps(level, owner, order, dependencies)
    by_name = {decl.name: decl for decl in level.declarations}

    def unit(name: str) -> ScheduledPipeline:
        decl = by_name[name]
        body = level.bodies[name]
        if isinstance(body, Expanded):
            return ScheduledPipeline(
                name,
                decl.jump_targets,
                _compile(body, (*enclosing, level), max_jumps),
                decl.on_cap,
            )
        if decl.kind == "choice":
            choice = ScheduledChoice(
                body, tuple(unit(a) for a in decl.alternatives), decl.select
            )
            return ScheduledPipeline(name, (), choice)
        return ScheduledPipeline(name, decl.jump_targets, body, decl.on_cap)

    return PipelineSchedule(
        level.name,
        level.anchor,
        tuple(unit(name) for name in order),
        dependencies,
        max_jumps,
    )


# --- names ------------------------------------------------------------------------


def _fields(decl: Declaration) -> Iterator[tuple[str, tuple[str, ...]]]:
    yield "predecessors", decl.predecessors
    yield "successors", decl.successors
    yield "jump_targets", decl.jump_targets
    yield "alternatives", decl.alternatives


def _check_names(level: Expanded, enclosing: tuple[Expanded, ...]) -> None:
    graph = level.name
    inside = dict(level.members())
    for decl in level.declarations:
        for field, names in _fields(decl):
            for name in names:
                if name in level.bodies:
                    continue
                where = f"pipeline '{decl.name}' of graph '{graph}' lists '{name}' in its {field}"
                if name in level.removed:
                    if field in _EDGE_FIELDS:
                        continue  # its edges still order its neighbours
                    raise UnknownPipelineError(
                        f"{where}, but '{name}' was removed (remove_pipeline); fix: "
                        f"drop '{name}' from the {field} of '{decl.name}' "
                        f"(replace_pipeline keeps a pipeline and changes its passes)"
                    )
                if name in inside:
                    raise SubgraphBoundaryError(
                        f"{where}, but '{name}' is a member of subgraph "
                        f"'{inside[name]}', which runs as one unit; name "
                        f"'{inside[name]}' instead"
                    )
                outer = next((g for g in enclosing if name in g.bodies), None)
                if outer is not None:
                    raise SubgraphBoundaryError(
                        f"{where}, but '{name}' belongs to the enclosing graph "
                        f"'{outer.name}'; members of a subgraph see only each "
                        f"other (declare the edge or jump on subgraph '{graph}')"
                    )
                raise UnknownPipelineError(
                    f"{where}, but no such pipeline exists"
                    + _suggest(name, level.bodies)
                    + f"; fix: name a pipeline of graph '{graph}', or register "
                    f"'{name}' (graph.register_pipeline('{name}', ...)) before "
                    "create_schedule"
                )


def _suggest(name: str, known: Iterable[str]) -> str:
    """The closest existing name, or else every existing name."""
    names = list(known)
    close = difflib.get_close_matches(name, names, n=1)
    if close:
        return f"; did you mean '{close[0]}'?"
    return f" (pipelines: {', '.join(names)})"


# --- choices ------------------------------------------------------------------------


def _choice_owners(level: Expanded) -> dict[str, str]:
    """Each alternative's choice; an alternative belongs to one choice only, and
    is a pipeline or a subgraph, never a choice."""
    kinds = {decl.name: decl.kind for decl in level.declarations}
    owner: dict[str, str] = {}
    for decl in level.declarations:
        for alternative in decl.alternatives:
            where = f"choice '{decl.name}' of graph '{level.name}'"
            if kinds[alternative] == "choice":
                raise ChoiceError(
                    f"{where} lists choice '{alternative}' among its alternatives; "
                    "an alternative is a pipeline or a subgraph (wrap the inner "
                    "choice in a subgraph)"
                )
            if alternative in owner:
                raise ChoiceError(
                    f"{where} lists '{alternative}', which is already an alternative "
                    f"of choice '{owner[alternative]}'; a pipeline is an alternative "
                    "of one choice only"
                )
            owner[alternative] = decl.name
    return owner


def _dependencies(level: Expanded, owner: Mapping[str, str]) -> tuple[Dependency, ...]:
    """The ordering edges between scheduled units, deduplicated.

    An edge naming an alternative orders its choice, since the alternative runs
    inside it; an edge between two alternatives of one choice, or between a
    choice and its own alternative, is refused. Removed pipelines are bridged:
    their predecessors stay before their successors.
    """
    known = {*level.bodies, *level.removed}
    edges: list[Dependency] = []
    for decl in (*level.declarations, *level.removed.values()):
        for field, names in _fields(decl):
            if field not in _EDGE_FIELDS:
                continue
            for name in names:
                if name not in known:
                    continue  # named by a removed pipeline only
                _check_edge(level.name, decl.name, field, name, owner)
                edge = (
                    Dependency(name, decl.name)
                    if field == "predecessors"
                    else Dependency(decl.name, name)
                )
                edges.append(
                    Dependency(
                        owner.get(edge.source, edge.source),
                        owner.get(edge.target, edge.target),
                    )
                )
    for removed in level.removed:
        before = [e.source for e in edges if e.target == removed]
        after = [e.target for e in edges if e.source == removed]
        edges = [e for e in edges if removed not in (e.source, e.target)]
        edges.extend(Dependency(b, a) for b in before for a in after)
    return tuple(dict.fromkeys(edges))


def _check_edge(
    graph: str, declared_by: str, field: str, name: str, owner: Mapping[str, str]
) -> None:
    where = f"pipeline '{declared_by}' of graph '{graph}' lists '{name}' in its {field}"
    mine, theirs = owner.get(declared_by), owner.get(name)
    if mine is not None and mine == theirs:
        raise ChoiceError(
            f"{where}, but both are alternatives of choice '{mine}', of which "
            f"exactly one runs; order them against the choice '{mine}' instead"
        )
    if mine == name or theirs == declared_by:
        choice, alternative = (
            (name, declared_by) if mine == name else (declared_by, name)
        )
        raise ChoiceError(
            f"{where}, but '{alternative}' is an alternative of choice '{choice}' "
            "and runs inside it"
        )


def _check_jumps(
    level: Expanded,
    owner: Mapping[str, str],
    order: list[str],
    dependencies: Iterable[Dependency],
) -> None:
    """Refuse a jump that could run two alternatives of a choice, or skip a
    pipeline declared to run before its target.

    The skip check holds for every order the edges allow, not only the one
    registration gave: a jump that goes forward may skip any predecessor of its
    target that is not also declared to run before the jump's source.
    """
    position = {name: i for i, name in enumerate(order)}
    predecessors: dict[str, set[str]] = {name: set() for name in order}
    for edge in dependencies:
        predecessors[edge.target].add(edge.source)
    jumps: list[tuple[str, str, str]] = []  # (declared by, its unit, target)
    for decl in level.declarations:
        for target in decl.jump_targets:
            jump = f"jump '{decl.name}' -> '{target}' of graph '{level.name}'"
            choice = owner.get(target)
            if choice is not None and target != decl.name:
                if owner.get(decl.name) == choice:
                    raise ChoiceError(
                        f"{jump} would run both '{decl.name}' and '{target}', "
                        f"alternatives of choice '{choice}' of which exactly one runs"
                    )
                raise ChoiceError(
                    f"{jump} enters '{target}', an alternative of choice '{choice}', "
                    f"without the choice picking it; jump to '{choice}' instead"
                )
            if choice is None:  # else an alternative looping on itself
                jumps.append((decl.name, owner.get(decl.name, decl.name), target))
    fixed = _fixed(order, predecessors)
    if all(
        source == target
        or (
            source in fixed
            and target in fixed
            and position[target] <= position[source] + 1
        )
        for _, source, target in jumps
    ):
        return  # every jump means the same in every order (see _check_meaning)
    for name, source, target in jumps:
        jump = f"jump '{name}' -> '{target}' of graph '{level.name}'"
        before_source = _reach(source, predecessors)
        if target == source or target in before_source:
            continue  # backward in every order: nothing is skipped
        for skipped in sorted(predecessors[target], key=position.__getitem__):
            if skipped != source and skipped not in before_source:
                raise SkippedPredecessorError(
                    f"{jump} may skip '{skipped}', which is declared to run before "
                    f"'{target}' but not before '{name}'; to run one of "
                    "several pipelines, declare them as alternatives with "
                    "register_choice"
                )
    _check_meaning(level, owner, order, predecessors)


def _fixed(order: list[str], predecessors: Mapping[str, set[str]]) -> set[str]:
    """The pipelines every order the edges allow puts at the same place: each is
    declared to run after every pipeline before it in `order`, and before every
    one after it.

    That holds for `v` when each maximal pipeline of the prefix before it (one
    no other pipeline of the prefix runs after) is a direct predecessor of `v`,
    and each minimal one of the suffix a direct successor: a path from the
    prefix to `v` leaves it from a maximal pipeline, straight to `v`. Sweeping
    the order both ways while keeping those maximal (minimal) pipelines costs
    the pipelines and edges, once.
    """
    successors = _reverse(order, predecessors)

    def sweep(names: list[str], inward: Mapping[str, set[str]]) -> set[str]:
        ok: set[str] = set()
        frontier: set[str] = set()
        for name in names:
            if sum(1 for n in inward[name] if n in frontier) == len(frontier):
                ok.add(name)
            frontier -= inward[name]
            frontier.add(name)
        return ok

    return sweep(order, predecessors) & sweep(order[::-1], successors)


def _check_meaning(
    level: Expanded,
    owner: Mapping[str, str],
    order: list[str],
    predecessors: Mapping[str, set[str]],
) -> None:
    """Refuse a jump whose meaning depends on the registration order.

    A jump from `s` continues the run at `t` and then follows the schedule, so
    it means the same in every order the edges allow exactly when each other
    pipeline is on the same side of it in all of them. A jump back (`t` declared
    before `s`) reruns the pipelines between them: each other pipeline must be
    declared before `t`, after `s`, or between the two. A jump ahead (`t`
    declared after `s`) skips the pipelines between them: each other pipeline
    must be declared before `s` or after `t`, so nothing is ever skipped (a
    branch is a choice). A jump between two pipelines declared in neither order
    goes back in some orders and ahead in others.
    """
    successors = _reverse(order, predecessors)
    before: dict[str, set[str]] = {}
    after: dict[str, set[str]] = {}

    def ancestors(name: str) -> set[str]:
        if name not in before:
            before[name] = _reach(name, predecessors)
        return before[name]

    def descendants(name: str) -> set[str]:
        if name not in after:
            after[name] = _reach(name, successors)
        return after[name]

    for decl in level.declarations:
        source = owner.get(decl.name, decl.name)
        ahead = [t for t in decl.jump_targets if t in descendants(source)]
        for target in decl.jump_targets:
            if target == source or owner.get(target) is not None:
                continue  # a loop on itself, or an alternative looping on itself
            jump = f"jump '{decl.name}' -> '{target}' of graph '{level.name}'"
            if target in ancestors(source):
                for name in order:
                    if name in (source, target) or name in ancestors(target):
                        continue
                    if name in descendants(source) or (
                        name in ancestors(source) and name in descendants(target)
                    ):
                        continue  # after the loop, or inside it
                    raise AmbiguousJumpError(
                        f"{jump} loops back over the pipelines from '{target}' to "
                        f"'{source}', but '{name}' is declared to run neither "
                        f"before '{target}', nor after '{source}', nor between "
                        "them, so whether the loop reruns it depends on the "
                        f"registration order; declare where '{name}' runs: with "
                        f"predecessors=['{source}'] after the loop, with "
                        f"successors=['{target}'] before it, or with both "
                        f"predecessors=['{target}'] and successors=['{source}'] "
                        "inside it"
                    )
            elif target in descendants(source):
                for name in order:
                    if name in (source, target) or name in ancestors(source):
                        continue
                    if name in descendants(target):
                        continue
                    choice = ", ".join(f"'{t}'" for t in ahead)
                    raise AmbiguousJumpError(
                        f"{jump} is a branch: '{name}' is declared to run neither "
                        f"before '{source}' nor after '{target}', so whether the "
                        "jump skips it depends on the registration order; to run "
                        "one of several pipelines, declare them as alternatives "
                        "with register_choice, e.g. graph.register_choice("
                        f"'{source}-branch', [{choice}, ...], predecessors="
                        f"['{source}'], select=...), or declare '{name}' before "
                        f"'{source}' or after '{target}'"
                    )
            else:
                raise AmbiguousJumpError(
                    f"{jump} goes back in some registration orders and ahead in "
                    f"others, since neither '{source}' nor '{target}' is declared "
                    f"to run before the other; declare the order: '{target}' in "
                    f"the predecessors of '{source}' for a loop back, or "
                    f"'{source}' in the predecessors of '{target}' for a jump "
                    "ahead (a branch is a choice: register_choice)"
                )


def _reverse(
    order: list[str], predecessors: Mapping[str, set[str]]
) -> dict[str, set[str]]:
    """Each pipeline's direct successors, from the direct predecessors."""
    successors: dict[str, set[str]] = {name: set() for name in order}
    for name, earlier in predecessors.items():
        for other in earlier:
            successors[other].add(name)
    return successors


def _reach(name: str, edges: Mapping[str, set[str]]) -> set[str]:
    """Every pipeline reached from `name` along `edges`, `name` excluded: its
    ancestors along predecessors, its descendants along successors."""
    found: set[str] = set()
    stack = list(edges[name])
    while stack:
        current = stack.pop()
        if current not in found:
            found.add(current)
            stack.extend(edges[current])
    return found


# --- ordering -------------------------------------------------------------------------


def _linearize(
    graph: str, units: list[str], dependencies: Iterable[Dependency]
) -> list[str]:
    """Kahn's algorithm; among ready pipelines, the earliest registered goes first."""
    rank = {name: i for i, name in enumerate(units)}
    successors: dict[str, list[str]] = {name: [] for name in rank}
    predecessors: dict[str, list[str]] = {name: [] for name in rank}
    for edge in dependencies:
        successors[edge.source].append(edge.target)
        predecessors[edge.target].append(edge.source)
    waiting = {name: len(preds) for name, preds in predecessors.items()}
    ready = [(rank[name], name) for name, count in waiting.items() if count == 0]
    heapq.heapify(ready)
    order: list[str] = []
    while ready:
        _, name = heapq.heappop(ready)
        order.append(name)
        for successor in successors[name]:
            waiting[successor] -= 1
            if waiting[successor] == 0:
                heapq.heappush(ready, (rank[successor], successor))
    if len(order) < len(rank):
        cycle = _find_cycle(set(rank) - set(order), predecessors, rank)
        raise PipelineCycleError(
            f"the predecessors and successors of graph '{graph}' form a "
            f"cycle: {' -> '.join(cycle)}; a loop must go through jump_targets",
            cycle,
        )
    return order


def _find_cycle(
    stuck: set[str], predecessors: Mapping[str, list[str]], rank: Mapping[str, int]
) -> tuple[str, ...]:
    """A cycle among the pipelines Kahn's algorithm could not order.

    Each of them still waits for a predecessor that is stuck too, so walking
    backwards from one must revisit a pipeline. The walk picks the earliest
    registered predecessor, and the cycle is reported from its earliest
    registered member, so the message is the same on every run.
    """
    path = [min(stuck, key=rank.__getitem__)]
    seen = {path[0]: 0}
    while True:
        previous = min(
            (p for p in predecessors[path[-1]] if p in stuck), key=rank.__getitem__
        )
        if previous in seen:
            break
        seen[previous] = len(path)
        path.append(previous)
    # path[i + 1] -> path[i]; the cycle runs backwards through path[seen[previous]:].
    loop = path[seen[previous] :][::-1]
    start = loop.index(min(loop, key=rank.__getitem__))
    loop = loop[start:] + loop[:start]
    return (*loop, loop[0])
