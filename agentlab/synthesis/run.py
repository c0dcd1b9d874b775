"""Running the reverse synthesis: pick combinations, word them, filter them, check them, report.

For each candidate combination of single-agent workspace tasks (different agents, seeded
order, each task used at most ``max_uses`` times) the steps are, in order, each one a possible
rejection counted in the report:

1. **collision** — the parts share a path (:func:`agentlab.synthesis.combine.collisions`);
2. **the generator's wording** — the model (SmolLM2-135M unless configured) is asked through
   ``data/prompts/synthesis/combine.txt``; its reply is rejected when it cannot be parsed, when
   it no longer names every part's target, or when its BERTScore against some part is below the
   calibrated threshold; then the **template wording** (First … Then …) goes through the same
   two filters, so every accepted task says where its instruction came from;
3. **interference** — the combined start state must score 0 and the parts' reference
   solutions, run in order in one sandboxed workspace, must score 1;
4. **leakage** — no instruction may come closer than self-instruct's leakage bound to a public
   benchmark task.

The BERTScore threshold is calibrated on the run's own combinations (:func:`calibrate`): a part
against its own combination's instruction versus against an unrelated combination's; the
threshold maximises TPR − FPR (Youden's J). The report (``REPORT.md``) and a manifest of
provenance (``manifest.json``: source, per-part scores) are written next to the tasks' folder,
since a task file has no place for them.
"""

from __future__ import annotations

import itertools
import json
import logging
import math
import random
import re
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import numpy as np
from pydantic import BaseModel, Field
from tqdm import tqdm

from agentlab.dialogue.templates import load_template
from agentlab.errors import ConfigError
from agentlab.tasks.spec import MULTI_APP_DOMAIN, ExecTask
from agentlab.synthesis.combine import Part, collisions, combine, combined_id, missing_targets, template_instruction
from agentlab.llm.base import ChatMessage, LLMBackend, SamplingParams
from agentlab.llm.similarity import SimilarityScorer

if TYPE_CHECKING:
    from agentlab.selfinstruct.leakage import LeakageFilter

log = logging.getLogger(__name__)

PROMPT = "synthesis/combine"
Source = Literal["generated", "template"]


class SynthesisConfig(BaseModel):
    """One synthesis run; every field has a CLI option."""

    pairs: int = Field(30, ge=0)
    triples: int = Field(10, ge=0)
    seed: int = 0
    #: how many accepted tasks may reuse one single-agent task (keeps the set varied)
    max_uses: int = Field(3, ge=1)
    #: candidates tried per accepted task wanted, at most, before giving up on that size
    max_tries_factor: int = Field(4, ge=1)
    #: combinations worded for the calibration, per size
    calibration_size: int = Field(16, ge=2)
    #: None: calibrate on this run's combinations
    threshold: float | None = None
    style: Literal["completion", "chat"] = "completion"
    max_new_tokens: int = 120
    #: prompts per generator call (the local model generates a batch at once)
    batch: int = Field(8, ge=1)


@dataclass(frozen=True)
class Calibration:
    """A part's BERTScore against its own combination vs against an unrelated one."""

    own: list[float]
    unrelated: list[float]
    threshold: float
    tpr: float
    fpr: float

    def describe(self) -> str:
        def q(xs: list[float]) -> str:
            a = np.asarray(xs)
            return " / ".join(f"{np.quantile(a, k):.3f}" for k in (0.05, 0.25, 0.5, 0.75, 0.95))

        return (f"| pairs | n | 5% / 25% / 50% / 75% / 95% |\n|---|---|---|\n"
                f"| part vs its own combination | {len(self.own)} | {q(self.own)} |\n"
                f"| part vs an unrelated combination | {len(self.unrelated)} | {q(self.unrelated)} |\n\n"
                f"Threshold **{self.threshold:.3f}** (max TPR − FPR): {self.tpr:.0%} of own pairs pass, "
                f"{self.fpr:.0%} of unrelated pairs would.")


def calibrate(own: list[float], unrelated: list[float]) -> Calibration:
    """The threshold that best separates ``own`` from ``unrelated`` scores (Youden's J; a tie
    goes to the lower threshold), rounded down to 4 decimals so the scores it was set at pass."""
    if not own or not unrelated:
        raise ConfigError("calibration needs own and unrelated scores; give --threshold instead")
    o, u = np.asarray(own), np.asarray(unrelated)
    best = (-2.0, 0.0, 0.0, 0.0)
    for t in np.unique(np.concatenate([o, u])):
        tpr, fpr = float((o >= t).mean()), float((u >= t).mean())
        if tpr - fpr > best[0]:
            best = (tpr - fpr, float(t), tpr, fpr)
    return Calibration(list(map(float, own)), list(map(float, unrelated)), math.floor(best[1] * 1e4) / 1e4, best[2], best[3])


