"""A one-line summary for every pass xDSL ships, for `--list-passes` and `--help`.

Reading them from xDSL's classes would import every xDSL pass module (1.4 s of
`passflow-opt --list-passes`'s 1.8 s), so they are kept here, for the xDSL
release passflow pins: `FROM_XDSL` is the first sentence of the pass class's
docstring (`docstring_summary`), `WRITTEN` a line written here, from the pass's
source or MLIR's summary of the same-named pass, for the passes whose class has
no docstring. `tests/test_pass_doc.py` fails when an xDSL upgrade makes them
stale and prints the lines to write.
"""

from __future__ import annotations

import inspect
import re

__all__ = ["FROM_XDSL", "WRITTEN", "docstring_summary", "xdsl_summary"]

_DATACLASS_DOC = re.compile(r"[A-Z]\w*\(.*\)")
"""The docstring `dataclass` writes for a class that has none of its own."""

_SENTENCE_END = re.compile(r"(?<=[.!?:])\s+(?=[A-Z`(\"'])")


def docstring_summary(doc: str | None) -> str | None:
    """The first sentence of a docstring's first paragraph, on one line (a
    closing `:` made a `.`), or None when it has none of its own."""
    paragraph = " ".join(inspect.cleandoc(doc or "").split("\n\n")[0].split())
    if not paragraph or _DATACLASS_DOC.fullmatch(paragraph):
        return None
    sentence = _SENTENCE_END.split(paragraph, maxsplit=1)[0]
    return sentence[:-1] + "." if sentence.endswith(":") else sentence


def xdsl_summary(name: str) -> str:
    """The summary of xDSL's pass `name` ("" for a pass this table lacks)."""
    return FROM_XDSL.get(name) or WRITTEN.get(name, "")


