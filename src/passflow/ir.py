"""The one bridge to xDSL.

Everything passflow needs from the IR goes through this module: contexts and
dialects, parsing and printing, op names and traits, the direct children of an op,
symbol names, cloning, verification with compact messages, source locations and a
structural fingerprint. Keeping xDSL behind these few functions means an xDSL upgrade
touches one file, and it is where xDSL's defaults that differ from MLIR's are mended
(unregistered ops are not IsolatedFromAbove; verification never prints the module).
"""

from __future__ import annotations

import bisect
import functools
import importlib
import io
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, cast

from xdsl.context import Context
from xdsl.dialects import get_all_dialects
from xdsl.dialects.builtin import (
    ArrayAttr,
    CallSiteLoc,
    FileLineColLoc,
    FusedLoc,
    IntAttr,
    LocationAttr,
    ModuleOp,
    NameLoc,
    StringAttr,
    UnknownLoc,
    UnregisteredOp,
)
from xdsl.ir import Attribute, Dialect, DialectInterface, Operation, Region, SSAValue
from xdsl.ir.core import AttributeInvT
from xdsl.irdl import IRDLOperation
from xdsl.parser import Parser
from xdsl.parser.core import UnresolvedOperand
from xdsl.printer import Printer
from xdsl.traits import (
    IsolatedFromAbove,
    IsTerminator,
    NoTerminator,
    OptionalSymbolOpInterface,
    OpTrait,
    SymbolOpInterface,
)
from xdsl.utils.exceptions import ParseError, VerifyException
from xdsl.utils.lexer import Span
from xdsl.utils.mlir_lexer import MLIRTokenKind

from passflow.diagnostics import (
    UNKNOWN_LOCATION,
    Diagnostic,
    IRParseError,
    Location,
    PassflowError,
    Severity,
)

__all__ = [
    "PASSFLOW_DIALECTS",
    "AllowsUnknownOperations",
    "Context",
    "ModuleOp",
    "OpTrait",
    "Operation",
    "OperationName",
    "Region",
    "clone",
    "default_context",
    "direct_children",
    "external_resources",
    "file_metadata",
    "fingerprint",
    "has_interface",
    "is_implicit_module",
    "is_isolated_from_above",
    "is_proper_ancestor",
    "load_dialects",
    "location",
    "lookup_operation_name",
    "operation_name",
    "parse_module",
    "preload_dialects",
    "print_op",
    "print_op_in_scope",
    "set_location",
    "symbol_name",
    "verify",
]


PASSFLOW_DIALECTS: dict[str, str] = {"test": "passflow.testing.test_dialect"}
"""passflow's own dialects by name, each the `DIALECT` of the module named.

They take the place of xDSL's dialect of the same name (MLIR's `test` dialect,
which mlir-opt's lit tests use, is not xDSL's) and load on first use, like xDSL's.
"""


def default_context(*, allow_unregistered: bool = False) -> Context:
    """A context that knows every xDSL dialect and passflow's own (`PASSFLOW_DIALECTS`);
    each one loads on first use."""
    ctx = _Context(allow_unregistered=allow_unregistered)
    factories = dict(get_all_dialects())
    for name, module in PASSFLOW_DIALECTS.items():
        factories[name] = _dialect_in(module)
    for name, factory in factories.items():
        ctx.register_dialect(name, factory)
    return ctx


def _dialect_in(module: str) -> Callable[[], Dialect]:
    """A factory importing `module` when the dialect is first used."""

    def load() -> Dialect:
        dialect = importlib.import_module(module).DIALECT
        if not isinstance(dialect, Dialect):
            raise TypeError(f"{module}.DIALECT is not an xDSL Dialect")
        return dialect

    return load


class AllowsUnknownOperations(DialectInterface):
    """Marks a dialect that accepts ops it does not define: MLIR's
    `Dialect::allowUnknownOperations()`.

    With the `test` dialect loaded, `"test.op"() : () -> ()` parses as an
    unregistered op without `--allow-unregistered-dialect`, exactly as mlir-opt
    parses the ops of its lit tests, while the dialect's own ops stay registered.
    """


@functools.cache
def _unknown_op(name: str) -> type[Operation]:
    """The unregistered-op class for `name`, made once (xDSL makes one per call)."""
    return UnregisteredOp.with_name(name)


