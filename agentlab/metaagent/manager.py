"""Hash-manager mode: split a task into (agent, subtask) steps over a few agents' documents.

The router picks the top-K agents; only their documents go into the manager prompt
(``data/prompts/metaagent/manager.txt``, structured like the paper's Appendix G.3). The model
answers with ``###AgentName: subtask###`` lines. Problems in the answer (no parseable line, a
name that is not among the documents, the same agent twice in a row, an empty subtask) are
reported back to the model once with a corrective message (``metaagent/manager_correction``,
through :func:`~agentlab.dialogue.ask.ask_until_parsed`); if the second answer is still wrong
the result is a failure carrying every problem, never a silently trimmed plan.

``constrained=True`` makes the answer well-formed by construction instead: decoding is
restricted to the plan grammar (:class:`~agentlab.llm.plan_grammar.PlanGrammar`: only the
documents' agent names, never the same agent twice in a row, at most ``max_plan_steps``
steps, bounded subtasks, optionally only the task's own words in them), on a backend that
declares ``capabilities.plan_grammar``; any other backend is a one-line ConfigError. On by
default, wherever a plan is made (``agentlab route --mode manager``, ``agentlab exec --mode
manager``, the manager-mode and multi-agent studies): a prompt-only 135M manager rarely writes a
usable plan at all. ``constrained=False`` (``--unconstrained`` on every command) is the ablation.

The candidates are the router's top-K *specialists* (:meth:`HashManager.candidates`, the store
policy of :mod:`~agentlab.metaagent.store_policy`): a plan is itself the multi-application answer,
so a general agent (Agent S2, PC-Agent, AppAgent) as one of its steps only blurs which application
does what; ``generalists=True`` (``--generalists``) lets them in (ablation).

``clauses=`` (a :class:`~agentlab.metaagent.multiapp.ClauseDetector`, ``--clauses``) picks the
candidates by routing the request part by part instead: when the parts land in different
applications, the candidates are those parts' agents, in the request's order (the router's top-K
of the whole request are kept for a request the detector leaves whole). Why: the router scores a
whole request, and one application's words dominate its top-K. With ``clause_steps=True``
(``--clause-steps``) the request's own order writes the plan (one step per part, no generation).
"""

from __future__ import annotations

import dataclasses
import logging
import re
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

from agentlab.dialogue.ask import ask_until_parsed
from agentlab.dialogue.templates import PromptTemplate, load_template
from agentlab.llm.base import ChatMessage, LLMBackend, SamplingParams
from agentlab.llm.plan_grammar import PlanGrammar, refuse_grammar
from agentlab.tasks.decisions import PlanStep, RouteResult
from agentlab.pool import AgentDocument

if TYPE_CHECKING:
    from agentlab.metaagent.multiapp import ClauseDetector

log = logging.getLogger(__name__)

#: ``###Name: subtask###``; the closing hashes may be missing at the end of a line (small
#: models often drop them) and several steps may share a line.
STEP_RE = re.compile(r"#{2,}\s*([A-Za-z][A-Za-z0-9_]*)\s*:\s*([^#\n]*?)\s*(?:#{2,}|$)", re.MULTILINE)


@dataclass
class ParsedPlan:
    steps: list[PlanStep]
    problems: list[str]


def parse_plan(text: str, allowed: list[str]) -> ParsedPlan:
    """Parse model output into steps; every deviation becomes one problem line."""
    canon = {n.lower(): n for n in allowed}
    steps: list[PlanStep] = []
    problems: list[str] = []
    for m in STEP_RE.finditer(text):
        name, subtask = m.group(1), m.group(2).strip()
        real = canon.get(name.lower())
        if real is None:
            problems.append(f"unknown agent '{name}' (allowed: {', '.join(allowed)})")
            continue
        if not subtask:
            problems.append(f"agent '{real}' was given an empty subtask")
            continue
        if steps and steps[-1].agent == real:
            problems.append(f"agent '{real}' is given two subtasks in a row (steps {len(steps)} and {len(steps) + 1})")
        steps.append(PlanStep(agent=real, subtask=subtask))
    if not steps and not problems:
        problems.append("no line of the form ###AgentName: subtask### in the answer")
    return ParsedPlan(steps=steps, problems=problems)


@cache
def _state_block() -> PromptTemplate:
    return load_template("metaagent/state")


def render_state(state: str | None) -> str:
    """The text block describing the initial OS state ('' when there is none)."""
    return _state_block().render(state=state.strip()) if state and state.strip() else ""


