"""Standard instrumentations: timing, IR printing, a Chrome trace, the HTML
run report and the IR history.

Each is a `PassInstrumentation` switched on by a `PassManager.enable_*` verb or
a passflow-opt flag; importing this package has no side effects and loads none
of them: each name loads its module on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from passflow.lazy import lazy_exports

if TYPE_CHECKING:
    from passflow.instruments.chrome_trace import ChromeTrace
    from passflow.instruments.history_store import HistoryFile
    from passflow.instruments.ir_history import IRHistory
    from passflow.instruments.ir_printer_config import IRPrinterConfig
    from passflow.instruments.ir_printing import IRPrinterInstrumentation
    from passflow.instruments.report import RunReport
    from passflow.instruments.timing import (
        PassTiming,
        TimingDisplay,
        TimingFormat,
        TimingManager,
        TimingScope,
    )

__all__ = [
    "ChromeTrace",
    "HistoryFile",
    "IRHistory",
    "IRPrinterConfig",
    "IRPrinterInstrumentation",
    "PassTiming",
    "RunReport",
    "TimingDisplay",
    "TimingFormat",
    "TimingManager",
    "TimingScope",
]

_MODULES = {
    "passflow.instruments.chrome_trace": ("ChromeTrace",),
    "passflow.instruments.ir_printer_config": ("IRPrinterConfig",),
    "passflow.instruments.ir_printing": ("IRPrinterInstrumentation",),
    "passflow.instruments.timing": (
        "PassTiming",
        "TimingDisplay",
        "TimingFormat",
        "TimingManager",
        "TimingScope",
    ),
    "passflow.instruments.history_store": ("HistoryFile",),
    "passflow.instruments.ir_history": ("IRHistory",),
    "passflow.instruments.report": ("RunReport",),
}
"""The names this package exports, by the module that defines them."""


__getattr__ = lazy_exports(__name__, _MODULES)
