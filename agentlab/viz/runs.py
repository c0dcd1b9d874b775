"""A run folder read for looking at it: its result rows, its manifest and where each episode lies.

``agentlab view`` and ``agentlab report`` read folders written by ``agentlab exec`` (and by the
experiments that reuse its runner) of every version of this project: rows of older versions lack
fields (``status``, ``tokens_in``, ``trajectory``, ``verdict``, ...), folders from before manifests
have no ``manifest.json``, and a run killed mid-write leaves a torn last line. Every row is
therefore read defensively into the class the runs write (:meth:`agentlab.record.row.EpisodeRow.load`:
absent or mistyped stays ``None``), and only what makes the folder unreadable as a run (no folder, no ``results.jsonl``, a malformed line before the last)
is a :class:`~agentlab.errors.DataError`.

A run folder may also be forged, or hold what a sandboxed program left behind: no path it records
(a row's ``trajectory``, an id, a screenshot name) and no symbolic link in it is followed out of
the folder (:meth:`RunFolder.contains`: the path with every link resolved must lie inside), so the
viewer never copies a file from elsewhere into a site. The one place outside a run folder its
rows may point to is the ``by_agent/`` folder beside an experiment's arms (``<out>/arms/<arm>/``
rows name ``../../by_agent/<agent>/episodes/<id>``, :mod:`agentlab.experiments.execution_acc`).
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from pathlib import Path

from agentlab.errors import DataError
from agentlab.fileio import read_jsonl
from agentlab.record.manifest import MANIFEST_FILE, Manifest, read_manifest
from agentlab.record.rerun import HISTORY_FILE
from agentlab.record.row import EpisodeRow

log = logging.getLogger(__name__)

#: the names agentlab.run.episode writes (not imported from there: that module pulls in every agent and env)
RESULTS_FILE = "results.jsonl"
EPISODES_DIR = "episodes"
#: an experiment's layout (agentlab.experiments.execution_acc): <out>/arms/<arm>/ rows, <out>/by_agent/ episodes
ARMS_DIR, SHARED_DIR = "arms", "by_agent"
#: files that make a folder an episode (a trajectory, its header, or a multi-agent episode's plan)
EPISODE_MARKERS = ("traj.jsonl", "meta.json", "plan.json")
_SLUG_RE = re.compile(r"[^A-Za-z0-9_.-]+")


@dataclass
class RunFolder:
    """A run folder's rows (file order), its manifest (``None``: none, or unreadable) and episodes."""

    path: Path
    rows: list[EpisodeRow]
    manifest: Manifest | None = None
    #: why the manifest is missing or unusable (shown, never fatal)
    manifest_note: str | None = None
    #: rows replaced by reruns (``history.jsonl``, :mod:`agentlab.record.rerun`), oldest first
    history: list[EpisodeRow] = field(default_factory=list)

    @property
    def seeds(self) -> list[int]:
        return sorted({r.seed for r in self.rows if r.seed is not None})

    @property
    def roots(self) -> list[Path]:
        """The folders this run's records may lead into: the run folder (links resolved) and, for
        an experiment's arm (``<out>/arms/<arm>``), the episodes it shares (``<out>/by_agent``)."""
        try:
            own = self.path.resolve()
        except (OSError, RuntimeError):
            return []
        out = [own]
        if own.parent.name == ARMS_DIR:
            out.append(own.parent.parent / SHARED_DIR)
        return out

    def contains(self, path: Path) -> bool:
        """Whether ``path``, with every symbolic link followed, lies inside :attr:`roots`; a path
        that cannot be resolved (a link loop) does not."""
        try:
            real = path.resolve()
        except (OSError, RuntimeError, ValueError):
            return False
        return any(real == root or real.is_relative_to(root) for root in self.roots)

    def refused_trajectory(self, row: EpisodeRow) -> str | None:
        """Why the row's ``trajectory`` is not followed (it leads outside the run folder), or None."""
        if row.trajectory and not self.contains(self.path / row.trajectory):
            return f"the row's trajectory path {row.trajectory!r} leads outside the run folder; it is not followed"
        return None

    def episode_dir(self, row: EpisodeRow) -> Path | None:
        """The row's episode folder: its ``trajectory`` (relative to the run folder; an experiment's
        arms point into a shared folder beside them, ``../../by_agent/<agent>/episodes/<id>``), else
        ``episodes/<id>[/seed-<s>]``; ``None`` when no episode folder is there. Only a folder that
        holds an episode's files is taken, so a row naming any other folder shows none, and only one
        inside the run folder (:meth:`contains`): an absolute path, ``..`` or a link out is refused."""
        candidates = [self.path / row.trajectory] if row.trajectory else []
        base = self.path / EPISODES_DIR / row.id
        if row.seed is not None:
            candidates.append(base / f"seed-{row.seed}")
        candidates.append(base)
        for c in candidates:
            try:
                if self.contains(c) and c.is_dir() and is_episode_dir(c):
                    return c
            except (OSError, ValueError):
                continue
        return None