class _Context(Context):
    """xDSL's context, with MLIR's dialects that allow unknown operations."""

    def get_optional_op(
        self, name: str, *, dialect_stack: Sequence[str] = ()
    ) -> type[Operation] | None:
        found = super().get_optional_op(name, dialect_stack=dialect_stack)
        if found is None and "." in name:
            dialect = self.get_optional_dialect(name.split(".", 1)[0])
            if dialect is not None and dialect.has_interface(AllowsUnknownOperations):
                found = _unknown_op(name)
        return found

    def clone(self) -> Context:
        # xDSL's clone builds a plain Context; keep the rule above in the copy.
        copy = _Context.__new__(_Context)
        vars(copy).update(vars(super().clone()))
        return copy


_load_lock = threading.Lock()


def load_dialects(ctx: Context, names: Iterable[str]) -> None:
    """Load the named registered dialects (MLIR's dependent-dialect loading)."""
    with _load_lock:
        loaded = {d.name for d in ctx.loaded_dialects}
        registered = set(ctx.registered_dialect_names)
        for name in names:
            if name in loaded:
                continue
            if name not in registered:
                raise PassflowError(
                    f"dialect '{name}' is not registered in the context"
                )
            ctx.load_registered_dialect(name)
            loaded.add(name)


def preload_dialects(ctx: Context) -> None:
    """Load every registered dialect, so concurrent work never loads one lazily."""
    load_dialects(ctx, list(ctx.registered_dialect_names))


# --- operation names --------------------------------------------------------


@dataclass(frozen=True, eq=False)
class OperationName:
    """MLIR's OperationName: the name of an op and, if registered, its class.

    Scheduling decisions (`can_schedule_on`) are made on names, once per name, not
    per op, which is what makes dispatch cheap.
    """

    name: str
    op_class: type[Operation] | None

    @property
    def is_registered(self) -> bool:
        return self.op_class is not None

    def has_trait(self, trait: type[OpTrait]) -> bool:
        cls = self.op_class
        if cls is None or not issubclass(cls, IRDLOperation):
            return False
        return cls.has_trait(trait)

    def __repr__(self) -> str:
        return f"OperationName({self.name!r})"


_names_by_class: dict[type[Operation], OperationName] = {}
_unregistered_names: dict[str, OperationName] = {}


def operation_name(op: Operation) -> OperationName:
    cls = type(op)
    found = _names_by_class.get(cls)
    if found is not None:
        return found
    if isinstance(op, UnregisteredOp):
        text = op.op_name.data
        found = _unregistered_names.get(text)
        if found is None:
            found = _unregistered_names.setdefault(text, OperationName(text, None))
        return found
    found = _names_by_class.setdefault(cls, OperationName(cls.name, cls))
    return found


def lookup_operation_name(ctx: Context | None, name: str) -> OperationName:
    """The OperationName for a textual op name, registered if the context knows it."""
    cls = ctx.get_optional_op(name) if ctx is not None else None
    if cls is None or issubclass(cls, UnregisteredOp):
        found = _unregistered_names.get(name)
        return found or _unregistered_names.setdefault(name, OperationName(name, None))
    return _names_by_class.get(cls) or _names_by_class.setdefault(
        cls, OperationName(cls.name, cls)
    )


def has_interface(op: Operation, interface: type[OpTrait]) -> bool:
    """MLIR's `isa<Interface>(op)`: `op` has the trait, and if it is an optional
    symbol (an unnamed `builtin.module`), it has its name; an unnamed module is no
    symbol, though its kind of op may be one."""
    trait = op.get_trait(interface)
    if trait is None:
        return False
    if isinstance(trait, OptionalSymbolOpInterface):
        return trait.get_sym_attr_name(op) is not None
    return True


def is_isolated_from_above(op: Operation) -> bool:
    """MLIR's rule: only registered ops with the trait are isolated."""
    return operation_name(op).has_trait(IsolatedFromAbove)


# --- structure --------------------------------------------------------------


def direct_children(op: Operation) -> list[Operation]:
    """Ops directly inside the blocks of every region of `op`, in program order."""
    return [
        child for region in op.regions for block in region.blocks for child in block.ops
    ]


def is_proper_ancestor(ancestor: Operation, op: Operation) -> bool:
    parent = op.parent_op()
    while parent is not None:
        if parent is ancestor:
            return True
        parent = parent.parent_op()
    return False


def symbol_name(op: Operation) -> str | None:
    trait = op.get_trait(SymbolOpInterface)
    if trait is None:
        return None
    attr = trait.get_sym_attr_name(op)
    return attr.data if isinstance(attr, StringAttr) else None


def clone(op: Operation) -> Operation:
    return op.clone()


# --- parsing, printing, locations -------------------------------------------


