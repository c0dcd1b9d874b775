"""Benchmark: desktop specialists through the GUI -- raw actions, typed actions, typed actions + app skills (#40).

Desktop tasks carried out by their gold agent (``--router gt``) with the configured model
(default: the embedded SmolLM2-135M), each arm one ``agentlab exec`` run folder under ``--out``:

* ``raw``           -- ``-O route=gui -O actions=raw``: AppAgent's own action space (the raw-action ablation);
* ``typed``         -- ``-O route=gui -O actions=typed -O skills=false``: typed GUI actions under the screen's grammar;
* ``typed-skills``  -- ``-O route=gui -O actions=typed -O skills=true``: the same with the app's learned skills
  (``data/skills/<app>.json``, :mod:`agentlab.agents.gui_skills`) and its explored element documents
  (``data/docs/<app>/``, ``agentlab agent survey``) when it has them;
* ``typed-skills-nodocs`` -- the same with ``-O use_docs=false`` (the documents' ablation);
* ``typed-skills-nosave`` -- the same with ``-O save_on_end=false`` (saving left to the model: the finishing skill's ablation);
* ``typed-skills-noprior`` -- the same with ``-O skill_prior=none`` (the app's skill prior's ablation);
* ``default``       -- no options: what a desktop specialist does by default (its files first when its
  toolkit can act on them, else the GUI, typed with skills).

Per arm: ExecutionAcc with its 95 % Wilson interval, median seconds per task, mean actions, how many
typed calls were skill calls, and the route taken; per task: success in each arm. A folder whose
``results.jsonl`` holds every task is reused; one holding some is resumed (``exec --resume``).
Nothing here reads a task's evaluator: ``agentlab exec`` judges, this script reads its rows.

    python benchmarks/gui_route.py [--tasks data/tasks] [--only web-g-] [--out runs/gui_route] [--quick]
        [--arms raw,typed,typed-skills,typed-skills-nodocs,typed-skills-nosave,typed-skills-noprior,default] [--max-steps 4] [--max-new-tokens 256] [--llm-config FILE]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path

from _common import RESULTS, ROOT, per_task_table, publish, run_exec_arm, run_main, summary_line, typed_calls, usage_error

TITLE = "Desktop specialists through the GUI: raw actions, typed actions, typed actions + app skills"
ARMS: dict[str, tuple[str, ...]] = {
    "raw": ("route=gui", "actions=raw"),
    "typed": ("route=gui", "actions=typed", "skills=false"),
    "typed-skills": ("route=gui", "actions=typed", "skills=true"),
    "typed-skills-nodocs": ("route=gui", "actions=typed", "skills=true", "use_docs=false"),
    "typed-skills-nosave": ("route=gui", "actions=typed", "skills=true", "save_on_end=false"),
    "typed-skills-noprior": ("route=gui", "actions=typed", "skills=true", "skill_prior=none"),
    "default": (),
}
LABELS = {"raw": "GUI, raw actions (AppAgent's space)", "typed": "GUI, typed actions",
          "typed-skills": "GUI, typed actions + app skills (+ element documents where the app has them)",
          "typed-skills-nodocs": "GUI, typed actions + app skills, no documents",
          "typed-skills-nosave": "GUI, typed actions + app skills, the app not saved at the end (saving left to the model)",
          "typed-skills-noprior": "GUI, typed actions + app skills, no skill prior",
          "default": "default (files first, else GUI typed + skills)"}


@dataclass
class Arm:
    name: str
    rows: list[dict] = field(default_factory=list)

    @property
    def solved(self) -> int:
        return sum(1 for r in self.rows if r.get("success"))

    def calls(self, out: Path) -> tuple[int, int]:
        """(skill calls, typed calls) over this arm's trajectories."""
        infos = typed_calls(out / self.name, self.rows)
        return sum(bool(i.get("skill")) for i in infos), len(infos)

    def line(self, out: Path) -> str:
        from agentlab.eval.variance import wilson_interval

        n = len(self.rows)
        low, high = wilson_interval(self.solved, n)
        secs = [float(r.get("seconds") or 0.0) for r in self.rows]
        steps = [int(r.get("steps") or 0) for r in self.rows]
        routes: dict[str, int] = {}
        for r in self.rows:
            routes[str(r.get("route"))] = routes.get(str(r.get("route")), 0) + 1
        skills, total = self.calls(out)
        acc = self.solved / n if n else 0.0
        return (f"| {LABELS[self.name]} | {self.solved}/{n} | {acc:.2f} [{low:.2f}, {high:.2f}] | "
                f"{statistics.median(secs) if secs else 0:.1f} | {statistics.mean(steps) if steps else 0:.1f} | "
                f"{skills}/{total} | {', '.join(f'{k} {v}' for k, v in sorted(routes.items()))} |")


