"""The ``warpgraph`` command line (typer). ``main()`` turns every :class:`UserError` into
``error: <message>`` on stderr (rich, no traceback) and exit code 2 (docs/design.md "Errors").

Sub-commands live in ``cli/<name>_cmd.py`` modules exposing ``register(app)``; the ones that exist are
registered in a fixed order. Import errors in them propagate (a broken command must not vanish)."""
from __future__ import annotations

import importlib
import importlib.util
import sys

import typer

from warpgraph import __version__
from warpgraph.core.errors import UserError

__all__ = ["app", "main", "COMMAND_MODULES"]

COMMAND_MODULES = ["arch_cmd", "run_cmd", "validate_cmd", "bench_cmd", "explore_cmd", "capture_cmd", "trace_cmd",
                   "records_cmd", "compile_cmd", "components_cmd", "calibrate_cmd"]

#: ``-h`` as well as ``--help`` on every command (click contexts inherit it from the root)
CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"]}

app = typer.Typer(
    name="warpgraph",
    help="Cycle-level model of NVIDIA GPUs (H100/H200/B200/RTX 5090) running real Triton PTX kernels.",
    no_args_is_help=True,
    add_completion=True,      # --install-completion / --show-completion (bash, zsh, fish, PowerShell)
    context_settings=CONTEXT_SETTINGS,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"warpgraph {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Show the version and exit."),
) -> None:
    """warpgraph: simulate kernels on a component graph of a GPU; explore architecture variants."""


def _register_all() -> list[str]:
    done = []
    for mod in COMMAND_MODULES:
        name = f"{__package__}.{mod}"
        if importlib.util.find_spec(name) is None:
            continue
        importlib.import_module(name).register(app)
        done.append(mod)
    return done


REGISTERED = _register_all()


def print_error(exc: BaseException) -> None:
    from rich.console import Console
    from rich.markup import escape

    text = exc.format() if isinstance(exc, UserError) else str(exc)
    Console(stderr=True, highlight=False, soft_wrap=True).print(f"[bold red]error:[/bold red] {escape(text)}")


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """Python warnings (an estimated register count, a capture without compiler facts) as one located line."""
    from rich.console import Console
    from rich.markup import escape

    Console(stderr=True, highlight=False, soft_wrap=True).print(f"[bold yellow]warning:[/bold yellow] {escape(str(message))}")


def main(argv: list[str] | None = None) -> None:
    """Entry point (``warpgraph = warpgraph.cli.main:main``)."""
    import warnings

    warnings.showwarning = _show_warning
    # standalone mode: click/typer handle usage errors (exit 2 with usage text) and call sys.exit themselves;
    # our UserErrors propagate out of it and are printed here without a traceback.
    try:
        app(args=argv, prog_name="warpgraph")
    except UserError as e:
        print_error(e)
        sys.exit(getattr(e, "exit_code", 2))


if __name__ == "__main__":
    main()