def eligible_parts(tasks: list[ExecTask], agent_of: Callable[[ExecTask], str]) -> list[Part]:
    """Single-agent workspace tasks with a python or bash reference solution, with their agent."""
    return [Part(t, agent_of(t)) for t in tasks
            if t.env == "workspace" and t.plan is None and t.domain != MULTI_APP_DOMAIN
            and t.reference_solution is not None and t.reference_solution.language in ("python", "bash")]


def combinations(parts: list[Part], size: int, seed: int) -> list[list[Part]]:
    """Every combination of ``size`` parts with distinct agents, in a seeded random order (and order within)."""
    rng = random.Random(f"{seed}-{size}")
    out = [list(c) for c in itertools.combinations(parts, size) if len({p.agent for p in c}) == size]
    rng.shuffle(out)
    for c in out:
        rng.shuffle(c)
    return out


class Wording:
    """Asks the generator for one combined instruction per combination (answers cached)."""

    def __init__(self, backend: LLMBackend | None, config: SynthesisConfig) -> None:
        self.backend, self.config = backend, config
        self.template = load_template(PROMPT)
        self.cache: dict[str, str | None] = {}
        self.raw: dict[str, str] = {}  #: the model's reply as it came, for the report

    def prompt(self, parts: list[Part]) -> str:
        return self.template.render(parts="\n".join(f"{k}. {p.task.instruction}" for k, p in enumerate(parts, 1)))

    def generate(self, parts: list[Part]) -> str | None:
        """The generator's instruction, or None when its reply holds no usable line."""
        self.prefetch([parts])
        return self.cache[combined_id(parts)]

    def prefetch(self, combos: list[list[Part]]) -> None:
        """Ask for every combination not asked yet, ``batch`` prompts per model call."""
        todo = [c for c in dict((combined_id(c), c) for c in combos).values() if combined_id(c) not in self.cache]
        if self.backend is None:
            self.cache.update((combined_id(c), None) for c in todo)
            return
        for start in range(0, len(todo), self.config.batch):
            chunk = todo[start:start + self.config.batch]
            replies = self._ask([self.prompt(c) for c in chunk])
            self.raw.update((combined_id(c), r) for c, r in zip(chunk, replies))
            self.cache.update((combined_id(c), parse_reply(r)) for c, r in zip(chunk, replies))

    def _ask(self, prompts: list[str]) -> list[str]:
        assert self.backend is not None
        params = SamplingParams(max_new_tokens=self.config.max_new_tokens, seed=self.config.seed,
                                stop=() if self.config.style == "chat" else ("\n",))
        if self.config.style == "chat":
            return [self.backend.chat([ChatMessage("user", p)], params)[0] for p in prompts]
        return [out[0] for out in self.backend.complete_batch(prompts, params)]


_LABEL = re.compile(r"^\s*(?:request|task)\s*:\s*", re.I)


def parse_reply(reply: str) -> str | None:
    """The first non-empty line without a "Request:" label; None for a list item or a fragment."""
    line = next((ln.strip() for ln in reply.splitlines() if ln.strip()), "")
    line = _LABEL.sub("", line).strip().strip('"').strip()
    if len(line.split()) < 6 or re.match(r"^\d+[.)]", line) or not line.endswith((".", "!", "?")):
        return None
    return line


@dataclass
class Accepted:
    task: ExecTask
    parts: list[Part]
    source: Source
    scores: list[float]


