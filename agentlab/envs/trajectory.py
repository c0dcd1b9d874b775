"""Episode trajectories on disk: record every step, load them back, replay their actions.

Layout (documented in ``docs/trajectories.md``)::

    runs/<run>/<episode>/meta.json          episode header (task, env, agent, model, status)
    runs/<run>/<episode>/traj.jsonl         one StepRecord per line, appended + fsynced
    runs/<run>/<episode>/step_NNN.png       raw screenshot seen at step NNN
    runs/<run>/<episode>/step_NNN_som.png   the same with the numbered set-of-marks overlay
    runs/<run>/<episode>/step_NNN.xml       raw UI dump, when the env provides one

A step record is "what the agent saw, what it did, and what came of it": the observation
*before* the action, the action, the model's thought/reflection text, reward, done and any
error. Images are written (atomically) before the line that names them, so a crash never
leaves a record pointing at a missing file; a torn last line is dropped on load and on
resume, so an interrupted episode can be continued.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentlab.envs.actions.base import Action
from agentlab.envs.base import Element, Observation, StepResult
from agentlab.config import read_json_object
from agentlab.envs.marks import draw_marks
from agentlab.errors import ActionParseError, DataError, InvalidActionError
from agentlab.fileio import (
    append_jsonl,
    atomic_path,
    atomic_write_json,
    atomic_write_text,
    read_jsonl,
    repair_tail,
    write_jsonl,
)

if TYPE_CHECKING:  # pragma: no cover
    from PIL import Image

    from agentlab.envs.base import Env

log = logging.getLogger(__name__)

FORMAT_VERSION = 1
TRAJ_FILE = "traj.jsonl"
META_FILE = "meta.json"


@dataclass
class StepRecord:
    """One line of ``traj.jsonl``."""

    step: int
    timestamp: float
    observation: str  #: Observation.summary() of the screen the agent saw
    elements: list[Element] = field(default_factory=list)
    action: dict[str, Any] | None = None  #: Action.to_dict(); None for a final/error-only record
    action_text: str = ""  #: the raw text the action was parsed from (model output)
    thought: str = ""
    reflection: str = ""  #: exploration: what the action did; deployment: the running summary
    reward: float = 0.0
    done: bool = False
    error: str | None = None
    screenshot: str | None = None  #: file name relative to the episode folder
    som: str | None = None
    xml: str | None = None
    info: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["elements"] = [e.to_dict() for e in self.elements]
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any], where: str = "") -> StepRecord:
        step = d.get("step")
        if not isinstance(step, int) or isinstance(step, bool):  # a damaged or forged record
            raise DataError(f"not a step record (its step is {type(step).__name__}, not a whole number)", where=where)
        try:
            kwargs = {f.name: d[f.name] for f in dataclasses.fields(cls) if f.name in d}
            kwargs["elements"] = [Element.from_dict(e) for e in d.get("elements", [])]
            return cls(**kwargs)
        except (KeyError, TypeError, ValueError) as exc:
            raise DataError(f"not a step record ({exc})", where=where) from None

    def parsed_action(self) -> Action | None:
        return Action.from_dict(self.action) if self.action else None


@dataclass
class EpisodeMeta:
    """``meta.json``: what the episode was about and how it ended."""

    run: str
    episode: str
    task: str | None = None
    env: str = ""
    agent: str = ""
    model_id: str = ""
    started: float = field(default_factory=time.time)
    ended: float | None = None
    status: str = "running"  #: running | done | failed | max_steps | disconnected | interrupted
    error: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    format_version: int = FORMAT_VERSION

    @classmethod
    def from_dict(cls, d: dict[str, Any], where: str = "") -> EpisodeMeta:
        names = {f.name for f in dataclasses.fields(cls)}
        try:
            return cls(**{k: v for k, v in d.items() if k in names})
        except TypeError as exc:
            raise DataError(f"not an episode header ({exc})", where=where) from None


@dataclass
class Trajectory:
    """A loaded episode."""

    path: Path
    meta: EpisodeMeta
    steps: list[StepRecord]

    def actions(self) -> list[Action]:
        return [a for s in self.steps if (a := s.parsed_action()) is not None]

    def image(self, step: int, som: bool = False) -> Image.Image | None:
        """The step's screenshot, or None; a name leading outside the episode folder (``../``, an
        absolute path, a link out: a forged record) is never opened."""
        from PIL import Image

        rec = next((s for s in self.steps if s.step == step), None)
        name = (rec.som if som else rec.screenshot) if rec else None
        if not name:
            return None
        path = self.path / str(name)
        try:
            inside = path.resolve().is_relative_to(self.path.resolve())
        except (OSError, RuntimeError):
            inside = False
        if not inside:
            log.warning("%s: step %s names a screenshot outside the episode folder (%s); not opened", self.path, step, name)
            return None
        return Image.open(path) if path.exists() else None

    @property
    def final_error(self) -> str | None:
        return next((s.error for s in reversed(self.steps) if s.error), None)


@dataclass(frozen=True)
class EpisodeSummary:
    """One row of :func:`list_episodes` (for inspectors and the CLI)."""

    episode: str
    path: Path
    task: str | None
    steps: int
    status: str
    started: float


class TrajectoryRecorder:
    """Append-only writer for one episode; reopening an existing episode resumes it."""

    def __init__(
        self,
        episode_dir: str | Path,
        *,
        task: str | None = None,
        env: str = "",
        agent: str = "",
        model_id: str = "",
        extra: dict[str, Any] | None = None,
    ) -> None:
        self.path = Path(episode_dir)
        self.path.mkdir(parents=True, exist_ok=True)
        self.traj_file = self.path / TRAJ_FILE
        meta_file = self.path / META_FILE
        if meta_file.exists():
            self.meta = _read_meta(meta_file)
            self.meta.status = "running"
            if task is not None and self.meta.task not in (None, task):
                raise DataError(f"episode exists with another task ({self.meta.task!r}); use a new episode name", where=self.path)
        else:
            self.meta = EpisodeMeta(run=self.path.parent.name, episode=self.path.name, task=task, env=env,
                                    agent=agent, model_id=model_id, extra=dict(extra or {}))
        self._write_meta()
        self.steps = self._recover()

    def _recover(self) -> list[StepRecord]:
        if not self.traj_file.exists():
            return []
        repair_tail(self.traj_file)  # a torn last line (crash mid-append) is cut before appending
        rows = read_jsonl(self.traj_file)
        lines = sum(1 for ln in self.traj_file.read_bytes().split(b"\n") if ln.strip())
        if len(rows) != lines:  # a record recovered from behind a fragment: store it cleanly
            write_jsonl(self.traj_file, rows)
        return [StepRecord.from_dict(r, where=f"{self.traj_file}:{i}") for i, r in enumerate(rows, 1)]

    @property
    def next_step(self) -> int:
        return self.steps[-1].step + 1 if self.steps else 0

    def _write_meta(self) -> None:
        atomic_write_json(self.path / META_FILE, dataclasses.asdict(self.meta))

    def _save_png(self, img: Image.Image, name: str) -> str:
        with atomic_path(self.path / name, suffix=".png") as tmp:
            img.save(tmp, format="PNG", compress_level=3)
        return name

    def record(
        self,
        observation: Observation | None,
        action: Action | None = None,
        *,
        action_text: str = "",
        thought: str = "",
        reflection: str = "",
        reward: float = 0.0,
        done: bool = False,
        error: str | None = None,
        info: dict[str, Any] | None = None,
        save_images: bool = True,
    ) -> StepRecord:
        """Write one step: images first, then the JSON line that refers to them.

        ``save_images=False`` skips the PNG/XML files (e.g. for a retry on a screen that the
        previous record already saved).
        """
        n = self.next_step
        shot = som = xml = None
        if not save_images:
            pass
        elif observation is not None and observation.screenshot is not None:
            shot = self._save_png(observation.screenshot, f"step_{n:03d}.png")
            marked = draw_marks(observation.screenshot, observation.elements)
            som = self._save_png(marked, f"step_{n:03d}_som.png")
        if save_images and observation is not None and isinstance(observation.info.get("xml"), str):
            xml = f"step_{n:03d}.xml"
            atomic_write_text(self.path / xml, observation.info["xml"])
        rec = StepRecord(
            step=n,
            timestamp=observation.timestamp if observation is not None else time.time(),
            observation=observation.summary() if observation is not None else "",
            elements=list(observation.elements) if observation is not None else [],
            action=action.to_dict() if action is not None else None,
            action_text=action_text,
            thought=thought,
            reflection=reflection,
            reward=float(reward),
            done=done,
            error=error,
            screenshot=shot,
            som=som,
            xml=xml,
            info=_jsonable(info or {}),
        )
        append_jsonl(self.traj_file, rec.to_dict())
        self.steps.append(rec)
        return rec

    def finish(self, status: str, error: str | None = None, **extra: Any) -> None:
        """Mark the episode ended (``meta.json`` is rewritten atomically)."""
        self.meta.status, self.meta.error, self.meta.ended = status, error, time.time()
        self.meta.extra.update(_jsonable(extra))
        self._write_meta()


def _jsonable(d: dict[str, Any]) -> dict[str, Any]:
    """Keep what JSON can hold (env info carries images and XML we store separately)."""
    out: dict[str, Any] = {}
    for k, v in d.items():
        try:
            json.dumps(v)
        except (TypeError, ValueError):
            continue
        out[k] = v
    return out


def _read_meta(meta_file: Path) -> EpisodeMeta:
    """``meta.json``; unreadable, not UTF-8, not JSON or not an object is a :class:`DataError`."""
    raw = read_json_object(meta_file, what="episode header", error=DataError)
    return EpisodeMeta.from_dict(raw, where=str(meta_file))


def load_trajectory(episode_dir: str | Path) -> Trajectory:
    """Load an episode folder; a torn last line (crash mid-append) is ignored."""
    path = Path(episode_dir)
    traj_file = path / TRAJ_FILE
    if not traj_file.exists():
        raise DataError(f"no {TRAJ_FILE} here; is this an episode folder (runs/<run>/<episode>)?", where=path)
    meta_file = path / META_FILE
    if meta_file.exists():
        meta = _read_meta(meta_file)
    else:
        meta = EpisodeMeta(run=path.parent.name, episode=path.name, status="unknown")
    rows = read_jsonl(traj_file)  # warns when it drops a torn last line
    steps = [StepRecord.from_dict(r, where=f"{traj_file}:{i}") for i, r in enumerate(rows, 1)]
    expected = 0
    for s in steps:
        if s.step != expected:
            log.warning("%s: step %d is missing (the next recorded step is %d)", traj_file, expected, s.step)
        expected = s.step + 1
    return Trajectory(path=path, meta=meta, steps=steps)


def list_episodes(run_dir: str | Path) -> list[EpisodeSummary]:
    """Episodes of a run folder, oldest first."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise DataError("run folder not found", where=run_dir)
    out: list[EpisodeSummary] = []
    for d in sorted(p for p in run_dir.iterdir() if (p / TRAJ_FILE).exists() or (p / META_FILE).exists()):
        try:
            t = load_trajectory(d) if (d / TRAJ_FILE).exists() else None
            meta = t.meta if t else _read_meta(d / META_FILE)
        except DataError as exc:
            log.warning("skipping %s: %s", d, exc)
            continue
        out.append(EpisodeSummary(d.name, d, meta.task, len(t.steps) if t else 0, meta.status, meta.started))
    return sorted(out, key=lambda e: (e.started, e.episode))


