"""A run report people can look at: one self-contained HTML file (`--report=FILE`).

`RunReport` is an instrumentation that records, for every `PassManager.run`:

* the pipeline tree (passes, nested pipelines, dynamic pipelines), with the wall
  time and the CPU time of each pass summed over the ops it ran on, drawn as bars;
* for every pass execution that changed its op, the op's text before and after,
  shown as a unified diff with the whole op after the pass one click away, and
  the time the pass took on that op (folded per op when a pass changed many, and
  filtered by op and by pass name in the page);
* for every op a pass failed on, the op's text before that pass, beside the
  pass's diagnostics;
* the statistics of each pass, and the diagnostics and remarks emitted while it
  ran, beside that pass;
* the pass pipeline tree drawn as a graph (inline SVG, laid out here, no
  Graphviz), each pass's box a link to its row;
* the pipeline graph, when the tool hands one in (`set_graph`: this layer is
  below `passflow.graph`, so it takes the DOT text rather than the graph), drawn
  the same way, its stages linked to their rows, with the DOT text beside it.

The HTML has its CSS and script inline and references nothing outside itself, so
it opens offline from a mail attachment or a CI artifact.

A change is seen per top-level symbol (`symbol_changes`): a module pass such
as the inliner shows a diff for each function it changed, made or erased, not
one of the whole module. Cost: each pass's top-level symbols stamped
before and after it (`ir.change_stamp`, no printing), one print of each the
first time a pass sees it, and one print per change. Limits, each per pass and
per symbol, never run-wide: a pass embeds at most `max_changes` changes (the
rest are counted under it, naming `--report-max-changes`), a symbol's text
longer than `max_op_chars` is listed without its texts (`--report-max-op-chars`),
and a diff shows at most `max_diff_lines`.

A pass's diagnostics are the ones delivered while it runs on the delivering
thread. With the threads executor, a nested pass's diagnostics are replayed
after its child finished, so they show under the adaptor that ran it; the
default process executor runs instrumented pipelines in this process, serially,
where every diagnostic lands beside its pass.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

from passflow import ir
from passflow.diagnostics import Diagnostic
from passflow.instrumentation import PassInstrumentation, PipelineParentInfo
from passflow.instruments.diagram import Box, Cluster, Diagram, Edge
from passflow.instruments.observed_diagnostics import ObservedDiagnostics
from passflow.instruments.symbol_changes import SymbolState, SymbolTracker
from passflow.ir import Operation
from passflow.output_file import write_output
from passflow.pass_base import Pass
from passflow.statistics import statistic_values

__all__ = ["ObservedDiagnostics", "RunReport"]


@dataclass(eq=False, slots=True)
class _Change:
    """One pass execution that changed its op: the texts, or why they are absent."""

    op_label: str
    before: str | None
    after: str | None
    failed: bool
    omitted: str = ""


@dataclass(eq=False, slots=True)
class _Failure:
    """An op a pass failed on, and its text before that pass (None if not kept)."""

    op_label: str
    before: str | None


@dataclass(eq=False, slots=True)
class _Node:
    """A line of the pipeline tree: a pass instance, an adaptor or a pipeline."""

    name: str
    argument: str
    kind: str
    wall: float = 0.0
    cpu: float = 0.0
    runs: int = 0
    failures: int = 0
    changed: int = 0
    pass_: Pass | None = None
    changes: list[_Change] = field(default_factory=lambda: list[_Change]())
    failed_ops: list[_Failure] = field(default_factory=lambda: list[_Failure]())
    op_times: dict[str, float] = field(default_factory=lambda: dict[str, float]())
    """Wall time of this pass on each op it ran on, by op label."""
    diagnostics: list[Diagnostic] = field(default_factory=lambda: list[Diagnostic]())
    children: dict[object, _Node] = field(default_factory=lambda: {})


@dataclass(eq=False, slots=True)
class _Frame:
    node: _Node
    pass_: Pass | None
    wall0: float
    cpu0: float
    snapshot: list[SymbolState] | None = None
    count: int = 0


@dataclass(eq=False, slots=True)
class _Run:
    root: _Node
    pipeline: str = ""
    graph: str | None = None
    loose: list[Diagnostic] = field(default_factory=lambda: list[Diagnostic]())


def _within(text: str | None, limit: int) -> str | None:
    return text if text is None or len(text) <= limit else None


@dataclass(eq=False)
class RunReport(PassInstrumentation):
    """Records runs for the HTML report at `path`; `write()` (re)writes the file.

    One report may serve several pass managers and runs (passflow-opt's
    `--split-input-file` chunks): each `PassManager.run` ends with `end_run`,
    which rewrites the file with every run so far.
    """

    path: str
    max_changes: int = 2000
    """Changes embedded per pass (the rest are counted)."""
    max_op_chars: int = 200_000
    """A symbol's text longer than this is listed without its texts."""
    max_diff_lines: int = 400
    runs: list[_Run] = field(default_factory=lambda: list[_Run]())
    _current: _Run | None = field(default=None, init=False)
    _stacks: dict[int, list[_Frame]] = field(default_factory=lambda: {}, init=False)
    _tracker: SymbolTracker = field(default_factory=SymbolTracker, init=False)
    _pending_graph: str | None = field(default=None, init=False)

    # --- recording -------------------------------------------------------------

    def _run(self) -> _Run:
        run = self._current
        if run is None:
            run = self._current = _Run(
                _Node("run", "", "root"), graph=self._pending_graph
            )
            self._pending_graph = None
            self.runs.append(run)
        return run

    def _stack(self) -> list[_Frame]:
        tid = threading.get_ident()
        stack = self._stacks.get(tid)
        if stack is None:
            stack = self._stacks[tid] = []
        return stack

    def set_graph(self, text: str | None) -> None:
        """The pipeline graph (DOT text) of the next run, drawn above its tree
        with the text beside it (DOT the drawing does not read is shown as text)."""
        if self._current is not None:
            self._current.graph = text
        else:
            self._pending_graph = text

    def run_before_pipeline(
        self, op_name: str | None, parent: PipelineParentInfo
    ) -> None:
        spawner = self._run().root
        for frame in reversed(self._stacks.get(parent.parent_thread_id, [])):
            if frame.pass_ is parent.parent_pass:
                spawner = frame.node
                break
        label = (
            parent.parent_pass.pipeline_label(parent.pipeline)
            if parent.pipeline is not None
            else f"'{op_name or 'any'}' Pipeline"
        )
        node = spawner.children.get(label)
        if node is None:
            node = spawner.children[label] = _Node(label, "", "pipeline")
        node.runs += 1
        self._stack().append(
            _Frame(node, None, time.perf_counter(), time.thread_time())
        )

    def run_after_pipeline(
        self, op_name: str | None, parent: PipelineParentInfo
    ) -> None:
        stack = self._stack()
        while stack:
            frame = stack.pop()
            self._stop(frame)
            if frame.pass_ is None:
                return

    def run_before_pass(self, pass_: Pass, op: Operation) -> None:
        stack = self._stack()
        key: object = id(pass_)
        if stack:
            top = stack[-1]
            parent = top.node
            if top.pass_ is None:
                key = (top.count, type(pass_))
                top.count += 1
        else:
            parent = self._run().root
        node = parent.children.get(key)
        if node is None:
            kind = "adaptor" if pass_.is_adaptor else "pass"
            name = pass_.display_name
            node = _Node(name, pass_.argument, kind, pass_=pass_)
            parent.children[key] = node
        node.runs += 1
        snapshot = None
        if not pass_.is_adaptor:
            enclosed = any(
                f.pass_ is not None and not f.pass_.is_adaptor for f in stack
            )
            snapshot = self._tracker.snapshot(op, enclosed=enclosed)
        stack.append(
            _Frame(node, pass_, time.perf_counter(), time.thread_time(), snapshot)
        )

    def run_after_pass(self, pass_: Pass, op: Operation) -> None:
        self._end_pass(pass_, op, failed=False)

    def run_after_pass_failed(self, pass_: Pass, op: Operation) -> None:
        self._end_pass(pass_, op, failed=True)

    def _stop(self, frame: _Frame) -> float:
        """Add the frame's time to its node; its wall time."""
        wall = time.perf_counter() - frame.wall0
        frame.node.wall += wall
        frame.node.cpu += time.thread_time() - frame.cpu0
        return wall

    def _end_pass(self, pass_: Pass, op: Operation, failed: bool) -> None:
        stack = self._stack()
        frame: _Frame | None = None
        wall = 0.0
        while stack:
            frame = stack.pop()
            wall = self._stop(frame)
            if frame.pass_ is pass_:
                break
        if failed and stack and stack[-1].pass_ is None:
            self._stop(stack.pop())  # a failing pass ends its pipeline
        if frame is None or frame.pass_ is not pass_:
            return
        node = frame.node
        if failed:
            node.failures += 1
        snapshot = frame.snapshot
        if snapshot is None:
            return
        label = ir.op_label(op)
        node.op_times[label] = node.op_times.get(label, 0.0) + wall
        if failed:
            before = "\n".join(state.text for state in snapshot)
            node.failed_ops.append(_Failure(label, _within(before, self.max_op_chars)))
        for change in self._tracker.changes(snapshot, op, failed=failed):
            node.changed += 1
            if len(node.changes) >= self.max_changes:
                continue
            shown = _Change(ir.op_label(change.op), change.before, change.after, failed)
            longest = max(len(change.before or ""), len(change.after or ""))
            if longest > self.max_op_chars:
                shown.before = shown.after = None
                shown.omitted = (
                    f"text of {longest} characters not embedded "
                    f"(--report-max-op-chars={self.max_op_chars})"
                )
            node.changes.append(shown)

    def observe(self, diagnostic: Diagnostic) -> None:
        """Put `diagnostic` beside the pass running on this thread (or the run)."""
        stack = self._stacks.get(threading.get_ident())
        for frame in reversed(stack or []):
            if frame.pass_ is not None:
                frame.node.diagnostics.append(diagnostic)
                return
        self._run().loose.append(diagnostic)

    def end_run(self, pipeline: str) -> None:
        """Close the current run (`pipeline` is its textual pipeline) and write
        the file; the next hook starts a new run."""
        run = self._run()
        run.pipeline = pipeline
        self._current = None
        self._stacks.clear()
        self._tracker.clear()
        self.write()

    def write(self) -> None:
        """Write the report (atomically, `passflow.output_file.write_output`);
        raises `OutputFileError` when the file cannot be written."""
        write_output(self.path, render_html(self))


