"""Planners for ``agentlab exec --mode manager``: a task in, a plan (or why there is none) out.

Two kinds (:data:`MANAGERS`), both behind the same router (AgentToken, ICL, embedding, ...):

* ``llm``: the hash-manager -- the router ranks the pool, the top-K documents go into the
  manager prompt and the model writes ``###Agent: subtask###`` lines
  (:meth:`~agentlab.metaagent.router.Router.plan` with a
  :class:`~agentlab.metaagent.manager.HashManager`), constrained to the plan grammar by default;
* ``clauses``: the clause-level baseline (:mod:`agentlab.teams.clauses`), no generation.

A planner is ``PlanFn = Callable[[ExecTask], RouteResult]``: an empty ``plan`` with ``error``
set when the manager wrote nothing usable (the episode runner makes that a ``no_plan`` row).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Literal

from agentlab.errors import ConfigError
from agentlab.tasks.spec import ExecTask
from agentlab.llm.base import LLMBackend
from agentlab.tasks.decisions import RouteResult
from agentlab.metaagent.manager import HashManager
from agentlab.metaagent.router import Router
from agentlab.teams.clauses import clause_plan

log = logging.getLogger(__name__)

MANAGERS = ("llm", "clauses")
Planner = Callable[[ExecTask], RouteResult]


@dataclass
class ManagerOptions:
    """How the manager writes plans (``agentlab exec --manager/--k/--unconstrained/...``)."""

    kind: Literal["llm", "clauses"] = "llm"
    #: the router's top-K agents whose documents the manager sees (and whose names the grammar allows)
    k: int = 5
    #: decode inside the plan grammar (llm manager; a backend without the capability is a ConfigError)
    constrained: bool = True
    max_steps: int = 3
    min_steps: int = 1
    max_subtask_tokens: int = 40
    #: constrained only: subtasks use the task's own words
    copy_task_words: bool = False
    max_new_tokens: int = 160
    #: llm manager: the candidates are the agents of the task's parts routed one by one by the same
    #: router when they land in different applications (:mod:`agentlab.metaagent.multiapp`; ``--clauses``)
    clauses: bool = False


def make_manager(llm: LLMBackend, options: ManagerOptions, router: Router | None = None) -> HashManager:
    """The hash-manager ``options`` describe (``router``: the one that routes the parts with ``clauses``)."""
    detector = None
    if options.clauses:
        if router is None:
            raise ConfigError("a clause-routing manager needs the router that routes the task's parts")
        from agentlab.metaagent.multiapp import ClauseDetector

        detector = ClauseDetector(router)
    return HashManager(llm, max_new_tokens=options.max_new_tokens, constrained=options.constrained,
                   max_plan_steps=options.max_steps, min_plan_steps=options.min_steps,
                   max_subtask_tokens=options.max_subtask_tokens, copy_task_words=options.copy_task_words,
                   clauses=detector)


def instruction_planner(router: Router, llm: LLMBackend, options: ManagerOptions
                        ) -> Callable[..., RouteResult]:
    """The manager of ``options.kind`` over ``router`` as a function of the instruction text and,
    optionally, the agents that may take a step (``acting``; plan-only measurements pass none;
    the llm manager prompts ``llm``)."""
    if options.kind not in MANAGERS:
        raise ConfigError(f"unknown manager {options.kind!r}; choose one of {', '.join(MANAGERS)}")
    if options.kind == "clauses":
        return lambda text, acting=None: clause_plan(text, router, max_steps=options.max_steps, acting=acting)
    manager = make_manager(llm, options, router)
    return lambda text, acting=None: router.plan([text], manager, k=options.k, acting=acting)[0]


def router_planner(router: Router, llm: LLMBackend, options: ManagerOptions,
                   acting: Callable[[str], Collection[str]] | None = None) -> Planner:
    """The planner of ``options.kind`` over ``router`` for the episode kernel; ``acting(env)`` names the
    agents that can act on a task's env, so a plan never hands a step to one that cannot."""
    plan = instruction_planner(router, llm, options)
    return lambda task: plan(task.instruction, acting(task.env) if acting is not None else None)
