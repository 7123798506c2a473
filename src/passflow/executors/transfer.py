"""Moving IR between processes without printing or parsing it.

Shipping a function as text costs more than most passes on it (xDSL's parser is
the bottleneck), and pickling ops recurses along their linked lists. This codec
flattens the regions of an op into nested tuples of small ints, where every
attribute is an index into a table that is sent once per stream: the second
function a worker returns mentions `i32` as a number. Rebuilding goes through
`Operation.create`, the same constructor xDSL's own `clone` uses, so decoding
costs about what cloning does and a tenth of parsing.

Everything that makes a serial run's output and diagnostics what they are
survives the trip: op classes (by name, through the receiving context),
operands, result types and names, properties, attributes, locations (the
`loc(...)` written and where the op was parsed, `ir.parse_position`),
successors, block arguments and their names, nested regions, and any state
other code stored on the op object (`xdsl_internals.foreign_op_state`). Large
shared objects among these (the parsed file) go through a `shared` table, so
they are sent once per stream or not at all.
"""

from __future__ import annotations

import pickle
from collections.abc import Sequence
from typing import cast

from xdsl.dialects.builtin import LocationAttr
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

from passflow import ir
from passflow.diagnostics import PassflowError
from passflow.ir import Context
from passflow.xdsl_internals import (
    foreign_op_state,
    restore_foreign_op_state,
    set_name_hint_verbatim,
)

__all__ = [
    "ChangeDetector",
    "Decoder",
    "Encoder",
    "TransferError",
    "shared_candidates",
]

_PLAIN = (int, float, str, bool, bytes, type(None))

# Encoded forms (all tuples of ints, strings and nested tuples):
#   op       = (name, operands, result types, result names | None, properties,
#               attributes, location, successors, regions, position | None,
#               extras | None)
#   region   = tuple of blocks
#   block    = (arg types, arg names | None, arg locations, block name | None, ops)
#   header   = (properties, attributes, location)
#   position = (is_shared, file-or-shared-index, offset)
#   extras   = tuple of (key, is_shared, value-or-shared-index)
EncodedOp = tuple[object, ...]
EncodedRegion = tuple[object, ...]


class TransferError(PassflowError):
    """IR that cannot be moved: a value used but not defined inside the op."""


class ChangeDetector:
    """Decides whether a child must travel back, fingerprinting only while it pays.

    An unchanged child costs nothing to return, but the two fingerprints that
    prove it cost about what encoding does. After `streak` children in a row
    that all changed, a worker stops checking and sends every child: re-sending
    an unchanged child is harmless, only slower.
    """

    def __init__(self, streak: int = 8) -> None:
        self._streak = streak
        self._changed_in_a_row = 0

    def before(self, op: Operation) -> int | None:
        """The fingerprint to compare with after the run (None: not checking)."""
        if self._changed_in_a_row >= self._streak:
            return None
        return ir.fingerprint(op)

    def changed(self, op: Operation, before: int | None) -> bool:
        if before is None:
            return True
        if ir.fingerprint(op) == before:
            self._changed_in_a_row = 0
            return False
        self._changed_in_a_row += 1
        return True