# --- rendering -------------------------------------------------------------------

_CSS = """
body{font:14px system-ui,sans-serif;margin:1.5em;color:#222}
code,pre{font:12px ui-monospace,monospace}
pre{background:#f6f8fa;padding:.5em;overflow:auto;margin:.3em 0}
ul.tree{list-style:none;padding-left:1.2em;margin:0}
li.node>details>summary{cursor:pointer;display:flex;gap:.6em;align-items:center;
padding:1px 0}
.name{min-width:16em}.arg{color:#666;min-width:10em}
.chart{width:240px;height:10px;background:#eee;position:relative;flex:none}
.bar{height:10px;background:#4a7fd0;position:absolute;left:0;top:0}
.cpu{height:4px;background:#e0a030;position:absolute;left:0;top:6px}
.time{font-variant-numeric:tabular-nums;min-width:14em;color:#333}
.badge{font-size:11px;border-radius:3px;padding:0 4px;background:#ddd}
.badge.changed{background:#cfe8cf}.badge.failed{background:#f3c0c0}
.add{background:#e6ffec;color:#116329}.del{background:#ffebe9;color:#82071e}
.hunk{color:#6f42c1}.hdr{color:#666}
.diag.error{color:#b00020}.diag.warning{color:#9a6700}
.body{margin-left:1.2em;border-left:2px solid #eee;padding-left:.6em}
table.summary td{padding:0 1em 0 0}
li.node>details>summary,details.fold>summary{list-style:none;cursor:pointer}
li.node>details>summary::-webkit-details-marker,
details.fold>summary::-webkit-details-marker{display:none}
li.node>details>summary::before,details.fold>summary::before{content:"\\25B6";
font-size:10px;color:#555;display:inline-block;width:1.2em;flex:none}
li.node>details[open]>summary::before,
details.fold[open]>summary::before{content:"\\25BC"}
li.node.leaf>details>summary::before{visibility:hidden}
.optime,.delta,.optimes{color:#555;font-variant-numeric:tabular-nums}
.controls label{margin-right:1em}.hidden{display:none}
.failure pre.before{border-left:3px solid #f3c0c0}
.diagram-wrap{overflow:auto;max-height:80vh;border:1px solid #eee;margin:.3em 0}
svg.diagram a.goto{cursor:pointer}svg.diagram a.goto:hover rect{stroke-width:2}
li.node.flash>details>summary{background:#fff3b0}
details.dot{margin:.3em 0 .8em}
"""

