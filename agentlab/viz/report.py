"""A results report over one or more run folders (``agentlab report``), written as Markdown and HTML.

Per run: ExecutionAcc per domain and overall with its 95 % interval (:func:`agentlab.eval.variance.seed_stats`:
Wilson over the tasks for one seed; the t-interval over the seeds with pass@k / pass^k for several),
the cost per task (model calls, tokens, dollars, seconds: means over its episodes, and the totals),
the reruns and what they changed (:mod:`agentlab.record.rerun`), how episodes ended and every harness error. Across runs: what their manifests differ in (:func:`agentlab.record.manifest.differences`)
and, when two runs share everything a manifest records but the seeds or the code commit, whether the
later run reproduces the first: its ExecutionAcc lies within the first run's 95 % interval, per
domain and overall. Why that rule: the interval is what the first run claims about repeating it;
a reproduction is a repeat, so its score should fall inside.
"""

from __future__ import annotations

import logging
from collections import Counter, defaultdict
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from agentlab.errors import ConfigError, DataError
from agentlab.eval.variance import OVERALL, SeedStats, seed_stats
from agentlab.fileio import atomic_write_text
from agentlab.record.manifest import Manifest, differences
from agentlab.record.rerun import changes, summary
from agentlab.viz.document import Bullets, Document, Heading, Paragraph, Table
from agentlab.record.row import EpisodeRow
from agentlab.viz.runs import RunFolder, load_run

log = logging.getLogger(__name__)

REPORT_STEM = "report"
#: the group of rows that record no domain (rows of early versions)
NO_DOMAIN = "(no domain)"


@dataclass(frozen=True)
class Reproduction:
    """How run ``other`` compares with run ``base`` (indexes into the report's runs)."""

    base: int
    other: int
    #: every difference of the two manifests (refusing ones first, then code/packages)
    differences: list[str]
    #: ``None``: cannot tell (a manifest is missing); False: they differ in more than seeds/commit
    comparable: bool | None
    #: domain -> whether ``other``'s mean lies within ``base``'s 95 % interval (comparable runs only)
    within: dict[str, bool]


def run_stats(run: RunFolder) -> list[SeedStats]:
    """:func:`seed_stats` over the run's result rows (episodes without a row are not counted)."""
    rows = [r.to_json() | {"seed": r.seed if r.seed is not None else 0, "domain": r.domain or NO_DOMAIN} for r in run.rows if r.line]
    if not rows:
        return []
    try:
        return seed_stats(rows)
    except DataError as exc:  # a results file that mixes two runs: name the file
        raise DataError(exc.message, where=run.path / "results.jsonl") from None


def reproduction(runs: list[RunFolder], stats: list[list[SeedStats]], base: int, other: int) -> Reproduction:
    """Compare run ``other`` with run ``base`` (see the module docstring for the rule)."""
    a, b = runs[base].manifest, runs[other].manifest
    if a is None or b is None:
        return Reproduction(base, other, [], None, {})
    refusing, warning = differences(a, b)
    other_refusing, other_warning = differences(a, b.model_copy(update={"seeds": a.seeds, "git": a.git}))
    comparable = not other_refusing and not other_warning
    within: dict[str, bool] = {}
    if comparable:
        theirs = {s.domain: s for s in stats[other]}
        for s in stats[base]:
            if s.domain in theirs:
                within[s.domain] = s.ci_low - 1e-9 <= theirs[s.domain].mean <= s.ci_high + 1e-9
    return Reproduction(base, other, refusing + warning, comparable, within)


def _pct(x: float) -> str:
    return f"{100 * x:.1f}"


def _ci(s: SeedStats) -> str:
    return f"[{_pct(s.ci_low)}, {_pct(s.ci_high)}]"


def _how(s: SeedStats) -> str:
    return f"t over {s.seeds} seeds" if s.method == "t" else f"Wilson over {s.tasks} tasks"


def _mean(values: list[float | int | None], fmt: str = "{:.1f}") -> str:
    got = [v for v in values if v is not None]
    return fmt.format(sum(got) / len(got)) if got else "—"


#: dollars: to a hundredth of a cent (a small model's episode costs fractions of a cent)
USD = "{:.4f}"


def _accuracy_table(stats: list[SeedStats]) -> Table:
    k = max((max(s.pass_at, default=0) for s in stats), default=0)
    several = any(s.method == "t" for s in stats)
    heads = ["domain", "tasks", "seeds", "episodes", "ExecutionAcc %", "95 % CI", "interval"]
    if several:
        heads += [f"pass@{k}", f"pass^{k}"]
    rows = []
    for s in stats:
        row = [s.domain, str(s.tasks), str(s.seeds), str(s.episodes), _pct(s.mean),
               _ci(s), _how(s)]
        if several:
            row += [_pct(s.pass_at[k]) if k in s.pass_at else "—", _pct(s.pass_hat[k]) if k in s.pass_hat else "—"]
        rows.append(row)
    return Table(heads, rows, numeric=frozenset({1, 2, 3, 4, 7, 8}))


