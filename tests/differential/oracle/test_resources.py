"""`dense_resource` keys as mlir-opt keeps them: through `--verify-roundtrip` and in
every chunk of `--split-input-file`, however many files this process parsed before.

xDSL keeps resource blobs in its builtin dialect object, one store per process, so
passflow's second parse of `dense_resource<blob1>` read it as `blob1_0`: the round
trip differed from the reference and failed, and a later chunk printed a key its
resource section does not hold. mlir-opt parses each chunk and the round trip in a
context of its own; its output is the reference here.
"""

from __future__ import annotations

import re
import subprocess

from ..tools import run_passflow_text
from .reference import MLIR_OPT

_CHUNK = """\
func.func @{name}() -> tensor<2xi32> {{
  %0 = arith.constant dense_resource<blob1> : tensor<2xi32>
  %1 = arith.constant dense_resource<other> : tensor<2xi32>
  return %0 : tensor<2xi32>
}}
{{-#
  dialect_resources: {{
    builtin: {{
      blob1: "0x04000000{data}",
      other: "0x040000000500000006000000"
    }}
  }}
#-}}
"""
TEXT = "\n// -----\n".join(
    _CHUNK.format(name=name, data=data)
    for name, data in (("f", "0100000002000000"), ("g", "0300000004000000"))
)
ARGV = ["--split-input-file", "--verify-roundtrip", "-"]

_HANDLE = re.compile(r"dense_resource<(\w+)>")
_ENTRY = re.compile(r"^\s*(\w+): (\"0x[0-9A-Fa-f]*\")", re.MULTILINE)


def _resources(output: str) -> list[tuple[list[str], list[tuple[str, str]]]]:
    """Per chunk of the output: the handles the IR names, the section's entries."""
    return [
        (_HANDLE.findall(chunk), sorted(_ENTRY.findall(chunk)))
        for chunk in output.split("// -----")
    ]


def test_resource_keys_survive_the_round_trip_as_in_mlir_opt() -> None:
    reference = subprocess.run(
        [str(MLIR_OPT), *ARGV], input=TEXT, capture_output=True, text=True, check=True
    )
    expected = _resources(reference.stdout)
    assert [handles for handles, _ in expected] == [["blob1", "other"]] * 2
    # Twice in this process: what the first parses left behind changes nothing.
    for _ in range(2):
        outcome = run_passflow_text(ARGV, TEXT)
        assert outcome.output is not None, outcome.details
        assert _resources(outcome.output) == expected