FROM_XDSL: dict[str, str] = {
    "apply-eqsat-pdl": "A pass that applies PDL patterns using equality saturation.",
    "apply-individual-rewrite": "Module pass representing the application of an individual rewrite pattern to a module.",
    "approximate-math-with-bitcast": "This pass applies approximations for some math operations (currently log and exp) and converts them to bitcasting-based approximations.",
    "arith-add-fastmath": "Module pass that adds fastmath flags to FP binary operations from arith dialect.",
    "canonicalize": "Applies all canonicalization patterns.",
    "constant-fold-interp": "A pass that applies the interpreter to operations with no side effects where all the inputs are constant, replacing the computation with a constant value.",
    "control-flow-hoist": "Hoist all hoistable ops from control flow ops.",
    "convert-arith-to-varith": "Convert chains of arith.{add|mul}{i,f} operations into a single long variadic add or mul operation.",
    "convert-linalg-to-loops": "Converts a linalg structured ops to perfectly nested loops.",
    "convert-memref-stream-to-loops": "Converts a memref_stream generic to loop.",
    "convert-memref-stream-to-snitch-stream": "Converts memref_stream `read` and `write` operations to the snitch_stream equivalents.",
    "convert-ml-program-to-memref": "Converts operations in the `ml_program` dialect to `memref`.",
    "convert-pdl-to-pdl-interp": "Pass to convert PDL operations to PDL interpreter operations.",
    "convert-riscv-scf-for-to-frep": "Converts all riscv_scf.for loops to riscv_snitch.frep_outer loops, if the loops pass the riscv_snitch.frep_outer verification criteria.",
    "convert-riscv-to-llvm": "Convert RISC-V instructions to LLVM inline assembly.",
    "convert-scf-to-cf": "Lower `scf.for` and `scf.if` to unstructured control flow.",
    "convert-scf-to-openmp": "Convert `scf.parallel` loops to `omp.wsloop` constructs for parallel execution.",
    "convert-varith-to-arith": "Convert a single long variadic add or mul operation into a chain of arith.{add|mul}{i,f} operations.",
    "csl-stencil-bufferize": "Bufferizes the csl_stencil dialect.",
    "csl-stencil-handle-async-flow": "Handles the async control flow of csl_stencil.apply and any enclosing loops by translating control flow into a csl.func call graph.",
    "csl-stencil-materialize-stores": "This pass creates stores for values yielded from `csl_stencil.apply.done_exchange.yield` to the buffers in `apply.dest`.",
    "csl-stencil-set-global-coeffs": "Generates a single coeff api call - only works if all csl_stencil.apply ops use the same coeffs.",
    "csl-stencil-to-csl-wrapper": "Wraps program in the csl_stencil dialect in a csl_wrapper by translating each top-level function to one module wrapper.",
    "csl-wrapper-hoist-buffers": "Hoists buffers to the `csl_wrapper.program_module`-level.",
    "distribute-stencil": "Decompose a stencil to apply to a local domain.",
    "empty-tensor-to-alloc-tensor": "tensor.empty ops return a tensor of unspecified contents whose only purpose is to carry the tensor shape.",
    "eqsat-add-costs": "Add costs to all operations in blocks that contain equivalence.class ops, and perform bottom-up extraction to find the minimum cost node in each e-class.",
    "eqsat-create-eclasses": "Create initial eclasses from an MLIR program.",
    "eqsat-create-egraphs": "Create an egraph from a function by inserting an `equivalence.graph` operation.",
    "eqsat-extract": "Extracts the subprogram with the lowest cost, as specified by the `min_cost_index`",
    "expand-math-to-polynomials": "This pass expands `math` operations to a polynomial expansion using the Taylor series.",
    "func-to-pdl-rewrite": "A pass that transforms a function into a PDL rewrite operation.",
    "function-constant-pinning": "This pass consumes IR annotated with special hints to generate new functions that have certain SSA values pinned to a constant, usually to enable further optimization options on this pinned function.",
    "function-persist-arg-names": "Persists func.func arg name hints to arg_attrs.",
    "inline-snrt": "Inline operations of the snrt dialect to their definitions.",
    "licm": "Moves operations without side effects out of loops, provided they do not depend on values defined in the loops.",
    "lift-arith-to-linalg": "Pass that lifts arith ops to linalg in order to make use of destination-passing style and bufferization.",
    "linalg-fuse-multiply-add": "Pass that fuses linalg multiply and add ops into a `generic` fma.",
    "linalg-generalize-named-ops": "Converts linalg named ops to linalg.generic.",
    "linalg-to-csl": "Convert linalg ops to csl ops.",
    "lower-csl-stencil": "Lowers csl_stencil ops to csl and api calls.",
    "lower-csl-wrapper": "Unwraps the `csl_wrappermodule` into two `csl.module`s.",
    "memref-stream-fold-fill": "Folds `memref_stream.fill` operations that run immediately before a `memref_stream.generic` operation into the init value.",
    "memref-stream-generalize-fill": "Generalizes memref_stream.fill ops.",
    "memref-stream-infer-fill": "Detects memref_stream.generic operations that can be represented as `memref_stream.fill` ops.",
    "memref-stream-interleave": "Tiles the innermost parallel dimension of a `memref_stream.generic`.",
    "memref-stream-legalize": "Legalize memref_stream.generic payload and bounds for streaming.",
    "memref-stream-tile-outer-loops": "Materializes loops around memref_stream.generic operations that have greater than specified number of non-1 upper bounds.",
    "memref-stream-unnest-out-parameters": 'Converts the affine maps of memref_stream.generic out parameters from taking all the indices to only taking "parallel" ones.',
    "memref-streamify": "Converts a memref generic on memrefs to a memref generic on streams, by moving it into a streaming region.",
    "memref-to-dsd": "Lowers memref ops to CSL DSDs.",
    "mlir-opt": "A pass for calling the `mlir-opt` tool with specified parameters.",
    "riscv-allocate-infinite-registers": "Allocates infinite registers to physical registers in the module.",
    "riscv-allocate-registers": "Allocates unallocated registers in the module.",
    "riscv-lower-parallel-mov": "Lowers ParallelMovOp in a module into separate moves.",
    "riscv-prologue-epilogue-insertion": "Pass inserting a prologue and epilogue according to the RISC-V ABI.",
    "riscv-scf-loop-range-folding": "Similar to scf-loop-range-folding in MLIR, folds multiplication operations into the loop range computation when possible.",
    "scf-for-loop-flatten": "Folds perfect loop nests when their statically known, positive-step ranges tile exactly.",
    "scf-for-loop-range-folding": "xdsl implementation of the pass with the same name",
    "scf-for-loop-unroll": "Fully unrolls all loops where the lb, ub, and step are constants.",
    "shape-inference": "Applies all shape inference patterns.",
    "snitch-allocate-registers": "Allocates unallocated registers for snitch operations.",
    "stencil-bufferize": "Bufferize the stencil dialect, i.e., try to fold all loads, sotres, buffer and combines, and to output stencils working directly on buffers (fields) with hopefully few allocations.",
    "stencil-shape-minimize": "Minimises the shapes of `stencil.field` types that have been over-allocated and are larger than necessary.",
    "stencil-storage-materialization": "Pass adding stencil.buffer whenever necessary to lower a stencil dialect IR, by adding stencil.buffer on any used stencil.apply output not otherwise mapped to storage.",
    "test-add-timers-to-top-level-funcs": "Adds timers to top-level functions, by adding `timer_start() -> f64` and `timer_end(f64) -> f64` to the start and end of each module-level function.",
    "test-constant-folding": "A pass that applies applies simple constant folding.",
    "test-deprecation": "Test pass that does nothing and raises a DeprecationWarning.",
    "test-linalg-tiling": "Tile supported structured linalg ops annotated with `test_tile_sizes`.",
    "test-lower-linalg-to-snitch": "A compiler pass used for testing lowering microkernels from linalg generic to snitch assembly.",
    "test-specialised-constant-folding": "A pass that applies applies simple constant folding.",
    "test-transform-dialect-erase-schedule": "Erases transform named sequence operations.",
    "test-vectorize-matmul": "A test pass vectorizing linalg.matmul with a specific vectorization strategy.",
    "transform-interpreter": "Transform dialect interpreter",
    "varith-fuse-repeated-operands": "Fuses several occurrences of the same operand into one.",
    "vector-split-load-extract": "Rewrites a vector load followed only by extracts with scalar loads.",
    "x86-allocate-registers": "Allocates unallocated registers in the module.",
    "x86-infer-broadcast": "Rewrites a scalar load + broadcast to a broadcast load operation.",
    "x86-regalloc-legalize": "Legalize x86 code before register allocation by inserting copies when an inout use is not the last use of a value.",
    "x86-regalloc-verify-liveness": "Verify that the use of a register value as inout is its last use.",
    "x86-set-arch": "Sets the `x86.arch` attribute on the module.",
}
"""The first sentence of the pass class's docstring, by pass name."""

