"""The routing table at two model sizes: what one backbone's run records, and the side-by-side report.

``benchmarks/routing.py --backbone NAME --record`` measures one backbone in its own process
(so peak memory is that backbone's): the backbone's load time and memory, the routing table
(:mod:`~agentlab.experiments.routing_table`), and how well its hidden states separate domains
(:mod:`~agentlab.experiments.backbone_probe`). :func:`record` turns that into a JSON record
(``benchmarks/results/backbones/<slug>.json``); :func:`markdown` puts the records of several
backbones side by side (``benchmarks/backbones.py`` writes ``benchmarks/results/backbones.md``).
"""

from __future__ import annotations

import logging
import resource
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from agentlab.experiments.backbone_probe import ProbeScore, score
from agentlab.experiments.fit_cost import measured
from agentlab.experiments.markdown import pct, table
from agentlab.experiments.routing_data import RoutingData
from agentlab.experiments.routing_table import RoutingTable
from agentlab.llm.config import LLMConfig
from agentlab.pool import AgentPool

log = logging.getLogger(__name__)


@dataclass
class BackboneInfo:
    """A loaded backbone: identity, size, and what loading it cost in this process."""

    name: str
    model_id: str
    fingerprint: str
    parameters: int
    hidden_size: int
    vocab_size: int
    layers: int
    load_seconds: float
    #: resident memory the load added (MiB)
    load_rss_mib: float | None


def load_measured(llm: LLMConfig) -> BackboneInfo:
    """Load (and keep, shared with the routers of this process) the backbone ``llm`` names, timed."""
    from agentlab.llm import load_local

    with measured() as m:
        backend = load_local(llm)
    model = backend.model
    return BackboneInfo(
        name=llm.model, model_id=backend.model_id, fingerprint=backend.fingerprint,
        parameters=sum(p.numel() for p in model.parameters()), hidden_size=backend.hidden_size,
        vocab_size=backend.vocab_size, layers=int(getattr(model.config, "num_hidden_layers", 0)),
        load_seconds=m.seconds, load_rss_mib=m.peak_rss_mib,
    )


def probe(pool: AgentPool, llm: LLMConfig, data: RoutingData) -> dict[str, dict[str, ProbeScore]]:
    """Nearest-centroid and linear-probe accuracy (by domain) on the backbone's AgentToken features
    (``hidden``) and on MiniLM embeddings (``minilm``), trained on ``data.train``, judged on the
    benchmark tasks (``313``) and the project set (``v2``)."""
    import torch

    from agentlab.metaagent.agenttoken import AgentTokenRouter
    from agentlab.metaagent.features import Query
    from agentlab.llm.similarity import default_encoder

    sets = {"313": data.tasks, **({"v2": data.project} if data.project else {})}
    texts = {k: [t.instruction for t in v] for k, v in sets.items()}
    gold = {k: [t.domain or "" for t in v] for k, v in sets.items()}
    t0 = time.perf_counter()
    fx = AgentTokenRouter(pool, llm, progress=False, use_cache=False).extractor
    hidden = {k: fx.features([Query(t) for t in v]).h for k, v in {"train": data.train.texts, **texts}.items()}
    enc = default_encoder()
    mini = {k: torch.from_numpy(enc.encode(v)) for k, v in {"train": data.train.texts, **texts}.items()}
    out = {
        "hidden": {k: score(hidden["train"], data.train.domains, hidden[k], gold[k]) for k in sets},
        "minilm": {k: score(mini["train"], data.train.domains, mini[k], gold[k]) for k in sets},
    }
    log.info("probe: %.0f s", time.perf_counter() - t0)
    return out


def peak_rss_mib() -> float:
    """The process's peak resident memory so far (MiB; Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def record(info: BackboneInfo, result: RoutingTable, probes: Mapping[str, Mapping[str, ProbeScore]] | None, *,
           settings: Mapping[str, Any], command: str) -> dict[str, Any]:
    """One backbone's figures as a JSON-ready record (what :func:`markdown` and the plot read)."""
    routers: dict[str, Any] = {}
    for m in result.rows:
        routers[m.router] = {
            "acc_313": m.report.accuracy, "tasks_313": m.eval_tasks,
            "acc_v2_domain": None if m.project is None else m.project.domain.accuracy,
            "acc_v2_agent": None if m.project is None or m.project.agent is None else m.project.agent.accuracy,
            "tasks_v2": None if m.project is None else m.project.domain.overall.total,
            # fit_seconds: what fit() reported (AgentToken: the head's training only, after the hidden states);
            # fit_wall_seconds: the whole fit() call measured around it (hidden states included)
            "train_examples": m.train_examples, "fit_seconds": m.fit_seconds, "fit_wall_seconds": m.cost.seconds,
            "fit_peak_rss_mib": m.cost.peak_rss_mib,
            "trainable_parameters": m.cost.trainable_parameters, "route_seconds_per_task": m.route_seconds_per_task,
        }
    return {
        "backbone": asdict(info), "command": command, "settings": dict(settings), "routers": routers,
        "probe": None if probes is None else {kind: {k: asdict(s) for k, s in v.items()} for kind, v in probes.items()},
        "peak_rss_mib": peak_rss_mib(),
    }


