"""One episode of a run as a static HTML page: every step in order, then the evaluator's verdict.

What a reader needs to judge an episode without re-running it: for a GUI step the screenshot with
its set-of-marks labels and the action drawn on it (:func:`agentlab.viz.trajectory.step_image`:
click ring, drag/swipe arrow, typed text as a caption), for a code step the program with its exit
code, stdout and stderr, for a multi-role agent or a team each role's message (collapsible), for a
plan the hub's hand-offs (``plan.json``) and every step's own trajectory (``step-<k>-<agent>/``,
COLA's ``team/``), and at the end what the evaluator expected and what it found. Screenshots are
written as PNG files beside the page (``<slug>/...png``), so the site opens from disk and stays small.
Anything unreadable (a trajectory, an image) is said on the page; the page is still written.

A run folder is data, perhaps forged, perhaps holding what a sandboxed program made: every field is
escaped (:func:`esc`), and no file is read from outside the run folder (a screenshot named
``../../etc/hostname`` or by an absolute path, a link to elsewhere, a step folder linked out):
the page shows a placeholder saying so, and nothing is copied into the site.
"""

from __future__ import annotations

import html
import json
import logging
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agentlab.errors import AgentlabError
from agentlab.fileio import atomic_write_bytes
from agentlab.envs.trajectory import META_FILE, TRAJ_FILE, StepRecord, Trajectory, load_trajectory
from agentlab.record.row import EpisodeRow, PlanPart
from agentlab.viz.runs import RunFolder
from agentlab.viz.trajectory import TEAM_DIR, action_text, draw_action, episode_parts, plan_html, png_bytes, role_rows

log = logging.getLogger(__name__)

#: screenshots are scaled down to this width (the page shows them at most 640 px wide)
IMAGE_WIDTH = 960
#: longest text shown in full in a step (program output, model reply); the rest is cut with a note
MAX_TEXT = 6000
_STEP_DIR = re.compile(r"^step-(\d+)-(.+?)(?:-try(\d+))?$")

#: writes a PNG (bytes) under a name inside the episode's asset folder and returns its href
SaveImage = Callable[[str, bytes], str]
#: whether a path (links followed) lies inside the run folder (:meth:`RunFolder.contains`)
Inside = Callable[[Path], bool]
OUTSIDE = "leads outside the run folder; not followed"


def esc(v: Any) -> str:
    return html.escape("" if v is None else str(v))


def absent(v: Any) -> str:
    """A value for a table: the value, or an em dash for a field this row does not have."""
    return "—" if v is None or v == "" else esc(v)


def _clip(text: str, n: int = MAX_TEXT) -> str:
    return text if len(text) <= n else text[:n] + f"\n… ({len(text) - n} more characters)"


def _pre(text: str, cls: str = "") -> str:
    attr = f' class="{cls}"' if cls else ""
    return f"<pre{attr}>{esc(_clip(text))}</pre>"


def _details(summary: str, body: str, cls: str = "", open_: bool = False) -> str:
    attr = (f' class="{cls}"' if cls else "") + (" open" if open_ else "")
    return f"<details{attr}><summary>{summary}</summary>{body}</details>"


def part_label(folder: Path, episode: Path) -> str:
    """``step 2 · WordAgent``, ``step 1 · SheetAgent · attempt 1 (rolled back)``, ``team``, or ``trajectory``."""
    if folder == episode:
        return "trajectory"
    if folder.name == TEAM_DIR:
        return "team: planner, scheduler, reviewer, person"
    m = _STEP_DIR.match(folder.name)
    if not m:
        return folder.name
    label = f"step {m.group(1)} · {m.group(2)}"
    return label + (f" · attempt {m.group(3)} (rolled back)" if m.group(3) else "")


def _part_order(folder: Path) -> tuple[int, int, int]:
    """team first, then by step; a step's rolled-back attempts before the attempt that was kept."""
    if folder.name == TEAM_DIR:
        return (0, 0, 0)
    m = _STEP_DIR.match(folder.name)
    if not m:
        return (2, 0, 0)
    return (1, int(m.group(1)), int(m.group(3)) if m.group(3) else 1 << 30)


