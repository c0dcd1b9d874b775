"""``agentlab compare RUN_A RUN_B [...]``: is B better than A, by how much, and can we tell?

Reads ``agentlab exec`` run folders (:func:`agentlab.viz.runs.load_run`), takes the first as the
baseline and compares every other with it on the tasks both ran (:mod:`agentlab.eval.paired`:
McNemar's exact test when each task has one outcome per run, a paired bootstrap of B − A always).
Writes ``compare.md``, ``compare.html`` (:class:`~agentlab.viz.document.Document`: every field
escaped) and ``compare.json`` (the same records, for scripts) into one folder, and says in one
line per pair whether B beats A.

A difference only means something when it can be put on one setting, so each pair's manifests are
compared (:func:`manifest_check`): what changes results (models, prompt templates, agent
documents, seeds, options, task files) is counted per setting and a pair differing in more than
one is flagged; the code commit and package versions are listed but not counted (a manifest only
warns about them on resume too); what is volatile (when, on which machine, resumes, where a model
lies) is ignored.
"""

from __future__ import annotations

import logging
import re
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from agentlab.errors import ConfigError, DataError
from agentlab.eval.paired import (
    NO_DOMAIN,
    BootstrapDiff,
    McNemar,
    Outcome,
    Pairing,
    mcnemar,
    pair_outcomes,
    paired_bootstrap,
)
from agentlab.eval.variance import OVERALL, SeedStats
from agentlab.fileio import atomic_write_json, atomic_write_text
from agentlab.record.manifest import LOCATION_KEYS, Manifest
from agentlab.viz.document import Bullets, Document, Heading, Paragraph, Table
from agentlab.viz.report import run_stats
from agentlab.viz.runs import RunFolder, load_run

log = logging.getLogger(__name__)

MD_FILE, HTML_FILE, JSON_FILE = "compare.md", "compare.html", "compare.json"
DEFAULT_RESAMPLES, DEFAULT_SEED = 2000, 0
#: below this many resamples the 2.5th/97.5th percentiles rest on a handful of values
MIN_RESAMPLES = 100
#: significance level of the verdict line
ALPHA = 0.05
_SLUG = re.compile(r"[^A-Za-z0-9_.-]+")


@dataclass(frozen=True)
class SettingDiff:
    """One manifest entry that differs: ``key`` names it (``option max_steps``), ``setting`` is what
    it counts as (every prompt template is one setting, "prompt templates")."""

    setting: str
    key: str
    a: str
    b: str


@dataclass(frozen=True)
class ManifestCheck:
    """How run B's manifest differs from run A's."""

    #: entries that change results
    differences: list[SettingDiff] = field(default_factory=list)
    #: code commit and packages: listed, not counted
    other: list[SettingDiff] = field(default_factory=list)
    #: why it could not be told (a run without a manifest), else None
    note: str | None = None

    @property
    def settings(self) -> list[str]:
        return sorted({d.setting for d in self.differences})

    @property
    def flagged(self) -> bool:
        return len(self.settings) > 1


@dataclass(frozen=True)
class DomainDiff:
    """ExecutionAcc of both runs on the paired tasks of one domain (and :data:`OVERALL`)."""

    domain: str
    tasks: int
    acc_a: float
    acc_b: float

    @property
    def diff(self) -> float:
        return self.acc_b - self.acc_a


@dataclass(frozen=True)
class RunSummary:
    """One run as the comparison shows it."""

    label: str
    path: str
    tasks: int
    episodes: int
    seeds: list[int]
    harness_errors: int
    stats: list[SeedStats]
    manifest_note: str | None

    @property
    def overall(self) -> SeedStats | None:
        return next((s for s in self.stats if s.domain == OVERALL), None)


@dataclass(frozen=True)
class PairResult:
    """Run ``other`` against the baseline ``base`` (indexes into :attr:`Comparison.runs`)."""

    base: int
    other: int
    pairing: Pairing
    mcnemar: McNemar | None
    bootstrap: BootstrapDiff
    domains: list[DomainDiff]
    manifest: ManifestCheck
    #: the p-value the verdict rests on (McNemar's when it applies, else the bootstrap's) and its name
    p_value: float
    test: str
    significant: bool
    verdict: str


