"""The clause-level baseline manager: split the instruction into parts, route each part.

What a manager has to beat honestly: no generation at all. The instruction is cut into parts
by a small deterministic splitter (:func:`split_clauses`: sentences, then ``then`` / ``and
then`` / ``after that`` / ``finally`` / ``, and`` joints, and a plain ``and`` before one of
:data:`VERBS`; a part of fewer than :data:`MIN_WORDS` words is glued back onto its neighbour), each part goes to the router
(top-1), and consecutive parts routed to the same agent merge into one step. The subtasks
are the task's own words, so SubtaskAcc measures the split and AgentMatch the routing.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence

from agentlab.tasks.decisions import PlanStep, RouteResult
from agentlab.tasks.requests import cut_at_joints
from agentlab.metaagent.device import restrict
from agentlab.metaagent.router import Router

#: a part shorter than this (in words) is not a subtask of its own
MIN_WORDS = 2
#: a plain "and" starts a new part only before one of these imperative verbs ("north and south" stays one)
VERBS = ("add", "attach", "compress", "compute", "convert", "copy", "count", "create", "crop", "delete", "download",
         "draft", "email", "export", "fill", "find", "insert", "list", "mail", "make", "move", "open", "post", "print",
         "put", "remove", "rename", "replace", "reply", "resize", "rotate", "save", "search", "send", "set", "share",
         "sort", "sum", "summarize", "summarise", "turn", "update", "upload", "write")
_JOINT = re.compile(r"\s*(?:,\s*(?:and\s+)?then\b|\band\s+then\b|\bthen\b|,\s*after\s+that\b|\bafter\s+that\b|"
                    r"\bafterwards\b|,\s*finally\b|\bfinally\b|,\s*and\b|\band\b(?=\s+(?:" + "|".join(VERBS) + r")\b))[,:]?\s*",
                    re.IGNORECASE)


def split_clauses(instruction: str, min_words: int = MIN_WORDS) -> list[str]:
    """The instruction's parts, in order (never empty for a non-empty instruction)."""
    parts = cut_at_joints(instruction, _JOINT, min_words=min_words, glue=" and ")
    return parts or ([instruction.strip()] if instruction.strip() else [])


def merge_steps(steps: Sequence[PlanStep]) -> list[PlanStep]:
    """Consecutive steps of the same agent become one (their subtasks joined with "; ")."""
    out: list[PlanStep] = []
    for s in steps:
        if out and out[-1].agent == s.agent:
            out[-1] = PlanStep(s.agent, f"{out[-1].subtask}; {s.subtask}")
        else:
            out.append(PlanStep(s.agent, s.subtask))
    return out


def clause_plan(instruction: str, router: Router, *, max_steps: int | None = None,
                acting: Collection[str] | None = None) -> RouteResult:
    """The clause baseline's plan for one instruction (``ranking`` is the whole task's).

    ``max_steps`` (None: no cap) keeps the first steps; the rest of the parts are appended to
    the last kept step's subtask, so no part of the task is dropped. ``acting``: the agents that
    can act on the task's env (None: every agent)."""
    parts = split_clauses(instruction)
    routed = router.route(parts + [instruction])
    if acting is not None:  # only agents that can act on the task's env take a part
        routed = [restrict(r, acting, "the agents that can act on this task's env") for r in routed]
    whole = routed[-1]
    steps = [PlanStep(r.agent, p) for p, r in zip(parts, routed[:-1]) if r.agent is not None]
    if not steps:
        return RouteResult(agent=None, ranking=whole.ranking, error="the router chose no agent for any part of the task")
    plan = merge_steps(steps)
    if max_steps is not None and len(plan) > max_steps:
        rest = "; ".join(s.subtask for s in plan[max_steps:])
        plan = plan[:max_steps]
        plan[-1] = PlanStep(plan[-1].agent, f"{plan[-1].subtask}; {rest}")
    return RouteResult(agent=plan[0].agent, ranking=whole.ranking, plan=plan,
                       raw="\n".join(f"[{p}] -> {r.agent}" for p, r in zip(parts, routed[:-1])))