def _settings(recs: Sequence[Mapping[str, Any]]) -> list[str]:
    """The shared settings in words (from the records), and any that differ between backbones."""
    s = dict(recs[0].get("settings") or {})
    if not s:
        return []
    keys = sorted({k for r in recs for k in (r.get("settings") or {})})
    differ = [k for k in keys if len({str((r.get("settings") or {}).get(k)) for r in recs}) > 1]
    line = (f"Settings: {s.get('per_agent')} demonstrations per agent at most"
            f"{' plus every document' + chr(39) + 's requests' if s.get('documents') else ''} for every router; "
            f"{', '.join(x for x in s.get('subset_routers', '').split(',') if x)} on a stratified subset "
            f"({s.get('icl_per_domain')} per domain, at most 8 tasks per set as the commands say)"
            + (f", LoRA / prompt tuning trained on {s['lm_per_agent']} per agent (plus the document requests) for "
               f"{s.get('epochs')} epoch(s)" if s.get("lm_per_agent") is not None else "")
            + f"; hidden-state cache {'on' if s.get('feature_cache') else 'off'}; torch threads {s.get('torch_threads')}.")
    return [line + (f" Differing: {', '.join(differ)}." if differ else ""), ""]


def _cost(x: Mapping[str, Any]) -> str:
    seconds = x.get("fit_wall_seconds", x["fit_seconds"])
    return f"{seconds:.1f} s" + ("" if x.get("fit_peak_rss_mib") is None else f" / {x['fit_peak_rss_mib']:.0f} MiB")


def markdown(records: Sequence[Mapping[str, Any]]) -> list[str]:
    """Backbones side by side: accuracy per router on both sets, AgentToken against the embedding
    router, training time and memory, the probes, and the issue's two goals."""
    recs = sorted(records, key=lambda r: r["backbone"]["parameters"])
    names = [f"{r['backbone']['model_id']} ({r['backbone']['parameters'] / 1e6:.0f}M)" for r in recs]
    routers = list(dict.fromkeys(k for r in recs for k in r["routers"]))
    body = ["Backbones: " + "; ".join(
        f"{n}: hidden {r['backbone']['hidden_size']}, {r['backbone']['layers']} layers, vocabulary {r['backbone']['vocab_size']:,}, "
        f"weights fingerprint `{r['backbone']['fingerprint']}`" for n, r in zip(names, recs)) + ".", "",
        "Commands (one process per backbone, so memory is that backbone's):", "",
        *[f"- `{r['command']}`" for r in recs], "", *_settings(recs),
        "Routing accuracy (%): 313 OSWorld + AppAgent tasks by domain / project set (`routing_set_v2`) by domain / by agent. "
        "The embedding router reads MiniLM, not the backbone, so its accuracy is the same in every column; "
        "n in parentheses where a router was judged on a subset.", ""]
    rows = []
    for k in routers:
        cells = []
        for r in recs:
            x = r["routers"].get(k)
            cells.append("-" if x is None else f"{pct(x['acc_313'])} / {pct(x['acc_v2_domain'])} / {pct(x['acc_v2_agent'])}"
                         + (f" (n={x['tasks_313']}/{x['tasks_v2']})" if x["tasks_313"] != recs[0]["routers"].get("agenttoken", x)["tasks_313"] else ""))
        rows.append([k, *cells])
    body += table(["router", *names], rows)
    body += ["", "Training cost per router: wall time of the whole `fit()` (hidden states of every training example "
             "included: the feature cache was off), s / peak resident-memory growth during the fit, MiB. The backbone is "
             "loaded before the first fit; torch threads as in the settings.", ""]
    body += table(["router", *names], [[k, *("-" if (x := r["routers"].get(k)) is None else _cost(x) for r in recs)]
                                       for k in routers])
    if "icl" in routers:
        body += ["", "ICL trains nothing (its fit stores the documents); its cost is the long prompt at routing time "
                 "(route s/task in the per-backbone tables)."]
    body += ["", *table(["backbone", "load s", "load RSS MiB", "process peak RSS MiB"], [
        [n, f"{r['backbone']['load_seconds']:.1f}", "-" if r["backbone"]["load_rss_mib"] is None else f"{r['backbone']['load_rss_mib']:.0f}",
         f"{r['peak_rss_mib']:.0f}"] for n, r in zip(names, recs)])]
    if all(r.get("probe") for r in recs):
        body += ["", "Do the hidden states separate domains? Classifiers fitted on the training demonstrations' features "
                 "(labelled with their agent's domain), judged by domain on the same tasks (%): nearest centroid / linear probe. "
                 "`hidden`: AgentToken's feature h (router prompt, last position, after the final norm); MiniLM: the embedding router's encoder.", ""]
        sets = list(recs[0]["probe"]["hidden"])
        prow = []
        for n, r in zip(names, recs):
            prow.append([f"{n} hidden", *(f"{pct(r['probe']['hidden'][s]['centroid'])} / {pct(r['probe']['hidden'][s]['linear'])}" for s in sets)])
        m = recs[0]["probe"]["minilm"]
        prow.append(["MiniLM (reference)", *(f"{pct(m[s]['centroid'])} / {pct(m[s]['linear'])}" for s in sets)])
        body += table(["features", *(("313 tasks" if s == "313" else "project set") for s in sets)], prow)
        if len(recs) >= 2:
            a, b = recs[0]["probe"]["hidden"], recs[-1]["probe"]["hidden"]
            deltas = ", ".join(f"{'313' if s == '313' else 'project'}: centroid {100 * (b[s]['centroid'] - a[s]['centroid']):+.1f}, "
                               f"linear {100 * (b[s]['linear'] - a[s]['linear']):+.1f}" for s in sets)
            body += ["", f"{names[-1]} against {names[0]} (points): {deltas}."]
    body += ["", *goals(recs, names)]
    return body


