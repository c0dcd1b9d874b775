"""Looking at recorded episodes: the action drawn on its screenshot, a timeline, an inspector.

Works on :mod:`agentlab.envs.trajectory` folders (``traj.jsonl`` + ``step_NNN[_som].png``).
:func:`draw_action` marks where an action landed (a ring on a click/tap point, the target
element's box, an arrow for swipes, drags and scrolls, a caption for keys and text);
:func:`episode_timeline` is a plotly overview of the steps; :class:`TrajectoryInspector`
is the interactive ipywidgets viewer, which also carries a static HTML rendering so an
executed notebook's HTML export still shows the screenshots and the timeline.
"""

from __future__ import annotations

import base64
import html
import io
import logging
import math
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentlab.envs.actions.base import Action
from agentlab.envs.actions.desktop import Drag, Pointer, Scroll
from agentlab.envs.actions.phone import Swipe
from agentlab.envs.base import Element, clip
from agentlab.errors import ActionParseError, DataError
from agentlab.teams.hub import PLAN_FILE
from agentlab.envs.trajectory import StepRecord, Trajectory, list_episodes, load_trajectory

if TYPE_CHECKING:
    import pandas as pd
    import plotly.graph_objects as go
    from PIL import Image, ImageFont

log = logging.getLogger(__name__)

ACTION_RGB = (230, 20, 60)
#: Swipe length in tenths of the screen width, as the Android env executes it.
SWIPE_UNITS = {"short": 1, "medium": 2, "long": 3}
_DIRS = {"up": (0, -1), "down": (0, 1), "left": (-1, 0), "right": (1, 0)}


# ----------------------------------------------------------------------------- geometry


