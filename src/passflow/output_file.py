"""Writing a file the user named, as LLVM's `ToolOutputFile` does.

Every file passflow writes (the output IR, reproducers, IR dumps, traces and
reports) goes through `open_output`, so one rule holds everywhere:

- `-` is standard output;
- a path that is not a regular file (a device such as `/dev/null`, a FIFO, a
  symlink to one, `/dev/stdout`) is opened and written in place, never replaced;
- a regular file (or a new one) is written to a temporary file in the same
  directory and renamed over the target only when the writer finished, so a reader
  sees the old content or the new, never half of it. The rename keeps the target's
  mode (a new file gets 0666 masked by the umask), and a symlink is followed, so
  the link stays a link and its target gets the content;
- when writing fails or the writer raises, nothing is left behind and an existing
  file is unchanged.
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
from collections.abc import Generator
from typing import IO, Any, TextIO, cast

from passflow.diagnostics import PassflowError

__all__ = ["OutputFileError", "open_output", "write_output", "write_output_bytes"]


class OutputFileError(PassflowError):
    """A file could not be opened or written; the message is LLVM's
    `cannot open output file '<path>': <reason>`."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"cannot open output file '{path}': {reason}")
        self.path = path
        self.reason = reason


def _is_in_place(path: str) -> bool:
    """Whether `path` names something other than a regular file (or nothing)."""
    if os.path.abspath(path).startswith(("/dev/", "/proc/")):
        return True
    try:
        mode = os.stat(path).st_mode  # follows symlinks
    except FileNotFoundError:
        return False
    except OSError:
        return False  # reported when the temporary file is made or renamed
    return not stat.S_ISREG(mode)


def _new_file_mode() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def _adopt_metadata(temp: str, target: str) -> None:
    """Give the temporary file the mode (and, where allowed, owner) of `target`."""
    try:
        info = os.stat(target)
    except FileNotFoundError:
        os.chmod(temp, _new_file_mode())
        return
    os.chmod(temp, stat.S_IMODE(info.st_mode))
    with contextlib.suppress(OSError):
        os.chown(temp, info.st_uid, info.st_gid)


@contextlib.contextmanager
def open_output(path: str, encoding: str = "utf-8") -> Generator[TextIO]:
    """A text stream to `path` that is committed when the `with` block ends
    normally and discarded when it raises.

    Raises `OutputFileError` when the file can't be opened, written or renamed.
    """
    if path == "-":
        yield sys.stdout
        sys.stdout.flush()
        return
    with _committed(path, "w", encoding) as stream:
        yield cast(TextIO, stream)


@contextlib.contextmanager
def _committed(path: str, mode: str, encoding: str | None) -> Generator[IO[Any]]:
    """A stream to the file `path` (not `-`) by the module's rules."""
    if _is_in_place(path):
        try:
            stream = open(path, mode, encoding=encoding)  # noqa: SIM115
        except OSError as err:
            raise OutputFileError(path, err.strerror or str(err)) from None
        try:
            with stream:
                yield stream
        except OSError as err:
            raise OutputFileError(path, err.strerror or str(err)) from None
        return
    import tempfile  # a regular file only: stdout and devices do without it

    target = os.path.realpath(path)
    try:
        fd, temp = tempfile.mkstemp(
            prefix=f".{os.path.basename(target)}.", dir=os.path.dirname(target)
        )
    except OSError as err:
        raise OutputFileError(path, err.strerror or str(err)) from None
    try:
        with os.fdopen(fd, mode, encoding=encoding) as stream:
            yield stream
        _adopt_metadata(temp, target)
        os.replace(temp, target)
    except OSError as err:
        _discard(temp)
        raise OutputFileError(path, err.strerror or str(err)) from None
    except BaseException:
        _discard(temp)
        raise


def _discard(temp: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(temp)


def write_output(path: str, text: str) -> None:
    """Write `text` to `path` by `open_output`'s rules."""
    with open_output(path) as stream:
        stream.write(text)


def write_output_bytes(path: str, data: bytes) -> None:
    """Write `data` to the file `path` by `open_output`'s rules (`-` is
    standard output's binary buffer)."""
    if path == "-":
        sys.stdout.flush()
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
        return
    with _committed(path, "wb", None) as stream:
        stream.write(data)