@dataclass(frozen=True)
class Comparison:
    runs: list[RunSummary]
    pairs: list[PairResult]
    resamples: int
    seed: int


# --------------------------------------------------------------------------- manifests


def _show(value: Any) -> str:
    """A manifest value in a line: hashes cut to 8 hex digits, a model by what names it, long text cut."""
    if isinstance(value, str) and len(value) >= 32 and all(c in "0123456789abcdef" for c in value):
        return value[:8] + "…"
    if isinstance(value, dict):
        keys = [k for k in ("model_id", "kind", "base_url", "fingerprint", "sha256") if value.get(k)]
        if keys:
            return " ".join(_show(value[k]) for k in keys)
    if value is None:
        return "(none)"
    text = str(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _entries(setting: str, prefix: str, a: Mapping[str, Any], b: Mapping[str, Any]) -> list[SettingDiff]:
    return [SettingDiff(setting.format(key=k), f"{prefix} {k}", _show(a.get(k)), _show(b.get(k)))
            for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k) or (k in a) != (k in b)]


def manifest_check(a: Manifest | None, b: Manifest | None, notes: tuple[str | None, str | None] = (None, None),
                   names: tuple[str, str] = ("A", "B")) -> ManifestCheck:
    """What differs between two runs' manifests (see the module docstring for what counts);
    ``notes``: why a run has no manifest, ``names``: the runs as the page calls them."""
    if a is None or b is None:
        which = [f"{n}: {note or 'no manifest'}" for n, m, note in ((names[0], a, notes[0]), (names[1], b, notes[1])) if m is None]
        return ManifestCheck(note="; ".join(which))

    def models(m: Manifest) -> dict[str, dict[str, Any]]:
        return {role: {k: v for k, v in ident.items() if k not in LOCATION_KEYS} for role, ident in m.models.items()}

    diffs: list[SettingDiff] = []
    if a.command != b.command:
        diffs.append(SettingDiff("command", "command", a.command, b.command))
    diffs += _entries("model {key}", "model", models(a), models(b))
    diffs += _entries("prompt templates", "prompt template", a.prompts, b.prompts)
    diffs += _entries("agent documents", "agent document", a.documents, b.documents)
    if a.seeds != b.seeds:
        diffs.append(SettingDiff("seeds", "seeds", str(a.seeds), str(b.seeds)))
    diffs += _entries("option {key}", "option", a.options, b.options)
    # a task's file changed is a setting; a task only one run has is not compared at all
    shared = set(a.tasks) & set(b.tasks)
    diffs += _entries("task files", "task file", {k: a.tasks[k] for k in shared}, {k: b.tasks[k] for k in shared})
    other: list[SettingDiff] = []
    for label, ids in ((f"tasks only in {names[0]}", sorted(set(a.tasks) - shared)),
                       (f"tasks only in {names[1]}", sorted(set(b.tasks) - shared))):
        if ids:
            other.append(SettingDiff(label, label, str(len(ids)), ", ".join(ids[:3]) + (" ..." if len(ids) > 3 else "")))
    code_a, code_b = (a.git.get("commit"), a.git.get("dirty")), (b.git.get("commit"), b.git.get("dirty"))
    if code_a != code_b:
        def code(g: tuple[Any, Any]) -> str:
            return f"{_show(g[0] or 'unknown')}{' (dirty)' if g[1] else ''}"

        other.append(SettingDiff("code", "code", code(code_a), code(code_b)))
    other += _entries("packages", "package", a.packages, b.packages)
    return ManifestCheck(differences=diffs, other=other)


# --------------------------------------------------------------------------- reading and comparing


def _outcomes(run: RunFolder) -> list[Outcome]:
    """The run's judged rows as outcomes (episodes without a row are not counted; a row that
    records no success failed, as in ExecutionAcc)."""
    return [Outcome(id=r.id, seed=r.seed if r.seed is not None else 0, domain=r.domain or NO_DOMAIN,
                    success=bool(r.success), harness_error=r.harness_error) for r in run.rows if r.line]


