"""Run the lit suite the xDSL wheel ships (`tests/filecheck`, its own `lit.cfg`)
with `xdsl-opt` on PATH pointing at a chosen program, from a scratch folder.

The suite is never copied: the scratch folder holds a `lit.site.cfg.py` that
loads xDSL's `lit.cfg` with the scratch folder as lit's output root, and a
`bin/xdsl-opt` link to the program under test, first on PATH. Everything else
the tests start (`filecheck`, `xdsl-run`, ...) is the venv's.

`python tests/xdsl_suite/suite.py` (`make xdsl-suite`) runs the whole suite
with the real xdsl-opt and with passflow-xdsl-opt and prints the counts side
by side, then every file that passes with xdsl-opt and not with
passflow-xdsl-opt; it fails when such a file is not explained in
docs/conformance.md.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import xdsl

SUITE = Path(xdsl.__file__).resolve().parent.parent / "tests" / "filecheck"
"""The lit suite the xDSL wheel installs beside the `xdsl` package."""

BIN = Path(sys.executable).parent
REAL = BIN / "xdsl-opt"
PASSFLOW = BIN / "passflow-xdsl-opt"
CONFORMANCE = Path(__file__).resolve().parents[2] / "docs" / "conformance.md"

SAMPLE = (
    "dce.mlir",
    "version.mlir",
    "transforms/riscv_cse.mlir",
    "transforms/cse.mlir",
    "transforms/licm.mlir",
    "transforms/lower_affine.mlir",
    "transforms/convert-scf-to-cf.mlir",
    "transforms/arith-add-fastmath.mlir",
    "transforms/convert_memref_to_ptr.mlir",
    "transforms/scf_for_loop_range_folding.mlir",
    "dialects/arith/canonicalize.mlir",
    "dialects/func/func_ops.mlir",
    "dialects/builtin/attrs.mlir",
    "parser-printer/unregistered_dialect.mlir",
    "parser-printer/graph_region.mlir",
    "xdsl_opt/split_input.mlir",
    "parser-printer/duplicate_attribute_keys.mlir",
    "parser-printer/verifier_error.mlir",
    "dialects/arith/arith_invalid.mlir",
)
"""What `make test` runs (tests/xdsl_suite/test_sample.py): the common pass
names, option syntax, `--split-input-file`, `--verify-diagnostics` and
`--parsing-diagnostics` texts, generic printing and unregistered dialects."""

_RESULT = re.compile(r"^([A-Z]+): xDSL :: (\S+) \(\d+ of \d+\)$")


TIMEOUT = 120
"""Seconds a test file may take (xDSL's `lit.cfg` says 20): on a loaded
machine both tools would otherwise time out on xDSL's larger files at random."""


def prepare(scratch: Path, tool: Path, timeout: int = TIMEOUT) -> Path:
    """`scratch` made ready to run the suite with `tool` as `xdsl-opt`."""
    bin_dir = scratch / "bin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    link = bin_dir / "xdsl-opt"
    if link.is_symlink() or link.exists():
        link.unlink()
    link.symlink_to(tool)
    (scratch / "lit.site.cfg.py").write_text(
        "import os\n"
        "config.test_exec_root = os.path.dirname(__file__)\n"
        f"lit_config.load_config(config, {str(SUITE / 'lit.cfg')!r})\n"
        f"config.maxIndividualTestTime = {timeout}\n"
    )
    return scratch


def run_suite(
    scratch: Path,
    tool: Path,
    files: Sequence[str] | None = None,
    jobs: int = 2,
    timeout: int = TIMEOUT,
) -> dict[str, str]:
    """Each test file's lit result (`PASS`, `FAIL`, ...) with `tool` as xdsl-opt;
    `files` (paths under the suite) limit the run."""
    prepare(scratch, tool, timeout)
    command = [str(BIN / "lit"), "-v", f"-j{jobs}", str(scratch)]
    if files is not None:
        names = "|".join(re.escape(name) for name in files)
        command.append(f"--filter=^xDSL :: ({names})$")
    path = os.pathsep.join([str(scratch / "bin"), str(BIN), os.environ["PATH"]])
    log = scratch / "lit.log"  # lit's report, read as it runs: tail -f
    with log.open("w") as out:
        subprocess.run(
            command,
            env={**os.environ, "PATH": path},
            stdout=out,
            stderr=subprocess.STDOUT,
            check=False,
        )
    results: dict[str, str] = {}
    for line in log.read_text().splitlines():
        found = _RESULT.match(line)
        if found:
            results[found[2]] = found[1]
    return results


SUCCESS = frozenset({"PASS", "XFAIL", "UNSUPPORTED"})
"""The results lit counts as a success."""


def regressions(real: dict[str, str], ours: dict[str, str]) -> list[str]:
    """Files that succeed with xdsl-opt and not the same way with
    passflow-xdsl-opt."""
    return sorted(
        name
        for name, result in real.items()
        if result in SUCCESS and ours.get(name) != result
    )


def explained(names: Sequence[str]) -> list[str]:
    """Those of `names` that docs/conformance.md does not name."""
    text = CONFORMANCE.read_text()
    return [name for name in names if f"`{name}`" not in text]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument(
        "--scratch", type=Path, help="scratch folder (default: a temporary one)"
    )
    parser.add_argument("-j", "--jobs", type=int, default=2)
    parser.add_argument("--under", help="only the files under this folder of the suite")
    parser.add_argument("--timeout", type=int, default=TIMEOUT, help="seconds per file")
    args = parser.parse_args(argv)
    scratch = args.scratch or Path(tempfile.mkdtemp(prefix="xdsl-suite-"))
    files = None
    if args.under:
        files = sorted(
            str(p.relative_to(SUITE))
            for p in (SUITE / args.under).rglob("*")
            if p.suffix in {".mlir", ".py", ".test"}
        )
    try:
        real = run_suite(scratch / "xdsl-opt", REAL, files, args.jobs, args.timeout)
        ours = run_suite(
            scratch / "passflow-xdsl-opt", PASSFLOW, files, args.jobs, args.timeout
        )
    finally:
        if args.scratch is None:
            shutil.rmtree(scratch, ignore_errors=True)
    real_counts, our_counts = Counter(real.values()), Counter(ours.values())
    print(f"{'result':<12} {'xdsl-opt':>10} {'passflow-xdsl-opt':>18}")
    for kind in sorted(set(real_counts) | set(our_counts)):
        print(f"{kind:<12} {real_counts[kind]:>10} {our_counts[kind]:>18}")
    print(f"{'total':<12} {len(real):>10} {len(ours):>18}")
    lost = regressions(real, ours)
    print(f"\npass with xdsl-opt, not with passflow-xdsl-opt: {len(lost)}")
    for name in lost:
        print(f"  {name}: {ours.get(name, 'not run')}")
    unexplained = explained(lost)
    if unexplained:
        print(f"\nnot explained in docs/conformance.md: {', '.join(unexplained)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
