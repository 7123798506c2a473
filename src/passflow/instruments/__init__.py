"""Standard instrumentations: timing, IR printing, a Chrome trace and the HTML
run report.

Each is a `PassInstrumentation` switched on by a `PassManager.enable_*` verb or
a passflow-opt flag; importing this package has no side effects and loads none
of them: each name loads its module on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from passflow.instruments.chrome_trace import ChromeTrace
    from passflow.instruments.ir_printing import (
        IRPrinterConfig,
        IRPrinterInstrumentation,
    )
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
    "IRPrinterConfig",
    "IRPrinterInstrumentation",
    "PassTiming",
    "RunReport",
    "TimingDisplay",
    "TimingFormat",
    "TimingManager",
    "TimingScope",
]

_LAZY = {
    "ChromeTrace": "passflow.instruments.chrome_trace",
    "IRPrinterConfig": "passflow.instruments.ir_printing",
    "IRPrinterInstrumentation": "passflow.instruments.ir_printing",
    "PassTiming": "passflow.instruments.timing",
    "RunReport": "passflow.instruments.report",
    "TimingDisplay": "passflow.instruments.timing",
    "TimingFormat": "passflow.instruments.timing",
    "TimingManager": "passflow.instruments.timing",
    "TimingScope": "passflow.instruments.timing",
}


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'passflow.instruments' has no attribute '{name}'")
    return getattr(importlib.import_module(module), name)
