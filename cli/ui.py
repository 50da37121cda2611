"""Presentation helpers shared by the commands: choices (enums), consoles that never cut numbers, tables that
fit the terminal, and a progress display on stderr.

* Piped output (stdout not a terminal) is never hard-wrapped: the console is as wide as its content.
* On a terminal, :func:`fit_table` drops the lowest-priority columns until the table fits, and says which.
* :func:`progress` shows a rich progress bar / spinner on stderr only when stderr is a terminal and ``--quiet``
  was not given; otherwise it does nothing (no cost to the simulation: it is updated between launches / phases).
"""
from __future__ import annotations

import contextlib
import enum
import sys
from typing import Iterator, Sequence

__all__ = ["Mode", "RunMode", "OutputFormat", "GraphFormat", "stdout_console", "stderr_console", "fit_table",
           "progress", "progress_enabled", "Column"]

#: wide enough for any table row or summary line: piped output is never wrapped or cut
_PIPE_WIDTH = 100_000


class RunMode(str, enum.Enum):
    """``warpgraph run --mode``."""
    timing = "timing"
    sampled = "sampled"
    functional = "functional"


class Mode(str, enum.Enum):
    """``warpgraph validate --mode`` (functional runs have no cycles to validate)."""
    timing = "timing"
    sampled = "sampled"


class OutputFormat(str, enum.Enum):
    """``--format`` of ``validate`` and ``bench``."""
    table = "table"
    csv = "csv"
    json = "json"


class GraphFormat(str, enum.Enum):
    """``warpgraph arch graph --format``."""
    summary = "summary"
    graphml = "graphml"
    dot = "dot"


def _isatty(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def stdout_console(file=None):
    """Console on stdout: the terminal's width on a terminal, unbounded (soft-wrapped) when piped."""
    from rich.console import Console

    f = file if file is not None else sys.stdout
    if _isatty(f):   # file=None for stdout: rich's live progress display can then print above its bar
        return Console(file=None if file is None else f, highlight=False)
    return Console(file=f, width=_PIPE_WIDTH, soft_wrap=True, highlight=False, color_system=None)


def stderr_console():
    return stdout_console(sys.stderr)


class Column:
    """One table column: header, justification, priority (lower = dropped first when the terminal is narrow;
    ``None`` = never dropped)."""

    __slots__ = ("header", "justify", "priority", "no_wrap")

    def __init__(self, header: str, justify: str = "right", priority: int | None = 0, no_wrap: bool = True):
        self.header, self.justify, self.priority, self.no_wrap = header, justify, priority, no_wrap


def _cell_len(text: str) -> int:
    from rich.text import Text

    return max((Text.from_markup(line).cell_len for line in str(text).split("\n")), default=0)


def fit_table(columns: Sequence[Column], rows: Sequence[Sequence[str]], width: int, *, title: str | None = None):
    """A rich Table of ``rows`` with the columns that fit ``width`` (dropping the lowest-priority ones first;
    numbers are never cut with '…'). Returns ``(table, dropped_headers)``."""
    from rich import box
    from rich.table import Table

    need = []
    for i, c in enumerate(columns):
        w = max([_cell_len(c.header)] + [_cell_len(r[i]) for r in rows])
        need.append(w + 3)          # padding 1+1 and one border
    keep = list(range(len(columns)))
    order = sorted((i for i, c in enumerate(columns) if c.priority is not None),
                   key=lambda i: (columns[i].priority, -i))
    dropped = []
    while sum(need[i] for i in keep) + 1 > width and order:
        i = order.pop(0)
        keep.remove(i)
        dropped.append(columns[i].header)
    t = Table(title=title, box=box.SIMPLE_HEAVY)
    for i in keep:
        c = columns[i]
        t.add_column(c.header, justify=c.justify, no_wrap=c.no_wrap, overflow="fold")
    for r in rows:
        t.add_row(*[r[i] for i in keep])
    return t, dropped


def print_table(console, columns: Sequence[Column], rows: Sequence[Sequence[str]], *, title: str | None = None,
                hint: str = "--format csv or a wider terminal shows them") -> list[str]:
    """Print a fitted table; a dim line names the columns left out. Returns the dropped headers."""
    t, dropped = fit_table(columns, rows, console.width, title=title)
    console.print(t)
    if dropped:
        console.print(f"[dim](left out to fit {console.width} columns: {', '.join(dropped)}; {hint})[/]")
    return dropped


def progress_enabled(quiet: bool = False) -> bool:
    return not quiet and _isatty(sys.stderr)


class _NoProgress:
    def update(self, advance: float = 0, description: str | None = None, **fields) -> None:
        pass

    def phase(self, name: str) -> None:
        pass

    def ctas(self, done: int, total: int, cycle: int) -> None:
        pass


class _RichProgress:
    def __init__(self, prog, task):
        self._p, self._t = prog, task

    def update(self, advance: float = 0, description: str | None = None, **fields) -> None:
        kw = dict(fields)
        if description is not None:
            kw["description"] = description
        self._p.update(self._t, advance=advance, **kw)

    def phase(self, name: str) -> None:
        self._name = name
        self._p.update(self._t, description=name)

    def ctas(self, done: int, total: int, cycle: int) -> None:
        """Timing-pass progress: CTAs retired and the simulated cycle (redrawn at most every 1 % of the CTAs)."""
        step = max(1, total // 100)
        if done % step and done != total:
            return
        self._p.update(self._t, description=f"{getattr(self, '_name', '')}: {done:,}/{total:,} CTAs retired, "
                                             f"cycle {int(cycle):,}")


@contextlib.contextmanager
def progress(description: str, total: int | None = None, *, quiet: bool = False,
             enabled: bool | None = None) -> Iterator[_NoProgress | _RichProgress]:
    """``with progress("validating", total=12) as p: ... p.update(advance=1)``. ``total=None``: a spinner with the
    phase name (``p.phase("timing pass")``) and elapsed time. Transient, on stderr; a no-op when stderr is not a
    terminal or ``quiet``."""
    on = progress_enabled(quiet) if enabled is None else enabled
    if not on:
        yield _NoProgress()
        return
    from rich.console import Console
    from rich.progress import (BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn,
                               TimeElapsedColumn, TimeRemainingColumn)

    cols = [SpinnerColumn(), TextColumn("[progress.description]{task.description}")]
    if total is not None:
        cols += [BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), TextColumn("eta"), TimeRemainingColumn()]
    else:
        cols += [TimeElapsedColumn()]
    # 4 refreshes a second from rich's own thread: no measurable cost to the simulation
    with Progress(*cols, console=Console(stderr=True), transient=True, refresh_per_second=4) as prog:
        task = prog.add_task(description, total=total)
        yield _RichProgress(prog, task)