def trajectory_parts(episode: Path) -> list[Path]:
    """The trajectories of an episode folder in reading order: its own, COLA's ``team/``, each plan step's."""
    own = [episode] if (episode / "traj.jsonl").exists() else []
    return own + sorted(episode_parts(episode), key=_part_order)


# ----------------------------------------------------------------------------- one step


def _step_no(rec: StepRecord, fallback: int) -> int:
    """The record's step number, or its position when a damaged or forged record has none."""
    return rec.step if isinstance(rec.step, int) and not isinstance(rec.step, bool) else fallback


def _picture(traj: Trajectory, rec: StepRecord, inside: Inside) -> tuple[Any, str]:
    """``(image with the action drawn, note)``: this record's own files (its set-of-marks version
    first), never one outside the run folder (the note says so instead)."""
    from PIL import Image

    for name in (rec.som, rec.screenshot):
        if not name:
            continue
        path = traj.path / str(name)
        if not inside(path):
            return None, f'<p class="bad">screenshot {esc(name)} {OUTSIDE}</p>'
        if path.is_file():
            with Image.open(path) as img:
                return draw_action(img, rec.action, rec.elements), ""
    return None, '<p class="muted">screenshot file missing</p>'


def step_html(traj: Trajectory, rec: StepRecord, save: SaveImage, key: str, inside: Inside = lambda p: True,
              index: int = 0) -> str:
    """A step: the screenshot with the action drawn (if any) beside what the agent said and did."""
    n = _step_no(rec, index)
    shot = ""
    if rec.screenshot or rec.som:
        try:
            img, shot = _picture(traj, rec, inside)
        except Exception as exc:  # a truncated, foreign or oversized file (Pillow's bomb guard): say so, keep the page
            img, shot = None, f'<p class="bad">screenshot unreadable: {esc(exc)}</p>'
        if img is not None:
            href = save(f"{key}-step_{n:03d}.png", png_bytes(img, IMAGE_WIDTH))
            shot = f'<a href="{esc(href)}"><img class="agentlab-step" alt="step {n}" src="{esc(href)}"></a>'
    reward = rec.reward if isinstance(rec.reward, (int, float)) and not isinstance(rec.reward, bool) else 0
    badges = "".join(f' <span class="badge">{esc(b)}</span>' for b in (["done"] if rec.done else []) + ([f"reward {reward:g}"] if reward else []))
    parts = [f"<h3>step {esc(rec.step)} · {esc(action_text(rec))}{badges}</h3>"]
    for name in ("thought", "reflection"):
        text = getattr(rec, name)
        if text:
            parts.append(f"<p><b>{name}</b>: {esc(_clip(str(text), 1500))}</p>")
    code = rec.action.get("code") if isinstance(rec.action, dict) else None
    if isinstance(code, str):
        parts.append(f"<p><b>program</b> ({esc(rec.action.get('language', '?') if isinstance(rec.action, dict) else '?')})</p>{_pre(code)}")
    ran = rec.info.get("program") if isinstance(rec.info, dict) else None
    if isinstance(ran, dict) and ran:
        state = "timed out (killed)" if ran.get("timed_out") else f"exit code {ran.get('returncode', '?')}"
        ok = not ran.get("timed_out") and ran.get("returncode") == 0
        parts.append(f'<p><b>result</b>: <span class="{"ok" if ok else "bad"}">{esc(state)}</span></p>')
        for stream in ("stdout", "stderr"):
            if ran.get(stream):
                parts.append(f"<p><b>{stream}</b></p>{_pre(str(ran[stream]), 'stderr' if stream == 'stderr' else '')}")
            else:
                parts.append(f'<p class="muted">{stream}: (empty)</p>')
    for role, text in role_rows(rec):
        first = " ".join(text.split())[:110]
        parts.append(_details(f"<b>{esc(role)}</b> {esc(first)}", _pre(text), cls="role"))
    if rec.error:
        parts.append(f'<p class="bad">error: {esc(_clip(str(rec.error), 2000))}</p>')
    if rec.action_text:
        parts.append(_details("model reply", _pre(str(rec.action_text))))
    if rec.observation:
        parts.append(_details("what the agent saw (observation)", _pre(str(rec.observation))))
    cls = "step error" if rec.error else "step"
    return f'<div class="{cls}" id="{esc(key)}-{n}"><div class="shot">{shot}</div><div class="text">{"".join(parts)}</div></div>'


