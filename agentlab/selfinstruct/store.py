"""Storage of demonstrations: a round journal for resuming, and the ``datasets`` dataset others read.

Layout of an output folder (default ``data/demos/``)::

    journal.jsonl        one line per finished (agent, round): accepted rows + scored candidates
    data-*.arrow, dataset_info.json, state.json   the demonstrations (datasets.save_to_disk)
    candidates/          every scored candidate, accepted or not (for the filter ablation)
    thresholds.json      what the filter used (contract: scorer, num_layers, tau1, tau2, leakage_tau)
    report.json / report.md

Durability: a round is committed by appending ONE fsynced JSON line to the journal, so after a
crash or Ctrl-C a round is either entirely there or entirely absent (a torn last line is
ignored). The dataset folders are views rebuilt from the journal after every round (written to a
temporary folder, then moved into place), so they can always be regenerated.

A journal can continue under changed settings (``revise``): a ``revision`` line records the new
prompt hash, generator, quality check or thresholds, refused when a band would narrow (rows
accepted before must stay inside the band of every later round). A ``remove`` line withdraws
accepted rows that a later rule rejects (a new leakage source, the quality check); the rest of an
agent's set stays valid, since a subset of a set that satisfies Algorithm 1 still does.
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentlab.dialogue.templates import same_sha
from agentlab.errors import CheckpointError, DataError
from agentlab.fileio import append_jsonl, read_jsonl

if TYPE_CHECKING:  # datasets is imported lazily: it is slow to import
    from datasets import Dataset, DatasetDict, Features

log = logging.getLogger(__name__)

JOURNAL = "journal.jsonl"
CANDIDATES = "candidates"
DEMO_COLUMNS = (
    "agent", "domain", "text", "source", "round", "generator",
    "min_score", "max_score", "mean_score", "priority", "leak_score",
)
CANDIDATE_COLUMNS = (
    "agent", "domain", "text", "round", "generator", "status", "priority", "rank",
    "min_existing", "max_existing", "mean_existing", "violating_score", "leak_score", "nearest_task",
)


#: header fields a round must match; ``--revise`` records a change of any of them
REVISABLE = ("thresholds", "prompt_sha", "generator", "prompt_style", "quality")
#: the value of a field in a journal written before the field existed
DEFAULTS: dict[str, Any] = {"quality": False}


def narrowed_bands(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """Domains (and ``global``) whose band in ``new`` does not contain the band in ``old``."""
    def bands(th: dict[str, Any]) -> dict[str, tuple[float, float]]:
        out = {"global": (float(th["tau1"]), float(th["tau2"]))}
        out.update({d: (float(b["tau1"]), float(b["tau2"])) for d, b in th.get("per_domain", {}).items()})
        return out

    o, n = bands(old), bands(new)
    return sorted(d for d, (a, b) in o.items() if d in n and (n[d][0] > a + 1e-9 or n[d][1] < b - 1e-9)) + sorted(
        d for d in o if d not in n and d != "global" and (o[d][0] < n["global"][0] or o[d][1] > n["global"][1])
    )


def seeds_hash(texts: list[str]) -> str:
    return hashlib.sha256("\n".join(texts).encode()).hexdigest()[:12]


@dataclass
class AgentState:
    """What the journal says about one agent so far."""

    agent: str
    rows: list[dict[str, Any]] = field(default_factory=list)  # generated rows, acceptance order
    candidates: list[dict[str, Any]] = field(default_factory=list)
    rounds: int = 0
    empty_streak: int = 0
    stopped: str | None = None
    parse: dict[str, int] = field(default_factory=dict)
    raw_lines: int = 0
    leaked: int = 0
    seconds: float = 0.0
    samples_dropped: dict[str, list[str]] = field(default_factory=dict)
    #: accepted rows withdrawn later, by reason (``leak``, ``quality``)
    removed: dict[str, int] = field(default_factory=dict)


class Journal:
    """Append-only record of finished rounds; the single source of truth for resuming."""

    def __init__(self, out_dir: str | Path) -> None:
        self.out_dir = Path(out_dir)
        self.path = self.out_dir / JOURNAL

    def exists(self) -> bool:
        return self.path.is_file()

    def records(self) -> list[dict[str, Any]]:
        return read_jsonl(self.path) if self.exists() else []

    def header(self) -> dict[str, Any] | None:
        """The first line, with seed hashes of agents that joined later (``header_update``) merged in."""
        recs = self.records()
        if not recs or recs[0].get("type") != "header":
            return None
        head = dict(recs[0])
        seeds = dict(head.get("seeds", {}))
        for r in recs[1:]:
            if r.get("type") == "header_update":
                seeds = {**r.get("seeds", {}), **seeds}
        head["seeds"] = seeds
        return head

    def settings(self) -> dict[str, Any] | None:
        """The header with every later ``revision`` applied: what the next round must match."""
        head = self.header()
        if head is None:
            return None
        for r in self.records()[1:]:
            if r.get("type") == "revision":
                head.update({k: r[k] for k in REVISABLE if k in r})
        return head

    def start(self, header: dict[str, Any], *, fresh: bool, revise: bool = False) -> None:
        """Begin a run: write a header, or check that the existing one matches this run.

        With ``revise``, changed settings are recorded as a ``revision`` line instead of refused,
        unless a band narrows (see :func:`narrowed_bands`).
        """
        if fresh and self.exists():
            self.path.unlink()
        old = self.settings()
        if old is None:
            if self.exists() and self.records():
                raise CheckpointError("journal has no header line; delete it or rerun with --fresh", where=self.path)
            append_jsonl(self.path, {"type": "header", **header})
            return
        changed = []
        for key in REVISABLE:
            if key == "prompt_sha" and same_sha(str(old.get(key)), str(header.get(key))):
                continue  # a 12-character hash from an older journal names the same template
            if old.get(key, DEFAULTS.get(key)) != header.get(key, DEFAULTS.get(key)):
                if not revise:
                    raise CheckpointError(
                        f"existing journal was made with a different {key} ({old.get(key)!r} vs {header.get(key)!r}); "
                        "rerun with --fresh to start over, --revise to continue under the new settings, "
                        "or pick another --out",
                        where=self.path,
                    )
                changed.append(key)
        if "thresholds" in changed:
            narrowed = narrowed_bands(old["thresholds"], header["thresholds"])
            if narrowed:
                raise CheckpointError(
                    f"--revise may only widen bands, but {', '.join(narrowed)} would narrow: rows accepted "
                    "before would leave the band; rerun with --fresh to start over",
                    where=self.path,
                )
        reseeded = [
            a for a, h in header.get("seeds", {}).items() if a in old.get("seeds", {}) and old["seeds"][a] != h
        ]
        if reseeded:
            raise CheckpointError(
                f"hand-written demonstrations of {', '.join(reseeded)} changed since this journal was started; "
                "rerun with --fresh",
                where=self.path,
            )
        new = {a: h for a, h in header.get("seeds", {}).items() if a not in old.get("seeds", {})}
        if new:
            # agents joining a resumed run: record their seed hashes
            append_jsonl(self.path, {"type": "header_update", "seeds": new})
        if changed:
            append_jsonl(self.path, {"type": "revision", "changed": changed, **{k: header.get(k) for k in changed}})
            log.warning("journal continues under changed %s (revision recorded)", ", ".join(changed))

    def commit_removal(self, agent: str, texts: list[str], reason: str) -> None:
        """Withdraw accepted rows of ``agent`` (replayed by :meth:`state`)."""
        append_jsonl(self.path, {"type": "remove", "agent": agent, "texts": texts, "reason": reason})

    def commit_round(self, record: dict[str, Any]) -> None:
        append_jsonl(self.path, {"type": "round", **record})

    def commit_stop(self, agent: str, reason: str) -> None:
        append_jsonl(self.path, {"type": "stop", "agent": agent, "reason": reason})

    def state(self) -> dict[str, AgentState]:
        """Replay the journal. Rows of a round appear once even if a round line was duplicated."""
        out: dict[str, AgentState] = {}
        seen_rounds: set[tuple[str, int]] = set()
        for rec in self.records():
            kind = rec.get("type")
            if kind == "round":
                key = (rec["agent"], int(rec["round"]))
                if key in seen_rounds:
                    continue
                seen_rounds.add(key)
                st = out.setdefault(rec["agent"], AgentState(rec["agent"]))
                st.rows.extend(rec.get("accepted", []))
                st.candidates.extend(rec.get("candidates", []))
                st.rounds = max(st.rounds, int(rec["round"]))
                st.empty_streak = int(rec.get("empty_streak", 0))
                st.raw_lines += int(rec.get("raw_lines", 0))
                st.leaked += int(rec.get("leaked", 0))
                st.seconds += float(rec.get("seconds", 0.0))
                for k, v in rec.get("parse", {}).items():
                    st.parse[k] = st.parse.get(k, 0) + int(v)
                for k, v in rec.get("samples_dropped", {}).items():
                    bucket = st.samples_dropped.setdefault(k, [])
                    bucket.extend(v[: max(0, 3 - len(bucket))])
            elif kind == "stop":
                out.setdefault(rec["agent"], AgentState(rec["agent"])).stopped = rec["reason"]
            elif kind == "remove":
                st = out.setdefault(rec["agent"], AgentState(rec["agent"]))
                gone = set(rec.get("texts", []))
                before = len(st.rows)
                st.rows = [r for r in st.rows if r["text"] not in gone]
                reason = str(rec.get("reason", "removed"))
                st.removed[reason] = st.removed.get(reason, 0) + before - len(st.rows)
                for c in st.candidates:
                    if c["text"] in gone and c.get("status") in ("accepted", "surplus"):
                        c["status"] = f"removed_{reason}"
        return out


def _save_dataset(rows: list[dict[str, Any]], columns: tuple[str, ...], target: Path) -> None:
    """``save_to_disk`` into a temp folder beside ``target``, then move its files into place.

    ``state.json`` goes last, so a reader sees either the previous complete dataset or the new one
    (and the journal can rebuild it in any case).
    """
    from datasets import Dataset

    data = {c: [r.get(c) for r in rows] for c in columns}
    ds = Dataset.from_dict(data, features=_features(columns))
    target.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".save-", dir=target))
    try:
        from datasets.utils import logging as ds_logging

        was_on = ds_logging.is_progress_bar_enabled()
        ds_logging.disable_progress_bar()  # one bar per round per dataset is noise
        try:
            ds.save_to_disk(str(tmp))
        finally:
            if was_on:
                ds_logging.enable_progress_bar()
        new = {p.name for p in tmp.iterdir()}
        for old in target.glob("data-*.arrow"):
            if old.name not in new:
                old.unlink()
        for p in sorted(tmp.iterdir(), key=lambda p: p.name == "state.json"):
            os.replace(p, target / p.name)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _features(columns: tuple[str, ...]) -> Features:
    from datasets import Features, Value

    types = {
        "round": Value("int32"),
        "rank": Value("int32"),
        "min_score": Value("float32"),
        "max_score": Value("float32"),
        "mean_score": Value("float32"),
        "priority": Value("float32"),
        "leak_score": Value("float32"),
        "min_existing": Value("float32"),
        "max_existing": Value("float32"),
        "mean_existing": Value("float32"),
        "violating_score": Value("float32"),
    }
    return Features({c: types.get(c, Value("string")) for c in columns})


def write_datasets(out_dir: Path, seed_rows: list[dict[str, Any]], states: dict[str, AgentState]) -> int:
    """Materialise the demonstrations dataset and the candidates dataset from journal state."""
    rows = list(seed_rows)
    cands: list[dict[str, Any]] = []
    order = {r["agent"]: i for i, r in enumerate(seed_rows)}
    for agent in sorted(states, key=lambda a: order.get(a, 1 << 30)):
        rows.extend(states[agent].rows)
        cands.extend(states[agent].candidates)
    rows.sort(key=lambda r: (order.get(r["agent"], 1 << 30), r["round"]))  # stable: keeps acceptance order
    _save_dataset(rows, DEMO_COLUMNS, out_dir)
    _save_dataset(cands, CANDIDATE_COLUMNS, out_dir / CANDIDATES)
    return len(rows)


def load_demos(path: str | Path | None = None) -> Dataset | DatasetDict:
    """The demonstrations dataset (default: the shipped ``data/demos``)."""
    from datasets import load_from_disk

    from agentlab.selfinstruct.config import default_out_dir

    path = Path(path) if path is not None else default_out_dir()
    if not (path / "state.json").is_file():
        raise DataError("no demonstrations dataset here (state.json missing); run `agentlab selfinstruct`", where=path)
    return load_from_disk(str(path))


def load_candidates(path: str | Path | None = None) -> Dataset | DatasetDict:
    """Every scored candidate of a run (accepted and rejected), for the filter ablation."""
    from datasets import load_from_disk

    from agentlab.selfinstruct.config import default_out_dir

    path = (Path(path) if path is not None else default_out_dir()) / CANDIDATES
    if not (path / "state.json").is_file():
        raise DataError("no candidates dataset here (state.json missing)", where=path)
    return load_from_disk(str(path))
