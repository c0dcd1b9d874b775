"""Benchmark: the phone's clock tasks with surveyed documents against AppAgent's raw-action baseline (#40).

The 7 clock tasks (``data/tasks/clock-*.json``, on the protocol-level fake phone) carried out by
their gold agent (ClockAgent, ``--router gt``) with the configured model (default: the embedded
SmolLM2-135M) under five arms, each one ``agentlab exec`` run folder under ``--out``:

* ``raw``         -- raw phone actions (AppAgent's sectioned reply), no documents: the baseline;
* ``typed``       -- typed GUI actions under the screen's grammar, no documents, no skills;
* ``typed-docs``  -- typed GUI actions with the documents the survey wrote
  (``agentlab agent survey --fake``, shipped in ``data/docs/com.example.clock``): shown in the
  prompt and grounding the request on the marks (``DOC_GROUNDING_WEIGHT``); no skills;
* ``typed-skills`` -- typed GUI actions and the clock app's skills learned from demonstrations on
  synthesized requests (``data/skills/clock.json``, :mod:`agentlab.agents.gui_skills`), no documents;
* ``typed-docs-skills`` -- both (and the app's skill prior, ``data/gui_priors/clock``, when it ships);
* ``typed-docs-skills-noprior`` -- both, the skill prior off (``skill_prior=none``): its ablation.

Before the arms, the survey is run again into ``<out>/survey-docs`` (timed) and compared with the
shipped documents: the measured arm uses what the survey writes today. Per arm: ExecutionAcc with
its 95 % Wilson interval, AppAgent's Reward (the mean of the evaluator's check scores on the final
state, :mod:`agentlab.eval.reward`), median seconds per task, mean actions, statuses; per task: success in
each arm. A run folder whose ``results.jsonl`` already holds every task is reused; one holding
some is resumed (``exec --resume``). Nothing here reads a task's evaluator: ``agentlab exec``
judges, this script reads its rows.

    python benchmarks/phone_docs.py [--out runs/phone_docs] [--arms raw,typed,typed-docs,typed-skills,typed-docs-skills]
        [--tasks FOLDER] [--max-steps 6] [--max-new-tokens 256] [--llm-config FILE] [--results FILE]
"""

from __future__ import annotations

import argparse
import json
import logging
import shutil
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from _common import RESULTS, ROOT, command_line, log, per_task_table, run_exec_arm, summary_line, typed_calls, usage_error, write_result

TITLE = "Phone clock tasks: surveyed documents and typed actions against the raw-action baseline"
PACKAGE = "com.example.clock"
#: arm -> its runner options (``exec -O``); ``{docs}`` is the documents' root
ARMS: dict[str, tuple[str, ...]] = {
    "raw": ("actions=raw", "use_docs=false"),
    "typed": ("actions=typed", "use_docs=false", "skills=false"),
    "typed-docs": ("actions=typed", "use_docs=true", "docs_dir={docs}", "skills=false"),
    "typed-skills": ("actions=typed", "use_docs=false", "skills=true"),
    "typed-docs-skills": ("actions=typed", "use_docs=true", "docs_dir={docs}", "skills=true"),
    "typed-docs-skills-noprior": ("actions=typed", "use_docs=true", "docs_dir={docs}", "skills=true", "skill_prior=none"),
}
LABELS = {"raw": "raw actions, no documents (AppAgent baseline)", "typed": "typed actions, no documents",
          "typed-docs": "typed actions + surveyed documents",
          "typed-skills": "typed actions + the app's learned skills",
          "typed-docs-skills": "typed actions + surveyed documents + learned skills (+ the skill prior where one ships)",
          "typed-docs-skills-noprior": "typed actions + surveyed documents + learned skills, no skill prior"}


