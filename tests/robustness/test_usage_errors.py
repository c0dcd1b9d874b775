"""Usage errors are one line and exit 2, for every command and sub-command (issue #27).

typer 0.29 raises the exception classes of the click it bundles (``typer._click``), which are
not subclasses of the ``click`` package's; the CLI must turn both into ``error: ...`` with the
command's usage line. The command tree is read from the mounted app, so a new command is
covered without editing this file.
"""

from __future__ import annotations

from typing import Any

import pytest
import typer

from agentlab.cli import _mount, app, exit_status


def _leaf_paths() -> list[list[str]]:
    """Every runnable command as its argv prefix (``["tasks", "check"]``, ``["exec"]``, ...)."""
    _mount()
    root: Any = typer.main.get_command(app)
    out: list[list[str]] = []

    def walk(cmd: Any, path: list[str]) -> None:
        subs = getattr(cmd, "commands", None)
        if subs:
            for name, sub in sorted(subs.items()):
                walk(sub, [*path, name])
        else:
            out.append(path)

    walk(root, [])
    return out


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = exit_status(argv)
    return (code, *capsys.readouterr())


COMMANDS = _leaf_paths()


def test_the_tree_is_read() -> None:
    names = {" ".join(p) for p in COMMANDS}
    assert {"exec", "route", "tasks check", "pool validate", "run"} <= names and len(names) > 20


@pytest.mark.parametrize("path", COMMANDS, ids=[" ".join(p) for p in COMMANDS])
def test_unknown_option_is_one_line(path: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run([*path, "--no-such-flag"], capsys)
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert code == 2, (code, out, err)
    assert len(lines) == 1 and "Traceback" not in out + err, err
    assert lines[0].startswith("error: ") and "--no-such-flag" in lines[0]
    assert f"agentlab {' '.join(path)}" in lines[0]  # the command's usage line


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["tasks", "check", "a", "b"], "unexpected extra argument"),
        (["exec", "--max-steps", "abc"], "--max-steps"),
        (["selfinstruct", "--workers", "-3"], "--workers"),
        (["route", "--router"], "requires an argument"),
        (["no-such-command"], "No such command"),
    ],
)
def test_bad_values_and_arguments_are_one_line(argv: list[str], says: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(argv, capsys)
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert code == 2 and len(lines) == 1 and lines[0].startswith("error: ") and says in lines[0], err


def test_no_arguments_shows_help(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run([], capsys)
    assert code == 0 and "Usage: agentlab" in out and "Traceback" not in err