def run_arm(name: str, tasks: Path, ids: set[str], out: Path, args: argparse.Namespace) -> Arm:
    """Run (or reuse, or resume) one arm's ``agentlab exec`` folder."""
    return Arm(name, run_exec_arm(name, tasks, ids, out / name, ARMS[name], max_steps=args.max_steps,
                                  max_new_tokens=args.max_new_tokens, llm_config=args.llm_config))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", type=Path, default=ROOT / "data" / "tasks", help="a folder of task files (default data/tasks)")
    ap.add_argument("--only", default="", help="comma-separated id prefixes (default: every desktop task but pc-*)")
    ap.add_argument("--out", type=Path, default=ROOT / "runs" / "gui_route", help="run folder root (one exec folder per arm)")
    ap.add_argument("--arms", default=",".join(ARMS), help=f"comma-separated, of {', '.join(ARMS)}")
    ap.add_argument("--max-steps", type=int, default=4)
    ap.add_argument("--max-new-tokens", type=int, default=256)
    ap.add_argument("--llm-config", type=Path, default=None, help="YAML LLM config (default: embedded SmolLM2-135M)")
    ap.add_argument("--results", type=Path, default=RESULTS / "gui_route.md", help="the results file")
    ap.add_argument("--quick", action="store_true", help="a look, not a result: one web task, typed + skills, 1 step")
    args = ap.parse_args(argv)
    if args.quick:
        args.only, args.arms, args.max_steps = "web-g-spare-part-form", "typed-skills", 1
    arms = [a.strip() for a in args.arms.split(",") if a.strip()]
    if not arms or any(a not in ARMS for a in arms):
        return usage_error(f"--arms: choose from {', '.join(ARMS)}, got {args.arms!r}")
    if not args.tasks.is_dir():
        return usage_error(f"--tasks: no folder {args.tasks}")
    prefixes = [p for p in args.only.split(",") if p]
    files = []
    for f in sorted(args.tasks.glob("*.json")):
        raw = json.loads(f.read_text("utf-8"))
        if raw.get("env") != "desktop" or raw.get("plan"):
            continue
        if (prefixes and not any(raw["id"].startswith(p) for p in prefixes)) or (not prefixes and raw["id"].startswith("pc-")):
            continue
        files.append(f)
    if not files:
        return usage_error(f"no desktop task in {args.tasks} matches --only {args.only!r}")
    out: Path = args.out.resolve()
    tasks = out / "tasks"
    tasks.mkdir(parents=True, exist_ok=True)
    for f in files:  # the exec runs read a copy of the chosen tasks, nothing else
        if not (tasks / f.name).exists() or (tasks / f.name).read_bytes() != f.read_bytes():
            shutil.copyfile(f, tasks / f.name)
    ids = {json.loads(f.read_text("utf-8"))["id"] for f in files}
    t0 = time.perf_counter()
    results = [run_arm(a, tasks, ids, out, args) for a in arms]
    model = next((str(r.get("model_id")) for a in results for r in a.rows if r.get("model_id")), "?")
    where = out.relative_to(ROOT) if out.is_relative_to(ROOT) else out
    body = [
        f"Model: `{model}`; {len(ids)} desktop task(s) of `{args.tasks}`"
        f"{' (ids starting ' + ', '.join(prefixes) + ')' if prefixes else ''}, gold agent "
        f"(`agentlab exec --router gt --max-steps {args.max_steps} --max-new-tokens {args.max_new_tokens}`), "
        f"one episode per task and arm, the applications under a private Xvfb; run folders under `{where}`; "
        f"{time.perf_counter() - t0:.0f} s in this invocation (reused folders cost nothing).",
        "",
        "| arm | solved | ExecutionAcc [95 % Wilson] | median s / task | mean actions | skill calls / typed calls | routes |",
        "|---|---|---|---|---|---|---|",
        *[a.line(out) for a in results],
        "",
        *per_task_table(ids, [(a.name, a.rows) for a in results]),
    ]
    summary = summary_line({"tasks": len(ids), **{f"acc_{a.name}": (a.solved / len(a.rows) if a.rows else None)
                                                   for a in results}})
    return publish(args.results, TITLE, body, summary, __file__, argv)


if __name__ == "__main__":
    run_main(main)