@dataclass
class Arm:
    name: str
    rows: list[dict] = field(default_factory=list)
    wall_s: float = 0.0  #: this invocation's time running it (0 when reused)

    @property
    def n(self) -> int:
        return len(self.rows)

    @property
    def solved(self) -> int:
        return sum(1 for r in self.rows if r.get("success"))

    def acc(self) -> float | None:
        return self.solved / self.n if self.n else None

    def first_mark_share(self, out: Path) -> tuple[int, int]:
        """(typed calls on element 1, typed calls) over this arm's trajectories."""
        calls = [str(i["gui_call"]) for i in typed_calls(out / self.name, self.rows)]
        ones = sum(c in ("click(1)", "type(1)") or c.startswith("type(1,") or c.startswith("scroll(1,") for c in calls)
        return ones, len(calls)

    def line(self) -> str:
        from agentlab.eval.variance import wilson_interval

        low, high = wilson_interval(self.solved, self.n)
        secs = [float(r.get("seconds") or 0.0) for r in self.rows]
        steps = [int(r.get("steps") or 0) for r in self.rows]
        statuses: dict[str, int] = {}
        for r in self.rows:
            statuses[str(r.get("status"))] = statuses.get(str(r.get("status")), 0) + 1
        acc = self.acc() or 0.0
        from agentlab.eval.reward import mean_reward

        rew = mean_reward(self.rows)
        return (f"| {LABELS[self.name]} | {self.solved}/{self.n} | {acc:.2f} [{low:.2f}, {high:.2f}] | "
                f"{'-' if rew is None else f'{rew:.2f}'} | "
                f"{statistics.median(secs) if secs else 0:.1f} | {statistics.mean(steps) if steps else 0:.1f} | "
                f"{', '.join(f'{k} {v}' for k, v in sorted(statuses.items()))} |")


def clock_tasks(folder: Path | None = None) -> list[Path]:
    """The clock task files of ``folder`` (default: the package's tasks folder, whose clock tasks
    are ``clock-*.json``; another folder, such as the blind ``data/tasks_phone_heldout``: its
    phone tasks whose domain is the clock)."""
    from agentlab.tasks.spec import tasks_dir

    if folder is None:
        return sorted(tasks_dir().glob("clock-*.json"))
    return sorted(f for f in folder.glob("*.json")
                  if (d := json.loads(f.read_text("utf-8"))).get("env") == "phone" and d.get("domain") == "clock")


def run_arm(name: str, tasks: Path, ids: set[str], out: Path, docs: Path, args: argparse.Namespace) -> Arm:
    """Run (or reuse, or resume) one arm's ``agentlab exec`` folder."""
    t0 = time.perf_counter()
    rows = run_exec_arm(name, tasks, ids, out / name, [o.format(docs=docs) for o in ARMS[name]],
                        max_steps=args.max_steps, max_new_tokens=args.max_new_tokens, llm_config=args.llm_config)
    return Arm(name, rows, time.perf_counter() - t0)


def survey_check(out: Path, shipped: Path) -> tuple[float, int, int, bool]:
    """Survey the fake phone again into ``out``; (seconds, actions, documented, same as shipped)."""
    from agentlab.agents.appagent.docs_store import DocStore
    from agentlab.agents.appagent.survey import fake_phone, relauncher, survey_app

    if out.exists():
        shutil.rmtree(out)
    with fake_phone() as env:
        relaunch, _ = relauncher(env, PACKAGE)
        report = survey_app(env, DocStore(PACKAGE, out), relaunch=relaunch)
    fresh, ship = DocStore(PACKAGE, out), DocStore(PACKAGE, shipped)

    def content(store: DocStore) -> tuple[object, ...]:
        docs = tuple((u, tuple(sorted(store.get(u).docs.items()))) for u in store.documented())  # type: ignore[union-attr]
        return docs, tuple(sorted(store.useless()))

    return report.seconds, report.actions, len(report.documented), content(fresh) == content(ship)


