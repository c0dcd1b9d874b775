"""Best of K for the tool specialists: sample candidate replies, try each on a scratch copy, keep the best.

Issue #38 ("execute, check, keep the best"): a small model's greedy reply is often a well-formed
call with the wrong value while a sampled one has it right. With ``best_of=K`` the tool agent
(:class:`~agentlab.agents.tools.ToolAgent`) draws K-1 sampled replies besides the greedy one,
runs each one's calls in the workspace's sandbox on a private copy of the workspace
(:func:`tried`: never the workspace itself, never following a link, under the workspace's time
limit), scores the result with :func:`~agentlab.toolkits.check.request_score` (the request and the
files only, never a task's evaluator, expected values or reference solution), and keeps the
highest; a tie keeps the lowest index, so the greedy reply wins unless another does better.
Only the kept reply then runs on the real workspace, as a K = 1 step would, and the conversation
goes on with it as the model's answer.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentlab.envs.actions.workspace import Reply
from agentlab.envs.workspace import Workspace
from agentlab.errors import ActionParseError, InvalidActionError
from agentlab.llm.base import ChatMessage, LLMBackend, SamplingParams
from agentlab.safepath import SafeFolder
from agentlab.toolkits.base import Call, Toolkit
from agentlab.toolkits.check import request_score
from agentlab.toolkits.runtime import program, results


@dataclass
class Candidate:
    """One candidate reply of a step and what trying it gave (``score`` None: not tried)."""

    index: int
    reply: str
    seed: int | None
    value: list[Call] | Reply | None
    score: float | None = None
    why: str = ""

    def record(self, kept: int) -> dict[str, Any]:
        """What the step's ``info["best_of"]`` holds of it."""
        return {"index": self.index, "reply": self.reply, "seed": self.seed, "score": self.score,
                "why": self.why, "kept": self.index == kept}


def sample(llm: LLMBackend, messages: list[ChatMessage], params: Callable[[int], SamplingParams], k: int,
           parse: Callable[[str], list[Call] | Reply]) -> list[Candidate]:
    """Candidates 1..k-1: one model call each with ``params(j)`` (sampled, a seed of its own), parsed
    as the agent parses (a reply that does not parse is kept, unusable, with the reason)."""
    out = []
    for j in range(1, k):
        p = params(j)
        got = llm.chat(messages, p)
        text = got[0] if got else ""
        cand = Candidate(j, text, p.seed, None)
        try:
            cand.value = parse(text)
        except (ActionParseError, InvalidActionError) as exc:
            cand.why = f"unusable: {exc.message}"
        out.append(cand)
    return out


@contextlib.contextmanager
def tried(ws: Workspace, kit: Toolkit, calls: list[Call], timeout_s: float) -> Iterator[tuple[list[dict[str, Any]], Path]]:
    """Run ``calls`` on a private copy of ``ws`` and yield (one result per call, the resulting
    files as another private copy); both copies are removed at exit.

    The calls run as the real step runs them: the toolkit runtime's program in a
    :class:`~agentlab.envs.workspace.Workspace` rooted at the copy, with the workspace's own
    limits and sandbox (bubblewrap, where the real one has it, lets the program write only the
    copy), and at most ``timeout_s``. The copy is made without following links, and the result
    is copied once more before it is read, so nothing a program planted is followed here."""
    with ws.safe.private_copy(_is_scratch) as scratch:
        records: list[dict[str, Any]] = []
        if calls:
            cfg = ws.config if ws.sandboxed else ws.config.model_copy(update={"sandbox": "none"})
            ran = Workspace(root=scratch, config=cfg).run_python(program(kit.name, [c.as_json() for c in calls]),
                                                                  timeout_s=timeout_s)
            records = results(ran.stdout)[: len(calls)]
            why = "timed out" if ran.timed_out else f"not run (exit {ran.returncode}: {ran.stderr.strip()[-200:]})"
            records += [{"call": c.name, "ok": False, "error": why} for c in calls[len(records):]]
        with SafeFolder(scratch).private_copy(_is_scratch) as after:
            yield records, after


def choose(candidates: list[Candidate], *, instruction: str, start: Path, ws: Workspace, kit: Toolkit,
           deadline: float = float("inf")) -> Candidate:
    """Score every usable candidate (calls, not a program) against ``start`` (the workspace at the
    episode's start) and return the best; candidates with the same calls are tried once. Past
    ``deadline`` (``time.monotonic()``) the rest are left untried (none tried: candidate 0, the greedy one)."""
    seen: dict[str, Candidate] = {}
    for cand in candidates:
        if not isinstance(cand.value, list):
            cand.why = cand.why or "a program, not calls: not tried"
            continue
        key = json.dumps([c.as_json() for c in cand.value], sort_keys=True, default=str)
        if key in seen:
            cand.score, cand.why = seen[key].score, f"same calls as candidate {seen[key].index}"
            continue
        left = deadline - time.monotonic()
        if left <= 0:
            cand.why = "not tried: the task's time ran out"
            continue
        tools = [c for c in cand.value if c.name not in ("done", "fail")]
        with tried(ws, kit, tools, max(1.0, min(ws.config.timeout_s, left))) as (records, after):
            gave_up = [c for c in cand.value if c.name == "fail"]
            records += [{"call": "fail", "ok": False, "error": f"gives up: {c.args.get('reason', '')}"} for c in gave_up]
            cand.score, cand.why = request_score(instruction, start, after, kit, records)
        seen[key] = cand
    scored = [c for c in candidates if c.score is not None]
    return max(scored, key=_rank) if scored else candidates[0]


def _rank(c: Candidate) -> tuple[float, int]:
    """Higher score first; among equal scores the lower index (the greedy reply is 0)."""
    return (c.score if c.score is not None else float("-inf"), -c.index)


def _is_scratch(rel: str) -> bool:
    """The workspace's own scratch folder (``.agentlab``: the programs run): not the task's files."""
    return rel.split("/", 1)[0].startswith(".agentlab")