def goals(recs: Sequence[Mapping[str, Any]], names: Sequence[str]) -> list[str]:
    """The issue's goals, measured: AgentToken >= embedding on both sets with one backbone; best router >= 80 % on the 313."""
    lines = []
    met_any = False
    for n, r in zip(names, recs):
        at, emb = r["routers"].get("agenttoken"), r["routers"].get("embedding")
        if at is None or emb is None:
            continue
        ok313 = at["acc_313"] >= emb["acc_313"]
        okv2 = at["acc_v2_domain"] is not None and emb["acc_v2_domain"] is not None and at["acc_v2_domain"] >= emb["acc_v2_domain"]
        met_any |= ok313 and okv2
        lines.append(f"- {n}: AgentToken - embedding = {100 * (at['acc_313'] - emb['acc_313']):+.1f} points on the 313 tasks, "
                     + ("-" if at["acc_v2_domain"] is None or emb["acc_v2_domain"] is None else
                        f"{100 * (at['acc_v2_domain'] - emb['acc_v2_domain']):+.1f}") + " on the project set (domain).")
    full = [(k, x["acc_313"], n) for n, r in zip(names, recs) for k, x in r["routers"].items()
            if x["tasks_313"] == r["routers"].get("agenttoken", x)["tasks_313"]]
    best = max(full, key=lambda t: t[1]) if full else None
    head = [f"Goal 1 (AgentToken >= embedding router on both task sets with at least one backbone): **{'met' if met_any else 'not met'}**."]
    if best is not None:
        head.append(f"Goal 2 (best router >= 80 % on the 313 tasks): **{'met' if best[1] >= 0.8 else 'not met'}** "
                    f"(best: {best[0]} on {best[2]}, {pct(best[1])} %).")
    return [*head, "", *lines]


def load_records(folder: Path | None = None) -> list[dict[str, Any]]:
    """The committed per-backbone records (default ``benchmarks/results/backbones/``), smallest backbone first."""
    import json

    from agentlab.paths import REPO_ROOT

    folder = folder or REPO_ROOT / "benchmarks" / "results" / "backbones"
    recs = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(folder.glob("*.json"))]
    return sorted(recs, key=lambda r: r["backbone"]["parameters"])


def size_points(records: Sequence[Mapping[str, Any]], key: str = "acc_313",
                routers: Sequence[str] | None = None) -> tuple[dict[str, dict[str, float | None]], dict[str, int]]:
    """(router -> {backbone: accuracy}, backbone -> parameters) for :func:`agentlab.viz.backbones.accuracy_vs_size`;
    ``key``: ``acc_313``, ``acc_v2_domain`` or ``acc_v2_agent``. Routers judged on a subset are named so."""
    sizes = {r["backbone"]["model_id"]: int(r["backbone"]["parameters"]) for r in records}
    names = list(routers or dict.fromkeys(k for r in records for k in r["routers"]))
    points: dict[str, dict[str, float | None]] = {}
    for k in names:
        full = all(r["routers"].get(k) is None or r["routers"][k]["tasks_313"] == r["routers"].get("agenttoken", r["routers"][k])["tasks_313"]
                   for r in records)
        label = k if full else f"{k} (subset)"
        points[label] = {r["backbone"]["model_id"]: (None if (x := r["routers"].get(k)) is None else x.get(key)) for r in records}
    return points, sizes
