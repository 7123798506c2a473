"""Random programs that MLIR can run, for comparing results before and after a pass.

A program is a module of `func`, `arith`, `scf`, `cf`, `memref` and `llvm` ops whose
`@main(i64) -> i64` (with `llvm.emit_c_interface`, so the ExecutionEngine can invoke
it) returns a checksum of everything it computed. Programs are free of undefined
behaviour by construction, so any pass must keep every result:

- divisors are constants other than 0 and -1, shift amounts constants below the width;
- loops have constant bounds (`scf.for`, and `cf` loops counting to a constant);
- memory is a `memref.alloca` of `SLOTS` elements, all stored before any load, indexed
  by constants or by a loop's induction variable (bounded by `SLOTS`);
- calls go to helpers defined earlier, so there is no recursion.

The same seed gives the same program (`program(seed)`).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ["SLOTS", "program"]

SLOTS = 4
"""Elements of each function's `memref.alloca`."""

_BINARY = {
    "i64": ("addi", "subi", "muli", "andi", "ori", "xori", "maxsi", "minsi", "maxui"),
    "i32": ("addi", "subi", "muli", "andi", "ori", "xori", "minui"),
}
_DIVIDING = ("divsi", "remsi", "divui", "remui", "ceildivsi", "floordivsi")
_SHIFTS = ("shli", "shrsi", "shrui")
_PREDICATES = ("eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge")
_LLVM = ("add", "sub", "mul", "and", "or", "xor")
_WIDTH = {"i64": 64, "i32": 32}


