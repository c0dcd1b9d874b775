"""Labelled demonstrations for training routers: (task text, agent) pairs from one source.

The source is the self-instruct dataset under ``data/demos/`` when it exists (a Hugging
Face ``datasets`` folder with columns ``agent, domain, text, source, round``), otherwise the
pool's own seed demonstrations. The pool defines the label space: labels index into
``TrainingSet.agents`` (the pool order), which is also the row order of AgentToken's ``W_A``.
"""

from __future__ import annotations

import logging
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from agentlab.errors import DataError
from agentlab.paths import data_dir
from agentlab.pool import AgentPool

log = logging.getLogger(__name__)

Source = Literal["all", "seed", "generated"]
REQUIRED_COLUMNS = ("agent", "text", "source")


@dataclass
class TrainingSet:
    """Parallel lists: ``texts[i]`` belongs to agent ``agents[labels[i]]`` of domain ``domains[i]``.

    ``states`` optionally holds a text rendering of the initial OS state per example (None
    where there is none); routers that cannot use states ignore it.
    """

    agents: list[str]
    texts: list[str]
    labels: list[int]
    domains: list[str]
    states: list[str | None] = field(default_factory=list)

    def __post_init__(self) -> None:
        n = len(self.texts)
        if not self.states:
            self.states = [None] * n
        if not (len(self.labels) == len(self.domains) == len(self.states) == n):
            raise DataError("training set columns have different lengths")

    def __len__(self) -> int:
        return len(self.texts)

    def counts(self) -> dict[str, int]:
        out = {a: 0 for a in self.agents}
        for y in self.labels:
            out[self.agents[y]] += 1
        return out

    def subset(self, idx: list[int]) -> TrainingSet:
        return TrainingSet(
            agents=list(self.agents),
            texts=[self.texts[i] for i in idx],
            labels=[self.labels[i] for i in idx],
            domains=[self.domains[i] for i in idx],
            states=[self.states[i] for i in idx],
        )

    def restrict(self, agents: list[str]) -> TrainingSet:
        """Only the examples of ``agents``, relabelled so ``agents`` is the new label order."""
        pos = {a: i for i, a in enumerate(agents)}
        keep = [i for i, y in enumerate(self.labels) if self.agents[y] in pos]
        return TrainingSet(
            agents=list(agents),
            texts=[self.texts[i] for i in keep],
            labels=[pos[self.agents[self.labels[i]]] for i in keep],
            domains=[self.domains[i] for i in keep],
            states=[self.states[i] for i in keep],
        )

    def only(self, agent: str) -> TrainingSet:
        """The examples of one agent (labels keep indexing the full agent list)."""
        k = self.agents.index(agent)
        return self.subset([i for i, y in enumerate(self.labels) if y == k])


def default_demos_path() -> Path:
    return data_dir() / "demos"


def holds_dataset(path: Path) -> bool:
    """True when ``path`` is a saved ``datasets`` folder (a Dataset or a DatasetDict)."""
    return (path / "state.json").is_file() or (path / "dataset_dict.json").is_file()


def _read_generated(pool: AgentPool, path: Path) -> dict[str, list[str]]:
    """Generated (non-seed) rows per pool agent from a ``datasets`` folder."""
    try:
        from datasets import DatasetDict, load_from_disk

        ds = load_from_disk(str(path))
    except FileNotFoundError:
        raise DataError("demonstration dataset not found", where=path) from None
    except Exception as exc:  # datasets raises several types for a folder that is not a dataset
        raise DataError(f"not a readable datasets folder ({type(exc).__name__}: {exc})", where=path) from None
    if isinstance(ds, DatasetDict):  # use its 'train' split (or the first one)
        splits = list(ds.keys())
        ds = ds["train"] if "train" in splits else ds[splits[0]]
    missing = [c for c in REQUIRED_COLUMNS if c not in ds.column_names]
    if missing:
        raise DataError(f"dataset lacks column(s) {', '.join(missing)}", where=path)
    out: dict[str, list[str]] = {n: [] for n in pool.names}
    unknown: set[str] = set()
    for agent, text, source in zip(ds["agent"], ds["text"], ds["source"]):
        if source == "seed":
            continue  # seeds come from the documents themselves, the authoritative copy
        if agent not in out:
            unknown.add(agent)
            continue
        text = (text or "").strip()
        if text:
            out[agent].append(text)
    if unknown:
        log.warning("%s: ignoring rows of %d agent(s) not in the pool: %s", path, len(unknown), ", ".join(sorted(unknown)))
    return out


def load_training_set(
    pool: AgentPool,
    demos_path: Path | None = None,
    per_agent: int | None = None,
    source: Source = "all",
    seed: int = 0,
) -> TrainingSet:
    """Labelled demonstrations for every agent of ``pool``.

    ``demos_path`` defaults to ``data/demos`` when that folder holds a saved dataset; without a dataset only
    the documents' seed demonstrations are used (``source="generated"`` then fails).
    ``per_agent`` keeps at most that many examples per agent, seeds first, then a seeded
    random sample of generated ones, so runs with the same seed see the same data.
    An agent left with zero examples is a :class:`DataError` naming it.
    """
    if source not in ("all", "seed", "generated"):
        raise DataError(f"unknown source '{source}'; use all, seed or generated")
    if demos_path is None and holds_dataset(default_demos_path()):
        demos_path = default_demos_path()
    generated: dict[str, list[str]] = {n: [] for n in pool.names}
    if source != "seed":
        if demos_path is None:
            if source == "generated":
                raise DataError("no self-instruct dataset: data/demos does not exist; pass --demos PATH")
        else:
            generated = _read_generated(pool, Path(demos_path))
    rng = random.Random(seed)
    texts: list[str] = []
    labels: list[int] = []
    domains: list[str] = []
    where = str(demos_path) if demos_path is not None else "data/agents"
    for k, doc in enumerate(pool.agents):
        seeds = [d.text for d in doc.demonstrations] if source != "generated" else []
        seen = {s.lower() for s in seeds}
        gen = []
        for t in generated.get(doc.name, []):
            if t.lower() not in seen:
                seen.add(t.lower())
                gen.append(t)
        if per_agent is not None:
            seeds = seeds[:per_agent]
            room = max(per_agent - len(seeds), 0)
            gen = rng.sample(gen, room) if len(gen) > room else gen
        items = seeds + gen
        if not items:
            kind = "" if source == "all" else f"{source} "
            raise DataError(f"agent '{doc.name}' has no {kind}demonstrations", where=where)
        texts.extend(items)
        labels.extend([k] * len(items))
        domains.extend([doc.domain] * len(items))
    return TrainingSet(agents=pool.names, texts=texts, labels=labels, domains=domains)