class Encoder:
    """Flattens ops for one stream (one worker's replies, or one task's input).

    Attributes are interned per stream: each one is pickled the first time the
    stream mentions it and referred to by index afterwards. `shared` objects are
    the ones both ends already hold at the same index (a forked worker inherits
    them); with `grow_shared`, any non-plain extra value is added to the table,
    which the caller then sends once along with the stream.
    """

    def __init__(self, shared: list[object], *, grow_shared: bool = False) -> None:
        self.shared = shared
        self._shared_ids = {id(obj): i for i, obj in enumerate(shared)}
        self._grow = grow_shared
        self._attr_index: dict[tuple[type, Attribute], int] = {}
        self._attr_count = 0
        self._new_attrs: list[Attribute] = []
        self._values: dict[SSAValue, int] = {}
        self._blocks: dict[Block, int] = {}

    def dumps(self, message: object) -> bytes:
        """Pickle `message` with the attributes it introduced to the stream."""
        new_attrs, self._new_attrs = self._new_attrs, []
        try:
            return pickle.dumps((new_attrs, message), pickle.HIGHEST_PROTOCOL)
        except BaseException:
            # The receiver never learns these attributes: forget them too, so the
            # stream stays in step and the caller can still send an error.
            self._attr_count -= len(new_attrs)
            for key, index in list(self._attr_index.items()):
                if index >= self._attr_count:
                    del self._attr_index[key]
            raise

    def introduced(self) -> list[Attribute]:
        """The attributes the next `dumps` introduces to the stream: each one
        encoded since the last `dumps` and never before, once."""
        return list(self._new_attrs)

    def header(self, op: Operation) -> tuple[object, ...]:
        """An op's own properties, attributes and location (not its regions)."""
        attr = self._attr
        return (
            tuple((k, attr(v)) for k, v in op.properties.items()),
            tuple((k, attr(v)) for k, v in op.attributes.items()),
            attr(op.location),
        )

    def regions(self, op: Operation) -> tuple[EncodedRegion, ...]:
        """The contents of `op`'s regions; raises TransferError if they use a value
        defined outside `op`."""
        self._values = {}
        self._blocks = {}
        for region in op.regions:
            self._number_region(region)
        try:
            return tuple(self._region(region) for region in op.regions)
        finally:
            self._values = {}
            self._blocks = {}

    def op(self, op: Operation) -> EncodedOp:
        """A whole op with no operands from outside (a shipped child)."""
        self._values = {}
        self._blocks = {}
        self._number_op(op)
        try:
            return self._op(op)
        finally:
            self._values = {}
            self._blocks = {}

    # --- internals ----------------------------------------------------------

    def _attr(self, value: Attribute) -> int:
        try:
            key = (type(value), value)
            found = self._attr_index.get(key)
        except TypeError:  # an unhashable attribute is sent every time
            key = None
            found = None
        if found is None:
            found = self._attr_count
            self._attr_count += 1
            self._new_attrs.append(value)
            if key is not None:
                self._attr_index[key] = found
        return found

    # Values are numbered in the order the decoder creates them: a region's block
    # arguments first, then its ops; an op's nested regions before its results.
    def _number_region(self, region: Region) -> None:
        values = self._values
        blocks = self._blocks
        for block in region.blocks:
            blocks[block] = len(blocks)
            for arg in block.args:
                values[arg] = len(values)
        for block in region.blocks:
            for op in block.ops:
                self._number_op(op)

    def _number_op(self, op: Operation) -> None:
        for region in op.regions:
            self._number_region(region)
        values = self._values
        for result in op.results:
            values[result] = len(values)

    def _region(self, region: Region) -> EncodedRegion:
        attr = self._attr
        encoded: list[object] = []
        for block in region.blocks:
            args = block.args
            names = tuple(a.name_hint for a in args)
            encoded.append(
                (
                    tuple(attr(a.type) for a in args),
                    names if any(n is not None for n in names) else None,
                    tuple(attr(a.location) for a in args),
                    block.name_hint,
                    tuple(self._op(op) for op in block.ops),
                )
            )
        return tuple(encoded)

    def _op(self, op: Operation) -> EncodedOp:
        attr = self._attr
        values = self._values
        try:
            operands = tuple(values[v] for v in op.operands)
        except KeyError:
            raise TransferError(
                f"'{op.name}' uses a value defined outside the op being moved"
            ) from None
        results = op.results
        names = tuple(r.name_hint for r in results)
        position = ir.parse_position(op)
        foreign = foreign_op_state(op)
        return (
            op.name,
            operands,
            tuple(attr(r.type) for r in results),
            names if any(n is not None for n in names) else None,
            tuple((k, attr(v)) for k, v in op.properties.items()),
            tuple((k, attr(v)) for k, v in op.attributes.items()),
            attr(op.location),
            tuple(self._blocks[s] for s in op.successors),
            tuple(self._region(r) for r in op.regions),
            None if position is None else (*self._share(position[0]), position[1]),
            tuple((k, *self._share(v)) for k, v in foreign) if foreign else None,
        )

    def _share(self, value: object) -> tuple[bool, object]:
        """`value` as sent: (True, its index) if in the shared table (or added to
        it), else (False, the value itself)."""
        if isinstance(value, _PLAIN):
            return (False, value)
        index = self._shared_ids.get(id(value))
        if index is None and self._grow:
            index = self._shared_ids[id(value)] = len(self.shared)
            self.shared.append(value)
        return (False, value) if index is None else (True, index)


def shared_candidates(ops: Sequence[Operation]) -> list[object]:
    """The large objects `ops` refer to besides their IR, each once: the files they
    were parsed from and the non-plain state other code stored on them. A forked
    worker can refer to these by index instead of pickling them."""
    found: dict[int, object] = {}
    for op in ops:
        position = ir.parse_position(op)
        if position is not None:
            found.setdefault(id(position[0]), position[0])
        for _, value in foreign_op_state(op):
            if not isinstance(value, _PLAIN):
                found.setdefault(id(value), value)
    return list(found.values())


