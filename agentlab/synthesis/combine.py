"""Reverse synthesis of multi-agent tasks: join single-agent execution tasks into one task.

AgentStore built OSWorld-Multi by mining pairs of OSWorld tasks whose agents differ and
writing one instruction for the pair; the pair's own start states, evaluators and agents give
the combined task a natural ground truth. This module is the deterministic half of that for our
task files (the generator, the filters and the report are :mod:`agentlab.synthesis.run`):

- :func:`collisions` — parts that write or read the same path cannot share one folder (skipped,
  not renamed: a renamed file would no longer match its part's instruction);
- :func:`combine` — the union of the start states, the conjunction (``conj: "and"``) of every
  part's checks, the union of the outputs and apps, the gold ``plan`` (each part's agent and
  instruction, in order) and one bash reference solution that runs the parts' solutions in
  order (python through a quoted heredoc run isolated as the workspace runs python, bash parts
  each in a subshell);
- :func:`targets` / :func:`missing_targets` — what an instruction must still name for every
  part: its output files (else the folders and files its evaluator inspects that its own
  instruction names) and the string literals its evaluator expects that its instruction spells
  out (a URL, a name);
- :func:`template_instruction` — the fallback wording ("First … Then … Finally …").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from agentlab.errors import DataError
from agentlab.tasks.env_kinds import ENV_KINDS
from agentlab.tasks.spec import MULTI_APP_DOMAIN, ExecTask, Solution
from agentlab.tasks.decisions import PlanStep

#: longest id part kept from each task id (ids stay readable: ``multi-os-error-lines-gimp-png-to-jpeg``)
ID_PART_MAX = 24
#: shortest expected literal treated as a target (shorter ones are values like "url" or "1")
MIN_LITERAL = 4


@dataclass(frozen=True)
class Part:
    """One single-agent task inside a combination, with the agent ground truth gives it."""

    task: ExecTask
    agent: str


def _paths(task: ExecTask) -> set[str]:
    """Every path a task's files occupy: setup files, outputs, evaluator paths."""
    out = {str(s["path"]) for s in task.setup} | set(task.outputs)
    for _, res, exp, _ in task.evaluator.checks():
        for cfg in (res, exp):
            if cfg and isinstance(cfg.get("path"), str):
                out.add(cfg["path"])
    return {p.strip("/").removeprefix("./") for p in out}


def _overlap(a: str, b: str) -> bool:
    return a == b or a.startswith(b + "/") or b.startswith(a + "/")


def collisions(parts: list[Part]) -> list[str]:
    """One line per pair of parts whose files share a path (or one holds the other's folder)."""
    out: list[str] = []
    for i, p in enumerate(parts):
        for q in parts[i + 1:]:
            shared = sorted({a for a in _paths(p.task) for b in _paths(q.task) if _overlap(a, b)})
            if shared:
                out.append(f"{p.task.id} and {q.task.id} share {', '.join(shared)}")
    return out


def _literals(task: ExecTask) -> list[str]:
    """String values the evaluator expects that the task's own instruction spells out."""
    found: list[str] = []
    for _, _, exp, _ in task.evaluator.checks():
        if not exp or exp.get("type") != "literal":
            continue
        value = exp.get("value")
        for v in value if isinstance(value, list) else [value]:
            if isinstance(v, str) and len(v.strip()) >= MIN_LITERAL and v.strip() in task.instruction:
                found.append(v.strip())
    return found


def targets(task: ExecTask) -> list[str]:
    """What a combined instruction must name for this part (see the module docstring)."""
    named: list[str] = list(task.outputs)
    if not named:  # a task that tidies files in place: the folders/files it is judged on
        for path in sorted(_paths(task)):
            for cand in (path, path.split("/")[0]):
                if re.search(rf"(?<![\w.]){re.escape(cand)}(?![\w])", task.instruction):
                    named.append(cand)
                    break
    return list(dict.fromkeys(named + _literals(task)))


def missing_targets(instruction: str, parts: list[Part]) -> list[str]:
    """The targets (see :func:`targets`) of ``parts`` that ``instruction`` does not contain."""
    return [f"{p.task.id}: {t}" for p in parts for t in targets(p.task) if t not in instruction]


