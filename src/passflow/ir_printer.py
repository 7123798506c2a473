"""xDSL's printer taught mlir-opt's printing flags (`PrintOptions`).

Part of the bridge to xDSL (`passflow.ir` uses it for every print with
options). xDSL's `Printer` prints `loc(...)` on ops and block arguments when
asked (`print_debuginfo`), each inline and only as the op holds it. MLIR
prints more, and this printer adds it:

- the location an op or block argument really has: xDSL keeps none for one
  the text gave no `loc(...)`, passflow keeps where it was parsed
  (`ir.parse_position`), and MLIR prints that position;
- `#loc` aliases, numbered as MLIR numbers them (in the order a print visits
  them, nested locations after the ones they nest in, by depth), those of
  block arguments before the op and the others after it;
- the pretty form (`file.mlir:3:4`, `[unknown]`), elided dense elements
  (`dense_resource<__elided__>`), value users and unique SSA ids.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import IO, Any, cast

from xdsl.dialects.builtin import (
    ArrayAttr,
    CallSiteLoc,
    DenseIntOrFPElementsAttr,
    FileLineColLoc,
    FusedLoc,
    NameLoc,
    NoneAttr,
    UnknownLoc,
)
from xdsl.ir import Attribute, Block, BlockArgument, Operation, Region, SSAValue

from passflow.print_options import PrintOptions
from passflow.xdsl_internals import (
    StringPrinter,
    new_value_name_id,
    print_new_line,
    printer_value_names,
)

__all__ = [
    "LocationAliases",
    "NamingPrinter",
    "OptionsPrinter",
    "options_printer",
    "print_with_options",
]

_LOCATIONS = (UnknownLoc, FileLineColLoc, NameLoc, CallSiteLoc, FusedLoc)

LocateOp = Callable[[Operation], Attribute]
LocateArg = Callable[[BlockArgument], Attribute]


def _children(loc: Attribute) -> Iterator[Attribute]:
    """The locations `loc` prints inside it (a name's unknown child is not printed)."""
    if isinstance(loc, NameLoc):
        child = loc.location
        if not isinstance(child, NoneAttr | UnknownLoc):
            yield child
    elif isinstance(loc, CallSiteLoc):
        yield loc.callee
        yield loc.caller
    elif isinstance(loc, FusedLoc):
        locations: Attribute = loc.locations
        if isinstance(locations, ArrayAttr):
            yield from locations


@dataclass
class _Alias:
    order: int
    deferred: bool
    depth: int = 0
    name: str = ""


@dataclass
class LocationAliases:
    """The `#loc` aliases of one print of a top-level op, as MLIR's alias
    initializer makes them: every distinct location gets one."""

    table: dict[Attribute, _Alias] = field(default_factory=lambda: {})

    @staticmethod
    def of(
        op: Operation, locate_op: LocateOp, locate_arg: LocateArg
    ) -> LocationAliases:
        """Visit the locations `op` prints, in MLIR's order: an op's own, then
        its regions' block arguments (not deferred: printed before the op)
        and ops; then name them by depth, then by first visit."""
        aliases = LocationAliases()
        stack: list[Operation | BlockArgument] = [op]
        while stack:
            item = stack.pop()
            if isinstance(item, BlockArgument):
                aliases.visit(locate_arg(item), deferred=False)
                continue
            aliases.visit(locate_op(item), deferred=True)
            nested: list[Operation | BlockArgument] = []
            for region in item.regions:
                for block in region.blocks:
                    nested.extend(block.args)
                    nested.extend(block.ops)
            stack.extend(reversed(nested))
        ordered = sorted(aliases.table.values(), key=lambda a: (a.depth, a.order))
        for index, alias in enumerate(ordered):
            alias.name = "loc" if index == 0 else f"loc{index}"
        return aliases

    def visit(self, loc: Attribute, deferred: bool) -> int:
        """Record `loc` and the locations in it; its depth."""
        known = self.table.get(loc)
        if known is not None:
            if known.deferred and not deferred:
                known.deferred = False
                for child in _children(loc):
                    self.visit(child, deferred)
            return known.depth
        alias = self.table[loc] = _Alias(len(self.table), deferred)
        for child in _children(loc):
            alias.depth = max(alias.depth, self.visit(child, deferred) + 1)
        return alias.depth

    def name(self, loc: Attribute) -> str | None:
        alias = self.table.get(loc)
        return None if alias is None else alias.name

    def definitions(self, deferred: bool) -> list[tuple[str, Attribute]]:
        """The aliases printed before the op (`deferred` False) or after it."""
        found = [(a, loc) for loc, a in self.table.items() if a.deferred == deferred]
        found.sort(key=lambda pair: (pair[0].depth, pair[0].order))
        return [(a.name, loc) for a, loc in found]


class NamingPrinter(StringPrinter):
    """xDSL's printer, naming values so that no two in a scope share a name.

    Every printer of passflow's is one (`ir.print_op` with default options too),
    so printed IR always parses back."""

    def __init__(self, **printer: Any) -> None:
        super().__init__(**printer)
        self._used_names: list[set[str]] = [set[str]()]
        """The value names taken in each open scope (`print_ssa_value`)."""

    def print_ssa_value(self, value: SSAValue) -> str:
        """As xDSL's, but a name from a hint is never one already taken in scope.

        xDSL numbers each hint (`cst`, `cst_1`, ...) without looking at the names
        other hints produced, so hints `cst` and `cst_1` (the parser's reading of
        `%cst_1` and `%cst_1_2`) would both print `%cst_1`: a redefinition. As
        MLIR's `SSANameState` does, the suffix grows until the name is free."""
        names = printer_value_names(self)
        name = names.get(value)
        if name is not None:
            self.print_string(f"%{name}")
            return name
        hint = value.name_hint
        if not hint:
            return super().print_ssa_value(value)
        used = self._used_names[-1]
        index = self.ssa_names.get(hint, 0)
        name = f"{hint}_{index}" if index else hint
        while name in used:
            index += 1
            name = f"{hint}_{index}"
        self.ssa_names[hint] = index + 1
        used.add(name)
        names[value] = name
        self.print_string(f"%{name}")
        return name

    def enter_scope(self) -> None:
        super().enter_scope()
        self._used_names.append(set(self._used_names[-1]))

    def exit_scope(self) -> None:
        super().exit_scope()
        self._used_names.pop()


class OptionsPrinter(NamingPrinter):
    """xDSL's printer with mlir-opt's printing flags (`PrintOptions`).

    A plain subclass with its own constructor, which passes xDSL's printer only
    the keywords every supported xDSL takes (xDSL 0.74's printer is a
    dataclass; 0.75's has a constructor of its own).
    """

    def __init__(
        self,
        *,
        stream: IO[str],
        options: PrintOptions | None = None,
        locate_op: LocateOp | None = None,
        locate_arg: LocateArg | None = None,
        aliases: LocationAliases | None = None,
    ) -> None:
        options = options if options is not None else PrintOptions()
        super().__init__(
            stream=stream,
            print_generic_format=options.generic,
            print_debuginfo=options.debug_info,
        )
        self.options = options
        self.locate_op = locate_op
        self.locate_arg = locate_arg
        self.aliases = aliases
        self._ops: list[Operation] = []
        self._arg: BlockArgument | None = None
        self._op_ids: dict[Operation, str] = {}
        self._pending_args: list[BlockArgument] = []
        self._naming = False
        """The first of two prints with value users: it only names values."""

    # --- locations ----------------------------------------------------------

    def print_block_argument(self, arg: BlockArgument, print_type: bool = True) -> None:
        self._arg = arg
        super().print_block_argument(arg, print_type)

    def print_attribute(self, attribute: Attribute) -> None:
        if isinstance(attribute, _LOCATIONS) and not self.printing_location:
            self._print_owned_location(attribute)
            return
        if self._elided(attribute):
            dense = cast(DenseIntOrFPElementsAttr[Any], attribute)
            self.print_string("dense_resource<__elided__> : ")
            self.print_attribute(dense.get_type())
            return
        super().print_attribute(attribute)

    def _print_owned_location(self, loc: Attribute) -> None:
        """A location printed at the top: an op's or block argument's (their
        real location, the argument's inline), else one inside an attribute."""
        arg, self._arg = self._arg, None
        if arg is not None and arg.location is loc and self.locate_arg is not None:
            self._print_location(self.locate_arg(arg), allow_alias=False)
            return
        if self._ops and self._ops[-1].location is loc and self.locate_op is not None:
            self._print_location(self.locate_op(self._ops[-1]), allow_alias=True)
            return
        self._print_location(loc, allow_alias=True)

    def _print_location(self, loc: Attribute, *, allow_alias: bool) -> None:
        pretty = self.options.pretty_debug_info
        name = self.aliases.name(loc) if self.aliases is not None else None
        if name is not None and allow_alias and not pretty:
            self.print_string(f"loc(#{name})")
            return
        self.printing_location = True
        try:
            if not pretty:
                self.print_string("loc(")
            self.print_location_body(loc)
            if not pretty:
                self.print_string(")")
        finally:
            self.printing_location = False

    def _print_nested_location(self, loc: Attribute) -> None:
        name = self.aliases.name(loc) if self.aliases is not None else None
        if name is not None:
            self.print_string(f"#{name}")
        else:
            self.print_location_body(loc)

    def print_location_body(self, loc: Attribute) -> None:
        """`loc` without `loc(...)` around it, nested locations by alias."""
        pretty = self.options.pretty_debug_info
        if isinstance(loc, UnknownLoc):
            self.print_string("[unknown]" if pretty else "unknown")
        elif isinstance(loc, FileLineColLoc):
            if pretty:
                self.print_string(loc.filename.data)
            else:
                self.print_string_literal(loc.filename.data)
            self.print_string(f":{loc.line.data}:{loc.column.data}")
        elif isinstance(loc, NameLoc):
            self.print_string_literal(loc.desc.data)
            for child in _children(loc):
                self.print_string("(")
                self._print_nested_location(child)
                self.print_string(")")
        elif isinstance(loc, CallSiteLoc):
            if not pretty:
                self.print_string("callsite(")
            self._print_nested_location(loc.callee)
            inline = isinstance(loc.callee, NameLoc) and isinstance(
                loc.caller, FileLineColLoc
            )
            # MLIR's pretty form puts each caller of a call stack on a line.
            self.print_string(" at " if inline or not pretty else "\n at ", indent=0)
            self._print_nested_location(loc.caller)
            if not pretty:
                self.print_string(")")
        elif isinstance(loc, FusedLoc):
            if not pretty:
                self.print_string("fused")
            if not isinstance(loc.metadata, NoneAttr):
                self.print_string("<")
                self.printing_location = False
                super().print_attribute(loc.metadata)
                self.printing_location = True
                self.print_string(">")
            self.print_string("[")
            self.print_list(_children(loc), self._print_nested_location)
            self.print_string("]")
        else:
            super().print_attribute(loc)

    # --- elided elements ----------------------------------------------------

    def _elided(self, attr: Attribute) -> bool:
        """Whether `attr` is dense elements that mlir-opt elides: more than
        the limit, and not a splat (which prints as one value anyway)."""
        limit = self.options.elements_limit
        if limit is None or not isinstance(attr, DenseIntOrFPElementsAttr):
            return False
        dense = cast(DenseIntOrFPElementsAttr[Any], attr)
        return len(dense) > limit and not dense.is_splat()

    # --- ops: value users, unique ids ---------------------------------------

    def print_op(self, op: Operation) -> None:
        self._arg = None
        if self._pending_args and op.parent is self._pending_args[0].block:
            self._print_argument_users()
        # As MLIR, an op with no results gets a value number for its users to
        # name; the op printed (MLIR numbers it after its regions) gets none.
        if self._ops:
            self._number_op(op)
        self._ops.append(op)
        try:
            super().print_op(op)
        finally:
            self._ops.pop()
            self._arg = None
        if self.options.value_users and not self._naming:
            self._print_users_of_op(op)

    def name_in_mlir_order(self, op: Operation) -> None:
        """Name every value nested in `op` in the order MLIR's `SSANameState`
        numbers them with unique ids: region by region, the last region
        pushed first, each region's values before those of regions nested
        in it (MLIR's numbers for values the text did not name), with the
        ids of ops without results when value users are printed."""
        self._number_op(op)
        stack = list(op.regions)
        while stack:
            region = stack.pop()
            nested: list[Region] = []
            for block in region.blocks:
                for arg in block.args:
                    self._name_of(arg)
                for child in block.ops:
                    for result in child.results:
                        self._name_of(result)
                    self._number_op(child)
                    nested.extend(child.regions)
            stack.extend(nested)

    def _number_op(self, op: Operation) -> None:
        if self.options.value_users and not op.results and op not in self._op_ids:
            self._op_ids[op] = new_value_name_id(self)

    def enter_scope(self) -> None:
        if not self.options.unique_ssa_ids:
            super().enter_scope()

    def exit_scope(self) -> None:
        if not self.options.unique_ssa_ids:
            super().exit_scope()

    def print_block(
        self,
        block: Block,
        print_block_args: bool = True,
        print_block_terminator: bool = True,
    ) -> None:
        if self.options.value_users and not self._naming:
            # MLIR's comment for each used argument comes first in the body.
            self._pending_args = list(block.args)
        super().print_block(block, print_block_args, print_block_terminator)
        self._pending_args = []

    def _user_names(self, op: Operation) -> list[str]:
        """How a user shows: its results (each, when it has several), else its id."""
        if op.results:
            return [self._name_of(result) for result in op.results]
        return ["%" + self._op_ids.get(op, "<<UNKNOWN OPERATION>>")]

    def _name_of(self, value: SSAValue) -> str:
        saved = self.stream
        self.stream = io.StringIO()
        try:
            self.print_ssa_value(value)
            return self.stream.getvalue()  # pyright: ignore[reportAttributeAccessIssue]
        finally:
            self.stream = saved

    def _users(self, value: SSAValue) -> list[str]:
        """The users of `value`, newest use first, each once (MLIR's order)."""
        users: list[Operation] = []
        for use in value.uses:
            if use.operation not in users:
                users.append(use.operation)
        return [name for user in users for name in self._user_names(user)]

    def _print_users_of_op(self, op: Operation) -> None:
        if not op.results:
            if op.operands:
                self.print_string(f" // id: %{self._op_ids.get(op, '')}")
            return
        if len(op.results) == 1:
            users = self._users(op.results[0])
            if not users:
                self.print_string(" // unused")
            else:
                label = "user" if len(users) == 1 else "users"
                self.print_string(f" // {label}: {', '.join(users)}")
            return
        groups = [self._users(result) for result in op.results]
        if not any(groups):
            self.print_string(" // unused")
            return
        shown = [f"({', '.join(users)})" if users else "(unused)" for users in groups]
        self.print_string(f" // users: {', '.join(shown)}")

    def _print_argument_users(self) -> None:
        """At a block's first op, a line for each of its arguments."""
        args, self._pending_args = self._pending_args, []
        for arg in args:
            users = self._users(arg)
            name = self._name_of(arg)
            if users:
                self.print_string(f"// {name} is used by {', '.join(users)}")
            else:
                self.print_string(f"// {name} is unused")
            print_new_line(self)


def options_printer(
    options: PrintOptions,
    locate_op: LocateOp,
    locate_arg: LocateArg,
    aliases: LocationAliases | None = None,
) -> OptionsPrinter:
    """A printer for `options` (writing to a string until given a stream)."""
    return OptionsPrinter(
        stream=io.StringIO(),
        options=options,
        locate_op=locate_op,
        locate_arg=locate_arg,
        aliases=aliases,
    )


def print_with_options(
    op: Operation,
    options: PrintOptions,
    locate_op: LocateOp,
    locate_arg: LocateArg,
) -> str:
    """`op` printed with `options`: aliases before and after a top-level op
    printed with debug info (not in local scope), no trailing newline."""
    aliases = None
    if options.debug_info and not options.local_scope and op.parent is None:
        aliases = LocationAliases.of(op, locate_op, locate_arg)
    printer = options_printer(options, locate_op, locate_arg, aliases)
    if options.unique_ssa_ids:
        printer.name_in_mlir_order(op)
    if options.value_users:  # names every value first: users may come later
        printer._naming = True  # pyright: ignore[reportPrivateUsage]
        printer.print_op(op)
        printer._naming = False  # pyright: ignore[reportPrivateUsage]
    stream = io.StringIO()
    printer.stream = stream
    if aliases is not None:
        for name, loc in aliases.definitions(deferred=False):
            printer.print_string(f"#{name} = ")
            printer._print_location(loc, allow_alias=False)  # pyright: ignore[reportPrivateUsage]
            printer.print_string("\n")
    printer.print_op(op)
    if aliases is not None:
        for name, loc in aliases.definitions(deferred=True):
            printer.print_string(f"\n#{name} = ")
            printer._print_location(loc, allow_alias=False)  # pyright: ignore[reportPrivateUsage]
    return stream.getvalue()