WRITTEN: dict[str, str] = {
    "apply-eqsat-pdl-interp": "Runs equality saturation with the pdl_interp patterns of the file named by pdl_interp_file, else of the module.",
    "apply-pdl": "Applies the PDL rewrite patterns of the file named by pdl_file, else of the module, greedily.",
    "apply-pdl-interp": "Applies the pdl_interp rewrite patterns of the file named by pdl_interp_file, else of the module.",
    "canonicalize-dmp": "Drops the empty exchanges of dmp.swap ops, and the swaps left with none.",
    "convert-arith-to-riscv": "Lowers arith ops to RISC-V instructions.",
    "convert-arith-to-riscv-snitch": "Lowers arith floating-point ops on vectors to Snitch's packed-SIMD RISC-V instructions.",
    "convert-arith-to-x86": "Lowers arith constants and binary ops to x86 instructions.",
    "convert-func-to-riscv-func": "Lowers func.func, func.call and func.return to the riscv_func dialect, with the RISC-V calling convention.",
    "convert-func-to-x86-func": "Lowers func.func and func.return to the x86_func dialect, with the x86 calling convention.",
    "convert-linalg-to-memref-stream": "Converts linalg.generic ops to memref_stream.generic ops.",
    "convert-memref-to-ptr": "Lowers memref loads, stores, subviews and casts to operations on pointers (the ptr_xdsl dialect).",
    "convert-memref-to-riscv": "Lowers memref allocations, loads, stores, globals and subviews to RISC-V instructions.",
    "convert-pdl-interp-to-eqsat-pdl-interp": "Converts pdl_interp ops to their eqsat_pdl_interp counterparts, for matching on an e-graph.",
    "convert-print-format-to-riscv-debug": "Lowers printf.print_format to riscv_debug.printf.",
    "convert-ptr-to-llvm": "Lowers the ptr_xdsl dialect (pointer types, arithmetic, loads and stores) to LLVM.",
    "convert-ptr-to-riscv": "Lowers the ptr_xdsl dialect (pointer arithmetic, loads and stores) to RISC-V instructions.",
    "convert-ptr-to-x86": "Lowers the ptr_xdsl dialect (pointer arithmetic, loads and stores) to x86 instructions.",
    "convert-ptr-type-offsets": "Replaces ptr_xdsl.type_offset ops by the constant size of their type.",
    "convert-riscv-scf-to-riscv-cf": "Lowers riscv_scf.for loops to branches between blocks (riscv_cf).",
    "convert-scf-to-riscv-scf": "Lowers scf.for loops and their yields to the riscv_scf dialect.",
    "convert-scf-to-x86-scf": "Lowers scf.for loops and their yields to the x86_scf dialect.",
    "convert-snitch-stream-to-snitch": "Lowers snitch_stream streaming regions to the Snitch stream-configuration ops.",
    "convert-stencil-to-csl-stencil": "Converts the stencil dialect to csl_stencil, with communication through prefetched buffers.",
    "convert-stencil-to-ll-mlir": "Lowers the stencil dialect to memref and scf (parallel loops over buffers).",
    "convert-vector-to-ptr": "Lowers vector loads and stores to operations on pointers (the ptr_xdsl dialect).",
    "convert-vector-to-x86": "Lowers vector broadcasts and fused multiply-adds to x86 vector instructions.",
    "convert-x86-scf-to-x86": "Lowers x86_scf.for loops to branches between blocks.",
    "cse": "Eliminate common sub-expressions (xDSL's CSE; passflow's own cse shadows it).",
    "dce": "Removes the operations without side effects whose results are never used, transitively.",
    "dmp-to-mpi": "Lowers the dmp dialect's halo exchanges to MPI calls.",
    "eqsat-serialize-egraph": "Prints the e-graph of the module as JSON on stdout.",
    "frontend-desymrefy": "Removes the reads and writes of symbols (symref) and their definitions, using SSA values instead.",
    "gpu-map-parallel-loops": "Greedily maps scf.parallel loops to GPU hardware dimensions (MLIR's pass of that name).",
    "hls-convert-stencil-to-ll-mlir": "Lowers the stencil dialect to HLS dataflow code for FPGAs.",
    "jax-use-donated-arguments": "Writes results into the JAX function's donated argument buffers, where their tensors match.",
    "loop-hoist-memref": "Hoists pairs of memref.load and memref.store of the same location out of loops.",
    "lower-affine": "Lowers affine loops, loads, stores and applies to scf, memref and arith (MLIR's lower-affine).",
    "lower-hls": "Lowers the hls dialect (streams, pragmas, dataflow) to LLVM and func calls for an HLS tool.",
    "lower-mpi": "Lowers the mpi dialect to calls of an MPI library through LLVM.",
    "lower-riscv-func": "Lowers riscv_func.syscall to a RISC-V ecall, with its operands in a0-a6 and its number in a7; insert_exit_syscall adds an exit at the end of main.",
    "lower-snitch": "Lowers the snitch dialect's stream-configuration ops to RISC-V.",
    "memref-to-gpu": "Replaces memref.alloc and memref.dealloc by gpu.alloc and gpu.dealloc.",
    "printf-to-llvm": "Lowers printf.println to calls of the C library's printf through LLVM.",
    "printf-to-putchar": "Lowers printf.print_char to calls of putchar, and printf.print_int to an itoa function that uses it.",
    "reconcile-unrealized-casts": "Simplify and eliminate unrealized conversion casts (MLIR's pass of that name).",
    "replace-incompatible-fpga": "Replaces math ops an FPGA toolchain lacks (copysign, maximumf, absf) by Xilinx math calls.",
    "riscv-scf-for-infer-constant-step": "Turns a riscv_scf loop's constant step into an immediate, saving a register.",
    "scf-parallel-loop-tiling": "Tiles scf.parallel loops by parallel_loop_tile_sizes (MLIR's pass of that name).",
    "stencil-inlining": "Inlines producer stencil.apply ops into their consumers.",
    "stencil-tensorize-z-dimension": "Turns the z dimension of stencil computations into tensors.",
    "stencil-unroll": "Unrolls stencil.apply bodies by unroll_factor.",
    "x86-prologue-epilogue-insertion": "Saves and restores the callee-saved registers an x86_func.func uses, in a prologue and epilogue.",
}
"""A summary written here for each pass whose class has no docstring."""