class HashManager:
    """Generates and validates a multi-agent plan with one retry."""

    def __init__(
        self,
        backend: LLMBackend,
        template: str | PromptTemplate = "metaagent/manager",
        *,
        max_new_tokens: int = 192,
        max_demos: int = 3,
        constrained: bool = True,
        max_plan_steps: int = 3,
        min_plan_steps: int = 1,
        max_subtask_tokens: int = 40,
        copy_task_words: bool = False,
        generalists: bool = False,
        distinct_domains: bool = False,
        clauses: ClauseDetector | None = None,
        clause_steps: bool = False,
    ) -> None:
        self.backend = backend
        self.template = template if isinstance(template, PromptTemplate) else load_template(template)
        self.correction = load_template("metaagent/manager_correction")
        self.params = SamplingParams(max_new_tokens=max_new_tokens, temperature=0.0)
        self.max_demos = max_demos
        #: decode inside the plan grammar (see the module docstring)
        self.constrained = constrained
        self.max_plan_steps, self.min_plan_steps = max_plan_steps, min_plan_steps
        self.max_subtask_tokens = max_subtask_tokens
        #: constrained only: subtask words come from the task's own text
        self.copy_task_words = copy_task_words
        #: general agents may be plan steps (default: only specialists are candidates)
        self.generalists = generalists
        #: at most one candidate per domain (SheetAgent and CalcAgent both serve "calc")
        self.distinct_domains = distinct_domains
        #: candidates from the request's parts when they land in different applications (see the module docstring)
        self.clauses = clauses
        #: with ``clauses``: the parts themselves are the plan's steps (no generation)
        self.clause_steps = clause_steps
        if clause_steps and clauses is None:
            from agentlab.errors import ConfigError

            raise ConfigError("clause steps need a clause detector (--clause-steps goes with --clauses)")
        if constrained and not backend.capabilities.plan_grammar:
            refuse_grammar(backend, PlanGrammar(("any",)))

    def settings(self) -> dict[str, Any]:
        """The constructor's keyword settings (to build a variant: ``HashManager(backend, template, **settings)``)."""
        return {"max_new_tokens": self.params.max_new_tokens, "max_demos": self.max_demos, "constrained": self.constrained,
                "max_plan_steps": self.max_plan_steps, "min_plan_steps": self.min_plan_steps,
                "max_subtask_tokens": self.max_subtask_tokens, "copy_task_words": self.copy_task_words,
                "generalists": self.generalists, "distinct_domains": self.distinct_domains, "clauses": self.clauses,
                "clause_steps": self.clause_steps}

    def variant(self, backend: LLMBackend | None = None, **changes: Any) -> HashManager:
        """This manager with another backend and/or settings changed."""
        return HashManager(backend or self.backend, self.template, **{**self.settings(), **changes})

    def candidates(self, ranked: list[AgentDocument], k: int) -> list[AgentDocument]:
        """The documents the plan may use: the first ``k`` of ``ranked`` (most probable first) that
        are specialists, or any agents with ``generalists`` (or when ``ranked`` holds no specialist);
        with ``distinct_domains`` only the best-ranked agent of each domain."""
        from agentlab.metaagent.store_policy import is_generalist

        pick = ranked if self.generalists else [d for d in ranked if not is_generalist(d)] or ranked
        if self.distinct_domains:
            first: dict[str, AgentDocument] = {}
            for d in pick:
                first.setdefault(d.domain, d)
            pick = list(first.values())  # dicts keep insertion order: still best-ranked first
        return pick[:k]

    def grammar(self, task: str, names: list[str], *, min_steps: int | None = None, max_steps: int | None = None) -> PlanGrammar:
        """The plan grammar over ``names`` for ``task`` (step bounds: the manager's unless given)."""
        hi = max_steps or self.max_plan_steps
        lo = min(min_steps or self.min_plan_steps, hi)
        return PlanGrammar(tuple(names), max_steps=hi, min_steps=lo,
                           max_subtask_tokens=self.max_subtask_tokens, copy_from=task if self.copy_task_words else None)

    def prompt(self, task: str, docs: list[AgentDocument], state: str | None = None) -> str:
        documents = "\n\n".join(d.render(self.max_demos) for d in docs)
        return self.template.render(documents=documents, task=task.strip(), state=render_state(state))

    def _too_long(self, prompt: str) -> str | None:
        caps = self.backend.capabilities
        limit = caps.context_length
        if not caps.token_counting or limit is None:
            return None
        n = self.backend.count_tokens(prompt) + self.params.max_new_tokens
        return f"manager prompt needs {n} tokens but the model's context is {limit}" if n > limit else None

    def plan(self, task: str, docs: list[AgentDocument], state: str | None = None) -> RouteResult:
        """The plan for ``task`` over ``docs`` (with a clause detector: over the task's parts' agents
        when they land in different applications; ``docs`` otherwise)."""
        bounds: dict[str, int] = {}
        if self.clauses is not None:
            found = self.clauses.detect(task)
            if found.multi:
                if self.clause_steps:
                    steps = found.steps()
                    return RouteResult(agent=steps[0].agent, ranking=[(n, 0.0) for n in found.agents], plan=steps,
                                       raw=found.describe())
                docs = [self.clauses.pool.get(n) for n in found.agents]
                # every detected application gets a step
                bounds = {"min_steps": len(docs), "max_steps": max(self.max_plan_steps, len(docs))}
        names = [d.name for d in docs]
        ranking = [(n, 0.0) for n in names]
        prompt = self.prompt(task, docs, state)
        if (why := self._too_long(prompt)) is not None:
            return RouteResult(agent=None, ranking=ranking, error=why)
        params = dataclasses.replace(self.params, grammar=self.grammar(task, names, **bounds)) if self.constrained \
            else self.params
        asked = ask_until_parsed(
            self.backend,
            [ChatMessage("user", prompt)],
            lambda raw: parse_plan(raw, names),
            checks=[lambda parsed: parsed.problems],
            max_attempts=2,
            params=params,
            correction=self.correction,
            correction_fields={"first_agent": names[0], "agents": ", ".join(names)},
            label="manager answer",
        )
        if asked.value is None:
            first, second = asked.attempts
            return RouteResult(
                agent=None,
                ranking=ranking,
                error=f"manager output unusable after one retry: first answer: {first.problem}; "
                f"second answer: {second.problem}",
                raw=asked.reply,
            )
        return RouteResult(agent=asked.value.steps[0].agent, ranking=ranking, plan=asked.value.steps, raw=asked.reply)