def _labels(runs: list[RunFolder]) -> list[str]:
    names = [r.path.name or str(r.path) for r in runs]
    return [n if names.count(n) == 1 else f"{n} ({i + 1})" for i, n in enumerate(names)]


def _summary(run: RunFolder, label: str) -> RunSummary:
    rows = [r for r in run.rows if r.line]
    if not rows:
        raise DataError("no result rows; nothing to compare", where=run.path / "results.jsonl")
    return RunSummary(label=label, path=str(run.path), tasks=len({r.id for r in rows}), episodes=len(rows),
                      seeds=sorted({r.seed if r.seed is not None else 0 for r in rows}),
                      harness_errors=sum(1 for r in rows if r.harness_error), stats=run_stats(run),
                      manifest_note=run.manifest_note)


def _domains(pairing: Pairing) -> list[DomainDiff]:
    groups: dict[str, list[Any]] = defaultdict(list)
    for t in pairing.tasks:
        groups[t.domain].append(t)
    out = []
    for name, ts in [*sorted(groups.items()), (OVERALL, pairing.tasks)]:
        out.append(DomainDiff(name, len(ts), sum(t.score_a for t in ts) / len(ts), sum(t.score_b for t in ts) / len(ts)))
    return out


def _points(x: float) -> str:
    return f"{100 * x:+.1f}"


def format_p(p: float) -> str:
    return "p < 0.001" if p < 0.001 else f"p = {p:.3f}"


def verdict_line(a: str, b: str, pair: Pairing, boot: BootstrapDiff, p: float, test: str) -> str:
    """One line saying whether ``b`` beats ``a``, by how much, on what and how sure."""
    n = len(pair.tasks)
    on = f"on {n} shared task{'s' if n != 1 else ''}" + (f" ({pair.episodes} paired episodes)" if pair.episodes != n else "")
    figure = f"{_points(boot.diff)} points [{_points(boot.low)}, {_points(boot.high)}] {on} ({test} {format_p(p)})"
    if p < ALPHA and boot.diff > 0:
        return f"{b} beats {a} by {figure}"
    if p < ALPHA and boot.diff < 0:
        return f"{b} is worse than {a} by {figure}"
    return f"no significant difference between {b} and {a}: {b} − {a} = {figure}"


def compare_runs(run_dirs: list[str | Path], *, resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED) -> Comparison:
    """Read every run (each refused in one line if unreadable or empty) and compare each with the first."""
    if len(run_dirs) < 2:
        raise ConfigError(f"give at least two run folders to compare (got {len(run_dirs)})")
    if resamples < MIN_RESAMPLES:
        raise ConfigError(f"--bootstrap {resamples}: use at least {MIN_RESAMPLES} resamples for a 95 % interval")
    runs = [load_run(d) for d in run_dirs]
    labels = _labels(runs)
    summaries = [_summary(r, lab) for r, lab in zip(runs, labels)]
    base = runs[0]
    pairs = []
    for i in range(1, len(runs)):
        try:
            pairing = pair_outcomes(_outcomes(base), _outcomes(runs[i]))
        except DataError as exc:
            raise DataError(f"{labels[0]} and {labels[i]}: {exc.message}") from None
        mc = mcnemar(pairing.tasks) if pairing.one_outcome_each else None
        boot = paired_bootstrap(pairing.tasks, resamples=resamples, seed=seed, seeds_paired=pairing.seeds_paired)
        p, test = (mc.p_value, "McNemar exact") if mc is not None else (boot.p_value, "paired bootstrap")
        pairs.append(PairResult(
            base=0, other=i, pairing=pairing, mcnemar=mc, bootstrap=boot, domains=_domains(pairing),
            manifest=manifest_check(base.manifest, runs[i].manifest, (base.manifest_note, runs[i].manifest_note),
                                    (labels[0], labels[i])),
            p_value=p, test=test, significant=p < ALPHA,
            verdict=verdict_line(labels[0], labels[i], pairing, boot, p, test)))
    return Comparison(runs=summaries, pairs=pairs, resamples=resamples, seed=seed)


# --------------------------------------------------------------------------- writing


