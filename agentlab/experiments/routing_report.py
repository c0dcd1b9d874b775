"""The Table-4 analog as Markdown and as a summary line: a routing table on the benchmark data, per domain.

Rows of :class:`~agentlab.experiments.routing_table.RoutingTable` become columns here: accuracy
per domain (in the paper's order) and per benchmark, each router's cost, the ICL prompt, and on
the project's own set domain-level / agent-level accuracy with the CLI/GUI confusion
(``benchmarks/routing.py`` writes them to ``benchmarks/results/routing.md``).
"""

from __future__ import annotations

from collections.abc import Sequence

from agentlab.eval.benchmarks import BenchmarkTask
from agentlab.experiments.markdown import pct, table
from agentlab.experiments.routing_data import RoutingData
from agentlab.experiments.routing_table import RouterMeasurement, RoutingTable

OSWORLD_ORDER = ["os", "calc", "impress", "writer", "vlc", "thunderbird", "chrome", "vscode", "gimp"]
APPAGENT_ORDER = ["maps", "x", "telegram", "temu", "youtube", "spotify", "yelp", "gmail", "clock"]
BENCHMARKS = {"osworld": "OSWorld", "appagent": "AppAgent"}


def ordered_domains(tasks: Sequence[BenchmarkTask]) -> list[str]:
    """The tasks' domains in the paper's table order, any others after them, sorted."""
    present = {t.domain or "" for t in tasks}
    domains = [d for d in OSWORLD_ORDER + APPAGENT_ORDER if d in present]
    return domains + sorted(present - set(domains))


def _cell(accuracy: float, total: int, n: int) -> str:
    return pct(accuracy) + ("" if total == n else f" ({total})")


def domain_table(rows: Sequence[RouterMeasurement], tasks: Sequence[BenchmarkTask]) -> list[str]:
    """Accuracy (%) per domain, per benchmark and overall; a cell's n in parentheses where it differs."""
    lines = []
    for d in ordered_domains(tasks):
        n = sum(t.domain == d for t in tasks)
        cells = ["-" if (s := m.report.per_domain.get(d)) is None else _cell(s.accuracy, s.total, n) for m in rows]
        lines.append([d, n, *cells])
    for bench, name in BENCHMARKS.items():
        lines.append([f"**{name}**", "", *(pct(m.by_benchmark.get(bench)) for m in rows)])
    lines.append(["**all**", "", *(f"**{pct(m.report.accuracy)}**" for m in rows)])
    return table(["domain", "n", *(m.router for m in rows)], lines)


def cost_table(rows: Sequence[RouterMeasurement]) -> list[str]:
    return table(["router", "tasks", "train examples", "fit s", "route s/task", "no agent", "warnings"], [
        [m.router, m.eval_tasks, m.train_examples, f"{m.fit_seconds:.1f}{' (cached adapter)' if m.cached else ''}",
         f"{m.route_seconds_per_task:.2f}", m.report.failures, m.warnings] for m in rows])


def project_tables(rows: Sequence[RouterMeasurement], own: Sequence[BenchmarkTask]) -> list[str]:
    """The project set: per domain, domain-level / agent-level accuracy of every router, then the CLI/GUI confusion."""
    lines = []
    for d in ordered_domains(own):
        n = sum(t.domain == d for t in own)
        cells = []
        for m in rows:
            agent = None if m.project is None else m.project.agent
            s = None if agent is None else agent.domain.per_domain.get(d)
            cells.append("-" if agent is None or s is None else
                         f"{pct(s.accuracy)} / {pct(agent.agent.per_domain[d].accuracy)}" + ("" if s.total == n else f" ({s.total})"))
        lines.append([d, n, *cells])
    lines.append(["**all**", "", *("-" if m.project is None or m.project.agent is None else
                                   f"**{pct(m.project.agent.domain.accuracy)} / {pct(m.project.agent.accuracy)}**" for m in rows)])
    confusion = []
    for m in rows:
        if m.project is None or m.project.agent is None:
            continue
        r = m.project.agent
        c = r.interface.counts
        confusion.append([m.router, r.agent.overall.total, pct(r.domain.accuracy), pct(r.accuracy), c["CLI"]["GUI"],
                          c["GUI"]["CLI"], r.interface.right_domain_wrong_interface])
    return [
        f"Project set (`data/benchmarks/routing_set_v2.jsonl`, {len(own)} tasks written for this workbench, gold agents "
        "known): accuracy (%) per domain as **domain-level / agent-level** (agent level: the chosen agent is one of the "
        "task's gold agents, e.g. SheetAgent vs CalcAgent is scored). ICL on a stratified subset (n in parentheses).",
        "",
        *table(["domain", "n", *(m.router for m in rows)], lines),
        "",
        *table(["router", "tasks", "domain %", "agent %", "gold CLI -> GUI agent", "gold GUI -> CLI agent",
                "right domain, wrong interface"], confusion),
    ]