@dataclass(eq=False)
class _Source:
    name: str
    line_starts: list[int]
    first_line: int = 1

    def location(self, offset: int) -> Location:
        line = bisect.bisect_right(self.line_starts, offset)
        return Location(
            self.name,
            line + self.first_line - 1,
            offset - self.line_starts[line - 1] + 1,
        )


_OFFSET = "_passflow_offset"
_SOURCE = "_passflow_source"
_WRITTEN_UNKNOWN = "_passflow_written_unknown"  # the op's text says `loc(unknown)`
_RESOURCES = "_passflow_resources"
_METADATA = "_passflow_metadata"


ResourceValue = str | bool | int
"""A value in an `external_resources` entry of a file's `{-# ... #-}` section."""

_RESOURCE_KEYS = {"mlir_reproducer": ("pipeline", "disable_threading", "verify_each")}


class _LocatingParser(Parser):
    """xDSL's parser, remembering where each op starts so errors can point at it,
    and reading `external_resources` (which xDSL refuses), as MLIR does for
    reproducers."""

    def __init__(self, ctx: Context, text: str, name: str, source: _Source) -> None:
        super().__init__(ctx, text, name)
        self._source = source
        self.resources: dict[str, dict[str, ResourceValue]] = {}
        self.metadata: list[str] = []
        self._first_use: dict[str, Span] = {}
        # Each `loc(unknown)` parsed, by id (kept alive, so ids stay unique): xDSL
        # gives an op without `loc(...)` an UnknownLoc too, but MLIR one where
        # it was parsed.
        self._written_unknown: dict[int, LocationAttr] = {}

    def parse_module(self, allow_implicit_module: bool = True) -> ModuleOp:
        """xDSL's, except that input with no op (empty, comments, aliases) is an
        empty module, and an undefined value is reported at its first use, as in
        MLIR."""
        try:
            return super().parse_module(allow_implicit_module)
        except ParseError as err:
            nothing = err.msg == "Could not parse entire input!"
            if nothing and self._current_token.kind == MLIRTokenKind.EOF:
                return ModuleOp([])
            if err.msg.startswith("values used but not defined") and self._first_use:
                undefined = [
                    span
                    for name, span in self._first_use.items()
                    if name in self.forward_ssa_references
                ]
                if undefined:
                    first = min(undefined, key=lambda span: span.start)
                    raise ParseError(
                        first, "use of undeclared SSA value name"
                    ) from None
            raise

    def resolve_operand(
        self, operand: UnresolvedOperand, type: AttributeInvT
    ) -> SSAValue[AttributeInvT]:
        name = operand.operand_name
        if name not in self.ssa_values:
            self._first_use.setdefault(name, operand.span)
        return super().resolve_operand(operand, type)

    def _get_op_by_name(self, name: str) -> type[Operation]:
        """xDSL's lookup, with MLIR's messages for an unknown op."""
        found = self.ctx.get_optional_op(
            name, dialect_stack=self._parser_state.dialect_stack
        )
        if found is not None:
            return found
        dialect = name.split(".", 1)[0]
        if dialect in self.ctx.registered_dialect_names:
            self.raise_error(
                f"unregistered operation '{name}' found in dialect ('{dialect}') "
                "that does not allow unknown operations"
            )
        self.raise_error(
            "operation being parsed with an unregistered dialect. If this is "
            "intended, please use -allow-unregistered-dialect with the MLIR tool used"
        )

    def parse_operation(self) -> Operation:
        start = self._current_token.span.start
        op = super().parse_operation()
        state = vars(op)
        state[_OFFSET] = start
        state[_SOURCE] = self._source
        if id(op.location) in self._written_unknown:
            state[_WRITTEN_UNKNOWN] = True
        return op

    def parse_optional_location(self) -> LocationAttr | None:
        loc = super().parse_optional_location()
        if isinstance(loc, UnknownLoc):
            self._written_unknown[id(loc)] = loc
        return loc

    def _parse_file_metadata_dictionary(self) -> None:
        start = self._current_token.span.start
        super()._parse_file_metadata_dictionary()
        text = self._current_token.span.input.content
        end = self._current_token.span.start
        self.metadata.append(str(text[start:end]).rstrip())

    def _parse_external_resources(self) -> None:
        self.parse_comma_separated_list(
            self.Delimiter.BRACES, self._parse_resource_group
        )

    def _parse_resource_group(self) -> None:
        group = self.parse_identifier_or_str_literal(" for a resource group")
        self.parse_punctuation(":")
        entries = self.resources.setdefault(group, {})
        known = _RESOURCE_KEYS.get(group)

        def parse_entry() -> None:
            key_span = self._current_token.span
            key = self.parse_identifier_or_str_literal(" for a resource key")
            if known is not None and key not in known:
                self.raise_error(f"unknown '{group}' resource key '{key}'", key_span)
            self.parse_punctuation(":")
            value: ResourceValue | None = self.parse_optional_str_literal()
            if value is None:
                value = self.parse_optional_boolean()
            if value is None:
                value = self.parse_integer(context_msg=" for a resource value")
            entries[key] = value

        self.parse_comma_separated_list(self.Delimiter.BRACES, parse_entry)