def first_step_margins(files: list[Path], docs: Path, llm_config: Path | None) -> list[tuple[str, int, float, float]] | None:
    """Per task, at the first step of the typed deploy with documents (the fake phone's home
    screen): (task id, the mark grounding favours most, its log-prior over mark 1, the model's own
    log-probability of "1" over that mark's number after ``click(``). None when the model is not a
    local Hugging Face one (its logits are needed). A diagnosis of the runs, not part of them."""
    import torch

    from agentlab.agents import AppAgent, AppAgentConfig
    from agentlab.agents.appagent.survey import fake_phone
    from agentlab.llm import LLMConfig, load_backend

    llm = load_backend(LLMConfig.from_yaml(llm_config) if llm_config else LLMConfig.from_env())
    if not (hasattr(llm, "model") and hasattr(llm, "tokenizer") and hasattr(llm, "chat_prompt")):
        return None
    seen: list[tuple[list, object]] = []
    plain_chat = llm.chat

    def chat(messages: Any, params: Any = None) -> list[str]:
        seen.append((messages, params))
        return plain_chat(messages, params)

    llm.chat = chat  # type: ignore[method-assign]
    out = []
    for f in files:
        instruction = json.loads(f.read_text("utf-8"))["instruction"]  # the request only
        seen.clear()
        with fake_phone() as env:
            AppAgent(llm, AppAgentConfig(app="clock", docs_dir=docs, actions="typed", max_steps=1, max_retries=0)).deploy(
                env, instruction, None)
        messages, params = seen[0]
        grammar = getattr(params, "grammar", None)
        prior = {int(c): v for tool, _, vals in getattr(grammar, "arg_prior", ()) if tool == "click" for c, v in vals}
        best = max(prior, key=prior.__getitem__) if prior else 1
        push = prior[best] - prior[1] if prior else 0.0
        ids = llm.tokenizer(llm.chat_prompt(messages) + "click(", return_tensors="pt")["input_ids"]
        with torch.no_grad():
            lp = torch.log_softmax(llm.model(ids).logits[0, -1].float(), -1)

        def tok(n: int) -> int:
            return int(llm.tokenizer.encode(str(n), add_special_tokens=False)[0])

        out.append((f.stem, best, push, float(lp[tok(1)] - lp[tok(best)])))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=ROOT / "runs" / "phone_docs", help="run folder root (one exec folder per arm)")
    ap.add_argument("--arms", default=",".join(ARMS), help=f"comma-separated, of {', '.join(ARMS)}")
    ap.add_argument("--tasks", type=Path, default=None, help="a folder of clock tasks (default: data/tasks' clock-*.json; "
                    "the blind set: data/tasks_phone_heldout)")
    ap.add_argument("--max-steps", type=int, default=6)
    ap.add_argument("--max-new-tokens", type=int, default=256)
    ap.add_argument("--llm-config", type=Path, default=None, help="YAML LLM config (default: embedded SmolLM2-135M)")
    ap.add_argument("--docs-dir", type=Path, default=None, help="documents root for typed-docs (default data/docs)")
    ap.add_argument("--results", type=Path, default=RESULTS / "phone_docs.md", help="the results file")
    ap.add_argument("--no-diagnosis", action="store_true", help="skip the first-step grounding-vs-model diagnosis")
    args = ap.parse_args(argv)
    arms = [a.strip() for a in args.arms.split(",") if a.strip()]
    if not arms or any(a not in ARMS for a in arms):
        return usage_error(f"--arms: choose from {', '.join(ARMS)}, got {args.arms!r}")

    from agentlab.paths import data_dir

    docs = (args.docs_dir or data_dir() / "docs").resolve()
    if not (docs / PACKAGE).is_dir():
        return usage_error(f"no documents in {docs / PACKAGE}: run `agentlab agent survey --fake` first")
    out: Path = args.out.resolve()
    files = clock_tasks(args.tasks)
    if not files:
        return usage_error(f"--tasks: no clock task in {args.tasks}")
    tasks = out / "tasks"
    tasks.mkdir(parents=True, exist_ok=True)
    for f in files:  # the exec runs read a copy of the package's clock tasks, nothing else
        if not (tasks / f.name).exists() or (tasks / f.name).read_bytes() != f.read_bytes():
            shutil.copyfile(f, tasks / f.name)
    ids = {json.loads(f.read_text("utf-8"))["id"] for f in files}

    survey_s, survey_actions, documented, same = survey_check(out / "survey-docs", docs)
    log(f"survey: {survey_actions} actions, {survey_s:.1f} s, {documented} documented; same as shipped: {same}")
    results = [run_arm(a, tasks, ids, out, docs, args) for a in arms]

    model = next((str(r.get("model_id")) for a in results for r in a.rows if r.get("model_id")), "?")
    body = [
        f"Model: `{model}`; {len(ids)} clock tasks"
        + (f" of `{args.tasks}`" if args.tasks is not None else " of `data/tasks`")
        + f" on the fake phone (`agentlab exec --router gt --max-steps "
        f"{args.max_steps} --max-new-tokens {args.max_new_tokens}`), one episode per task and arm; run folders "
        f"under `{out.relative_to(ROOT) if out.is_relative_to(ROOT) else out}`.",
        "",
        "| arm | solved | ExecutionAcc [95 % Wilson] | Reward | median s / task | mean actions | statuses |",
        "|---|---|---|---|---|---|---|",
        *[a.line() for a in results],
        "",
        *per_task_table(ids, [(a.name, a.rows) for a in results]),
    ]
    shares = []
    for a in results:
        ones, total = a.first_mark_share(out)
        if total:
            shares.append(f"{a.name} {ones}/{total}")
    if shares:
        body += ["", "Typed calls on element 1 (the first mark listed): " + "; ".join(shares) + "."]
    margins = None if args.no_diagnosis else first_step_margins(files, docs, args.llm_config)
    if margins:
        body += [
            "",
            "Diagnosis, first step (home screen) of typed + documents, from the model's own logits: the mark grounding "
            "favours most, its log-prior over mark 1 (the push), and the model's log-probability of `1` over that mark's "
            "number after `click(` (its bias). The grounded mark wins the step only where the push exceeds the bias.",
            "",
            "| task | favoured mark | push (nats) | model bias for 1 (nats) |",
            "|---|---|---|---|",
            *[f"| {t} | {m} | {p:.2f} | {b:.2f} |" for t, m, p, b in margins],
        ]
    body += [
        "",
        f"Documents: `agentlab agent survey --fake` wrote {documented} element documents in {survey_actions} actions "
        f"({survey_s:.1f} s, settle 0 on the in-process fake device); re-surveyed now: "
        f"{'identical to' if same else 'DIFFERENT from'} the shipped `data/docs/{PACKAGE}`.",
        "The document grounding weight (`DOC_GROUNDING_WEIGHT` in `agentlab/agents/gui_actions.py`), the survey and "
        "the re-click rule were fixed before these tasks were run and not changed after.",
    ]
    by = {a.name: a for a in results}
    values: dict[str, float | int | str | None] = {f"acc_{a.name.replace('-', '_')}": a.acc() for a in results}
    values["tasks"] = len(ids)
    if "raw" in by and "typed-docs" in by:
        ra, da = by["raw"].acc(), by["typed-docs"].acc()
        values["gain_docs_vs_raw"] = None if ra is None or da is None else da - ra
    if "raw" in by and "typed-skills" in by:
        ra, sa = by["raw"].acc(), by["typed-skills"].acc()
        values["gain_skills_vs_raw"] = None if ra is None or sa is None else sa - ra
    summary = summary_line(values)
    write_result(args.results, TITLE, body, summary, command=command_line(__file__, argv))
    print("\n".join(body))
    print(f"wrote {args.results}")
    print(summary, flush=True)
    return 0


if __name__ == "__main__":
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    sys.exit(main())
