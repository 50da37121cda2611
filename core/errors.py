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
