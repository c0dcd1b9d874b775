"""Manager mode (hash-manager plans, not executed): AgentMatch and top-K recall on OSWorld multi-app tasks.

Gold: each ``multi_apps`` task's ``related_apps`` mapped to our domains
(``load_osworld(multi=True)``, 2-4 domains per task). Every method uses the same manager
prompt (``data/prompts/metaagent/manager.txt``, Appendix G.3 structure) on the same backbone:

- AgentToken (shipped tokens): the top-K agents by agent-token probability, only their
  documents in the manager prompt (``Router.plan``; K=5 default).
- ICL: every document in the manager prompt (the paper's ICL manager; ``ICLRouter.plan``),
  with as many demonstrations per document as fit the context (room kept for the answer
  and one retry); its top-K recall comes from the ICL answer-likelihood ranking. Documents
  are in pool order so their key/value cache is computed once for all tasks.

AgentMatch: the set of domains of the plan's agents equals the gold set. Top-K recall: the
fraction of gold domains among the top-K ranked agents' domains. SubtaskAcc needs gold
subtasks, which OSWorld's multi-app tasks do not have, so it is not reported here. The study
is :mod:`agentlab.experiments.manager_mode` (notebook 04 runs it too).

Plans are decoded inside the plan grammar by default; ``--unconstrained`` is the prompt-only ablation.

    python benchmarks/manager_mode.py [--quick] [--tasks 12] [--k 5] [--max-new-tokens 128] [--unconstrained] [--results PATH]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from _common import RESULTS, publish, run_main, summary_line, usage_error

TITLE = "Manager mode on OSWorld multi-app tasks (plans only, not executed)"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="2 tasks")
    ap.add_argument("--tasks", type=int, default=None, help="multi-app tasks, spread over the list (default 12; quick 2)")
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--max-new-tokens", type=int, default=128, help="manager answer budget (every method)")
    ap.add_argument("--methods", default="agenttoken,icl", help="router kinds")
    ap.add_argument("--unconstrained", action="store_true", help="prompt-only plans (the ablation; default: plan grammar)")
    ap.add_argument("--tokens", type=Path, default=None, help="AgentToken checkpoint (default: shipped data/tokens)")
    ap.add_argument("--results", type=Path, default=RESULTS / "manager_mode.md")
    args = ap.parse_args(argv)

    from agentlab.errors import ConfigError
    from agentlab.eval.benchmarks import load_osworld
    from agentlab.experiments import manager_mode
    from agentlab.experiments.subsets import evenly
    from agentlab.llm import load_local
    from agentlab.pool import AgentPool

    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    n = args.tasks if args.tasks is not None else (2 if args.quick else 12)
    multi = load_osworld(multi=True)
    tasks = evenly(multi, n)
    config = manager_mode.ManagerModeConfig(routers=methods, tasks=len(tasks), k=args.k, max_new_tokens=args.max_new_tokens,
                                            recall_ks=sorted({2, 3, args.k}), constrained=not args.unconstrained)
    pool = AgentPool.from_dir()
    try:
        routers = manager_mode.shipped_routers(methods, pool, args.tokens)
    except ConfigError as exc:
        return usage_error(str(exc))
    res = manager_mode.run(pool, tasks, load_local(), config, fitted=routers)
    body, line = res.markdown(of=len(multi)), summary_line(res.summary())
    return publish(args.results, TITLE, body, line, __file__, argv)


if __name__ == "__main__":
    run_main(main)