def combined_id(parts: list[Part]) -> str:
    """``multi-<part1>-<part2>[-<part3>]``, each part's id cut at a word boundary."""
    pieces = []
    for p in parts:
        words, piece = p.task.id.split("-"), ""
        for w in words:
            if piece and len(piece) + 1 + len(w) > ID_PART_MAX:
                break
            piece = f"{piece}-{w}" if piece else w
        pieces.append(piece)
    return "multi-" + "-".join(pieces)


def _lower_first(text: str) -> str:
    """'Copy every line' -> 'copy every line'; a name or acronym ('LibreOffice', 'In photos/')
    keeps its case only when its second letter is upper case too."""
    first = text.split(" ", 1)[0]
    return text if len(first) > 1 and (first[1].isupper() or not first.isalpha()) else text[:1].lower() + text[1:]


def template_instruction(parts: list[Part]) -> str:
    """The deterministic wording: the parts' instructions joined by First / Then / Finally."""
    if len(parts) < 2:
        raise DataError("a combination needs at least two parts")
    heads = ["First, "] + ["Then, "] * (len(parts) - 2) + ["Finally, " if len(parts) > 2 else "Then, "]
    sentences = []
    for head, p in zip(heads, parts):
        text = p.task.instruction.strip()
        sentences.append(head + _lower_first(text) + ("" if text.endswith((".", "!", "?")) else "."))
    return " ".join(sentences)


def _conjunction(parts: list[Part]) -> dict[str, Any]:
    func, result, expected, options = [], [], [], []
    for p in parts:
        spec = p.task.evaluator
        if spec.conj != "and" and len(spec.funcs) > 1:
            raise DataError(f"{p.task.id}: an 'or' evaluator cannot join a conjunction", where=p.task.source)
        for fname, res, exp, opts in spec.checks():
            func.append(fname)
            result.append(res)
            expected.append(exp)
            options.append(opts)
    return {"func": func, "result": result, "expected": expected, "options": options, "conj": "and"}


def _reference(parts: list[Part]) -> Solution:
    """One bash script: each part's solution in its own subshell, in order, stopping at a failure."""
    lines = ["# the parts' reference solutions, in plan order"]
    for k, p in enumerate(parts, start=1):
        sol = p.task.reference_solution
        if sol is None or sol.language not in ("python", "bash"):
            raise DataError(f"{p.task.id}: needs a python or bash reference solution", where=p.task.source)
        code = sol.code.rstrip("\n")
        lines.append(f"# {k}. {p.task.id} ({p.agent})")
        if sol.language == "python":
            tag = f"AGENTLAB_PART_{k}"
            if tag in code:
                raise DataError(f"{p.task.id}: its solution contains the heredoc tag {tag}", where=p.task.source)
            lines.append(f"python3 -I - <<'{tag}' || exit 1\n{code}\n{tag}")
        else:
            lines.append(f"(\n{code}\n) || exit 1")
    return Solution(language="bash", code="\n".join(lines) + "\n")


def combine(parts: list[Part], instruction: str, task_id: str | None = None) -> ExecTask:
    """The multi-agent task for ``parts`` in order (see the module docstring); the parts must
    share one env, use distinct agents and not collide."""
    if len(parts) < 2:
        raise DataError("a combination needs at least two parts")
    envs = {p.task.env for p in parts}
    if len(envs) != 1 or any(ENV_KINDS[e].device_paths for e in envs):
        raise DataError(f"parts must share one workspace or desktop env; got {sorted(envs)}")
    agents = [p.agent for p in parts]
    if len(set(agents)) != len(agents):
        raise DataError(f"parts need distinct agents; got {agents}")
    if clash := collisions(parts):
        raise DataError(f"parts collide: {clash[0]}")
    return ExecTask(
        id=task_id or combined_id(parts),
        instruction=instruction,
        domain=MULTI_APP_DOMAIN,
        env=parts[0].task.env,
        apps=list(dict.fromkeys(a for p in parts for a in p.task.apps)),
        setup=[dict(s) for p in parts for s in p.task.setup],
        outputs=list(dict.fromkeys(o for p in parts for o in p.task.outputs)),
        evaluator=_conjunction(parts),
        reference_solution=_reference(parts),
        plan=[PlanStep(p.agent, p.task.instruction) for p in parts],
    )