@dataclass
class _Function:
    """One function being written: its lines and the values in scope."""

    rng: random.Random
    helpers: list[str]
    lines: list[str] = field(default_factory=lambda: list[str]())
    scopes: list[dict[str, list[str]]] = field(
        default_factory=lambda: [{"i64": [], "i32": [], "i1": []}]
    )
    memory: str | None = None
    counter: int = 0

    def fresh(self) -> str:
        self.counter += 1
        return f"%v{self.counter}"

    def emit(self, depth: int, text: str) -> None:
        self.lines.append("  " * (depth + 1) + text)

    def define(self, kind: str, name: str) -> str:
        self.scopes[-1][kind].append(name)
        return name

    def values(self, kind: str) -> list[str]:
        return [value for scope in self.scopes for value in scope[kind]]

    def pick(self, kind: str, depth: int) -> str:
        found = self.values(kind)
        if found and self.rng.random() < 0.85:
            return self.rng.choice(found)
        return self.constant(kind, depth)

    def constant(self, kind: str, depth: int, value: int | None = None) -> str:
        if value is None:
            value = self.rng.choice(
                [0, 1, -1, 2, 3, 7, 42, -5, 255, 1 << 31, (1 << 62) + 3, 1000]
            )
        width = _WIDTH.get(kind, 1)
        if value == 1000:
            value = self.rng.randint(-1000, 1000)
        value = (value + (1 << (width - 1))) % (1 << width) - (1 << (width - 1))
        name = self.fresh()
        if kind == "i1":
            self.emit(depth, f"{name} = arith.constant {'true' if value else 'false'}")
        else:
            self.emit(depth, f"{name} = arith.constant {value} : {kind}")
        return self.define(kind, name)

    def index(self, depth: int, value: int) -> str:
        name = self.fresh()
        self.emit(depth, f"{name} = arith.constant {value} : index")
        return name

    # --- statements -----------------------------------------------------------

    def statement(self, depth: int) -> None:
        choices: list[tuple[int, Callable[[int], None]]] = [
            (6, self._binary),
            (2, self._divide),
            (2, self._shift),
            (2, self._compare),
            (2, self._cast),
            (1, self._llvm),
            (1, self._constant),
        ]
        if self.memory is not None:
            choices += [(2, self._store), (2, self.load)]
        if self.helpers:
            choices.append((2, self._call))
        if depth < 2:
            choices += [(2, self._if), (2, self._for)]
        weights = [weight for weight, _ in choices]
        action = self.rng.choices([action for _, action in choices], weights)[0]
        action(depth)

    def _constant(self, depth: int) -> None:
        self.constant(self.rng.choice(("i64", "i32")), depth)

    def _binary(self, depth: int) -> None:
        kind = self.rng.choice(("i64", "i64", "i32"))
        op = self.rng.choice(_BINARY[kind])
        lhs, rhs = self.pick(kind, depth), self.pick(kind, depth)
        name = self.fresh()
        self.emit(depth, f"{name} = arith.{op} {lhs}, {rhs} : {kind}")
        self.define(kind, name)

    def _divide(self, depth: int) -> None:
        kind = self.rng.choice(("i64", "i32"))
        op = self.rng.choice(_DIVIDING)
        divisor = self.constant(kind, depth, self.rng.choice([2, 3, 7, -3, 10, 1000]))
        lhs = self.pick(kind, depth)
        name = self.fresh()
        self.emit(depth, f"{name} = arith.{op} {lhs}, {divisor} : {kind}")
        self.define(kind, name)

    def _shift(self, depth: int) -> None:
        kind = self.rng.choice(("i64", "i32"))
        amount = self.constant(kind, depth, self.rng.randrange(_WIDTH[kind]))
        lhs = self.pick(kind, depth)
        name = self.fresh()
        op = self.rng.choice(_SHIFTS)
        self.emit(depth, f"{name} = arith.{op} {lhs}, {amount} : {kind}")
        self.define(kind, name)

    def _compare(self, depth: int) -> None:
        kind = self.rng.choice(("i64", "i32"))
        lhs, rhs = self.pick(kind, depth), self.pick(kind, depth)
        flag = self.fresh()
        predicate = self.rng.choice(_PREDICATES)
        self.emit(depth, f"{flag} = arith.cmpi {predicate}, {lhs}, {rhs} : {kind}")
        self.define("i1", flag)
        chosen = self.fresh()
        a, b = self.pick(kind, depth), self.pick(kind, depth)
        self.emit(depth, f"{chosen} = arith.select {flag}, {a}, {b} : {kind}")
        self.define(kind, chosen)

    def _cast(self, depth: int) -> None:
        name = self.fresh()
        which = self.rng.randrange(4)
        if which == 0:
            source = self.pick("i32", depth)
            op = self.rng.choice(("extsi", "extui"))
            self.emit(depth, f"{name} = arith.{op} {source} : i32 to i64")
            self.define("i64", name)
        elif which == 1:
            source = self.pick("i64", depth)
            self.emit(depth, f"{name} = arith.trunci {source} : i64 to i32")
            self.define("i32", name)
        elif which == 2:
            source = self.pick("i1", depth)
            self.emit(depth, f"{name} = arith.extui {source} : i1 to i64")
            self.define("i64", name)
        else:
            source = self.pick("i64", depth)
            middle = self.fresh()
            self.emit(depth, f"{middle} = arith.index_cast {source} : i64 to index")
            self.emit(depth, f"{name} = arith.index_cast {middle} : index to i64")
            self.define("i64", name)

    def _llvm(self, depth: int) -> None:
        lhs, rhs = self.pick("i64", depth), self.pick("i64", depth)
        name = self.fresh()
        self.emit(depth, f"{name} = llvm.{self.rng.choice(_LLVM)} {lhs}, {rhs} : i64")
        self.define("i64", name)

    def _store(self, depth: int) -> None:
        slot = self.index(depth, self.rng.randrange(SLOTS))
        value = self.pick("i64", depth)
        self.emit(
            depth, f"memref.store {value}, {self.memory}[{slot}] : memref<{SLOTS}xi64>"
        )

    def load(self, depth: int) -> None:
        slot = self.index(depth, self.rng.randrange(SLOTS))
        name = self.fresh()
        self.emit(
            depth, f"{name} = memref.load {self.memory}[{slot}] : memref<{SLOTS}xi64>"
        )
        self.define("i64", name)

    def _call(self, depth: int) -> None:
        callee = self.rng.choice(self.helpers)
        a, b = self.pick("i64", depth), self.pick("i64", depth)
        name = self.fresh()
        self.emit(depth, f"{name} = func.call @{callee}({a}, {b}) : (i64, i64) -> i64")
        self.define("i64", name)

    def _nested(self, depth: int, count: int) -> str:
        """Statements in a new scope; returns an i64 computed in it."""
        self.scopes.append({"i64": [], "i32": [], "i1": []})
        for _ in range(count):
            self.statement(depth)
        result = self.pick("i64", depth)
        self.scopes.pop()
        return result

    def _if(self, depth: int) -> None:
        flag = self.pick("i1", depth)
        name = self.fresh()
        self.emit(depth, f"{name} = scf.if {flag} -> (i64) {{")
        then = self._nested(depth + 1, self.rng.randint(0, 3))
        self.emit(depth + 1, f"scf.yield {then} : i64")
        self.emit(depth, "} else {")
        other = self._nested(depth + 1, self.rng.randint(0, 3))
        self.emit(depth + 1, f"scf.yield {other} : i64")
        self.emit(depth, "}")
        self.define("i64", name)

    def _for(self, depth: int) -> None:
        lower = self.index(depth, 0)
        upper = self.index(depth, self.rng.randint(0, SLOTS))
        step = self.index(depth, self.rng.randint(1, 2))
        init = self.pick("i64", depth)
        name, iv, acc = self.fresh(), self.fresh(), self.fresh()
        self.emit(
            depth,
            f"{name} = scf.for {iv} = {lower} to {upper} step {step} "
            f"iter_args({acc} = {init}) -> (i64) {{",
        )
        self.scopes.append({"i64": [acc], "i32": [], "i1": []})
        if self.memory is not None and self.rng.random() < 0.5:
            value = self.pick("i64", depth + 1)
            self.emit(
                depth + 1,
                f"memref.store {value}, {self.memory}[{iv}] : memref<{SLOTS}xi64>",
            )
        for _ in range(self.rng.randint(1, 3)):
            self.statement(depth + 1)
        result = self.pick("i64", depth + 1)
        self.scopes.pop()
        self.emit(depth + 1, f"scf.yield {result} : i64")
        self.emit(depth, "}")
        self.define("i64", name)

    # --- whole functions --------------------------------------------------------

    def checksum(self, depth: int) -> str:
        """All i64 values in scope folded into one (`acc * 31 + value`)."""
        values = self.values("i64")
        total = self.constant("i64", depth, 17)
        factor = self.constant("i64", depth, 31)
        for value in values[-12:]:
            scaled, total_next = self.fresh(), self.fresh()
            self.emit(depth, f"{scaled} = arith.muli {total}, {factor} : i64")
            self.emit(depth, f"{total_next} = arith.addi {scaled}, {value} : i64")
            total = total_next
        return total