_SCRIPT = """
function text(id) {
  return document.getElementById(id).value.trim().toLowerCase();
}
function has(value, part) {
  return (value || '').toLowerCase().indexOf(part) >= 0;
}
function applyFilters() {
  var op = text('filter-op'), pass = text('filter-pass');
  var only = document.getElementById('only-changed').checked;
  var filtering = op || pass || only;
  var shown = 0;
  var rows = Array.prototype.slice.call(document.querySelectorAll('li.node'));
  var inside = new Set();
  rows.reverse().forEach(function (li) {  // children before their parents
    var keep = false;
    if (li.classList.contains('pass')) {
      keep = !only || li.dataset.changed !== '0' || li.dataset.diagnostics !== '0';
      if (pass) {
        keep = keep && (has(li.dataset.name, pass) || has(li.dataset.argument, pass));
      }
      var found = 0;
      li.querySelectorAll(':scope > details > .body > [data-op]').forEach(function (c) {
        var match = !op || has(c.dataset.op, op);
        c.classList.toggle('hidden', !match);
        if (match) { found++; }
        var fold = c.querySelector('details.fold');
        if (op && match && fold) { fold.open = true; }
      });
      if (op) { keep = keep && found > 0; }
      if (keep) { shown++; }
    }
    var holds = inside.has(li);
    var visible = !filtering || keep || holds;
    li.classList.toggle('hidden', !visible);
    if (filtering && (holds || (keep && op))) {
      li.querySelector(':scope > details').open = true;
    }
    var parent = li.parentElement ? li.parentElement.closest('li.node') : null;
    if (visible && filtering && parent) { inside.add(parent); }
  });
  document.getElementById('shown').textContent =
    filtering ? shown + ' pass(es) shown' : '';
}
['filter-op', 'filter-pass'].forEach(function (id) {
  document.getElementById(id).addEventListener('input', applyFilters);
});
document.getElementById('only-changed').addEventListener('change', applyFilters);
var EXPAND_LIMIT = 300;
document.getElementById('expand').addEventListener('click', function () {
  var closed = Array.prototype.filter.call(
    document.querySelectorAll('details:not([open])'),
    function (d) { return !d.closest('.hidden'); });
  closed.slice(0, EXPAND_LIMIT).forEach(function (d) { d.open = true; });
  document.getElementById('shown').textContent = closed.length > EXPAND_LIMIT ?
    'opened ' + EXPAND_LIMIT + ' of ' + closed.length + ' folds: filter by ' +
    'function or pass to open the rest, or press again' : '';
});
document.addEventListener('toggle', function (event) {
  var fold = event.target;
  if (!fold.open) { return; }
  var lazy = fold.querySelector(':scope > template.lazy');
  if (lazy) { lazy.replaceWith(lazy.content.cloneNode(true)); }
}, true);
function reveal(id) {
  var row = document.getElementById(id);
  if (!row || !row.classList.contains('node')) { return false; }
  row.classList.remove('hidden');
  for (var e = row; e; e = e.parentElement) {
    if (e.tagName === 'DETAILS') { e.open = true; }
  }
  var own = row.querySelector(':scope > details');
  if (own) { own.open = true; }
  row.scrollIntoView({block: 'start'});
  row.classList.add('flash');
  setTimeout(function () { row.classList.remove('flash'); }, 1500);
  return true;
}
document.addEventListener('click', function (event) {
  var link = event.target.closest ? event.target.closest('a.goto') : null;
  if (link && reveal(link.getAttribute('data-target'))) {
    event.preventDefault();
    history.replaceState(null, '', '#' + link.getAttribute('data-target'));
  }
});
if (location.hash) { reveal(decodeURIComponent(location.hash.slice(1))); }
"""


