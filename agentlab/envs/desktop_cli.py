"""``agentlab desktop``: look at a desktop the way an agent does, and act on it by hand."""

from __future__ import annotations

import time
from pathlib import Path

import typer

app = typer.Typer(help="Desktop env: observe a screen (elements + marked screenshot), run one action.",
                  no_args_is_help=True)


def _env(display: str | None, app_filter: str, grid: bool, confirm: bool):  # -> DesktopEnv
    from agentlab.envs.desktop import DesktopEnv

    return DesktopEnv(display=display, app=app_filter, a11y="off" if grid else "auto", confirm=confirm)


@app.command()
def observe(
    display: str | None = typer.Option(None, help="X display (default $DISPLAY)."),
    app_filter: str = typer.Option("", "--app", help="Only applications whose name contains this."),
    grid: bool = typer.Option(False, help="Ignore the accessibility tree; label a grid."),
    out: Path | None = typer.Option(None, help="Save the screenshot with numbered marks here (PNG)."),
) -> None:
    """Print the numbered elements an agent would see (and where they came from)."""
    from agentlab.envs.marks import draw_marks

    env = _env(display, app_filter, grid, confirm=False)
    obs = env.reset()
    info = obs.info
    src = info["source"] + (f" ({info['a11y_nodes']} nodes, {info['a11y_s']}s)" if "a11y_nodes" in info else "")
    typer.echo(f"display {info['display']}, elements from {src}")
    if "a11y_error" in info:
        typer.echo(f"accessibility: {info['a11y_error']}")
    typer.echo(obs.summary(max_elements=200))
    if out is not None and obs.screenshot is not None:
        draw_marks(obs.screenshot, obs.elements).save(out)
        typer.echo(f"marked screenshot: {out}")


@app.command()
def act(
    action: str = typer.Argument(..., help='One action in the desktop space, e.g. \'click(3)\' or \'type("hi")\'.'),
    display: str | None = typer.Option(None, help="X display (default $DISPLAY)."),
    app_filter: str = typer.Option("", "--app", help="Only applications whose name contains this."),
    grid: bool = typer.Option(False, help="Number a grid instead of accessibility elements."),
    yes: bool = typer.Option(False, "--yes", help="Do not ask before acting (default: ask, this is your desktop)."),
) -> None:
    """Observe, then carry out one action (asking first unless --yes)."""
    from agentlab.envs.actions.desktop import DESKTOP

    parsed = DESKTOP.parse(action)
    env = _env(display, app_filter, grid, confirm=not yes)
    env.reset()
    res = env.step(parsed)
    time.sleep(0.2)
    typer.echo("skipped (declined)" if res.info.get("skipped") else f"done: {parsed.describe()}")


@app.command()
def demo(
    seconds: float = typer.Option(60.0, help="How long to keep the display up."),
    state: Path = typer.Option(Path("demo_state.json"), help="Where the demo app writes its state."),
) -> None:
    """Start a private Xvfb with the GTK demo app and print how to reach it (for trying
    ``agentlab desktop observe --display ...`` from another terminal)."""
    from agentlab.envs.xdisplay import virtual_display

    with virtual_display() as disp:
        disp.launch_demo_app(state.resolve())
        typer.echo(f"DISPLAY={disp.display} XAUTHORITY={disp.env['XAUTHORITY']} "
                   f"DBUS_SESSION_BUS_ADDRESS={disp.env.get('DBUS_SESSION_BUS_ADDRESS', '')}")
        typer.echo(f"demo app state: {state.resolve()}; stopping in {seconds:.0f}s (Ctrl-C to stop now)")
        try:
            time.sleep(seconds)
        except KeyboardInterrupt:
            pass