@dataclass
class SynthesisReport:
    """What a run produced and why every other candidate was dropped."""

    config: SynthesisConfig
    calibration: Calibration | None
    threshold: float
    accepted: list[Accepted] = field(default_factory=list)
    rejected: Counter[str] = field(default_factory=Counter)
    examples: dict[str, list[str]] = field(default_factory=dict)
    candidates: int = 0

    #: what the leakage filter checked (``LeakageFilter.coverage``); empty when no filter ran
    leakage: dict[str, object] = field(default_factory=dict)

    def leakage_sentence(self) -> str:
        """Never "leakage-free" unless every public list was checked."""
        if not self.leakage:
            return "Leakage: not checked (no filter), so these tasks are not leakage-free."
        missing = self.leakage.get("missing") or []
        checked = ", ".join(str(c) for c in self.leakage.get("checked", []))  # type: ignore[attr-defined]
        if missing:
            return (f"Leakage: checked against {checked}; **not** against {', '.join(map(str, missing))} "  # type: ignore[call-overload]
                    "(not fetched: `agentlab benchmarks fetch`), so these tasks are not leakage-free.")
        return f"Leakage: checked against {checked}; leakage-free against every test list."

    def reject(self, reason: str, example: str) -> None:
        self.rejected[reason] += 1
        self.examples.setdefault(reason, [])
        if len(self.examples[reason]) < 3:
            self.examples[reason].append(example)

    def markdown(self, command: str) -> str:
        by_source = Counter(a.source for a in self.accepted)
        by_size = Counter(len(a.parts) for a in self.accepted)
        lines = [
            "# Multi-agent tasks by reverse synthesis (an OSWorld-Multi analog)", "",
            f"Produced by `{command}`.", "",
            f"{self.candidates} candidate combination(s) tried; **{len(self.accepted)} accepted** "
            f"({by_size[2]} pairs, {by_size[3]} triples): {by_source['generated']} worded by the generator, "
            f"{by_source['template']} by the template fallback.", "",
            self.leakage_sentence(), "",
            "## Rejections", "", "| reason | count | examples |", "|---|---|---|",
        ]
        for reason, n in sorted(self.rejected.items(), key=lambda kv: (-kv[1], kv[0])):
            ex = "<br>".join(e.replace("|", "\\|")[:200] for e in self.examples.get(reason, []))
            lines.append(f"| {reason} | {n} | {ex} |")
        lines += ["", "## BERTScore threshold", ""]
        lines.append(self.calibration.describe() if self.calibration else f"Given: {self.threshold:.3f}.")
        lines += ["", "## Tasks", "", "| id | agents | source | min BERTScore |", "|---|---|---|---|"]
        lines += [f"| {a.task.id} | {' → '.join(p.agent for p in a.parts)} | {a.source} | {min(a.scores):.3f} |"
                  for a in self.accepted]
        return "\n".join(lines) + "\n"

    def manifest(self) -> dict[str, object]:
        return {"threshold": self.threshold, "config": self.config.model_dump(),
                "rejected": dict(self.rejected), "leakage": self.leakage,
                "tasks": [{"id": a.task.id, "source": a.source, "parts": [p.task.id for p in a.parts],
                           "agents": [p.agent for p in a.parts], "scores": [round(s, 4) for s in a.scores]}
                          for a in self.accepted]}


def verify(task: ExecTask) -> str | None:
    """None when the start state scores 0 and the reference solution 1, else what went wrong."""
    from agentlab.envs.workspace import Workspace, WorkspaceConfig

    with tempfile.TemporaryDirectory(prefix="agentlab-synth-") as tmp, \
            Workspace(Path(tmp) / "ws", WorkspaceConfig(timeout_s=60)) as ws:
        task.prepare(ws.folder)
        if (before := task.evaluate(ws.folder).score) != 0.0:
            return f"start state scores {before:.2f}"
        assert task.reference_solution is not None
        run = ws.run_bash(task.reference_solution.code)
        if not run.ok:
            return f"reference solution failed: {run.summary(200)}"
        after = task.evaluate(ws.folder)
        return None if after.success else f"reference solution scores {after.score:.2f}"