# ----------------------------------------------------------------------------- replay

_ELEMENT_FIELDS = ("element", "source", "target")


def remap_action(action: Action, recorded: list[Element], current: Observation) -> Action:
    """Re-aim an action's element numbers at the same widgets on the current screen.

    Numbers are only meaningful on the screen they were shown on; the widget is found again
    by its stable uid (and text, then position, to break ties). Raises
    :class:`InvalidActionError` when the widget is not on the current screen.
    """
    changes: dict[str, int] = {}
    for name in _ELEMENT_FIELDS:
        n = getattr(action, name, None)
        if not isinstance(n, int) or isinstance(n, bool):
            continue
        old = next((e for e in recorded if e.id == n), None)
        if old is None:
            continue  # no record of that screen: keep the number as is
        same = [e for e in current.elements if e.uid == old.uid] or [e for e in current.elements if e.text and e.text == old.text]
        if not same:
            raise InvalidActionError(f"element {n} ({old.uid or old.text!r}) is not on the replayed screen")
        same.sort(key=lambda e: (e.text != old.text, abs(e.center[0] - old.center[0]) + abs(e.center[1] - old.center[1])))
        changes[name] = same[0].id
    return dataclasses.replace(action, **changes) if changes else action


def replay(
    traj: Trajectory,
    env: Env,
    *,
    recorder: TrajectoryRecorder | None = None,
    remap: bool = True,
) -> list[StepResult]:
    """Reset ``env`` and re-apply the trajectory's actions in order; returns each StepResult.

    With ``remap`` (default) element numbers are re-aimed at the same widgets by uid, so
    a replay survives a list that is ordered differently. A terminal action ends the replay.
    """
    obs = env.reset(traj.meta.task)
    results: list[StepResult] = []
    for rec in traj.steps:
        try:
            action = rec.parsed_action()
        except ActionParseError as exc:
            raise DataError(f"step {rec.step}: {exc.message}", where=traj.path) from None
        if action is None:
            continue
        if remap:
            try:
                action = remap_action(action, rec.elements, obs)
            except InvalidActionError as exc:
                raise InvalidActionError(f"replay of step {rec.step} ({action.describe()}): {exc.message}", where=traj.path) from None
        result = env.step(action)
        if recorder is not None:
            recorder.record(obs, action, thought=f"replay of step {rec.step}", done=result.done)
        results.append(result)
        obs = result.observation
        if result.done:
            break
    if recorder is not None:
        recorder.record(obs, None, done=True, reflection="final screen")
        recorder.finish("done")
    return results