_FOLD_ABOVE = 5
"""A pass that changed more ops than this shows each op's diff folded."""

_SLOWEST = 5
"""How many of a pass's slowest ops its body names."""


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def _diff_lines(change: _Change, limit: int) -> Iterator[str]:
    import difflib  # with `html`, only when a report is written: 0.6 MB at start-up
    from html import escape

    lines = difflib.unified_diff(
        (change.before or "").splitlines(),
        (change.after or "").splitlines(),
        "before",
        "after",
        lineterm="",
    )
    for count, line in enumerate(lines):
        if count == limit:
            yield '<span class="hdr">... diff cut here</span>'
            return
        if line.startswith(("---", "+++")):
            css = "hdr"
        elif line.startswith("@@"):
            css = "hunk"
        elif line.startswith("+"):
            css = "add"
        elif line.startswith("-"):
            css = "del"
        else:
            css = "ctx"
        yield f'<span class="{css}">{escape(line)}</span>'


def _diagnostic_items(diagnostics: list[Diagnostic]) -> list[str]:
    from html import escape

    return [
        f'<li class="diag {escape(d.severity.value)}"><pre>{escape(str(d))}</pre></li>'
        for d in diagnostics
    ]


def _change_html(report: RunReport, node: _Node, change: _Change, fold: str) -> str:
    """One op a pass changed: a fold (open when `fold`) whose summary has the
    op, the pass's time on it and the size of the change, holding the diff and
    the whole op after the pass."""
    from html import escape

    failed = " (pass failed)" if change.failed else ""
    label = escape(change.op_label)
    spent = node.op_times.get(change.op_label)
    timing = "" if spent is None else f' <span class="optime">{_ms(spent)}</span>'
    if change.omitted:
        return (
            f'<div class="change" data-op="{label}"><div><code>{label}</code>'
            f"{failed}{timing}</div><p>{escape(change.omitted)}</p></div>"
        )
    what = (
        " (made by the pass)"
        if change.before is None
        else " (erased by the pass)"
        if change.after is None
        else ""
    )
    lines = list(_diff_lines(change, report.max_diff_lines))
    added = sum(line.startswith('<span class="add">') for line in lines)
    removed = sum(line.startswith('<span class="del">') for line in lines)
    shown = f'<pre class="diff">{chr(10).join(lines)}</pre>'
    delta = f' <span class="delta">+{added} \u2212{removed}</span>'
    whole = (
        '<details class="whole"><summary>whole op after the pass</summary>'
        f'<pre class="after">{escape(change.after or "")}</pre></details>'
        if change.after is not None
        else ""
    )
    content = shown + whole
    if not fold:  # built by the page when opened: a folded diff costs no layout
        content = f'<template class="lazy">{content}</template>'
    return (
        f'<div class="change" data-op="{label}"><details class="fold"{fold}>'
        f"<summary><code>{label}</code>{what}{failed}{timing}{delta}</summary>"
        f"{content}</details></div>"
    )


