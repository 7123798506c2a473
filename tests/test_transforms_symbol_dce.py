"""`symbol-dce`: output and statistic against mlir-opt 22.1.8."""

from __future__ import annotations

import pytest
from transforms_support import assert_same_ir, run_passes

from passflow.diagnostics import PassPipelineError
from passflow.registry import lookup_pass
from passflow.statistics import statistic_values
from passflow.transforms import SymbolDCE

SYMBOLS = """
module {
  func.func private @dead_private()
  func.func private @live_private()
  func.func private @live_via_nested()
  func.func private @dead_chain_a() {
    func.call @dead_chain_b() : () -> ()
    return
  }
  func.func private @dead_chain_b()
  func.func @public_function() {
    "foo.user"() {uses = [@live_private]} : () -> ()
    return
  }
  module @nested {
    func.func private @nested_dead()
    func.func @nested_public() {
      return
    }
    func.func private @nested_used()
    func.func @user() {
      call @nested_used() : () -> ()
      return
    }
  }
  module @priv attributes {sym_visibility = "private"} {
    func.func @inner() {
      return
    }
  }
  "foo.op"() {other = @live_via_nested, ref = @nested::@nested_public} : () -> ()
}
"""

MLIR_SYMBOLS = """
module {
  func.func private @live_private()
  func.func private @live_via_nested()
  func.func @public_function() {
    "foo.user"() {uses = [@live_private]} : () -> ()
    return
  }
  module @nested {
    func.func @nested_public() {
      return
    }
    func.func private @nested_used()
    func.func @user() {
      call @nested_used() : () -> ()
      return
    }
  }
  "foo.op"() {other = @live_via_nested, ref = @nested::@nested_public} : () -> ()
}
"""


def test_matches_mlir_opt_and_counts_every_erased_symbol() -> None:
    pass_ = SymbolDCE()
    assert_same_ir(run_passes(SYMBOLS, pass_, nest=None), MLIR_SYMBOLS)
    # mlir-opt: 6, the public @inner of the dead private module included.
    assert [value for _, value in statistic_values(pass_)] == [6]


def test_a_use_from_a_dead_symbol_keeps_nothing_alive() -> None:
    text = """
    func.func private @a() {
      func.call @b() : () -> ()
      return
    }
    func.func private @b() {
      func.call @a() : () -> ()
      return
    }
    """
    assert_same_ir(run_passes(text, SymbolDCE(), nest=None), "module {\n}")


def test_fails_on_an_op_that_is_not_a_symbol_table() -> None:
    text = "func.func @f() {\n  return\n}"
    with pytest.raises(PassPipelineError) as caught:
        run_passes(text, SymbolDCE())
    assert (
        "'func.func' op  was scheduled to run under SymbolDCE, but does not define "
        "a symbol table" in str(caught.value)
    )


def test_declaration_matches_mlir_opt() -> None:
    info = lookup_pass("symbol-dce")
    assert info is not None and info.pass_class is SymbolDCE
    assert (SymbolDCE.name, SymbolDCE.summary) == (
        "SymbolDCE",
        "Eliminate dead symbols",
    )
    assert str(SymbolDCE()) == "symbol-dce"
    assert [(s.name, s.description) for s, _ in statistic_values(SymbolDCE())] == [
        ("num-dce'd", "Number of symbols DCE'd")
    ]


# `nested` symbols: dead ones go wherever the table is hidden from above (the
# top-level module, and every table inside it); when the pass runs on a public
# or nested module, that module's nested symbols may be used from outside.
NESTED_VISIBILITY = """
module {
  func.func private @dead_private()
  func.func nested @dead_nested()
  func.func nested @live_nested()
  func.func @public_function() {
    "foo.user"() {uses = [@live_nested]} : () -> ()
    return
  }
  module @public_module {
    func.func nested @inner_dead()
    func.func nested @inner_used() {
      return
    }
  }
  module @nested_module attributes {sym_visibility = "nested"} {
    func.func nested @inner_dead()
  }
  module @private_module attributes {sym_visibility = "private"} {
    func.func nested @inner_dead()
  }
  "foo.user"() {uses = [@public_module::@inner_used, @nested_module, @private_module]} : () -> ()
}
"""

