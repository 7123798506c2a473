"""`open_output` follows LLVM's ToolOutputFile: devices, FIFOs and links are written
in place or followed, never replaced; regular files are replaced whole or not at all.

Every special file is made in a temporary directory; the real `/dev/null` is never
a target here.
"""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest

from passflow.output_file import OutputFileError, open_output, write_output
from passflow.tools import opt

INPUT = "func.func @f() {\n  func.return\n}\n"


def read_fifo_in_background(fifo: Path) -> tuple[threading.Thread, list[str]]:
    received: list[str] = []

    def reader() -> None:
        with open(fifo) as stream:
            received.append(stream.read())

    thread = threading.Thread(target=reader)
    thread.start()
    return thread, received


def test_dash_is_stdout(capsys: pytest.CaptureFixture[str]) -> None:
    write_output("-", "hello\n")
    assert capsys.readouterr().out == "hello\n"


def test_new_file_gets_0666_masked_by_umask(tmp_path: Path) -> None:
    old = os.umask(0o027)
    try:
        write_output(str(tmp_path / "new.mlir"), "x")
    finally:
        os.umask(old)
    info = os.stat(tmp_path / "new.mlir")
    assert stat.S_IMODE(info.st_mode) == 0o640
    assert (tmp_path / "new.mlir").read_text() == "x"


def test_existing_file_keeps_its_mode(tmp_path: Path) -> None:
    target = tmp_path / "out.mlir"
    target.write_text("old")
    os.chmod(target, 0o604)
    write_output(str(target), "new")
    assert target.read_text() == "new"
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o604


def test_symlink_is_followed_and_stays_a_link(tmp_path: Path) -> None:
    real = tmp_path / "real.mlir"
    real.write_text("old")
    link = tmp_path / "link.mlir"
    link.symlink_to(real)
    write_output(str(link), "new")
    assert link.is_symlink()
    assert os.readlink(link) == str(real)
    assert real.read_text() == "new"


def test_dangling_symlink_creates_its_target(tmp_path: Path) -> None:
    link = tmp_path / "link.mlir"
    link.symlink_to(tmp_path / "absent.mlir")
    write_output(str(link), "new")
    assert link.is_symlink()
    assert (tmp_path / "absent.mlir").read_text() == "new"


def test_fifo_is_written_in_place(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    thread, received = read_fifo_in_background(fifo)
    write_output(str(fifo), "through the pipe\n")
    thread.join(timeout=10)
    assert received == ["through the pipe\n"]
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_symlink_to_fifo_is_written_in_place(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    link = tmp_path / "link"
    link.symlink_to(fifo)
    thread, received = read_fifo_in_background(fifo)
    write_output(str(link), "via link\n")
    thread.join(timeout=10)
    assert received == ["via link\n"]
    assert link.is_symlink()
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_character_device_stays_a_device(tmp_path: Path) -> None:
    # A node with /dev/null's numbers, made here: the stand-in for the real device.
    device = tmp_path / "null"
    os.mknod(device, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    write_output(str(device), "discarded")
    info = os.lstat(device)
    assert stat.S_ISCHR(info.st_mode)
    assert info.st_rdev == os.makedev(1, 3)
    assert list(tmp_path.iterdir()) == [device]


def test_failed_writer_leaves_existing_file_and_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "out.mlir"
    target.write_text("old")
    with pytest.raises(RuntimeError), open_output(str(target)) as stream:
        stream.write("partial")
        raise RuntimeError("writer failed")
    assert target.read_text() == "old"
    assert list(tmp_path.iterdir()) == [target]


def test_failed_writer_creates_nothing(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError), open_output(str(tmp_path / "new")) as stream:
        stream.write("partial")
        raise RuntimeError("writer failed")
    assert list(tmp_path.iterdir()) == []


def test_missing_directory_is_llvms_message(tmp_path: Path) -> None:
    path = str(tmp_path / "no" / "such" / "out.mlir")
    with pytest.raises(OutputFileError) as info:
        write_output(path, "x")
    assert str(info.value) == (
        f"cannot open output file '{path}': No such file or directory"
    )


# --- passflow-opt -o ----------------------------------------------------------


def run_opt(tmp_path: Path, *args: str) -> int:
    source = tmp_path / "in.mlir"
    source.write_text(INPUT)
    return opt.main([str(source), "--mlir-disable-threading", *args])


def test_opt_writes_through_device_stand_in(tmp_path: Path) -> None:
    device = tmp_path / "null"
    os.mknod(device, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    assert run_opt(tmp_path, "-o", str(device)) == 0
    assert stat.S_ISCHR(os.lstat(device).st_mode)


def test_opt_follows_symlink(tmp_path: Path) -> None:
    real = tmp_path / "real.mlir"
    real.write_text("")
    link = tmp_path / "out.mlir"
    link.symlink_to(real)
    assert run_opt(tmp_path, "-o", str(link)) == 0
    assert link.is_symlink()
    assert "func.func @f()" in real.read_text()


def test_opt_failure_leaves_output_unchanged(tmp_path: Path) -> None:
    target = tmp_path / "out.mlir"
    target.write_text("previous")
    code = run_opt(
        tmp_path, "-p", "builtin.module(test-pass-failure)", "-o", str(target)
    )
    assert code == 1
    assert target.read_text() == "previous"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.mlir", "out.mlir"]


def test_opt_unwritable_output_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = str(tmp_path / "missing" / "out.mlir")
    assert run_opt(tmp_path, "-o", path) == 1
    assert capsys.readouterr().err == (
        f"cannot open output file '{path}': No such file or directory\n"
    )
