"""IR printing around passes: what did each pass do to the IR (`--mlir-print-ir-*`).

`IRPrinterInstrumentation` prints the op a pass ran on before and/or after the
pass, with mlir-opt 22.1.8's headers::

    // -----// IR Dump Before CSE (cse) //----- //
    // -----// IR Dump After CSE (cse) //----- //
    // -----// IR Dump After Canonicalizer Failed (canonicalize) //----- //

With module scope the top-level op is printed instead and the header names the
pass's op: `... (cse) ('func.func' operation: @foo) //----- //`. Each dump is
followed by one blank line, two when the printed op is a top-level op (whose
print ends with a newline). Dumps go to a stream (stderr by default) or, with a
tree directory, each to its own file in MLIR's layout
(`DIR/builtin_module_no-symbol-name/func_func_foo/0_1_cse.mlir`).

Adaptors (the passes that run nested pipelines) are never printed. The cost is
the printing: the filters are set lookups, after-change fingerprints only the
pass's own op and only for passes whose dump is wanted, and nothing walks the
module unless module scope asks for the top-level op.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field

from passflow import ir, verifier
from passflow.file_metadata import elide_resources
from passflow.instrumentation import PassInstrumentation
from passflow.instruments.ir_printer_config import (
    MODULE_SCOPE_THREADING_ERROR,
    MODULE_SCOPE_THREADING_TOOL_ERROR,
    IRPrinterConfig,
)
from passflow.ir import Operation
from passflow.output_file import OutputFileError, write_output
from passflow.pass_base import Pass

__all__ = [
    "MODULE_SCOPE_THREADING_ERROR",
    "MODULE_SCOPE_THREADING_TOOL_ERROR",
    "IRPrinterConfig",
    "IRPrinterInstrumentation",
]

_NOT_IN_FILE_NAMES = str.maketrans({"/": "_", "\\": "_", "\0": "_"})
"""Characters of a symbol name that cannot be in a file name: a separator would
nest directories, a NUL cannot be passed to the OS (mlir-opt cuts the name
there, then fails to open the file)."""


@dataclass(eq=False)
class IRPrinterInstrumentation(PassInstrumentation):
    """Prints the IR around passes according to an `IRPrinterConfig`."""

    config: IRPrinterConfig
    _before: frozenset[str] = field(init=False)
    _after: frozenset[str] = field(init=False)
    _fingerprints: dict[Pass, int] = field(init=False, default_factory=lambda: {})
    _counters: dict[Operation, int] = field(init=False, default_factory=lambda: {})

    def __post_init__(self) -> None:
        self._before = frozenset(self.config.before)
        self._after = frozenset(self.config.after)

    def _prints_before(self, pass_: Pass) -> bool:
        return self.config.before_all or pass_.argument in self._before

    def _prints_after(self, pass_: Pass) -> bool:
        config = self.config
        return config.after_all or config.after_failure or pass_.argument in self._after

    def run_before_pass(self, pass_: Pass, op: Operation) -> None:
        if pass_.is_adaptor:
            return
        config = self.config
        if (
            config.after_change
            and not config.after_failure
            and self._prints_after(pass_)
        ):
            self._fingerprints[pass_] = ir.fingerprint(op)
        if self._prints_before(pass_):
            self._dump("Before", pass_, op)

    def run_after_pass(self, pass_: Pass, op: Operation) -> None:
        config = self.config
        if config.after_failure or pass_.is_adaptor or not self._prints_after(pass_):
            return
        if config.after_change:
            before = self._fingerprints.pop(pass_, None)
            if before == ir.fingerprint(op):
                return
        self._dump("After", pass_, op)

    def run_after_pass_failed(self, pass_: Pass, op: Operation) -> None:
        if pass_.is_adaptor:
            return
        self._fingerprints.pop(pass_, None)
        if self._prints_after(pass_):
            self._dump("After", pass_, op, failed=True)

    def _dump(
        self, when: str, pass_: Pass, op: Operation, failed: bool = False
    ) -> None:
        config = self.config
        scope = ""
        target = op
        if config.module_scope:
            symbol = ir.symbol_name(op)
            name = ir.operation_name(op).name
            scope = (
                f" ('{name}' operation: @{symbol})"
                if symbol is not None
                else f" ('{name}' operation)"
            )
            parent = target.parent_op()
            while parent is not None:
                target = parent
                parent = target.parent_op()
        status = " Failed" if failed else ""
        generic = (
            failed
            and not config.assume_verified
            and verifier.verify(target) is not None
        )
        options = config.print_options
        try:
            body = ir.print_op(target, generic=generic, options=options)
        except Exception:  # a custom printer that trips over invalid IR
            body = ir.print_op(target, options=options.with_generic())
        if target.parent is None:
            body += "\n" + _resources(target, options.resource_limit)
        text = (
            f"// -----// IR Dump {when} {pass_.display_name}{status} ({pass_.argument}){scope}"
            f" //----- //\n{body}\n\n"
        )
        if config.tree_dir is None:
            stream = config.stream if config.stream is not None else sys.stderr
            stream.write(text)
            stream.flush()
            return
        self._write_tree_file(config.tree_dir, op, pass_.argument, text)

    def _write_tree_file(
        self, root: str, op: Operation, argument: str, text: str
    ) -> None:
        """MLIR's tree layout: a directory per ancestor, counters in the file name.

        The dumped op's counter starts at 0 and grows by one per dump; an ancestor
        reads its counter, which starts at 0 the first time it is read (so an op
        first seen as an ancestor gets 1 on its own first dump, as in MLIR).
        """
        counters = self._counters
        if op in counters:
            counters[op] += 1
        else:
            counters[op] = 0
        chain: list[Operation] = []
        current: Operation | None = op
        while current is not None:
            chain.append(current)
            current = current.parent_op()
        chain.reverse()
        directories: list[str] = []
        numbers: list[str] = []
        for ancestor in chain:
            symbol = ir.symbol_name(ancestor)
            label = (
                symbol.translate(_NOT_IN_FILE_NAMES)
                if symbol is not None
                else "no-symbol-name"
            )
            directories.append(
                ir.operation_name(ancestor).name.replace(".", "_") + "_" + label
            )
            numbers.append(str(counters.setdefault(ancestor, 0)))
        directory = os.path.join(root, *directories)
        try:
            os.makedirs(directory, exist_ok=True)
        except FileExistsError:
            pass  # a file in the way: opening the dump reports it, as in MLIR
        except OSError as err:
            sys.stderr.write(
                f"Error while creating directory {directory}: {err.strerror}\n"
            )
            return
        path = os.path.join(directory, "_".join(numbers) + f"_{argument}.mlir")
        try:
            write_output(path, text)
        except OutputFileError as err:
            sys.stderr.write(f"Error opening output file {path}: {err}\n")


def _resources(top: Operation, limit: int | None) -> str:
    """The `{-# ... #-}` section of the file `top` was parsed from, as mlir-opt
    prints it after a top-level op's dump (large resources elided past `limit`)."""
    metadata = ir.file_metadata(top)
    if metadata and limit is not None:
        metadata = elide_resources(metadata, limit)
    return f"\n{metadata}\n" if metadata else ""