# ----------------------------------------------------------------------------- the page


def _outside(folder: Path, inside: Inside) -> str | None:
    """The first of a trajectory's files (or its folder) that leads outside the run folder."""
    for p in (folder, folder / TRAJ_FILE, folder / META_FILE):
        if (p == folder or p.exists() or p.is_symlink()) and not inside(p):
            return p.name
    return None


def _step_or_note(traj: Trajectory, rec: StepRecord, save: SaveImage, key: str, inside: Inside, index: int) -> str:
    try:
        return step_html(traj, rec, save, key, inside, index)
    except Exception as exc:  # a forged record must cost only itself, never the page
        return f'<div class="step error"><p class="bad">record {index} unreadable: {esc(exc)}</p></div>'


def _part_html(folder: Path, episode: Path, save: SaveImage, key: str, inside: Inside = lambda p: True) -> str:
    label = part_label(folder, episode)
    outside = _outside(folder, inside)
    if outside is not None:
        return f'<section class="part"><h2>{esc(label)}</h2><p class="bad">trajectory {esc(outside)} {OUTSIDE}</p></section>'
    try:
        traj = load_trajectory(folder)
    except Exception as exc:  # unreadable or forged beyond repair (AgentlabError, OSError, a wrong type): say so
        return f'<section class="part"><h2>{esc(label)}</h2><p class="bad">trajectory unreadable: {esc(exc)}</p></section>'
    m = traj.meta
    info = " · ".join(f"{k} {esc(v)}" for k, v in (("agent", m.agent), ("env", m.env), ("model", m.model_id), ("status", m.status)) if v)
    err = f'<p class="bad">ended with: {esc(_clip(str(m.error), 2000))}</p>' if m.error else ""
    steps = "".join(_step_or_note(traj, rec, save, key, inside, i) for i, rec in enumerate(traj.steps)) \
        or '<p class="muted">no steps recorded</p>'
    return f'<section class="part"><h2>{esc(label)}</h2><p class="muted">{info} · {len(traj.steps)} record(s)</p>{err}{steps}</section>'


def _facts(row: EpisodeRow, task: str | None) -> str:
    tokens = None if row.tokens is None else f"{row.tokens} ({absent(row.tokens_in)} in, {absent(row.tokens_out)} out)"
    success = None if row.success is None else ("yes" if row.success else "no")
    facts = [("task", task), ("domain", row.domain), ("router", row.router), ("agents", ", ".join(row.agents) or None),
             ("model", row.model_id), ("seed", row.seed), ("status", row.status), ("success", success), ("score", row.score),
             ("steps", row.steps), ("model calls", row.llm_calls), ("tokens", tokens),
             ("USD", None if row.usd is None else f"{row.usd:.4f}"), ("attempt", row.attempt), ("seconds", row.seconds),
             ("harness error", row.error), ("agent error", row.agent_error)]
    return '<table class="facts">' + "".join(f"<tr><th>{k}</th><td>{absent(v)}</td></tr>" for k, v in facts) + "</table>"


