"""Room for deep recursion: a thread with a large stack and a raised recursion limit.

xDSL parses, prints, verifies and walks nested regions recursively, and so does
passflow with nested pipelines. With Python's defaults (a recursion limit of
1,000 frames, an 8 MiB stack) that stops at about 100 nested regions, where
mlir-opt handles 1,000 nested regions and 20,000 nested pipelines. Code that
must go as deep as mlir-opt runs through `call_with_deep_stack`: passflow-opt
runs its whole invocation there, and a library user parsing deep IR can too.
Beyond `RECURSION_LIMIT` frames Python raises `RecursionError`, which passflow
reports as an error, never a crash of the interpreter.
"""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
from collections.abc import Callable, Generator
from types import FrameType
from typing import TypeVar

__all__ = [
    "RECURSION_LIMIT",
    "STACK_BYTES",
    "call_with_deep_stack",
    "stands_in_for_main_thread",
]

T = TypeVar("T")

STACK_BYTES = 512 * 1024 * 1024
"""The stack of each thread `call_with_deep_stack` and the executors start
(virtual memory: only the pages a deep recursion touches are used)."""

RECURSION_LIMIT = 200_000
"""Python frames allowed; at most about 5 KiB of C stack each fits `STACK_BYTES`.
Measured: 1,000 nested regions need under 20,000 frames through parse,
canonicalize, cse and printing; 20,000 nested pipelines under 100,000."""


def call_with_deep_stack(call: Callable[[], T]) -> T:
    """`call()`, run in a thread with a `STACK_BYTES` stack under a recursion
    limit of at least `RECURSION_LIMIT`; its result, or its exception re-raised.

    Threads started afterwards (the thread executor's) get the same stack size;
    the recursion limit is restored when no such call is running.
    A `KeyboardInterrupt` in the calling thread is passed on to `call`, so its
    cleanup runs before this returns.
    """
    # `threading.stack_size()` without an argument resets the size: set ours
    # and put back a larger one.
    previous = threading.stack_size(STACK_BYTES)
    if previous > STACK_BYTES:
        threading.stack_size(previous)
    with _raised_recursion_limit():
        return _call_in_thread(call)


_active = 0
_saved_limit = 0
_lock = threading.Lock()


@contextlib.contextmanager
def _raised_recursion_limit() -> Generator[None]:
    """The recursion limit is interpreter-wide: raise it while any deep call
    runs and put the caller's back after the last one, so the caller's own
    8 MiB-stack threads keep a limit their stack can hold."""
    global _active, _saved_limit
    with _lock:
        if _active == 0:
            _saved_limit = sys.getrecursionlimit()
            sys.setrecursionlimit(max(_saved_limit, RECURSION_LIMIT))
        _active += 1
    try:
        yield
    finally:
        with _lock:
            _active -= 1
            if _active == 0:
                sys.setrecursionlimit(_saved_limit)


_THREAD_NAME = "passflow-deep-stack"


def stands_in_for_main_thread(thread: threading.Thread) -> bool:
    """Whether `thread` runs a `call_with_deep_stack` call: the program's work,
    which logs and traces name as the main thread, while the real main thread
    only waits for it."""
    return thread.name == _THREAD_NAME


def _call_in_thread(call: Callable[[], T]) -> T:
    outcome: list[T] = []
    failure: list[BaseException] = []

    def target() -> None:
        try:
            outcome.append(call())
        except BaseException as err:  # handed to the caller as it is
            failure.append(err)

    thread = threading.Thread(target=target, name=_THREAD_NAME)
    _start_and_join(thread)
    if failure:
        raise failure[0]
    return outcome[0]


def _start_and_join(thread: threading.Thread) -> None:
    """Run `thread` to its end. Meanwhile Ctrl-C raises `KeyboardInterrupt` in
    it rather than in the waiting main thread, so the work unwinds through its
    own cleanup.

    Only Python's default SIGINT handler is replaced, and only from the main
    thread (the one signals reach); a handler of the caller's own stays.
    """
    if not (
        threading.current_thread() is threading.main_thread()
        and signal.getsignal(signal.SIGINT) is signal.default_int_handler
    ):
        thread.start()
        thread.join()
        return
    pending: list[bool] = []

    def on_interrupt(signum: int, frame: FrameType | None) -> None:
        if thread.ident is None:  # still starting: forward once it runs
            pending.append(True)
        else:
            _raise_in(thread, KeyboardInterrupt)

    signal.signal(signal.SIGINT, on_interrupt)
    try:
        thread.start()
        if pending:
            _raise_in(thread, KeyboardInterrupt)
        thread.join()
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def _raise_in(thread: threading.Thread, exception: type[BaseException]) -> None:
    """Raise `exception` in `thread` at its next Python instruction (CPython's
    `PyThreadState_SetAsyncExc`), as a signal raises it in the main thread."""
    import ctypes  # on Ctrl-C only

    ident = thread.ident
    if ident is not None and thread.is_alive():
        ctypes.pythonapi.PyThreadState_SetAsyncExc(
            ctypes.c_ulong(ident), ctypes.py_object(exception)
        )