def parse_module(
    text: str,
    context: Context | None = None,
    name: str = "<stdin>",
    *,
    first_line: int = 1,
) -> ModuleOp:
    """Parse `.mlir` text; several top-level ops are wrapped in an implicit module.

    `first_line` is the line `text` starts at in its file, so that locations stay
    true when a file is split into chunks (`--split-input-file`).
    """
    ctx = context if context is not None else default_context()
    line_starts = [0]
    find = text.find
    pos = find("\n")
    while pos >= 0:
        line_starts.append(pos + 1)
        pos = find("\n", pos + 1)
    source = _Source(name, line_starts, first_line)
    parser = _LocatingParser(ctx, text, name, source)
    try:
        module = parser.parse_module()
    except ParseError as err:
        raise IRParseError(
            _format_parse_error(err, source, text),
            Diagnostic(Severity.ERROR, err.msg, source.location(err.span.start)),
        ) from None
    state = vars(module)
    if _OFFSET not in state:
        state[_SOURCE] = source
        state[_OFFSET] = -1
    state[_RESOURCES] = parser.resources
    state[_METADATA] = "\n".join(parser.metadata)
    return module


def external_resources(op: Operation) -> dict[str, dict[str, ResourceValue]]:
    """The `external_resources` entries of the file `op` was parsed from, by group
    (`mlir_reproducer` holds a reproducer's pipeline and flags)."""
    return vars(op).get(_RESOURCES, {})


def file_metadata(op: Operation) -> str:
    """The raw `{-# ... #-}` section of the file `op` was parsed from ('' if none),
    so a tool can pass it through to its output untouched."""
    return vars(op).get(_METADATA, "")


def is_implicit_module(op: Operation) -> bool:
    """Whether `op` is the module `parse_module` wrapped around the input's ops."""
    return vars(op).get(_OFFSET) == -1


def _format_parse_error(err: ParseError, source: _Source, text: str) -> str:
    """mlir-opt's shape: `file:line:col: error: message`, the line, a caret."""
    start = err.span.start
    where = source.location(start)
    line_start = source.line_starts[where.line - source.first_line]
    line_end = text.find("\n", line_start)
    line = text[line_start : line_end if line_end >= 0 else len(text)]
    return f"{where}: error: {err.msg}\n{line}\n{' ' * (where.column - 1)}^"


def location(op: Operation) -> Location:
    """Where `op` came from: the file position its `loc(...)` shows, else where it
    was parsed.

    The position shown is the one mlir-opt's diagnostics show: a name or call
    site shows its (callee's) position, a fused location its first part that has
    one. A location with none (`loc(unknown)`, a bare name) is `<unknown>:0`.
    """
    loc: Attribute = op.location
    if isinstance(loc, FileLineColLoc):
        return Location(loc.filename.data, loc.line.data, loc.column.data)
    state = vars(op)
    if not isinstance(loc, UnknownLoc) or _WRITTEN_UNKNOWN in state:
        return _shown_location(loc) or UNKNOWN_LOCATION
    source: _Source | None = state.get(_SOURCE)
    if source is None:
        return UNKNOWN_LOCATION
    offset: int = state[_OFFSET]
    if offset < 0:
        return Location(source.name, 0, 0)
    return source.location(offset)


def set_location(op: Operation, where: Location) -> None:
    """Give `op`, typically one a pass creates, the location `where` (as an MLIR
    builder gives a new op the `loc` it is passed), so diagnostics about the op
    point there; `<unknown>:0` leaves it unknown."""
    if where.file is None:
        op.location = UnknownLoc()
        return
    op.location = FileLineColLoc(
        StringAttr(where.file), IntAttr(where.line), IntAttr(where.column)
    )


def _shown_location(loc: Attribute) -> Location | None:
    """The file position mlir-opt shows for `loc` (its `findLocToShow`), if any."""
    if isinstance(loc, FileLineColLoc):
        return Location(loc.filename.data, loc.line.data, loc.column.data)
    if isinstance(loc, NameLoc):
        return _shown_location(loc.location)
    if isinstance(loc, CallSiteLoc):
        return _shown_location(loc.callee)
    if isinstance(loc, FusedLoc):
        parts: Attribute = loc.locations
        for part in cast(ArrayAttr[Attribute], parts).data:
            shown = _shown_location(part)
            if shown is not None:
                return shown
    return None