def task_of(episode: Path | None, inside: Inside = lambda p: True) -> str | None:
    """The instruction, from the trajectory header (``meta.json``) or a plan episode's ``plan.json``
    (neither read when it is a link out of the run folder)."""
    for name in ("meta.json", "plan.json"):
        if episode is None or not inside(episode / name):
            continue
        try:
            raw = json.loads((episode / name).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(raw, dict) and raw.get("task"):
            return str(raw["task"])
    return None


def _plan(row: EpisodeRow, episode: Path | None, inside: Inside = lambda p: True) -> str:
    if episode is not None and (episode / "plan.json").exists():
        if not inside(episode / "plan.json"):
            return f"<h2>Plan and the hub's hand-offs</h2><p class=\"bad\">plan.json {OUTSIDE}</p>"
        try:
            return "<h2>Plan and the hub's hand-offs</h2>" + plan_html(episode)
        except (AgentlabError, OSError, ValueError) as exc:
            log.warning("%s: plan.json unreadable: %s", episode, exc)
    part = row.part(PlanPart)
    if part is None or not (part.step_outcomes or part.plan):
        return ""
    outcomes = part.step_outcomes or [{"agent": p.get("agent"), "subtask": p.get("subtask")} for p in part.plan]
    body = "".join(f"<tr><td>{i}</td><td>{absent(o.get('agent'))}</td><td>{absent(o.get('subtask'))}</td><td>{absent(o.get('status'))}</td>"
                   f"<td>{absent(o.get('steps'))}</td><td>{absent(o.get('summary'))}</td></tr>" for i, o in enumerate(outcomes, 1))
    return ("<h2>Plan and the hub's hand-offs</h2><table><tr><th>#</th><th>agent</th><th>subtask</th><th>status</th>"
            f"<th>actions</th><th>hub summary</th></tr>{body}</table>")


def verdict_html(row: EpisodeRow) -> str:
    """What the evaluator expected and found (rows since issue #29), else what the row says."""
    if row.error:
        return f'<div class="verdict fail"><h2>Verdict</h2><p>not judged: harness error: {esc(row.error)}</p></div>'
    if row.status in ("wrong_env", "no_agent", "no_plan", "unfinished"):
        why = row.agent_error or (part.plan_error if (part := row.part(PlanPart)) else None) or "the episode has no result row (the run stopped during it)"
        return f'<div class="verdict fail"><h2>Verdict</h2><p>not judged ({esc(row.status)}): {esc(why)}</p></div>'
    cls = "pass" if row.success else "fail"
    head = (f'<h2>Verdict: <span class="{"ok" if row.success else "bad"}">{"success" if row.success else "failure"}</span>'
            f" (score {absent(row.score)})</h2>")
    checks = (row.verdict or {}).get("checks")
    if not isinstance(checks, list):
        return (f'<div class="verdict {cls}">{head}<p class="muted">This row does not record what each check expected and '
                "found (rows written before issue #29).</p></div>")
    body = ""
    for c in checks:
        if not isinstance(c, dict):
            continue
        found = f'<span class="bad">error: {esc(c.get("error"))}</span>' if c.get("error") else f"<pre>{esc(_show(c.get('found')))}</pre>"
        body += (f"<tr><td>{absent(c.get('metric'))}</td><td class=\"num\">{absent(c.get('score'))}</td>"
                 f"<td><pre>{esc(_show(c.get('expected')))}</pre></td><td>{found}</td></tr>")
    return (f'<div class="verdict {cls}">{head}<table><tr><th>check</th><th>score</th><th>expected</th><th>found</th></tr>'
            f"{body}</table></div>")


def _show(v: Any) -> str:
    return v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)


def episode_body(run: RunFolder, row: EpisodeRow, save: SaveImage) -> tuple[str, str]:
    """``(task, body HTML)`` of a row's page: facts, plan, every trajectory part, the verdict."""
    episode = run.episode_dir(row)
    parts = trajectory_parts(episode) if episode is not None else []
    task = task_of(episode, run.contains)
    refused = run.refused_trajectory(row)
    where = f"<p class=\"muted\">episode folder: {esc(_relative(episode, run.path))}</p>" if episode else '<p class="muted">no episode folder recorded</p>'
    if refused:
        where = f'<p class="bad">{esc(refused)}</p>' + where
    sections = [_part_html(p, episode, save, f"p{i}", run.contains) for i, p in enumerate(parts)] if episode is not None else []
    return (str(task) if task else ""), (_facts(row, task) + where + _plan(row, episode, run.contains) + "".join(sections)
                                         + verdict_html(row))


def image_saver(folder: Path, href_prefix: str) -> SaveImage:
    """A :data:`SaveImage` writing into ``folder`` (atomically) and linking as ``href_prefix/name``."""

    def save(name: str, data: bytes) -> str:
        atomic_write_bytes(folder / name, data)
        return f"{href_prefix}/{name}"

    return save


def _relative(path: Path, root: Path) -> str:
    """``path`` inside the run folder, as the row names it (``episodes/<id>``); else in full."""
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)