def _cost_table(rows: list[EpisodeRow]) -> Table:
    groups: dict[str, list[EpisodeRow]] = defaultdict(list)
    for r in rows:
        groups[r.domain or NO_DOMAIN].append(r)
    out = []
    for name, rs in [*sorted(groups.items()), (OVERALL, rows)]:
        out.append([name, str(len(rs)), _mean([r.llm_calls for r in rs]),
                    _mean([r.tokens_in for r in rs]), _mean([r.tokens_out for r in rs]), _mean([r.usd for r in rs], USD),
                    _mean([r.seconds for r in rs]), _mean([r.steps for r in rs])])
    return Table(["domain", "episodes", "model calls", "tokens in", "tokens out", "USD", "seconds", "steps"], out,
                 numeric=frozenset(range(1, 8)))


def _total_line(rows: list[EpisodeRow]) -> str:
    """What the run's result rows spent in all (rows of versions without ``usd`` count no dollars)."""
    tin, tout = sum(r.tokens_in or 0 for r in rows), sum(r.tokens_out or 0 for r in rows)
    priced = [r.usd for r in rows if r.usd is not None]
    usd = (f"{USD.format(sum(priced))} USD" + (f" ({len(rows) - len(priced)} row(s) from before prices: no USD)"
                                               if len(priced) < len(rows) else "")) if priced else "no USD recorded"
    return f"In all: {tin + tout} tokens ({tin} in, {tout} out), {usd}, over {len(rows)} episode(s)."


def _reruns(doc: Document, run: RunFolder, rows: list[EpisodeRow]) -> None:
    """How many episodes were rerun and what changed (``--rerun``, :mod:`agentlab.record.rerun`)."""
    found = changes([r.to_json() for r in rows], [h.to_json() for h in run.history])
    have = {(r.id, r.seed) for r in rows}
    pending = len({(h.id, h.seed) for h in run.history} - have)
    if not found and not pending:
        return
    doc.add(Heading("Reruns", 3), Paragraph(summary(found, pending=pending) + "."))
    if found:
        doc.add(Table(["episode", "seed", "attempt", "before", "now"],
                      [[c.id, "—" if c.seed is None else str(c.seed), str(c.attempt), c.before, c.after] for c in found],
                      numeric=frozenset({1, 2})))


def _manifest_line(m: Manifest | None, note: str | None) -> str:
    if m is None:
        return f"Manifest: {note or 'none'}; whether another run reproduces this one cannot be told."
    agents, router = m.models.get("agents", {}), m.models.get("router", {})
    commit = m.git.get("commit")
    return (f"Manifest: {m.command} made {m.created}; code {str(commit)[:10] if commit else 'outside git'}"
            f"{' (dirty tree)' if m.git.get('dirty') else ''}; model {agents.get('model_id') or '—'}; router "
            f"{router.get('kind') or m.options.get('router') or '—'}; seeds {m.seeds}; {len(m.tasks)} task file(s); "
            f"max steps {m.options.get('max_steps', '—')}.")


def _run_section(doc: Document, i: int, run: RunFolder, stats: list[SeedStats]) -> None:
    rows = [r for r in run.rows if r.line]
    doc.add(Heading(f"Run {i + 1}: {run.path}"), Paragraph(_manifest_line(run.manifest, run.manifest_note)))
    if not rows:
        doc.add(Paragraph("results.jsonl holds no rows yet."))
        return
    doc.add(Heading("ExecutionAcc per domain", 3), _accuracy_table(stats),
            Paragraph("95 % CI: Wilson score interval over the tasks for one seed; Student's t-interval over the per-seed "
                      "success rates for several (pass@k: at least one of k episodes succeeds, pass^k: all k do). "
                      "Harness errors count as failures, as in agentlab exec's execution_acc line."))
    doc.add(Heading("Cost per task (mean per episode)", 3), _cost_table(rows), Paragraph(_total_line(rows)))
    _reruns(doc, run, rows)
    statuses = Counter(r.status or "(none recorded)" for r in rows)
    doc.add(Heading("How episodes ended", 3), Table(["status", "episodes"], [[k, str(v)] for k, v in statuses.most_common()],
                                                   numeric=frozenset({1})))
    errors = [r for r in rows if r.error]
    doc.add(Heading(f"Harness errors: {len(errors)}", 3))
    if errors:
        doc.add(Bullets([f"{r.id}" + (f" (seed {r.seed})" if r.seed is not None else "") + f": {r.error[:300]}" for r in errors
                         if r.error]))
    unfinished = len(run.rows) - len(rows)
    if unfinished:
        doc.add(Paragraph(f"{unfinished} episode folder(s) have no result row (the run stopped during them); not counted."))