def _pct(x: float) -> str:
    return f"{100 * x:.1f}"


def _acc(s: SeedStats | None) -> str:
    return "—" if s is None else f"{_pct(s.mean)} [{_pct(s.ci_low)}, {_pct(s.ci_high)}]"


def warnings(cmp: Comparison) -> list[str]:
    """The manifest warnings of every pair (flagged pairs and pairs that cannot be told)."""
    out = []
    for p in cmp.pairs:
        a, b = cmp.runs[p.base].label, cmp.runs[p.other].label
        if p.manifest.note:
            out.append(f"{b} against {a}: what the runs differ in cannot be told ({p.manifest.note}).")
        elif p.manifest.flagged:
            out.append(f"{b} against {a}: the manifests differ in {len(p.manifest.settings)} settings "
                       f"({', '.join(p.manifest.settings)}), so the difference cannot be put on one of them.")
    return out


def _pair_section(doc: Document, cmp: Comparison, p: PairResult) -> None:
    a, b = cmp.runs[p.base].label, cmp.runs[p.other].label
    pr = p.pairing
    doc.add(Heading(f"{b} against {a}"), Paragraph(p.verdict))
    how = (f"Paired by task (both runs: seed {pr.shared_seeds[0]})" if len(pr.shared_seeds) == 1 else
           f"Paired by task and seed on seeds {', '.join(map(str, pr.shared_seeds))}" if pr.seeds_paired else
           "The runs share no seed: paired by task, each run's episodes of a task pooled")
    facts = [f"{how}; {len(pr.tasks)} task(s) compared."]
    if pr.excluded:
        shown = ", ".join(pr.excluded[:10]) + (" ..." if len(pr.excluded) > 10 else "")
        facts.append(f"{len(pr.excluded)} excluded for a harness error in either run: {shown}.")
    else:
        facts.append("None excluded for harness errors.")
    if pr.only_a or pr.only_b:
        facts.append(f"Not compared: {len(pr.only_a)} task(s) only {a} ran, {len(pr.only_b)} only {b} ran.")
    doc.add(Paragraph(" ".join(facts)))
    if p.mcnemar is not None:
        m = p.mcnemar
        doc.add(Table(["", f"{b} succeeded", f"{b} failed"],
                      [[f"{a} succeeded", str(m.both), str(m.only_a)], [f"{a} failed", str(m.only_b), str(m.neither)]],
                      numeric=frozenset({1, 2})),
                Paragraph(f"McNemar's exact test on the {m.only_a + m.only_b} discordant task(s): {format_p(m.p_value)}."))
    bs = p.bootstrap
    doc.add(Paragraph(f"Paired bootstrap over tasks{' and seeds' if pr.episodes != len(pr.tasks) else ''} "
                      f"({bs.resamples} resamples, seed {bs.seed}): {b} − {a} = {_points(bs.diff)} points, 95 % interval "
                      f"[{_points(bs.low)}, {_points(bs.high)}], {format_p(bs.p_value)}."))
    doc.add(Table(["domain", "shared tasks", f"{a} %", f"{b} %", f"{b} − {a} (points)"],
                  [[d.domain, str(d.tasks), _pct(d.acc_a), _pct(d.acc_b), _points(d.diff)] for d in p.domains],
                  numeric=frozenset({1, 2, 3, 4})))
    mc = p.manifest
    if mc.note:
        doc.add(Paragraph(f"Manifests: cannot tell ({mc.note})."))
        return
    if mc.differences:
        doc.add(Paragraph(f"Manifests differ in {len(mc.settings)} setting(s)" +
                          (" (flagged: more than the one compared)." if mc.flagged else ".")),
                Bullets([f"{d.key}: {d.a} -> {d.b}" for d in mc.differences]))
    else:
        doc.add(Paragraph("The manifests record the same configuration: the difference is run-to-run noise."))
    if mc.other:
        doc.add(Paragraph("Also differ (not counted as settings):"), Bullets([f"{d.key}: {d.a} -> {d.b}" for d in mc.other]))


