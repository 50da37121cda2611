"""User-facing errors. Anything a user can cause (bad YAML, bad PTX, bad launch record, illegal memory
access in a kernel, a stuck simulation) raises a subclass of :class:`UserError`; the CLI prints it without a
traceback and exits with code 2 (``SimulationError`` for kernel faults / hangs also exits 2)."""
from __future__ import annotations


class UserError(Exception):
    """An error caused by user input. ``location`` is e.g. ``h200.yaml:12 (tma.admission_depth)`` or
    ``kernel.ptx:341``; ``hint`` says what was expected."""

    exit_code = 2

    def __init__(self, message: str, *, location: str | None = None, hint: str | None = None):
        self.message = message
        self.location = location
        self.hint = hint
        super().__init__(self.format())

    def format(self) -> str:
        s = f"{self.location}: {self.message}" if self.location else self.message
        if self.hint:
            s += f"\n  expected: {self.hint}"
        return s


class SpecError(UserError):
    """Invalid architecture YAML / study YAML."""


class PTXError(UserError):
    """PTX that cannot be parsed or is not supported."""


class RecordError(UserError):
    """A launch record that does not fit its PTX or its own schema."""


class SimulationError(UserError):
    """The kernel did something illegal (out-of-bounds access, misaligned address, unknown instruction),
    or the simulation exceeded its cycle limit (the message lists the stuck warps)."""


def read_user_text(path, *, what: str = "file", max_bytes: int = 64 << 20, error: type[UserError] = UserError,
                   location: str | None = None) -> str:
    """Read a user-supplied text file safely: it must be a regular file (not a device, FIFO or folder) of at most
    ``max_bytes`` bytes, in UTF-8. Problems raise ``error`` naming the path (and the byte offset of the first
    invalid byte); the file's contents are never echoed."""
    import os
    import stat

    loc = location or str(path)
    try:
        st = os.stat(path)
    except OSError as e:
        raise error(f"cannot read {what} {path}: {e.strerror}", location=loc,
                    hint=f"an existing {what}") from None
    if not stat.S_ISREG(st.st_mode):
        kind = ("a folder" if stat.S_ISDIR(st.st_mode) else "a FIFO" if stat.S_ISFIFO(st.st_mode)
                else "a device" if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode) else "not a regular file")
        raise error(f"{what} {path} is {kind}", location=loc, hint=f"a regular {what}")
    if st.st_size > max_bytes:
        raise error(f"{what} {path} is {st.st_size:,} bytes, over the limit of {max_bytes:,}", location=loc,
                    hint=f"a {what} of at most {max_bytes:,} bytes")
    try:
        with open(path, "rb") as f:
            data = f.read(max_bytes + 1)
    except OSError as e:
        raise error(f"cannot read {what} {path}: {e.strerror}", location=loc, hint=f"a readable {what}") from None
    if len(data) > max_bytes:
        raise error(f"{what} {path} is over the limit of {max_bytes:,} bytes", location=loc,
                    hint=f"a {what} of at most {max_bytes:,} bytes")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise error(f"{what} is not UTF-8 text: byte 0x{data[e.start]:02x} at byte offset {e.start} (line {line})",
                    location=f"{loc}:{line}", hint="UTF-8 text") from None