def _reproduction_section(doc: Document, runs: list[RunFolder], stats: list[list[SeedStats]], reps: list[Reproduction]) -> None:
    for rep in reps:
        doc.add(Heading(f"Run {rep.other + 1} against run {rep.base + 1}"))
        if rep.comparable is None:
            doc.add(Paragraph("Cannot tell: " + "; ".join(f"run {i + 1}: {runs[i].manifest_note or 'no manifest'}"
                                                         for i in (rep.base, rep.other) if runs[i].manifest is None)))
            continue
        doc.add(Paragraph("Manifests differ in:" if rep.differences else "The manifests record the same configuration."))
        if rep.differences:
            doc.add(Bullets(rep.differences))
        if not rep.comparable:
            doc.add(Paragraph("They differ in more than the seeds or the code commit, so this is a comparison, not a "
                              "reproduction."))
        base = {s.domain: s for s in stats[rep.base]}
        rows = []
        for s in stats[rep.other]:
            b = base.get(s.domain)
            verdict = ("yes" if rep.within[s.domain] else "no") if s.domain in rep.within else "—"
            rows.append([s.domain, f"{_pct(b.mean)} {_ci(b)}" if b else "—", f"{_pct(s.mean)} {_ci(s)}", verdict])
        doc.add(Table(["domain", f"run {rep.base + 1} ExecutionAcc % [95 % CI]", f"run {rep.other + 1} ExecutionAcc % [95 % CI]",
                       f"reproduces run {rep.base + 1}"], rows))
    if reps:
        doc.add(Paragraph("Reproduces: the later run's ExecutionAcc lies within the first run's 95 % interval; judged only "
                          "for runs whose manifests differ in nothing but the seeds or the code commit."))


def build_report(run_dirs: list[str | Path]) -> Document:
    """The report of ``run_dirs`` (the first is the one the others are compared with)."""
    runs = [load_run(d) for d in run_dirs]
    stats = [run_stats(r) for r in runs]
    reps = [reproduction(runs, stats, 0, i) for i in range(1, len(runs))]
    doc = Document("Run report" if len(runs) == 1 else f"Report over {len(runs)} runs")
    doc.add(Paragraph(f"Made {datetime.now(timezone.utc).isoformat(timespec='seconds')} by agentlab report."))
    heads = ["run", "folder", "tasks", "episodes", "seeds", "ExecutionAcc %", "95 % CI", "harness errors"]
    if reps:
        heads.append("reproduces run 1")
    summary = []
    for i, (run, st) in enumerate(zip(runs, stats)):
        overall = next((s for s in st if s.domain == OVERALL), None)
        rows = [r for r in run.rows if r.line]
        line = [str(i + 1), str(run.path), str(len({r.id for r in rows})), str(len(rows)), str(len(run.seeds) or "—"),
                _pct(overall.mean) if overall else "—", _ci(overall) if overall else "—", str(sum(1 for r in rows if r.error))]
        if reps:
            rep = reps[i - 1] if i else None
            line.append("(first run)" if rep is None else ("cannot tell" if rep.comparable is None else
                        "not comparable" if not rep.comparable else ("yes" if rep.within.get(OVERALL) else "no")))
        summary.append(line)
    doc.add(Heading("Summary"), Table(heads, summary, numeric=frozenset({2, 3, 4, 5, 7})))
    for i, (run, st) in enumerate(zip(runs, stats)):
        _run_section(doc, i, run, st)
    _reproduction_section(doc, runs, stats, reps)
    return doc


def report_paths(run_dirs: list[str | Path], out: str | Path | None) -> tuple[Path, Path]:
    """``(FILE.md, FILE.html)``: ``out`` without a .md/.html suffix, or ``<run>/report`` for one run."""
    if out is None:
        if len(run_dirs) != 1:
            raise ConfigError(f"{len(run_dirs)} runs: say where the report goes with --out FILE (FILE.md and FILE.html are written)")
        stem = Path(run_dirs[0]) / REPORT_STEM
    else:
        stem = Path(out)
        if stem.suffix.lower() in (".md", ".html", ".htm"):
            stem = stem.with_suffix("")
    return stem.with_name(stem.name + ".md"), stem.with_name(stem.name + ".html")


def write_report(run_dirs: list[str | Path], out: str | Path | None = None) -> tuple[Path, Path]:
    """Write the report of ``run_dirs`` as Markdown and HTML; returns both paths."""
    if not run_dirs:
        raise ConfigError("give at least one run folder")
    md, page = report_paths(run_dirs, out)
    doc = build_report(run_dirs)  # every folder is read (or refused in one line) before anything is written
    atomic_write_text(md, doc.markdown())
    atomic_write_text(page, doc.html())
    log.info("report: %s and %s", md, page)
    return md, page