def _helper(rng: random.Random, name: str, helpers: list[str]) -> list[str]:
    function = _Function(rng, list(helpers))
    function.define("i64", "%a")
    function.define("i64", "%b")
    for _ in range(rng.randint(1, 5)):
        function.statement(0)
    result = function.checksum(0)
    return [
        f"func.func private @{name}(%a: i64, %b: i64) -> i64 {{",
        *function.lines,
        f"  return {result} : i64",
        "}",
    ]


def _cf_loop(rng: random.Random, name: str) -> list[str]:
    """A loop in unstructured control flow, counting to a constant."""
    function = _Function(rng, [])
    function.scopes[-1]["i64"] = ["%acc"]
    for _ in range(rng.randint(1, 4)):
        function.statement(1)
    step = function.pick("i64", 1)
    body = function.lines
    return [
        f"func.func private @{name}(%a: i64, %b: i64) -> i64 {{",
        "  %zero = arith.constant 0 : i64",
        "  %one = arith.constant 1 : i64",
        f"  %bound = arith.constant {rng.randint(0, 5)} : i64",
        "  cf.br ^loop(%zero, %a : i64, i64)",
        "^loop(%i: i64, %acc: i64):",
        "  %more = arith.cmpi slt, %i, %bound : i64",
        "  cf.cond_br %more, ^body, ^exit(%acc : i64)",
        "^body:",
        *(line[2:] for line in body),
        "  %next = arith.addi %i, %one : i64",
        f"  %mixed = arith.xori {step}, %b : i64",
        "  cf.br ^loop(%next, %mixed : i64, i64)",
        "^exit(%result: i64):",
        "  return %result : i64",
        "}",
    ]


def program(seed: int) -> str:
    """The program of `seed`: helpers, a `cf` loop, and `@main(i64) -> i64`."""
    rng = random.Random(seed)
    lines: list[str] = []
    helpers: list[str] = []
    for number in range(rng.randint(0, 2)):
        name = f"helper{number}"
        lines += _helper(rng, name, helpers)
        helpers.append(name)
    if rng.random() < 0.6:
        lines += _cf_loop(rng, "loop")
        helpers.append("loop")
    main = _Function(rng, helpers)
    main.define("i64", "%arg")
    main.memory = "%mem"
    main.emit(0, f"%mem = memref.alloca() : memref<{SLOTS}xi64>")
    for slot in range(SLOTS):
        where = main.index(0, slot)
        main.emit(0, f"memref.store %arg, %mem[{where}] : memref<{SLOTS}xi64>")
    for _ in range(rng.randint(3, 12)):
        main.statement(0)
    for _ in range(SLOTS):
        main.load(0)
    result = main.checksum(0)
    lines += [
        "func.func @main(%arg: i64) -> i64 attributes {llvm.emit_c_interface} {",
        *main.lines,
        f"  return {result} : i64",
        "}",
    ]
    return "\n".join(lines) + "\n"