def build_document(cmp: Comparison) -> Document:
    doc = Document(f"Paired comparison of {len(cmp.runs)} runs")
    doc.add(Paragraph(f"Made {datetime.now(timezone.utc).isoformat(timespec='seconds')} by agentlab compare; "
                      f"baseline: {cmp.runs[0].label}."))
    doc.add(Heading("Verdicts"), Bullets([p.verdict for p in cmp.pairs]))
    warns = warnings(cmp)
    if warns:
        doc.add(Heading("Warnings"), Bullets(warns))
    doc.add(Heading("Runs"), Table(
        ["run", "folder", "tasks", "episodes", "seeds", "harness errors", "ExecutionAcc % [95 % CI]"],
        [[r.label, r.path, str(r.tasks), str(r.episodes), ", ".join(map(str, r.seeds)), str(r.harness_errors), _acc(r.overall)]
         for r in cmp.runs], numeric=frozenset({2, 3, 5})))
    domains = sorted({s.domain for r in cmp.runs for s in r.stats if s.domain != OVERALL}) + [OVERALL]
    by_run = [{s.domain: s for s in r.stats} for r in cmp.runs]
    doc.add(Heading("ExecutionAcc per domain (every row of each run)"),
            Table(["domain", *(f"{r.label} % [95 % CI]" for r in cmp.runs)],
                  [[d, *(_acc(m.get(d)) for m in by_run)] for d in domains]),
            Paragraph("95 % CI as in agentlab report: the Wilson score interval over the tasks for a run with one seed, "
                      "Student's t over the per-seed rates for several. Harness errors count as failures here; the "
                      "paired comparisons below leave them out."))
    for p in cmp.pairs:
        _pair_section(doc, cmp, p)
    return doc


def to_json(cmp: Comparison) -> dict[str, Any]:
    """The comparison as plain JSON (the records, plus what the properties compute)."""
    out = asdict(cmp)
    for rec, p in zip(out["pairs"], cmp.pairs):
        rec["manifest"].update(settings=p.manifest.settings, flagged=p.manifest.flagged)
        rec["pairing"].update(tasks=[{"id": t.id, "domain": t.domain, "a": list(t.a), "b": list(t.b)} for t in p.pairing.tasks])
        for d, dd in zip(rec["domains"], p.domains):
            d["diff"] = dd.diff
        rec["labels"] = [cmp.runs[p.base].label, cmp.runs[p.other].label]
    return out


def default_out(run_dirs: list[str | Path]) -> Path:
    """Beside the first run, named after the runs: ``runs/a`` ``runs/b`` -> ``runs/compare-a-vs-b``."""
    first = Path(run_dirs[0])
    names = [_SLUG.sub("_", Path(d).resolve().name).strip("._") or "run" for d in run_dirs]
    name = "compare-" + "-vs-".join(names)
    if len(name) > 120:
        name = name[:100].rstrip("-_.") + f"-and-{len(names)}-runs"
    # the path as given (what the user typed comes back), unless it ends in "." or ".."
    return (first.parent if first.name not in ("", "..") else first.resolve().parent) / name


def write_compare(run_dirs: list[str | Path], out: str | Path | None = None, *, resamples: int = DEFAULT_RESAMPLES,
                  seed: int = DEFAULT_SEED) -> tuple[Comparison, Path]:
    """Compare the runs and write compare.md, compare.html and compare.json into ``out``
    (default :func:`default_out`); everything is read and computed before anything is written."""
    cmp = compare_runs(run_dirs, resamples=resamples, seed=seed)
    folder = Path(out) if out is not None else default_out(run_dirs)
    if folder.exists() and not folder.is_dir():
        raise ConfigError("--out must be a folder (compare.md, compare.html and compare.json are written into it)",
                          where=folder)
    for line in warnings(cmp):  # on the terminal too, not only in the files
        log.warning("%s", line)
    doc = build_document(cmp)
    md, page, data = doc.markdown(), doc.html(), to_json(cmp)
    folder.mkdir(parents=True, exist_ok=True)
    atomic_write_json(folder / JSON_FILE, data)
    atomic_write_text(folder / MD_FILE, md)
    atomic_write_text(folder / HTML_FILE, page)
    log.info("compare: %s", folder)
    return cmp, folder
