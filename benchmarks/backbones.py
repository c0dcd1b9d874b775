"""Routing at two model sizes: the per-backbone records of ``benchmarks/routing.py --record`` side by side.

Each backbone is measured in its own process by ``benchmarks/routing.py --backbone NAME --record
--probe`` (same settings for every backbone), which writes ``benchmarks/results/backbones/<name>.json``.
This script measures nothing: it reads those records and writes ``benchmarks/results/backbones.md``
(accuracy per router on the 313 tasks and the project set, AgentToken against the embedding
router, training time and memory, the hidden-state probes, the issue's goals) with the command
that produced each record.

    python benchmarks/backbones.py [--records DIR] [--results PATH] [--quick]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from _common import RESULTS, command_line, summary_line, usage_error, write_result

TITLE = "Routing at two model sizes (backbones)"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="accepted for make bench; nothing to shorten (it measures nothing)")
    ap.add_argument("--records", type=Path, default=RESULTS / "backbones", help="folder of routing.py --record JSON files")
    ap.add_argument("--results", type=Path, default=RESULTS / "backbones.md")
    args = ap.parse_args(argv)
    files = sorted(args.records.glob("*.json"))
    if not files:
        return usage_error(f"{args.records}: no records; run `python benchmarks/routing.py --backbone NAME --record --probe` first")
    from agentlab.experiments.backbones import markdown

    records = [json.loads(f.read_text(encoding="utf-8")) for f in files]
    body = markdown(records)
    values: dict[str, float | None] = {}
    for rec in sorted(records, key=lambda r: r["backbone"]["parameters"]):
        slug = rec["backbone"]["name"].removeprefix("embedded:").replace("-", "_").replace(".", "_")
        for router in ("agenttoken", "embedding", "hybrid"):
            if (x := rec["routers"].get(router)) is not None:
                values[f"{slug}_{router}"] = x["acc_313"]
        if rec.get("probe"):
            values[f"{slug}_probe_linear"] = rec["probe"]["hidden"]["313"]["linear"]
    line = summary_line(values)
    write_result(args.results, TITLE, body, line, command=command_line(__file__, argv),
                 note=" (reads the records in `benchmarks/results/backbones/`; each record's own command is listed below)")
    print("\n".join(body))
    print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