def _failure_html(failure: _Failure) -> str:
    """An op a pass failed on, as it was before the pass."""
    from html import escape

    label = escape(failure.op_label)
    if failure.before is None:
        shown = "<p>its text before the pass was not recorded</p>"
    else:
        shown = f'<pre class="before">{escape(failure.before)}</pre>'
    return (
        f'<div class="failure" data-op="{label}"><div>failed on <code>{label}</code>, '
        f"which was, before the pass:</div>{shown}</div>"
    )


def _shown(node: _Node) -> _Node:
    """The node shown in `node`'s place: an adaptor with one nested pipeline is
    shown as that pipeline, as --mlir-timing does."""
    while node.kind == "adaptor" and len(node.children) == 1 and not node.diagnostics:
        node = next(iter(node.children.values()))
    return node


def _anchors(number: int, top: list[_Node]) -> dict[int, str]:
    """An id for every shown node of run `number` (by `id(node)`): the rows'
    anchors, which the graph's boxes link to."""
    anchors: dict[int, str] = {}
    stack = list(reversed(top))
    while stack:
        node = _shown(stack.pop())
        anchors[id(node)] = f"run-{number}-node-{len(anchors) + 1}"
        stack.extend(reversed(node.children.values()))
    return anchors


def _node_html(
    report: RunReport,
    node: _Node,
    total: float,
    anchors: dict[int, str],
    out: list[str],
) -> None:
    from html import escape

    node = _shown(node)
    width = min(100.0, node.wall / total * 100) if total > 0 else 0.0
    cpu_width = min(100.0, node.cpu / total * 100) if total > 0 else 0.0
    badges = ""
    if node.changed:
        badges += f'<span class="badge changed">changed {node.changed}</span>'
    if node.failures:
        badges += f'<span class="badge failed">failed {node.failures}</span>'
    if node.diagnostics:
        badges += f'<span class="badge">diagnostics {len(node.diagnostics)}</span>'
    opened = " open" if node.kind != "pass" or node.failures else ""
    head = len(out)
    out.append(
        f'<li class="node {node.kind}" id="{anchors[id(node)]}" '
        f'data-name="{escape(node.name)}" '
        f'data-argument="{escape(node.argument)}" data-changed="{node.changed}" '
        f'data-diagnostics="{len(node.diagnostics)}">'
        f"<details{opened}><summary>"
        f'<span class="name">{escape(node.name)}</span>'
        f'<span class="arg">{escape(node.argument)}</span>'
        f'<span class="chart" title="wall (blue) and CPU (orange) time">'
        f'<span class="bar" style="width:{width:.2f}%"></span>'
        f'<span class="cpu" style="width:{cpu_width:.2f}%"></span></span>'
        f'<span class="time" data-wall="{node.wall:.6f}" data-cpu="{node.cpu:.6f}">'
        f"{_ms(node.wall)} wall, {_ms(node.cpu)} CPU, {node.runs} run(s)</span>"
        f"{badges}</summary>"
    )
    body: list[str] = []
    if node.pass_ is not None and node.kind == "pass":
        stats = statistic_values(node.pass_)
        if stats:
            body.append('<ul class="statistics">')
            body.extend(
                f"<li>{escape(s.name)}: {value} "
                f"<small>{escape(s.description)}</small></li>"
                for s, value in stats
            )
            body.append("</ul>")
    if node.diagnostics:
        body.append('<ul class="diagnostics">')
        body.extend(_diagnostic_items(node.diagnostics))
        body.append("</ul>")
    if node.failed_ops:
        body.extend(_failure_html(failure) for failure in node.failed_ops)
    if len(node.op_times) > 1:
        slowest = sorted(node.op_times.items(), key=lambda item: -item[1])[:_SLOWEST]
        body.append(
            '<p class="optimes">slowest ops: '
            + ", ".join(f"<code>{escape(op)}</code> {_ms(s)}" for op, s in slowest)
            + "</p>"
        )
    fold = " open" if len(node.changes) <= _FOLD_ABOVE else ""
    for change in node.changes:
        body.append(_change_html(report, node, change, fold))
    unrecorded = node.changed - len(node.changes)
    if unrecorded > 0:
        body.append(
            f'<p class="unrecorded">{unrecorded} more change(s) by this pass, '
            f"past the report's limit of {report.max_changes} per pass "
            "(--report-max-changes)</p>"
        )
    if not body and not node.children:
        out[head] = out[head].replace('class="node ', 'class="node leaf ', 1)
    if body:
        out.append('<div class="body">')
        out.extend(body)
        out.append("</div>")
    if node.children:
        out.append('<ul class="tree">')
        for child in node.children.values():
            _node_html(report, child, total, anchors, out)
        out.append("</ul>")
    out.append("</details></li>")


