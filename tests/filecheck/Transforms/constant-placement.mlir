// canonicalize and cse never move or merge an op whose result is an allocated
// register: such a value is a machine location written where the op is (issue 14,
// from xDSL's backend/riscv/canonicalize.mlir, where 5, 7, 5 was stored as 5, 5, 5).
// Constants in unallocated registers are plain values and are uniqued and hoisted.
// RUN: passflow-opt %s --split-input-file -p 'builtin.module(canonicalize)' -o %t.out
// RUN: filecheck %s --check-prefix=CANON < %t.out
// RUN: xdsl-opt --split-input-file -t riscv-asm < %t.out | filecheck %s --check-prefix=ASM
// RUN: passflow-opt %s --split-input-file -p 'builtin.module(cse,x86-regalloc-verify-liveness)' -o %t.out
// RUN: filecheck %s --check-prefix=CSE < %t.out

// Each op folds to an `rv32.li` that writes a0 where the op was.
riscv_func.func @folded(%p : !riscv.reg<a1>) {
  %c2 = rv32.li 2 : !riscv.reg
  %c3 = rv32.li 3 : !riscv.reg
  %five = riscv.add %c2, %c3 : (!riscv.reg, !riscv.reg) -> !riscv.reg<a0>
  riscv.sw %p, %five, 0 : (!riscv.reg<a1>, !riscv.reg<a0>) -> ()
  %seven = riscv.addi %c3, 4 : (!riscv.reg) -> !riscv.reg<a0>
  riscv.sw %p, %seven, 4 : (!riscv.reg<a1>, !riscv.reg<a0>) -> ()
  %five_again = riscv.add %c3, %c2 : (!riscv.reg, !riscv.reg) -> !riscv.reg<a0>
  riscv.sw %p, %five_again, 8 : (!riscv.reg<a1>, !riscv.reg<a0>) -> ()
  riscv_func.return
}

// CANON-LABEL: riscv_func.func @folded
// CANON-NEXT:    %five = rv32.li 5 : !riscv.reg<a0>
// CANON-NEXT:    riscv.sw %p, %five, 0
// CANON-NEXT:    %seven = rv32.li 7 : !riscv.reg<a0>
// CANON-NEXT:    riscv.sw %p, %seven, 4
// CANON-NEXT:    %five_again = rv32.li 5 : !riscv.reg<a0>
// CANON-NEXT:    riscv.sw %p, %five_again, 8
// CANON-NEXT:    riscv_func.return

// ASM-LABEL: folded:
// ASM-NEXT:    li a0, 5
// ASM-NEXT:    sw a0, 0(a1)
// ASM-NEXT:    li a0, 7
// ASM-NEXT:    sw a0, 4(a1)
// ASM-NEXT:    li a0, 5
// ASM-NEXT:    sw a0, 8(a1)
// ASM-NEXT:    ret

// -----

// The same after folding: the first `li` is already at the front of the entry
// block, and still the third one may not become it.
riscv_func.func @written(%p : !riscv.reg<a1>) {
  %a = rv32.li 5 : !riscv.reg<a0>
  riscv.sw %p, %a, 0 : (!riscv.reg<a1>, !riscv.reg<a0>) -> ()
  %b = rv32.li 7 : !riscv.reg<a0>
  riscv.sw %p, %b, 4 : (!riscv.reg<a1>, !riscv.reg<a0>) -> ()
  %c = rv32.li 5 : !riscv.reg<a0>
  riscv.sw %p, %c, 8 : (!riscv.reg<a1>, !riscv.reg<a0>) -> ()
  riscv_func.return
}

// CANON-LABEL: riscv_func.func @written
// CANON-NEXT:    %a = rv32.li 5 : !riscv.reg<a0>
// CANON-NEXT:    riscv.sw %p, %a, 0
// CANON-NEXT:    %b = rv32.li 7 : !riscv.reg<a0>
// CANON-NEXT:    riscv.sw %p, %b, 4
// CANON-NEXT:    %c = rv32.li 5 : !riscv.reg<a0>
// CANON-NEXT:    riscv.sw %p, %c, 8

// ASM-LABEL: written:
// ASM-NEXT:    li a0, 5
// ASM-NEXT:    sw a0, 0(a1)
// ASM-NEXT:    li a0, 7
// ASM-NEXT:    sw a0, 4(a1)
// ASM-NEXT:    li a0, 5
// ASM-NEXT:    sw a0, 8(a1)

// CSE-LABEL: riscv_func.func @written
// CSE-NEXT:    %a = rv32.li 5 : !riscv.reg<a0>
// CSE-NEXT:    riscv.sw %p, %a, 0
// CSE-NEXT:    %b = rv32.li 7 : !riscv.reg<a0>
// CSE-NEXT:    riscv.sw %p, %b, 4
// CSE-NEXT:    %c = rv32.li 5 : !riscv.reg<a0>
// CSE-NEXT:    riscv.sw %p, %c, 8

// -----

// Unallocated: one `li 5`, at the front of the entry block.
riscv_func.func @unallocated(%p : !riscv.reg<a1>) {
  riscv.sw %p, %p, 0 : (!riscv.reg<a1>, !riscv.reg<a1>) -> ()
  %a = rv32.li 5 : !riscv.reg
  riscv.sw %p, %a, 4 : (!riscv.reg<a1>, !riscv.reg) -> ()
  %b = rv32.li 5 : !riscv.reg
  riscv.sw %p, %b, 8 : (!riscv.reg<a1>, !riscv.reg) -> ()
  riscv_func.return
}

// CANON-LABEL: riscv_func.func @unallocated
// CANON-NEXT:    %a = rv32.li 5 : !riscv.reg
// CANON-NEXT:    riscv.sw %p, %p, 0
// CANON-NEXT:    riscv.sw %p, %a, 4
// CANON-NEXT:    riscv.sw %p, %a, 8

// CSE-LABEL: riscv_func.func @unallocated
// CSE-NEXT:    riscv.sw %p, %p, 0
// CSE-NEXT:    %a = rv32.li 5 : !riscv.reg
// CSE-NEXT:    riscv.sw %p, %a, 4
// CSE-NEXT:    riscv.sw %p, %a, 8

// -----

// `x86.get_register` is `Pure`, but `%d` is what rax holds after the add wrote
// it. Merged into `%a`, `%a` would be read after its in/out use, which
// x86-regalloc-verify-liveness rejects.
x86_func.func @reread() {
  %a = x86.get_register : !x86.reg64<rax>
  %b = x86.get_register : !x86.reg64<rdx>
  %c = x86.rs.add %a, %b : (!x86.reg64<rax>, !x86.reg64<rdx>) -> !x86.reg64<rax>
  %d = x86.get_register : !x86.reg64<rax>
  x86.ms.mov [%b + 8], %d : (!x86.reg64<rdx>, !x86.reg64<rax>) -> ()
  x86_func.ret
}

// CSE-LABEL: x86_func.func @reread
// CSE-NEXT:    %a = x86.get_register : !x86.reg64<rax>
// CSE-NEXT:    %b = x86.get_register : !x86.reg64<rdx>
// CSE-NEXT:    %c = x86.rs.add %a, %b
// CSE-NEXT:    %d = x86.get_register : !x86.reg64<rax>
// CSE-NEXT:    x86.ms.mov [%b + 8], %d

// ASM-LABEL: reread:
// ASM-NEXT:    add rax, rdx
// ASM-NEXT:    mov [rdx+8], rax
// ASM-NEXT:    ret
