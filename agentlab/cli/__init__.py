"""The ``agentlab`` command: one entry point, one sub-command group per concept.

Each concept keeps its commands beside its code (``agentlab/<concept>/cli.py`` or
``agentlab/<module>_cli.py``) and exposes a ``typer.Typer`` called ``app``; this file only
mounts them. Heavy imports (torch, transformers) happen inside the commands so that
``agentlab --help`` stays instant. User mistakes (:class:`AgentlabError`) become one line
on stderr and a non-zero exit, never a traceback.
"""

from __future__ import annotations

import importlib
import logging
import os
import sys
from types import ModuleType

import typer

from agentlab.errors import AgentlabError, Stopped, stop_on_signals
from agentlab.fileio import DISK_FULL

app = typer.Typer(
    name="agentlab",
    help="Research workbench for specialized generalist computer assistants (AgentStore).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

#: (command name, module holding a ``typer.Typer`` named ``app``, help). Groups with a single
#: command are mounted as that command (see ``_mount``).
SUBCOMMANDS: list[tuple[str, str]] = [
    ("pool", "agentlab.cli.pool"),
    ("models", "agentlab.llm.cli"),
    ("notebooks", "agentlab.notebooks"),
    ("run", "agentlab.notebooks:main_job"),
    ("agent", "agentlab.agents.appagent.cli"),
    ("skills", "agentlab.agents.skills_cli"),
    ("train", "agentlab.metaagent.cli:train"),
    ("route", "agentlab.metaagent.cli:route"),
    ("eval", "agentlab.eval.cli:eval_app"),
    ("benchmarks", "agentlab.eval.lists_cli"),
    ("tasks", "agentlab.cli.tasks"),
    ("exec", "agentlab.cli.execute:exec_tasks"),
    ("desktop", "agentlab.envs.desktop_cli"),
    ("selfinstruct", "agentlab.selfinstruct.cli:selfinstruct"),
    ("skill-prior", "agentlab.cli.skill_prior:skill_prior"),
    ("view", "agentlab.viz.cli:view"),
    ("report", "agentlab.viz.cli:report"),
    ("compare", "agentlab.viz.cli:compare"),
]


_mounted = False


def _mount() -> None:
    """Add the sub-commands once (``main`` may be called many times in one process, e.g. tests)."""
    global _mounted
    if _mounted:
        return
    _mounted = True
    for name, module in SUBCOMMANDS:
        mod, _, attr = module.partition(":")
        sub = getattr(importlib.import_module(mod), attr or "app")
        if isinstance(sub, typer.Typer):
            app.add_typer(sub, name=name)
        else:  # "module:function" mounts one top-level command
            app.command(name)(sub)


@app.callback()
def _root(verbose: bool = typer.Option(False, "--verbose", "-v", help="Log at INFO level.")) -> None:
    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )


def _dump_stacks_on_sigusr1() -> None:
    """``kill -USR1 <pid>`` prints every thread's Python stack to stderr: a run that seems stuck
    (a stop that does not end, a step that never returns) shows where it waits without a debugger."""
    import faulthandler
    import signal

    if hasattr(signal, "SIGUSR1"):
        try:
            faulthandler.register(signal.SIGUSR1, all_threads=True, chain=False)
        except (ValueError, RuntimeError, OSError):  # not the main thread, or stderr has no file descriptor
            pass


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    _dump_stacks_on_sigusr1()
    _mount()
    try:
        # SIGTERM and Ctrl-C raise Stopped where they land (not KeyboardInterrupt, which typer would
        # turn into a silent exit 130); the handlers there before are back once the command ends
        with stop_on_signals():
            # In non-standalone mode click returns typer.Exit's code instead of exiting.
            rv = app(args=argv, prog_name="agentlab", standalone_mode=False)
        if isinstance(rv, int) and not isinstance(rv, bool) and rv != 0:
            sys.exit(rv)
    except AgentlabError as exc:
        typer.echo(f"error: {exc}", err=True)
        sys.exit(exc.exit_code)
    except Stopped as exc:
        typer.echo(f"error: {exc}", err=True)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:  # raised where no handler of ours was installed
        typer.echo("error: interrupted (Ctrl-C); finished results were kept and the run can be resumed", err=True)
        sys.exit(130)
    except SystemExit:
        raise
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError, FileExistsError) as exc:
        # A last line of defence: a path problem a command did not check itself is still one line.
        where = f"{exc.filename}: " if exc.filename else ""
        typer.echo(f"error: {where}{exc.strerror or exc}", err=True)
        sys.exit(1)
    except OSError as exc:
        if exc.errno not in DISK_FULL:
            raise
        # a write outside agentlab.fileio (which says what it kept) on a full disk: still one line
        where = f"{exc.filename}: " if exc.filename else ""
        typer.echo(f"error: {where}cannot write: {exc.strerror}; free some space and run again", err=True)
        sys.exit(1)
    except UnicodeDecodeError as exc:
        typer.echo(f"error: an input file is not UTF-8 text ({exc.reason} at byte {exc.start}); save it as UTF-8", err=True)
        sys.exit(1)
    except Exception as exc:  # click usage errors arrive here in non-standalone mode
        code = _usage_error(exc)
        if code is None:
            raise
        sys.exit(code)


def exit_status(argv: list[str]) -> int:
    """Run the command line in-process and return the exit status a shell would see (tests and
    notebooks call commands this way: the output goes to stdout/stderr as usual)."""
    try:
        main(argv)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 1
    return 0


def _click_exception_modules() -> list[ModuleType]:
    """The exception modules of every click a command may raise from: the ``click`` package and,
    since typer 0.29, the copy typer bundles (``typer._click``), whose classes are not
    subclasses of click's (issue #27)."""
    mods: list[ModuleType] = []
    for name in ("click.exceptions", "typer._click.exceptions"):
        try:
            mods.append(importlib.import_module(name))
        except ImportError:
            continue
    return mods


def _usage_error(exc: Exception) -> int | None:
    """Print a click exception as one ``error: ...`` line (a usage error with the command's usage
    line, exit 2); ``None`` when ``exc`` is not one of click's."""
    for mod in _click_exception_modules():
        if isinstance(exc, getattr(mod, "NoArgsIsHelpError", ())):
            ctx = getattr(exc, "ctx", None)
            typer.echo(ctx.get_help() if ctx is not None else "see 'agentlab --help'")
            return 0
        if isinstance(exc, getattr(mod, "Abort", ())):
            typer.echo("error: aborted", err=True)
            return 1
        if isinstance(exc, mod.ClickException):
            message = " ".join(exc.format_message().split())
            ctx = getattr(exc, "ctx", None)
            if isinstance(exc, mod.UsageError) and ctx is not None:
                usage = " ".join(ctx.get_usage().split())
                message += f" ({usage}; see '{ctx.command_path} --help')"
            elif isinstance(exc, mod.UsageError):
                message += " (see 'agentlab COMMAND --help')"
            typer.echo(f"error: {message}", err=True)
            return int(exc.exit_code)
    return None

if __name__ == "__main__":
    main()
