"""``agentlab desktop``: look at a desktop the way an agent does, and act on it by hand.

``observe --ocr --json`` is also a machine interface: one JSON object whose ``ocr`` list holds
``{"text", "bbox": [x, y, width, height], "conf", "level"}`` in screen pixels (other tools rely
on ``text`` and ``bbox``), next to ``elements`` (the elements' own dicts).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

if TYPE_CHECKING:  # pragma: no cover
    from PIL import Image

    from agentlab.envs.base import Observation
    from agentlab.envs.ocr import OcrBox

app = typer.Typer(help="Desktop env: observe a screen (elements, OCR text, marked screenshot), run one action.",
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
    ocr: bool = typer.Option(False, "--ocr", help="Also read the screen's words and lines (tesseract) with their boxes."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object (elements, and ocr with --ocr) instead of text."),
) -> None:
    """Print the numbered elements an agent would see (and where they came from); with --ocr
    also the words and lines on screen, each with its box ``x, y, width, height``."""
    from agentlab.envs.marks import draw_marks

    if ocr:
        _check_ocr()
    env = _env(display, app_filter, grid, confirm=False)
    obs = env.reset()
    info = obs.info
    boxes = _read_ocr(obs.screenshot) if ocr else None
    if out is not None and obs.screenshot is not None:
        draw_marks(obs.screenshot, obs.elements).save(out)
    if as_json:
        typer.echo(json.dumps(_observation_json(obs, boxes, out)))
        return
    src = info["source"] + (f" ({info['a11y_nodes']} nodes, {info['a11y_s']}s)" if "a11y_nodes" in info else "")
    typer.echo(f"display {info['display']}, elements from {src}")
    if "a11y_error" in info:
        typer.echo(f"accessibility: {info['a11y_error']}")
    typer.echo(obs.summary(max_elements=200))
    if boxes is not None:
        typer.echo(_ocr_text(boxes))
    if out is not None and obs.screenshot is not None:
        typer.echo(f"marked screenshot: {out}")


def _check_ocr() -> None:
    from agentlab.envs.ocr import ocr_problem
    from agentlab.errors import EnvironmentUnavailableError

    if problem := ocr_problem():
        raise EnvironmentUnavailableError(f"--ocr: {problem}")


def _read_ocr(screenshot: Image.Image | None) -> list[OcrBox]:
    from agentlab.envs.ocr import read_screen
    from agentlab.errors import EnvironmentUnavailableError

    if screenshot is None:
        raise EnvironmentUnavailableError("--ocr: the desktop gave no screenshot to read")
    return read_screen(screenshot)


def _observation_json(obs: Observation, boxes: list[OcrBox] | None, marked: Path | None) -> dict[str, Any]:
    """The ``--json`` object. ``elements[].bbox`` keeps the elements' corner form ``[x1, y1, x2, y2]``;
    ``ocr[].bbox`` is ``[x, y, width, height]`` (the contract other tools read); ``bbox_forms`` says so."""
    info = obs.info
    doc: dict[str, Any] = {
        "display": info.get("display"),
        "source": info.get("source"),
        "screen": list(obs.screenshot.size) if obs.screenshot is not None else None,
        "elements": [el.to_dict() for el in obs.elements],
        "bbox_forms": {"elements": "x1,y1,x2,y2", "ocr": "x,y,width,height"},
    }
    if "a11y_error" in info:
        doc["a11y_error"] = info["a11y_error"]
    if boxes is not None:
        doc["ocr"] = [b.to_dict() for b in boxes]
    if marked is not None and obs.screenshot is not None:
        doc["marked_screenshot"] = str(marked)
    return doc


def _ocr_text(boxes: list[OcrBox]) -> str:
    lines = [b for b in boxes if b.level == "line"]
    words = [b for b in boxes if b.level == "word"]
    out = [f"OCR: {len(lines)} lines, {len(words)} words (box: x, y, width, height)"]
    for level, group in (("line", lines), ("word", words)):
        out += [f'  {level} "{b.text}" at ({", ".join(map(str, b.bbox))}) conf {b.conf:.0f}' for b in group]
    return "\n".join(out)


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
