"""Manager plans for two-application requests in plain words: AgentMatch, constrained (default) vs the ablations.

Requests: ``data/benchmarks/two_app_requests.jsonl`` (written for this study; gold: the two
applications' domains). Router: the shipped AgentToken tokens (``data/tokens``) over their own
agents; manager: the embedded backbone. Variants (:mod:`agentlab.experiments.two_app_plans`):
``constrained`` (the default everywhere: plan grammar over the top-K specialists),
``unconstrained`` (``--unconstrained``: prompt only, one corrective retry),
``constrained+generalists`` (``--generalists``), ``constrained-top2`` (two candidates of
different domains), and the ``clause*`` variants (multi-application detection by clause routing,
``--clauses``: the candidates are the agents of the request's parts routed one by one;
``clause-steps``: the parts are the steps). ``--preds DIR`` keeps each variant's plans
(resumable; variants may be planned in separate processes first, then this command scores them).

    python benchmarks/two_app_plans.py [--quick] [--variants constrained,unconstrained,constrained+generalists,...]
        [--k 5] [--limit N] [--preds DIR [--score-only]] [--provenance TEXT] [--results PATH]
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path

from _common import RESULTS, ROOT, publish, summary_line, usage_error

TITLE = "Manager plans on two-application requests in plain words (AgentMatch, constrained vs unconstrained)"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="2 requests")
    ap.add_argument("--requests", type=Path, default=ROOT / "data" / "benchmarks" / "two_app_requests.jsonl")
    ap.add_argument("--variants", default="constrained,unconstrained,constrained+generalists")
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--preds", type=Path, default=None, help="folder for each variant's plans (resumed)")
    ap.add_argument("--score-only", action="store_true",
                    help="plan nothing: score each variant on the requests --preds holds for it")
    ap.add_argument("--provenance", default="",
                    help="a sentence saying where stored plans came from (e.g. an earlier checkpoint), printed under the table")
    ap.add_argument("--results", type=Path, default=RESULTS / "two_app_plans.md")
    args = ap.parse_args(argv)

    from agentlab.errors import AgentlabError
    from agentlab.experiments import two_app_plans
    from agentlab.llm import load_backend
    from agentlab.metaagent.agenttoken import AgentTokenRouter
    from agentlab.paths import data_dir
    from agentlab.pool import AgentPool

    variants = [v.strip() for v in args.variants.split(",") if v.strip()]
    if unknown := [v for v in variants if v not in two_app_plans.VARIANTS]:
        return usage_error(f"unknown variant '{unknown[0]}'; choose from {', '.join(two_app_plans.VARIANTS)}")
    tokens = data_dir() / "tokens"
    try:
        full = AgentPool.from_dir()
        agents = json.loads((tokens / "tokens.json").read_text())["agents"]
        pool = full.subset([a for a in agents if a in full.names])  # the checkpoint's own agents
        router = AgentTokenRouter.load(tokens, pool, progress=False)
        reqs = two_app_plans.load_requests(args.requests, pool)
        config = two_app_plans.TwoAppConfig(variants=variants, k=args.k, limit=args.limit or (2 if args.quick else None))
        if args.preds:
            args.preds.mkdir(parents=True, exist_ok=True)
        if args.score_only and not args.preds:
            return usage_error("--score-only scores the plans in --preds; give --preds DIR")
        res = two_app_plans.run(router, load_backend(router.llm), reqs, config, preds=args.preds,
                                plan_missing=not args.score_only)
    except AgentlabError as exc:
        return usage_error(str(exc))
    try:
        source = str(args.requests.resolve().relative_to(ROOT))
    except ValueError:
        source = str(args.requests)
    body, line = res.markdown(source), summary_line(res.summary())
    if args.provenance:
        body += ["", f"Provenance of the stored plans: {args.provenance}"]
    return publish(args.results, TITLE, body, line, __file__, argv)


if __name__ == "__main__":
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    logging.getLogger("agentlab.experiments").setLevel(logging.INFO)
    logging.getLogger("agentlab.metaagent.multiapp").setLevel(logging.INFO)
    sys.exit(main())