def action_geometry(action: Action, elements: Sequence[Element], size: tuple[int, int]) -> dict[str, Any]:
    """Where an action acts on a ``size`` screen: ``point``, ``box``, ``arrow`` (start, end), ``caption``.

    Only what the action determines is returned; an element number the step's element list
    does not hold yields a caption saying so instead of a guessed position.
    """
    w, h = size
    by_id = {e.id: e for e in elements}
    out: dict[str, Any] = {"caption": action.describe()}

    def locate(n: int | None) -> tuple[int, int] | None:
        if n is None:
            return None
        el = by_id.get(n)
        if el is None:
            out["caption"] += f" (element {n} not in this step's list)"
            return None
        out.setdefault("box", el.bbox)
        return el.center

    def arrow_from(start: tuple[int, int], direction: str, length: float) -> None:
        dx, dy = _DIRS[direction]
        end = (int(min(max(start[0] + dx * length, 0), w - 1)), int(min(max(start[1] + dy * length, 0), h - 1)))
        out["arrow"] = (start, end)

    if isinstance(action, Swipe):
        p = locate(action.element)
        if p is not None:
            arrow_from(p, action.direction, SWIPE_UNITS[action.distance] * w / 10)
    elif isinstance(action, Drag):
        a = locate(action.source) if action.source is not None else action.start
        b = locate(action.target) if action.target is not None else action.end
        if a is not None and b is not None:
            out["arrow"] = (tuple(a), tuple(b))
    elif isinstance(action, Scroll):
        if action.element is not None:
            p = locate(action.element)
        elif action.x is not None and action.y is not None:
            p = (action.x, action.y)
        else:
            p = (w // 2, h // 2)
        if p is not None:
            arrow_from(p, action.direction, min(w, h) / 8)
    elif isinstance(action, Pointer):  # click, double_click
        if action.element is not None:
            p = locate(action.element)
        elif action.x is not None and action.y is not None:
            p = (action.x, action.y)
        else:
            p = None
        if p is not None:
            out["point"] = p
    else:
        ref = getattr(action, "element", None)
        if isinstance(ref, int) and not isinstance(ref, bool):
            p = locate(ref)
            if p is not None:
                out["point"] = p
    return out


def _font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    from PIL import ImageFont

    try:
        return ImageFont.load_default(size=size)
    except TypeError:
        return ImageFont.load_default()


def draw_action(image: Image.Image, action: Action | dict[str, Any] | None, elements: Sequence[Element] = ()) -> Image.Image:
    """A copy of ``image`` with the action drawn on it (see :func:`action_geometry`)."""
    from PIL import ImageDraw

    img = image.convert("RGB").copy()
    if action is None:
        return img
    if isinstance(action, dict):
        try:
            action = Action.from_dict(action)
        except ActionParseError as exc:
            geo: dict[str, Any] = {"caption": f"unreadable action: {exc.message}"}
            action = None
    if action is not None:
        geo = action_geometry(action, elements, img.size)
    draw = ImageDraw.Draw(img)
    lw = max(3, min(img.size) // 150)
    if "box" in geo:
        draw.rectangle(geo["box"], outline=ACTION_RGB, width=lw)
    if "point" in geo:
        x, y = geo["point"]
        r = max(10, min(img.size) // 40)
        draw.ellipse((x - r, y - r, x + r, y + r), outline=ACTION_RGB, width=lw)
        draw.ellipse((x - lw, y - lw, x + lw, y + lw), fill=ACTION_RGB)
    if "arrow" in geo:
        (x1, y1), (x2, y2) = geo["arrow"]
        draw.line((x1, y1, x2, y2), fill=ACTION_RGB, width=lw + 1)
        ang = math.atan2(y2 - y1, x2 - x1)
        head = max(14, min(img.size) // 30)
        pts = [(x2, y2)] + [
            (x2 - head * math.cos(ang + s * math.pi / 7), y2 - head * math.sin(ang + s * math.pi / 7)) for s in (1, -1)
        ]
        draw.polygon(pts, fill=ACTION_RGB)
        draw.ellipse((x1 - lw * 2, y1 - lw * 2, x1 + lw * 2, y1 + lw * 2), fill=ACTION_RGB)
    caption = geo.get("caption", "")
    if caption:
        font = _font(max(14, min(img.size) // 40))
        tb = draw.textbbox((0, 0), caption, font=font)
        pad = 6
        draw.rectangle((0, 0, tb[2] - tb[0] + 2 * pad, tb[3] - tb[1] + 2 * pad), fill=(0, 0, 0))
        draw.text((pad - tb[0], pad - tb[1]), caption, fill=(255, 255, 255), font=font)
    return img


def step_image(traj: Trajectory, rec: StepRecord, *, som: bool = True, with_action: bool = True) -> Image.Image | None:
    """The screenshot of a step (set-of-marks version when asked and present), action drawn."""
    img = traj.image(rec.step, som=som) if som else None
    if img is None:
        img = traj.image(rec.step, som=False)
    if img is None:
        return None
    return draw_action(img, rec.action if with_action else None, rec.elements)


def png_bytes(img: Image.Image, max_width: int | None = None) -> bytes:
    """PNG encoding, downscaled to ``max_width`` if wider."""
    if max_width and img.width > max_width:
        img = img.resize((max_width, round(img.height * max_width / img.width)))
    buf = io.BytesIO()
    img.save(buf, format="PNG", optimize=True)
    return buf.getvalue()


# ----------------------------------------------------------------------------- timeline


def action_label(rec: StepRecord) -> str:
    """The action type of a step ("(none)" for a record without an action)."""
    return str(rec.action.get("type", "?")) if rec.action else "(none)"


def action_text(rec: StepRecord) -> str:
    """Readable description of a step's action (raw record if it no longer parses)."""
    if not rec.action:
        return "(no action)"
    try:
        return Action.from_dict(rec.action).describe()
    except ActionParseError:
        return str(rec.action)


def episode_timeline(traj: Trajectory) -> go.Figure:
    """Steps along x (seconds since the episode started on hover), action type along y;
    failed steps as red crosses, the step that ended the episode as a star."""
    import plotly.graph_objects as go

    steps = traj.steps
    t0 = steps[0].timestamp if steps else 0.0
    types = list(dict.fromkeys(action_label(s) for s in steps))
    fig = go.Figure()

    def hover(s: StepRecord) -> str:
        parts = [f"step {s.step} (+{s.timestamp - t0:.1f} s)", html.escape(action_text(s))]
        if s.thought:
            parts.append("thought: " + html.escape(clip(s.thought, 160)))
        if s.error:
            parts.append("error: " + html.escape(clip(s.error, 160)))
        return "<br>".join(parts)

    ok = [s for s in steps if not s.error]
    bad = [s for s in steps if s.error]
    fig.add_trace(
        go.Scatter(
            x=[s.step for s in ok], y=[action_label(s) for s in ok], mode="markers+lines", name="step",
            marker={"size": 14, "color": "#1f77b4"}, line={"color": "#c7d7ea", "width": 1},
            hovertext=[hover(s) for s in ok], hoverinfo="text",
        )
    )
    fig.add_trace(
        go.Scatter(
            x=[s.step for s in bad], y=[action_label(s) for s in bad], mode="markers", name="error",
            marker={"size": 16, "color": "#d62728", "symbol": "x"},
            hovertext=[hover(s) for s in bad], hoverinfo="text",
        )
    )
    done = [s for s in steps if s.done]
    fig.add_trace(
        go.Scatter(
            x=[s.step for s in done], y=[action_label(s) for s in done], mode="markers", name="done",
            marker={"size": 22, "color": "rgba(0,0,0,0)", "symbol": "star", "line": {"color": "#2ca02c", "width": 2}},
            hoverinfo="skip",
        )
    )
    title = f"Episode {traj.meta.episode}: {len(steps)} steps, {len(bad)} error(s), status {traj.meta.status}"
    if traj.meta.task:
        title += f"<br><sup>{html.escape(clip(traj.meta.task, 110))}</sup>"
    fig.update_layout(
        title=title, xaxis_title="step", yaxis_title="action", width=900, height=260 + 28 * len(types),
        yaxis={"categoryorder": "array", "categoryarray": types}, xaxis={"dtick": 1},
    )
    return fig


# ----------------------------------------------------------------------------- static view


def step_card_html(traj: Trajectory, rec: StepRecord, *, som: bool = True, max_width: int = 560) -> str:
    """One step as HTML: the screenshot with the action drawn (embedded PNG) and the texts."""
    img = step_image(traj, rec, som=som)
    pic = (
        f'<img class="agentlab-step" alt="step {html.escape(str(rec.step))}" style="max-width:{max_width}px;border:1px solid #ccc" '
        f'src="data:image/png;base64,{base64.b64encode(png_bytes(img, max_width)).decode()}"/>'
        if img is not None
        else "<div><i>no screenshot recorded</i></div>"
    )
    return (
        f'<div style="display:flex;gap:16px;align-items:flex-start;margin:8px 0">'
        f"<div>{pic}</div><div>{_details_table(rec)}</div></div>"
    )


def static_html(traj: Trajectory, *, max_steps: int = 12, som: bool = True, with_plotlyjs: bool = False) -> str:
    """The whole episode as static HTML: header, timeline figure and one card per step."""
    from agentlab.viz.export import figure_html

    m = traj.meta
    def e(v: Any) -> str:
        return html.escape(str(v))

    head = (
        f"<h4>{e(m.episode)}: {e(m.task or '(no task)')}</h4>"
        f"<p>env {e(m.env or '?')} · agent {e(m.agent or '?')} · model "
        f"{e(m.model_id or '?')} · status <b>{e(m.status)}</b>"
        + (f" · error: {e(m.error)}" if m.error else "")
        + "</p>"
    )
    shown = traj.steps[:max_steps]
    cards = "".join(step_card_html(traj, s, som=som) for s in shown)
    more = f"<p>… {len(traj.steps) - len(shown)} more step(s) in {html.escape(str(traj.path))}</p>" if len(traj.steps) > len(shown) else ""
    return f'<div class="agentlab-trajectory">{head}{figure_html(episode_timeline(traj), with_plotlyjs=with_plotlyjs)}{cards}{more}</div>'


# ----------------------------------------------------------------------------- inspector


class TrajectoryInspector:
    """Pick an episode, slide through its steps, see screenshot + action + thought + timeline.

    ``TrajectoryInspector(folders)`` takes episode folders and/or run folders (whose episodes
    are listed with :func:`agentlab.envs.trajectory.list_episodes`). Displayed in Jupyter it is an
    ipywidgets app; its static HTML fallback (every episode, first ``max_static_steps`` steps)
    is what an HTML export shows.
    """

    def __init__(self, folders: str | Path | Sequence[str | Path], *, som: bool = True, max_static_steps: int = 12) -> None:
        items = [folders] if isinstance(folders, (str, Path)) else list(folders)
        self.episodes: dict[str, Path] = {}
        for f in map(Path, items):
            if (f / "traj.jsonl").exists():
                self._add(f, 2)
            elif (f / PLAN_FILE).exists():  # one multi-agent episode: its team's and its steps' trajectories, in plan order
                for s in episode_parts(f):
                    self._add(s, 2)
            elif f.is_dir():
                for e in list_episodes(f):
                    if e.steps:
                        self._add(e.path, 2)
                for sub in sorted(p for p in f.iterdir() if (p / PLAN_FILE).exists()):
                    for s in episode_parts(sub):
                        self._add(s, 2)
            else:
                raise DataError("not an episode or run folder", where=f)
        if not self.episodes:
            raise DataError("no recorded episodes with steps found", where=", ".join(map(str, items)))
        self.som = som
        self.max_static_steps = max_static_steps
        self._cache: dict[str, Trajectory] = {}
        self._widget: Any = None
        self.current = next(iter(self.episodes))
        self.step_index = 0

    def _add(self, path: Path, depth: int) -> None:
        """Key an episode by its last ``depth`` path parts, more when that key is taken (two agents'
        episodes of the same task: ``AgentS2/episodes/pc-x`` and ``PCAgent/episodes/pc-x``)."""
        parts = path.resolve().parts
        for n in range(depth, len(parts) + 1):
            key = "/".join(parts[-n:])
            if key not in self.episodes or self.episodes[key] == path:
                self.episodes[key] = path
                return

    def trajectory(self, key: str | None = None) -> Trajectory:
        key = key or self.current
        if key not in self._cache:
            self._cache[key] = load_trajectory(self.episodes[key])
        return self._cache[key]

    # -- pieces the widget (and tests) use
    def select(self, key: str, step_index: int = 0) -> StepRecord:
        if key not in self.episodes:
            raise DataError(f"unknown episode {key!r}; have {', '.join(self.episodes)}")
        self.current = key
        steps = self.trajectory(key).steps
        self.step_index = max(0, min(step_index, len(steps) - 1))
        return steps[self.step_index]

    def step_png(self, som: bool | None = None, max_width: int = 900) -> bytes | None:
        traj = self.trajectory()
        img = step_image(traj, traj.steps[self.step_index], som=self.som if som is None else som)
        return png_bytes(img, max_width) if img is not None else None

    def step_details_html(self) -> str:
        traj = self.trajectory()
        rec = traj.steps[self.step_index]
        return _details_table(rec)

    # -- widget
    def widget(self) -> Any:
        """The ipywidgets app (built once)."""
        if self._widget is not None:
            return self._widget
        import ipywidgets as w
        from IPython.display import display

        from agentlab.viz.export import figure_bundle

        pick = w.Dropdown(options=list(self.episodes), value=self.current, description="episode", layout={"width": "60%"})
        slider = w.IntSlider(min=0, max=max(0, len(self.trajectory().steps) - 1), value=0, description="step", continuous_update=False)
        som = w.Checkbox(value=self.som, description="set-of-marks")
        image = w.Image(format="png", layout={"max_width": "900px"})
        details = w.HTML()
        timeline = w.Output()

        def refresh_step(*_: Any) -> None:
            self.select(pick.value, slider.value)
            data = self.step_png(som=som.value)
            image.value = data or b""
            details.value = self.step_details_html()

        def refresh_episode(*_: Any) -> None:
            self.select(pick.value, 0)
            slider.max = max(0, len(self.trajectory().steps) - 1)
            slider.value = 0
            timeline.clear_output()
            with timeline:
                display(figure_bundle(episode_timeline(self.trajectory()), name="timeline"), raw=True)
            refresh_step()

        pick.observe(refresh_episode, names="value")
        slider.observe(refresh_step, names="value")
        som.observe(refresh_step, names="value")
        refresh_episode()
        self._widget = w.VBox([w.HBox([pick, som]), slider, w.HBox([image, details]), timeline])
        return self._widget

    def static_html(self) -> str:
        """Every episode rendered statically (what an HTML export shows)."""
        from agentlab.viz import export

        parts = []
        for key in self.episodes:
            first = not export._STATE.plotlyjs_emitted
            parts.append(static_html(self.trajectory(key), max_steps=self.max_static_steps, som=self.som, with_plotlyjs=first))
            export._STATE.plotlyjs_emitted = True
        return "".join(parts)

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        bundle: dict[str, Any] = {}
        try:
            bundle.update(self.widget()._repr_mimebundle_(**kwargs) or {})
        except ImportError:  # no ipywidgets: the static view alone
            pass
        bundle["text/html"] = self.static_html()
        bundle["text/plain"] = f"TrajectoryInspector({len(self.episodes)} episode(s))"
        return bundle


def step_folders(episode_dir: Path) -> list[Path]:
    """The per-step trajectory folders (``step-<k>-<agent>/``) of a multi-agent episode, in plan order."""
    found = [p for p in episode_dir.glob("step-*-*") if (p / "traj.jsonl").exists()]
    return sorted(found, key=lambda p: int(p.name.split("-")[1]) if p.name.split("-")[1].isdigit() else 0)


#: a team's own trajectory in a multi-agent episode (COLA: agentlab.teams.cola.team.TEAM_DIR)
TEAM_DIR = "team"


def episode_parts(episode_dir: Path) -> list[Path]:
    """A multi-agent episode's trajectories: the team's own (``team/``, a COLA episode: planner,
    scheduler, reviewer, person) first, then each step's in plan order (rolled-back attempts too)."""
    team = episode_dir / TEAM_DIR
    return ([team] if (team / "traj.jsonl").exists() else []) + step_folders(episode_dir)


def plan_html(episode_dir: str | Path) -> str:
    """A multi-agent episode's plan and what each step did (its ``plan.json``) as an HTML table."""
    import json

    path = Path(episode_dir) / PLAN_FILE
    if not path.exists():
        raise DataError("not a multi-agent episode (no plan.json)", where=episode_dir)
    rec = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(rec, dict):
        raise DataError("plan.json is not a JSON object", where=path)

    def e(v: Any) -> str:  # every field is data (a forged plan.json included): escaped, whatever its type
        return html.escape(str(v))

    def number(o: dict[str, Any], i: int) -> str:
        k = o.get("index", i)
        return str(k + 1) if isinstance(k, int) and not isinstance(k, bool) else e(k)

    head = f"<p><b>{e(rec.get('task', ''))}</b><br>status {e(rec.get('status'))}, success {e(rec.get('success'))}</p>"
    outcomes = rec.get("step_outcomes")
    rows = "".join(
        f"<tr><td>{number(o, i)}</td><td>{e(o.get('agent'))}</td><td>{e(o.get('subtask'))}</td>"
        f"<td>{e(o.get('status'))}</td><td>{e(o.get('steps', 0))}</td><td>{e(o.get('summary', ''))}</td></tr>"
        for i, o in enumerate(outcomes if isinstance(outcomes, list) else []) if isinstance(o, dict))
    return (head + "<table><tr><th>#</th><th>agent</th><th>subtask</th><th>status</th><th>actions</th>"
            "<th>hub summary</th></tr>" + rows + "</table>")


def _clip_lines(s: str, n: int) -> str:
    """Like :func:`~agentlab.envs.base.clip` but keeps line breaks (program output is read line by line)."""
    return s if len(s) <= n else "…" + s[-(n - 1):]


#: extra keys of a role message shown after its text, in this order (see docs/trajectories.md)
ROLE_EXTRAS = ("expert", "target", "score", "verdict", "replanned", "values", "agent", "by", "kind", "choice", "guidance",
               "step", "backtrack_to", "model_role", "coords")

#: the columns of :func:`role_cost_frame`
ROLE_COST_COLUMNS = ("id", "agents", "role", "model_id", "llm_calls", "tokens_in", "tokens_out", "images", "image_bytes")


def role_cost_frame(rows: Sequence[dict[str, Any]]) -> pd.DataFrame:
    """What each role spent in each result row (its ``usage_by_role``): which model, calls, tokens
    and the screenshots it was sent; one line per (row, role), rows without roles left out. Why: a
    multi-role agent's total says nothing about which role (or which model) spent it."""
    import pandas as pd

    out = []
    for row in rows:
        for role, use in sorted((row.get("usage_by_role") or {}).items()):
            out.append({"id": row.get("id"), "agents": ", ".join(row.get("agents") or []), "role": role,
                        "model_id": use.get("model_id", ""),
                        **{k: int(use.get(k) or 0) for k in ROLE_COST_COLUMNS[4:]}})
    return pd.DataFrame(out, columns=list(ROLE_COST_COLUMNS))


def tool_calls_frame(traj: Trajectory) -> pd.DataFrame:
    """A tools specialist's episode as a table: per step, each call it made and what the call
    returned (or the error it raised), as the agent saw them (``info.calls`` / ``info.results``)."""
    import pandas as pd

    rows = []
    for rec in traj.steps:
        results = str(rec.info.get("results", "")).splitlines()
        for i, call in enumerate(rec.info.get("calls") or []):
            args = ", ".join(repr(v) for v in (call.get("args") or {}).values())
            said = results[i].split(" -> ", 1)[-1] if i < len(results) and call["name"] not in ("done", "fail") else ""
            rows.append({"step": rec.step, "call": f"{call['name']}({args})", "result": said})
        if not rec.info.get("calls") and rec.error:
            rows.append({"step": rec.step, "call": "(unusable reply)", "result": rec.error})
    return pd.DataFrame(rows, columns=["step", "call", "result"])


def gui_calls_frame(traj: Trajectory) -> pd.DataFrame:
    """A GUI specialist's typed episode as a table: per step, the typed call (``info.gui_call``),
    whether it was an app skill, the label a skill grounded on the screen it opened
    (``info.grounded``), the env actions it expanded to (``info.expanded``) and any problem (a
    refused reply, where a skill stopped)."""
    import pandas as pd

    rows = []
    for rec in traj.steps:
        info = rec.info if isinstance(rec.info, dict) else {}
        call = info.get("gui_call")
        if call is None and not rec.error:
            continue
        grounded = info.get("grounded") or {}
        rows.append({
            "step": rec.step, "call": call or "(unusable reply)", "skill": info.get("skill", ""),
            "grounded": ", ".join(f"{k}={v!r}" for k, v in grounded.items()),
            "expanded": ", ".join(info.get("expanded") or []),
            "problem": info.get("skill_error") or rec.error or "",
        })
    return pd.DataFrame(rows, columns=["step", "call", "skill", "grounded", "expanded", "problem"])


def role_rows(rec: StepRecord) -> list[tuple[str, str]]:
    """One row per role message of a multi-role agent's step (``info["roles"]``: Agent S2's
    manager plan, worker and grounding expert; PC-Agent's manager, hub, progress, decision and
    reflection verdict), in the order they spoke."""
    roles = rec.info.get("roles") if isinstance(rec.info, dict) else None
    out: list[tuple[str, str]] = []
    for msg in roles if isinstance(roles, list) else []:
        if not isinstance(msg, dict):
            continue
        role = str(msg.get("role", "?"))
        text = str(msg.get("text", ""))
        plan = msg.get("plan")
        if isinstance(plan, list) and plan:
            text += ("\n" if text else "") + "\n".join(f"{i}. {g}" for i, g in enumerate(plan, 1))
        extras = [f"{k}: {msg[k]}" for k in ROLE_EXTRAS if k in msg and msg[k] not in (None, "", {}, [])]
        if extras:
            text += (" " if text else "") + "[" + "; ".join(extras) + "]"
        out.append((role, _clip_lines(text, 1200)))
    return out


def _details_table(rec: StepRecord) -> str:
    rows = [("step", str(rec.step)), ("action", action_text(rec))]  # keys and values escaped below (role names are data)
    if rec.action_text:
        rows.append(("model output", clip(rec.action_text, 400)))
    for key in ("thought", "reflection"):
        if getattr(rec, key):
            rows.append((key, clip(getattr(rec, key), 800)))
    if rec.action and isinstance(rec.action.get("code"), str):  # a program the agent ran: show it whole
        rows.append((f"program ({rec.action.get('language', '?')})", _clip_lines(rec.action["code"], 2000)))
    ran = rec.info.get("program") if isinstance(rec.info, dict) else None
    if ran:  # a code agent's step: what its program did
        state = "timed out (killed)" if ran.get("timed_out") else f"exit code {ran.get('returncode')}"
        rows.append(("program result", state))
        for stream in ("stdout", "stderr"):
            if ran.get(stream):
                rows.append((stream, _clip_lines(str(ran[stream]), 1200)))
    rows.extend(role_rows(rec))
    if rec.error:
        rows.append(("error", rec.error))
    reward = f"{rec.reward:g}" if isinstance(rec.reward, (int, float)) else str(rec.reward)  # a forged record: any type
    rows.append(("reward / done", f"{reward} / {rec.done}"))
    return "<table>" + "".join(
        f'<tr><th style="text-align:left;vertical-align:top;padding-right:8px">{html.escape(k)}</th>'
        f'<td style="text-align:left;white-space:pre-wrap{";color:#c00" if k in ("error", "stderr") else ""}">{html.escape(v)}</td></tr>'
        for k, v in rows
    ) + "</table>"