def markdown(result: RoutingTable, data: RoutingData, *, per_agent: int | None, epochs: int, documents: bool,
             pool_size: int, backbone: str = "embedded SmolLM2-135M-Instruct", device_aware: bool = False,
             policy: str = "open") -> list[str]:
    """The results file's body: the data, the per-domain table, the costs, the ICL prompt, the project set."""
    rows, tasks = result.rows, data.tasks
    body = [
        *(["**Device-aware**: each task is routed among the agents of its device's platform only (OSWorld tasks: "
           "desktop agents; AppAgent tasks: phone agents; project tasks: their domain's platform), as `agentlab exec` "
           "routes a task file (`agentlab.metaagent.device`). Without it, every agent of the pool competes.", ""]
          if device_aware else []),
        *(["**Store policy** (`--policy store`, what `agentlab route` does by default; `agentlab.metaagent.store`): "
           "specialists first, a general agent only for a request naming two applications of one device. The "
           "project set's 10 tasks whose gold agents are generalists (AgentS2/PCAgent, AppAgent) are then mostly missed.", ""]
          if policy == "store" else []),
        f"Test tasks: {len(tasks)} ({sum(t.benchmark == 'osworld' for t in tasks)} OSWorld single-app, "
        f"{sum(t.benchmark == 'appagent' for t in tasks)} AppAgent), judged by domain. Training: "
        f"{len(data.train)} demonstrations ({per_agent} per agent at most: seeds first, then self-instruct), "
        f"identical for every router; `@all` rows use all {len(data.full) if data.full is not None else '-'} demonstrations"
        f"{' (both with every document' + chr(39) + 's requests)' if documents else ''}. "
        f"LoRA / prompt tuning: {epochs} epoch(s)"
        + ("" if data.lm_train is data.train else f" on {len(data.lm_train)} demonstrations") + f". Backbone: {backbone} (CPU).",
        "",
        "Routing accuracy (%) per domain; ICL on a stratified subset (n per cell in parentheses where it differs).",
        "",
        *domain_table(rows, tasks),
        "",
        *cost_table(rows),
    ]
    icl = next((m.icl for m in rows if m.icl is not None), None)
    if icl is not None:
        body += [
            "",
            f"ICL: {icl.prompt_tokens} prompt tokens for {pool_size} documents with {icl.demos} demonstration(s) each "
            f"(as many as fit the backbone's context with room for the task, up to the ICL router's cap). Strict `###Name###` answers naming a "
            f"pool agent: {pct(icl.strict)}%; accuracy of the answer-likelihood ranking's top-1 (`icl_rank`): "
            f"{pct(icl.rank_accuracy)}%.",
        ]
    body += [
        "",
        "fit s: wall time of `fit()` in this run, or of the original training when a cached adapter was reused. "
        "route s/task: wall time of `route()` divided by tasks. Machine shared with other jobs: times are indicative.",
    ]
    if data.project:
        body += ["", *project_tables(rows, data.project)]
    return body


def summary(result: RoutingTable) -> dict[str, float | int | str | None]:
    """Each router's accuracy (``@`` as ``_``), its project-set domain / agent accuracy, and ``icl_rank``;
    the plain routers first, in the order measured."""
    key = {m.router: m.router.replace("@", "_") for m in result.rows}
    head = {key[m.router]: m.report.accuracy for m in result.rows if "@" not in m.router}
    rest: dict[str, float | int | str | None] = {key[m.router]: m.report.accuracy for m in result.rows if "@" in m.router}
    for m in result.rows:
        if m.project is not None:
            rest[f"{key[m.router]}_v2_domain"] = m.project.domain.accuracy
            rest[f"{key[m.router]}_v2_agent"] = m.project.agent.accuracy if m.project.agent else None
    icl = next((m.icl for m in result.rows if m.icl is not None), None)
    if icl is not None:
        rest["icl_rank"] = icl.rank_accuracy
    return {**head, **rest}
