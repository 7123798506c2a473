"""Standard instrumentations: timing, IR printing, a Chrome trace and the HTML
run report.

Each is a `PassInstrumentation` switched on by a `PassManager.enable_*` verb or
a passflow-opt flag; importing this package has no side effects.
"""

from passflow.instruments.chrome_trace import ChromeTrace
from passflow.instruments.ir_printing import IRPrinterConfig, IRPrinterInstrumentation
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