def render_html(report: RunReport) -> str:
    """The report as one HTML document with inline CSS and script."""
    from html import escape

    out: list[str] = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        "<title>passflow run report</title>",
        f"<style>{_CSS}</style></head><body>",
        "<h1>passflow run report</h1>",
        '<p class="controls"><label>function <input type="search" id="filter-op" '
        'placeholder="@name"></label><label>pass <input type="search" '
        'id="filter-pass" placeholder="cse"></label><label><input type="checkbox" '
        'id="only-changed"> only passes that changed the IR or emitted '
        'diagnostics</label> <button id="expand">expand all</button> '
        '<span id="shown"></span></p>',
    ]
    for number, run in enumerate(report.runs, 1):
        top = list(run.root.children.values())
        total = sum(node.wall for node in top)
        changed = 0
        stack = list(top)
        while stack:
            node = stack.pop()
            changed += node.changed
            stack.extend(node.children.values())
        out.append(f'<section class="run" id="run-{number}"><h2>Run {number}</h2>')
        out.append(
            '<table class="summary">'
            f"<tr><td>pipeline</td><td><code>{escape(run.pipeline)}</code></td></tr>"
            f"<tr><td>pass time</td><td>{_ms(total)} wall</td></tr>"
            f"<tr><td>changes</td><td>{changed}</td></tr></table>"
        )
        anchors = _anchors(number, top)
        if top:
            out.extend(_pass_graph_html(number, top, anchors))
        if run.graph:
            out.extend(_schedule_graph_html(number, run.graph, top, anchors))
        out.append('<ul class="tree pass-list">')
        for node in top:
            _node_html(report, node, total, anchors, out)
        out.append("</ul>")
        if run.loose:
            out.append("<h3>Diagnostics outside any pass</h3>")
            out.append('<ul class="diagnostics loose">')
            out.extend(_diagnostic_items(run.loose))
            out.append("</ul>")
        out.append("</section>")
    out.append(f"<script>{_SCRIPT}</script></body></html>\n")
    return "\n".join(out)