MLIR_NESTED_VISIBILITY = """
module {
  func.func nested @live_nested()
  func.func @public_function() {
    "foo.user"() {uses = [@live_nested]} : () -> ()
    return
  }
  module @public_module {
    func.func nested @inner_used() {
      return
    }
  }
  module @nested_module attributes {sym_visibility = "nested"} {
  }
  module @private_module attributes {sym_visibility = "private"} {
  }
  "foo.user"() {uses = [@public_module::@inner_used, @nested_module, @private_module]} : () -> ()
}
"""

MLIR_NESTED_VISIBILITY_ON_INNER_MODULES = """
module {
  func.func private @dead_private()
  func.func nested @dead_nested()
  func.func nested @live_nested()
  func.func @public_function() {
    "foo.user"() {uses = [@live_nested]} : () -> ()
    return
  }
  module @public_module {
    func.func nested @inner_dead()
    func.func nested @inner_used() {
      return
    }
  }
  module @nested_module attributes {sym_visibility = "nested"} {
    func.func nested @inner_dead()
  }
  module @private_module attributes {sym_visibility = "private"} {
  }
  "foo.user"() {uses = [@public_module::@inner_used, @nested_module, @private_module]} : () -> ()
}
"""


def test_erases_dead_nested_symbols_of_hidden_tables_like_mlir_opt() -> None:
    pass_ = SymbolDCE()
    result = run_passes(NESTED_VISIBILITY, pass_, nest=None)
    assert_same_ir(result, MLIR_NESTED_VISIBILITY)
    assert [value for _, value in statistic_values(pass_)] == [5]  # as mlir-opt


def test_keeps_nested_symbols_of_a_table_visible_from_above() -> None:
    pass_ = SymbolDCE()
    result = run_passes(NESTED_VISIBILITY, pass_, nest="builtin.module")
    assert_same_ir(result, MLIR_NESTED_VISIBILITY_ON_INNER_MODULES)
    assert [value for _, value in statistic_values(pass_)] == [1]  # as mlir-opt


# An unregistered op is neither a symbol (even with a `sym_name`) nor a symbol
# table, as in MLIR: it is never erased, nor is a symbol in one of its regions.
UNREGISTERED = """
module {
  "foo.sym"() {sym_name = "x", sym_visibility = "private"} : () -> ()
  "foo.two"() ({
    func.func private @in_unregistered()
    "foo.end"() : () -> ()
  }, {
    "foo.end"() : () -> ()
  }) : () -> ()
  func.func private @dead()
}
"""

MLIR_UNREGISTERED = """
module {
  "foo.sym"() {sym_name = "x", sym_visibility = "private"} : () -> ()
  "foo.two"() ({
    func.func private @in_unregistered()
    "foo.end"() : () -> ()
  }, {
    "foo.end"() : () -> ()
  }) : () -> ()
}
"""


def test_unregistered_ops_are_neither_symbols_nor_symbol_tables() -> None:
    pass_ = SymbolDCE()
    assert_same_ir(run_passes(UNREGISTERED, pass_, nest=None), MLIR_UNREGISTERED)
    assert [value for _, value in statistic_values(pass_)] == [1]


def test_an_unregistered_op_with_one_region_is_an_unknown_symbol_table() -> None:
    text = """
    func.func private @private_symbol()
    "foo.table"() ({
      func.func private @inner()
      "foo.end"() : () -> ()
    }) {sym_name = "t", sym_visibility = "private"} : () -> ()
    """
    with pytest.raises(PassPipelineError) as caught:
        run_passes(text, SymbolDCE(), nest=None)
    message = "<stdin>:3:5: error: operation contains potentially unknown symbol table"
    assert message in str(caught.value)