class Synthesizer:
    """One run: calibrate (unless a threshold is given), then fill the wanted counts."""

    def __init__(self, parts: list[Part], scorer: SimilarityScorer, wording: Wording, config: SynthesisConfig,
                 leakage: LeakageFilter | None = None, check: Callable[[ExecTask], str | None] = verify) -> None:
        self.parts, self.scorer, self.wording, self.config = parts, scorer, wording, config
        self.leakage, self.check = leakage, check

    def scores(self, instruction: str, parts: list[Part]) -> list[float]:
        return [float(s) for s in self.scorer.pairs([instruction] * len(parts), [p.task.instruction for p in parts])]

    def calibrate(self, pools: dict[int, list[list[Part]]]) -> Calibration:
        """Own vs unrelated scores over the first non-colliding combinations of each size,
        both wordings (the generator's where it wrote something); the unrelated combination
        shares no part (a combination without one is left out)."""
        own: list[float] = []
        unrelated: list[float] = []
        usable = {size: [c for c in combos if not collisions(c)][: self.config.calibration_size]
                  for size, combos in pools.items()}
        everything = [c for combos in usable.values() for c in combos]
        self.wording.prefetch(everything)
        for i, combo in enumerate(everything):
            ids = {p.task.id for p in combo}
            other = next((c for c in everything[i + 1:] + everything[:i] if not {p.task.id for p in c} & ids), None)
            if other is None:
                continue
            for text in (t for t in (self.wording.generate(combo), template_instruction(combo)) if t):
                own += self.scores(text, combo)
                unrelated += self.scores(text, other)
        return calibrate(own, unrelated)

    def run(self) -> SynthesisReport:
        pools = {2: combinations(self.parts, 2, self.config.seed), 3: combinations(self.parts, 3, self.config.seed)}
        cal, threshold = None, self.config.threshold
        if threshold is None:
            cal = self.calibrate({k: v for k, v in pools.items() if v})
            threshold = cal.threshold
        report = SynthesisReport(self.config, cal, threshold,
                                 leakage=self.leakage.coverage() if self.leakage is not None else {})
        uses: Counter[str] = Counter()
        bar = tqdm(total=self.config.pairs + self.config.triples, desc="synthesized tasks", unit="task")
        for size, wanted in ((2, self.config.pairs), (3, self.config.triples)):
            got, tried = 0, 0
            for combo in self._fresh(pools[size], uses):
                if got >= wanted or tried >= wanted * self.config.max_tries_factor:
                    break
                tried += 1
                report.candidates += 1
                ahead = list(itertools.islice(self._fresh(pools[size], uses, after=combo), self.config.batch - 1))
                self.wording.prefetch([combo, *[c for c in ahead if not collisions(c)]])
                if (done := self._one(combo, report)) is not None:
                    report.accepted.append(done)
                    uses.update(p.task.id for p in combo)
                    got += 1
                    bar.update(1)
            if got < wanted:
                log.warning("only %d of %d %s-part task(s) after %d candidates", got, wanted, size, tried)
        bar.close()
        return report

    def _fresh(self, combos: list[list[Part]], uses: Counter[str], after: list[Part] | None = None) -> Iterator[list[Part]]:
        """Combinations whose parts are still below ``max_uses`` (those after ``after``, if given)."""
        start = 0 if after is None else next(i for i, c in enumerate(combos) if c is after) + 1
        for c in combos[start:]:
            if all(uses[p.task.id] < self.config.max_uses for p in c):
                yield c

    def _one(self, combo: list[Part], report: SynthesisReport) -> Accepted | None:
        name = combined_id(combo)
        if clash := collisions(combo):
            report.reject("collision", f"{name}: {clash[0]}")
            return None
        chosen: tuple[str, Source, list[float]] | None = None
        generated = self.wording.generate(combo)
        if self.wording.backend is not None and generated is None:
            report.reject("generator: reply unparseable", f"{name}: {self.wording.raw.get(name, '')[:150]!r}")
        for text, source in ((generated, "generated"), (template_instruction(combo), "template")):
            if text is None:
                continue
            if missing := missing_targets(text, combo):
                report.reject(f"{source}: a target not named", f"{name}: {missing[0]} — {text}")
                continue
            scores = self.scores(text, combo)
            if min(scores) < report.threshold:
                k = int(np.argmin(scores))
                report.reject(f"{source}: BERTScore below threshold (part {k + 1})",
                              f"{name}: {scores[k]:.3f} vs {combo[k].task.id} — {text}")
                continue
            chosen = (text, source, scores)  # type: ignore[assignment]
            break
        if chosen is None:
            return None
        task = combine(combo, chosen[0], name)
        if (why := self.check(task)) is not None:
            report.reject("interference (start 0 / reference 1 failed)", f"{name}: {why}")
            return None
        if self.leakage is not None and bool(self.leakage.check([task.instruction]).leaked[0]):
            report.reject("leakage (too close to a public benchmark task)", name)
            return None
        return Accepted(task, combo, chosen[1], chosen[2])


def write(report: SynthesisReport, out: Path, report_dir: Path, command: str) -> list[Path]:
    """Write the accepted tasks into ``out`` (replacing the previous run's files listed in the
    old manifest), then ``manifest.json`` and ``REPORT.md`` into ``report_dir``."""
    from agentlab.fileio import atomic_write_text

    out.mkdir(parents=True, exist_ok=True)
    report_dir.mkdir(parents=True, exist_ok=True)
    old = report_dir / "manifest.json"
    if old.is_file():
        for entry in json.loads(old.read_text(encoding="utf-8")).get("tasks", []):
            (out / f"{entry['id']}.json").unlink(missing_ok=True)
    written = []
    for a in report.accepted:
        path = out / f"{a.task.id}.json"
        body = {k: v for k, v in a.task.model_dump(mode="json").items() if v is not None}
        atomic_write_text(path, json.dumps(body, indent=2, ensure_ascii=False) + "\n")
        written.append(path)
    atomic_write_text(old, json.dumps(report.manifest(), indent=2) + "\n")
    atomic_write_text(report_dir / "REPORT.md", report.markdown(command))
    return written