class Decoder:
    """Rebuilds what an `Encoder` of the same stream produced.

    Op classes are looked up by name in `context` (so unregistered ops work when
    the context allows them); `shared` must hold the encoder's shared objects.
    """

    def __init__(self, context: Context, shared: Sequence[object]) -> None:
        self.context = context
        self.shared = shared
        self._attrs: list[Attribute] = []
        self._classes: dict[str, type[Operation]] = {}
        self._values: list[SSAValue | None] = []
        self._blocks: list[Block] = []
        self._fixups: list[tuple[Operation, tuple[int, ...]]] = []

    def loads(self, data: bytes) -> object:
        """Unpickle one message of the stream, learning the attributes it brings."""
        new_attrs, message = cast(tuple[list[Attribute], object], pickle.loads(data))
        self._attrs.extend(new_attrs)
        return message

    def splice(
        self,
        target: Operation,
        header: tuple[object, ...],
        regions: tuple[object, ...],
    ) -> None:
        """Make `target` what was encoded: same object, new contents.

        Keeping the op's identity (rather than replacing it in its block) means
        references held by the caller, uses of its results and its place in the
        parent stay valid; only the blocks inside are new.
        """
        if len(regions) != len(target.regions):
            raise TransferError(
                f"'{target.name}' came back with a different region count"
            )
        new_regions = [self._region(cast(EncodedRegion, r)) for r in regions]
        self._finish()
        # Nothing of `target` changes before everything was decoded.
        self._apply_header(target, header)
        for old, new in zip(target.regions, new_regions, strict=True):
            while (block := old.first_block) is not None:
                old.detach_block(block)
            new.move_blocks(old)

    def op(self, encoded: EncodedOp) -> Operation:
        """A new detached op (a shipped child)."""
        op = self._op(encoded)
        self._finish()
        return op

    def header_into(self, target: Operation, header: tuple[object, ...]) -> None:
        """Apply an encoded header to `target` (properties, attributes, location)."""
        self._apply_header(target, header)

    # --- internals ----------------------------------------------------------

    def _apply_header(self, target: Operation, header: tuple[object, ...]) -> None:
        attrs = self._attrs
        props, attributes, location = cast(
            tuple[tuple[tuple[str, int], ...], tuple[tuple[str, int], ...], int],
            header,
        )
        target.properties = {k: attrs[v] for k, v in props}
        target.attributes = {k: attrs[v] for k, v in attributes}
        target.location = cast(LocationAttr, attrs[location])

    def _finish(self) -> None:
        values = self._values
        for op, operands in self._fixups:
            op.operands = [cast(SSAValue, values[i]) for i in operands]
        self._fixups = []
        self._values = []
        self._blocks = []

    def _class(self, name: str) -> type[Operation]:
        cls = self._classes.get(name)
        if cls is None:
            cls = self.context.get_optional_op(name)
            if cls is None:
                raise TransferError(f"operation '{name}' is not known to the context")
            self._classes[name] = cls
        return cls

    def _region(self, encoded: EncodedRegion) -> Region:
        attrs = self._attrs
        values = self._values
        pending: list[tuple[Block, tuple[EncodedOp, ...]]] = []
        for block_enc in cast(tuple[tuple[object, ...], ...], encoded):
            types, names, locations, block_name, ops = cast(
                tuple[
                    tuple[int, ...],
                    tuple[str | None, ...] | None,
                    tuple[int, ...],
                    str | None,
                    tuple[EncodedOp, ...],
                ],
                block_enc,
            )
            block = Block(arg_types=[attrs[t] for t in types])
            args = block.args
            for arg, loc in zip(args, locations, strict=True):
                arg.location = cast(LocationAttr, attrs[loc])
            if names is not None:
                for arg, name in zip(args, names, strict=True):
                    set_name_hint_verbatim(arg, name)
            if block_name is not None:
                set_name_hint_verbatim(block, block_name)
            values.extend(args)
            self._blocks.append(block)
            pending.append((block, ops))
        for block, ops in pending:
            block.add_ops([self._op(op) for op in ops])
        return Region([block for block, _ in pending])

    def _op(self, encoded: EncodedOp) -> Operation:
        (
            name,
            operands,
            result_types,
            result_names,
            props,
            attributes,
            location,
            successors,
            regions,
            position,
            extras,
        ) = cast(
            tuple[
                str,
                tuple[int, ...],
                tuple[int, ...],
                tuple[str | None, ...] | None,
                tuple[tuple[str, int], ...],
                tuple[tuple[str, int], ...],
                int,
                tuple[int, ...],
                tuple[EncodedRegion, ...],
                tuple[bool, object, int] | None,
                tuple[tuple[str, bool, object], ...] | None,
            ],
            encoded,
        )
        attrs = self._attrs
        values = self._values
        nested = [self._region(r) for r in regions]
        forward = bool(operands) and max(operands) >= len(values)
        op = self._class(name).create(
            operands=() if forward else [cast(SSAValue, values[i]) for i in operands],
            result_types=[attrs[t] for t in result_types],
            properties={k: attrs[v] for k, v in props},
            attributes={k: attrs[v] for k, v in attributes},
            location=cast(LocationAttr, attrs[location]),
            successors=[self._blocks[s] for s in successors],
            regions=nested,
        )
        if forward:  # a use before its definition (graph regions, CFG order)
            self._fixups.append((op, operands))
        results = op.results
        values.extend(results)
        if result_names is not None:
            for result, result_name in zip(results, result_names, strict=True):
                set_name_hint_verbatim(result, result_name)
        if position is not None:
            is_shared, file, offset = position
            ir.set_parse_position(
                op, cast(ir.ParsedFile, self._unshare(is_shared, file)), offset
            )
        if extras is not None:
            restore_foreign_op_state(
                op, ((key, self._unshare(is_shared, v)) for key, is_shared, v in extras)
            )
        return op

    def _unshare(self, is_shared: bool, value: object) -> object:
        """What `Encoder._share` sent as `(is_shared, value)`."""
        return self.shared[cast(int, value)] if is_shared else value