def is_episode_dir(folder: Path) -> bool:
    return any((folder / m).exists() for m in EPISODE_MARKERS)


def load_run(run_dir: str | Path) -> RunFolder:
    """Read a run folder; a missing folder or ``results.jsonl`` is a :class:`DataError` saying what
    was expected. A torn last line (a run killed mid-write) is dropped with a warning, as
    everywhere in the project (:func:`agentlab.fileio.read_jsonl`)."""
    path = Path(run_dir)
    if not path.exists():
        raise DataError("run folder not found", where=path)
    if not path.is_dir():
        raise DataError("not a folder; give the run folder (agentlab exec --out DIR)", where=path)
    results = path / RESULTS_FILE
    if not results.is_file():
        raise DataError(f"no {RESULTS_FILE} here; is this a run folder written by 'agentlab exec --out'?", where=path)
    rows = [EpisodeRow.load(d, i) for i, d in enumerate(read_jsonl(results), 1)]
    manifest, note = None, None
    mpath = path / MANIFEST_FILE
    if not mpath.exists():
        note = "no manifest.json (a run from before manifests)"
    else:
        try:
            manifest = read_manifest(mpath)
        except (DataError, OSError) as exc:
            note = f"manifest.json unreadable: {exc}"
            log.warning("%s", note)
    folder = RunFolder(path=path, rows=rows, manifest=manifest, manifest_note=note, history=_history(path))
    folder.rows += _unfinished(folder)
    return folder


def _history(path: Path) -> list[EpisodeRow]:
    """The rows reruns replaced; an unreadable history is a warning, never fatal (the results stand)."""
    hist = path / HISTORY_FILE
    if not hist.is_file():
        return []
    try:
        return [EpisodeRow.load(d, i) for i, d in enumerate(read_jsonl(hist), 1)]
    except (DataError, OSError) as exc:
        log.warning("%s: history unreadable (%s); reruns are shown without it", hist, exc)
        return []


def _unfinished(run: RunFolder) -> list[EpisodeRow]:
    """Episode folders under ``episodes/`` that no row names: episodes a killed run left behind."""
    top = run.path / EPISODES_DIR
    if not top.is_dir():
        return []
    named = {d.resolve() for r in run.rows if (d := run.episode_dir(r)) is not None}
    out = []
    for task in sorted(p for p in top.iterdir() if p.is_dir() and run.contains(p)):
        seeded = sorted((p for p in task.glob("seed-*") if run.contains(p) and p.is_dir() and is_episode_dir(p)),
                        key=lambda p: p.name)
        for folder in seeded or ([task] if is_episode_dir(task) else []):
            if folder.resolve() in named:
                continue
            name = folder.name.removeprefix("seed-")
            seed = int(name) if folder is not task and name.removeprefix("-").isdecimal() else None
            out.append(EpisodeRow(id=task.name, line=0, status="unfinished", seed=seed,
                              trajectory=folder.relative_to(run.path).as_posix()))
    return out


def slug(text: str) -> str:
    """A file name for ``text`` (an episode id): safe characters only, never empty."""
    return _SLUG_RE.sub("_", text).strip("._") or "episode"