# --- graphs ----------------------------------------------------------------------


def _pass_diagram(top: list[_Node], anchors: dict[int, str]) -> Diagram:
    """The pass pipeline tree as a diagram: a box per pass, a frame per nested
    pipeline (an adaptor running several, a pass running dynamic ones), arrows
    in run order; an adaptor's pipelines stand side by side (they run on
    different ops)."""
    edges: list[Edge] = []

    def chain(items: list[Box | Cluster]) -> None:
        edges.extend(Edge(a.key, b.key) for a, b in itertools.pairwise(items))

    def item(node: _Node) -> Box | Cluster:
        node = _shown(node)
        key = anchors[id(node)]
        summary = f"{node.name}: {_ms(node.wall)} wall, {node.runs} run(s)"
        if node.changed:
            summary += f", changed {node.changed} op(s)"
        if node.failures:
            summary += f", failed {node.failures} time(s)"
        if not node.children and node.kind == "pass":
            fill = (
                "#f3c0c0" if node.failures else "#cfe8cf" if node.changed else "#ffffff"
            )
            return Box(
                key,
                node.argument or node.name,
                note=_ms(node.wall),
                tooltip=summary,
                href=f"#{key}",
                fill=fill,
                kind=node.kind,
            )
        members = [item(child) for child in node.children.values()]
        if node.kind != "adaptor":
            chain(members)
        label = node.argument or node.name if node.kind == "pass" else node.name
        return Cluster(key, label, members, summary, f"#{key}", node.kind)

    items = [item(node) for node in top]
    chain(items)
    return Diagram("pass pipeline", Cluster("", "", items), edges)