def print_op(op: Operation, *, generic: bool = False) -> str:
    """Print `op` as xDSL prints it (custom form unless `generic`), no trailing newline."""
    import io

    stream = io.StringIO()
    Printer(stream=stream, print_generic_format=generic).print_op(op)
    return stream.getvalue()


def print_op_in_scope(op: Operation) -> str:
    """Print `op` alone, naming values and blocks as a print of its scope does: its
    nearest IsolatedFromAbove ancestor, else its top-level ancestor.

    This is MLIR's `Operation::print` (without `useLocalScope`), which analyses'
    debug printers use, so the `%0` they show is the `%0` of the printed function.
    """
    scope = op
    parent = op.parent_op()
    while parent is not None:
        scope = parent
        if is_isolated_from_above(parent):
            break
        parent = parent.parent_op()
    printer = Printer(stream=io.StringIO())
    if scope is not op:
        printer.print_op(scope)  # names every value and block in the scope
    stream = io.StringIO()
    printer.stream = stream
    printer.print_op(op)
    return stream.getvalue()


# --- verification -----------------------------------------------------------


def _op_label(op: Operation) -> str:
    return f"'{operation_name(op).name}' op"


def _structural_error(op: Operation) -> str | None:
    block = op.parent
    if block is None:
        return None
    region = block.parent
    if region is None:
        return None
    if op.successors:
        if block.last_op is not op:
            return "with block successors must terminate its parent block"
        if any(succ.parent is not region for succ in op.successors):
            return "is branching to a block of a different region"
    if block.last_op is op:
        parent = region.parent
        if len(region.blocks) == 1:
            if (
                parent is not None
                and not parent.has_trait(NoTerminator)
                and not op.has_trait(IsTerminator)
            ):
                return "terminates block in single-block region but is not a terminator"
        elif not op.has_trait(IsTerminator):
            return "terminates block in multi-block region but is not a terminator"
    return None


def _empty_block_error(op: Operation) -> str | None:
    if op.has_trait(NoTerminator):
        return None
    for region in op.regions:
        first = region.blocks.first
        if len(region.blocks) == 1 and first is not None and first.first_op is None:
            return (
                "contains empty block in single-block region that expects at "
                "least a terminator"
            )
    return None


def _walk(op: Operation, recursive: bool) -> Iterator[Operation]:
    yield op
    if recursive:
        for region in op.regions:
            for block in region.blocks:
                for child in block.ops:
                    yield from _walk(child, True)


def verify(op: Operation, *, recursive: bool = True) -> Diagnostic | None:
    """Verify `op` (and, if `recursive`, everything nested); the first error or None.

    Unlike `Operation.verify`, the message names the failing op and its location
    only, never the printed module, so a failure costs no more than a success.
    """
    for current in _walk(op, recursive):
        message = _structural_error(current) or _empty_block_error(current)
        if message is None:
            try:
                current.verify_()
            except VerifyException as err:
                message = str(err)
            except Exception as err:  # a verifier that crashes still fails verification
                message = f"verifier raised {type(err).__name__}: {err}"
        if message is not None:
            return Diagnostic(
                Severity.ERROR, f"{_op_label(current)} {message}", location(current)
            )
    return None


# --- change detection -------------------------------------------------------


def _attr_hash(value: Any) -> int:
    try:
        return hash(value)
    except TypeError:
        return hash(str(value))


def fingerprint(op: Operation) -> int:
    """A structural hash of `op` and everything in it, as MLIR's OperationFingerPrint.

    Equal fingerprints mean no visible change: same ops (by identity), names,
    attributes, properties, operands, result types, successors and nesting.
    """
    parts: list[int] = []
    append = parts.append
    for current in _walk(op, True):
        append(id(current))
        append(hash(operation_name(current).name))
        for key, value in current.attributes.items():
            append(hash(key))
            append(_attr_hash(value))
        for key, value in current.properties.items():
            append(hash(key))
            append(_attr_hash(value))
        for operand in current.operands:
            append(id(operand))
        for result in current.results:
            append(_attr_hash(result.type))
        for succ in current.successors:
            append(id(succ))
        append(len(current.regions))
        for region in current.regions:
            for block in region.blocks:
                append(id(block))
                for arg in block.args:
                    append(_attr_hash(arg.type))
    return hash(tuple(parts))
