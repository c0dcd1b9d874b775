"""Table-4 analog: routing accuracy of AgentToken, the hybrid and every baseline on both task sets, same backbone and data.

Test tasks: OSWorld single-app (268) and AppAgent (45), judged by domain (the chosen
agent's domain must equal the task's; ``agentlab.eval.metrics.routing_accuracy``): their
gold *agent* is unknown (the benchmarks label applications). The project's own set
(``data/benchmarks/routing_set_v2.jsonl``, 134 tasks written for this workbench) is judged by
domain and by agent (``agent_accuracy``), with the CLI/GUI confusion.
Training data: the pool's demonstrations plus the self-instruct data in ``data/demos``
(``load_training_set``), capped at ``--per-agent`` per agent, plus each document's requests
(``--documents``, :mod:`agentlab.metaagent.augment`), so every router sees the identical set --
never benchmark tasks (exact overlaps abort the run).

Routers (each ``route()``, i.e. what ``agentlab route`` would answer): every learned router of
the registry (``ROUTERS``). ICL (all documents in context) is evaluated on a stratified subset
(``--icl-per-domain``, ``--subset-routers``) because every task attends over ~7,500 prompt tokens
on CPU. The studies: :mod:`agentlab.experiments.routing_data` (the data),
:mod:`~agentlab.experiments.routing_table` (the measurement), :mod:`~agentlab.experiments.routing_report`
(the tables) and :mod:`~agentlab.experiments.router_ablation` (``--ablation``).

Backbone: the configured one (``AGENTLAB_LLM_*``, default SmolLM2-135M-Instruct), or ``--backbone``
(``smollm2-135m-instruct``, ``gemma3-270m`` or any local ``llm.model``). ``--record`` also writes
the run's figures as JSON (``benchmarks/results/backbones/<name>.json``: the backbone's load time
and memory, every router's accuracy and fit cost, the process's peak memory) and ``--probe`` adds
how well the backbone's hidden states separate domains (:mod:`agentlab.experiments.backbone_probe`);
``benchmarks/backbones.py`` puts the records side by side.

    python benchmarks/routing.py [--quick] [--routers agenttoken,hybrid,embedding,icl,lora,prompt]
        [--per-agent 16] [--per-domain N] [--icl-per-domain 4] [--icl-max N] [--epochs 2]
        [--lm-per-agent N] [--no-documents] [--no-project] [--backbone NAME] [--record] [--probe]
        [--no-feature-cache] [--agenttoken-preset lda] [--device-aware] [--policy open|store] [--results PATH]

``--device-aware`` routes each task among the agents of its device's platform only
(:mod:`agentlab.metaagent.device`; OSWorld: desktop, AppAgent: phone), as ``agentlab exec`` does.
``--policy store`` applies the store's decision (:mod:`agentlab.metaagent.store`), as ``agentlab
route`` does by default; ``open`` (the default here) lets every agent compete, as in the paper.

``--agenttoken-preset NAME`` trains AgentToken (alone and inside the hybrid) with
``TrainConfig.preset(NAME)``, e.g. ``lda``: rows from the shrinkage discriminant
(:mod:`agentlab.metaagent.discriminant`), chosen on held-out demonstrations
(``benchmarks/agenttoken_tuning.py --heldout``).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from _common import RESULTS, command_line, log, run_main, summary_line, usage_error, write_result

from agentlab.metaagent.router import ADAPTED_LM_ROUTERS, DECODING_ROUTERS, LEARNED_ROUTERS

if TYPE_CHECKING:
    from agentlab.llm.config import LLMConfig

TITLE = "Routing accuracy per domain (Table-4 analog)"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="1 task/domain, 4 demos/agent, 1 epoch, 6 ICL tasks")
    ap.add_argument("--routers", default=",".join(LEARNED_ROUTERS))
    ap.add_argument("--per-agent", type=int, default=None, help="training examples per agent (default 16; quick 4)")
    ap.add_argument("--per-domain", type=int, default=None, help="test tasks per domain (default all; quick 1)")
    ap.add_argument("--icl-per-domain", type=int, default=None, help="ICL test tasks per domain (default 4; quick 1)")
    ap.add_argument("--icl-max", type=int, default=None, help="at most this many ICL test tasks (quick 6)")
    ap.add_argument("--subset-routers", default="icl", help="the routers evaluated on the ICL subset (--icl-per-domain)")
    ap.add_argument("--epochs", type=int, default=None, help="LoRA / prompt-tuning epochs (default 2; quick 1)")
    ap.add_argument("--limit", type=int, default=None, help="at most this many test tasks (smoke tests)")
    ap.add_argument("--all-data", action=argparse.BooleanOptionalAction, default=None,
                    help="also train the routers that decode nothing on ALL demonstrations (default: on unless --quick)")
    ap.add_argument("--no-cache", action="store_true", help="retrain LoRA / prompt tuning even if a trained adapter is cached")
    ap.add_argument("--documents", action=argparse.BooleanOptionalAction, default=True,
                    help="add every document's requests to the training data (agentlab.metaagent.augment)")
    ap.add_argument("--project", action=argparse.BooleanOptionalAction, default=None,
                    help="also route the project's own set, by domain and by agent (default: on unless --quick)")
    ap.add_argument("--ablation", choices=["none", "table", "seed"], default="none",
                    help="also run the AgentToken ablation (agentlab.experiments.router_ablation) on the table's "
                         "training data without document requests ('table') or on the seed demonstrations ('seed')")
    ap.add_argument("--backbone", default=None,
                    help="smollm2-135m-instruct | gemma3-270m (embedded) or a local model folder / .gguf "
                         "(default: the configured llm.model)")
    ap.add_argument("--lm-per-agent", type=int, default=None,
                    help="LoRA / prompt tuning train on at most this many demonstrations per agent "
                         "(default: the same set as every router)")
    ap.add_argument("--no-feature-cache", action="store_true",
                    help="AgentToken / hybrid compute every hidden state in this run (fit times then include "
                         "the backbone's forward passes, comparable between backbones)")
    ap.add_argument("--agenttoken-preset", default=None, choices=["default", "paper", "lda"],
                    help="AgentToken's training preset (TrainConfig.preset), also inside the hybrid (default: the router's own)")
    ap.add_argument("--device-aware", action="store_true",
                    help="route each task among the agents of its device's platform only (as agentlab exec does)")
    ap.add_argument("--policy", choices=["open", "store"], default="open",
                    help="open: every agent competes (the paper's table); store: the store's decision, as agentlab route does by default")
    ap.add_argument("--record", action="store_true", help="also write benchmarks/results/backbones/<backbone>.json")
    ap.add_argument("--probe", action="store_true",
                    help="with --record: nearest-centroid and linear-probe accuracy on the backbone's hidden states")
    ap.add_argument("--results", type=Path, default=None,
                    help="results file (default routing.md; with --backbone, routing_<backbone>.md)")
    args = ap.parse_args(argv)
    q = args.quick
    per_agent = args.per_agent if args.per_agent is not None else (4 if q else 16)
    epochs = args.epochs if args.epochs is not None else (1 if q else 2)
    routers = [r.strip() for r in args.routers.split(",") if r.strip()]
    if unknown := [r for r in routers if r not in LEARNED_ROUTERS]:
        return usage_error(f"unknown router '{unknown[0]}'; choose from {', '.join(LEARNED_ROUTERS)}")

    from agentlab.errors import AgentlabError, DataError
    from agentlab.experiments import router_ablation, routing_report, routing_table
    from agentlab.experiments.routing_data import benchmark_data
    from agentlab.metaagent.data import load_training_set
    from agentlab.pool import AgentPool

    try:
        llm = backbone_config(args.backbone)
    except AgentlabError as exc:
        return usage_error(str(exc))
    slug = backbone_slug(llm)
    results = args.results or (RESULTS / (f"routing_{slug}.md" if args.backbone else "routing.md"))
    pool = AgentPool.from_dir()
    all_data = args.all_data if args.all_data is not None else not q
    try:
        data = benchmark_data(
            pool, per_agent=per_agent, per_domain=args.per_domain if args.per_domain is not None else (1 if q else None),
            limit=args.limit, documents=args.documents, project=args.project if args.project is not None else not q,
            all_data=all_data, lm_routers=[r.strip() for r in args.subset_routers.split(",") if r.strip()],
            lm_per_domain=args.icl_per_domain if args.icl_per_domain is not None else (1 if q else 4),
            lm_max=args.icl_max if args.icl_max is not None else (6 if q else None),
            lm_per_agent=-1 if args.lm_per_agent is None else args.lm_per_agent)
    except DataError as exc:  # a benchmark task verbatim in the training data
        return usage_error(str(exc))
    log(f"{len(data.tasks)} test tasks + {len(data.project)} project tasks; {len(data.train)} training examples "
        f"({per_agent} per agent at most{', plus document requests' if args.documents else ''})")
    options: dict[str, dict[str, object]] = {r: {"epochs": epochs} for r in routers if r in ADAPTED_LM_ROUTERS}
    if args.no_feature_cache:
        options.update({r: {"use_cache": False} for r in routers if r in ("agenttoken", "hybrid")})
    if args.agenttoken_preset:
        from agentlab.metaagent.train import TrainConfig

        preset = TrainConfig.preset(args.agenttoken_preset)
        if "agenttoken" in routers:
            options.setdefault("agenttoken", {})["train"] = preset
        if "hybrid" in routers:
            options.setdefault("hybrid", {})["agenttoken"] = {"calibrate": True, "train": preset}
    config = routing_table.RoutingTableConfig(
        routers=routers, router_options=options,
        retrain_adapters=args.no_cache, all_data_routers=[r for r in routers if r not in DECODING_ROUTERS] if all_data else [],
        keep_fitted=False, llm=llm, device_aware=args.device_aware, policy=args.policy)
    info = None
    if args.record:
        from agentlab.experiments.backbones import load_measured

        info = load_measured(llm)  # before the first fit, so no fit pays for the load
        log(f"backbone {info.model_id}: {info.parameters / 1e6:.0f}M parameters, loaded in {info.load_seconds:.1f} s")
    table = routing_table.run(pool, data, config)
    body = routing_report.markdown(table, data, per_agent=per_agent, epochs=epochs, documents=args.documents, pool_size=len(pool),
                                   backbone=f"{info.model_id if info else slug} (`{llm.model}`)",
                                   device_aware=args.device_aware, policy=args.policy)
    if args.ablation != "none":
        base = (load_training_set(pool, per_agent=per_agent, seed=0) if args.ablation == "table"
                else load_training_set(pool, source="seed"))
        sets = {"313": data.tasks, "project": data.project} if data.project else {"313": data.tasks}
        body += ["", *router_ablation.section(router_ablation.run(pool, base, sets), list(sets), len(base), args.ablation)]
    line = summary_line(routing_report.summary(table))
    command = command_line(__file__, argv)
    write_result(results, TITLE + (f" -- {info.model_id if info else slug}" if args.backbone else ""), body, line,
                 command=command)
    if info is not None:
        import json

        from agentlab.experiments.backbones import probe, record
        from agentlab.fileio import atomic_write_text

        probes = probe(pool, llm, data) if args.probe else None
        settings = {"per_agent": per_agent, "epochs": epochs, "documents": args.documents, "routers": routers,
                    "lm_per_agent": args.lm_per_agent, "icl_per_domain": args.icl_per_domain, "subset_routers": args.subset_routers,
                    "feature_cache": not args.no_feature_cache, "torch_threads": torch_threads(),
                    "agenttoken_preset": args.agenttoken_preset, "device_aware": args.device_aware, "policy": args.policy}
        rec = record(info, table, probes, settings=settings, command=command)
        atomic_write_text(RESULTS / "backbones" / f"{slug}.json", json.dumps(rec, indent=1) + "\n")
    print("\n".join(body))
    print(line, flush=True)
    return 0


def backbone_config(name: str | None) -> LLMConfig:
    """The LLM config ``--backbone`` names: an embedded short name, an ``embedded:`` name, a model path;
    None: the configured one."""
    from agentlab.llm.config import EMBEDDED_MODELS, LLMConfig

    if name is None:
        return LLMConfig.from_env()
    full = f"embedded:{name}"
    if full in EMBEDDED_MODELS:
        return LLMConfig(model=full)
    if name.startswith("embedded:") and name not in EMBEDDED_MODELS:
        from agentlab.errors import ConfigError

        raise ConfigError(f"--backbone: unknown embedded backbone '{name}'; choose one of "
                          f"{', '.join(m.removeprefix('embedded:') for m in EMBEDDED_MODELS)} or a model folder")
    return LLMConfig(model=name)


def backbone_slug(llm: LLMConfig) -> str:
    """A file-name-safe name for the backbone (``gemma3-270m``, or a model folder's name)."""
    name = llm.model.removeprefix("embedded:")
    return Path(name).stem if ("/" in name or name.endswith(".gguf")) else name


def torch_threads() -> int:
    import torch

    return int(torch.get_num_threads())


if __name__ == "__main__":
    run_main(main)