def _dot_source(text: str, filename: str, summary: str) -> str:
    """A folded block with DOT text and a link that saves it (a `data:` URL:
    nothing is fetched)."""
    from html import escape
    from urllib.parse import quote

    return (
        f'<details class="dot"><summary>{escape(summary)}</summary>'
        f'<a download="{escape(filename)}" '
        f'href="data:text/vnd.graphviz;charset=utf-8,{quote(text)}">'
        f"save as {escape(filename)}</a><pre>{escape(text)}</pre></details>"
    )


def _pass_graph_html(
    number: int, top: list[_Node], anchors: dict[int, str]
) -> list[str]:
    from passflow.instruments.diagram_dot import to_dot
    from passflow.instruments.diagram_svg import render_svg

    diagram = _pass_diagram(top, anchors)
    return [
        '<details class="pass-graph" open><summary>pass pipeline graph</summary>',
        f'<div class="diagram-wrap">{render_svg(diagram, f"run-{number}-passes")}</div>',
        _dot_source(
            to_dot(diagram), f"run-{number}-passes.dot", "DOT source (for Graphviz)"
        ),
        "</details>",
    ]


def _stage_links(diagram: Diagram, top: list[_Node], anchors: dict[int, str]) -> None:
    """Link each pipeline of a schedule to its stage's row (`'name' Stage`)."""
    rows: dict[str, str] = {}
    stack = list(top)
    while stack:
        node = _shown(stack.pop())
        if node.kind == "pipeline":
            rows.setdefault(node.name, anchors[id(node)])
        stack.extend(node.children.values())
    members: list[Box | Cluster] = list(diagram.root.members)
    while members:
        member = members.pop()
        row = rows.get(f"'{member.key.removeprefix('cluster_')}' Stage")
        if row is not None:
            member.href = f"#{row}"
        if isinstance(member, Cluster):
            members.extend(member.members)


def _schedule_graph_html(
    number: int, text: str, top: list[_Node], anchors: dict[int, str]
) -> list[str]:
    """The pipeline graph drawn, each schedule under its name, with its DOT
    text; DOT the drawing cannot read is shown as text with the reason."""
    from html import escape

    from passflow.instruments.diagram_svg import render_svg
    from passflow.instruments.dot_reader import DotSyntaxError, read_dot

    out = ['<details class="graph" open><summary>pipeline graph</summary>']
    try:
        diagrams = read_dot(text)
    except DotSyntaxError as error:
        out.append(f'<p class="undrawn">not drawn: {escape(str(error))}</p>')
        diagrams = []
    for index, diagram in enumerate(diagrams, 1):
        _stage_links(diagram, top, anchors)
        svg = render_svg(diagram, f"run-{number}-graph-{index}")
        out.append(f"<h4>{escape(diagram.title)}</h4>")
        out.append(f'<div class="diagram-wrap">{svg}</div>')
    out.append(
        _dot_source(
            text,
            f"run-{number}-pipeline-graph.dot",
            "DOT source (--dump-pipeline-graph=dot)",
        )
    )
    out.append("</details>")
    return out
