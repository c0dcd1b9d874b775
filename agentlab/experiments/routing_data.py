"""The data the routing studies share: training demonstrations and single-app benchmark tasks, drawn once per run.

Every router of a run (and every study of notebook 04) sees the identical sets, so their
numbers compare. The LM-trained baselines (LoRA, prompt tuning: ``ADAPTED_LM_ROUTERS`` of the
router registry) get a smaller training set and the decoding routers (ICL, LoRA, prompt tuning:
``DECODING_ROUTERS``) a subset of the evaluation tasks, because each of their examples and
tasks costs language-model forward passes on the CPU. Two ways to draw them:
:func:`load_routing_data` (notebook 04: a seeded sample) and :func:`benchmark_data`
(``benchmarks/routing.py``: per-domain subsets of each benchmark, in the paper's order).
"""

from __future__ import annotations

import random
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

from agentlab.errors import DataError
from agentlab.eval.benchmarks import BenchmarkTask, load_appagent, load_osworld, load_project_set
from agentlab.experiments.subsets import evenly, stratified
from agentlab.metaagent.augment import add_document_requests
from agentlab.metaagent.data import TrainingSet, load_training_set
from agentlab.metaagent.router import ADAPTED_LM_ROUTERS, DECODING_ROUTERS
from agentlab.pool import AgentPool


@dataclass
class RoutingData:
    """Training sets and evaluation tasks for one pool."""

    train: TrainingSet
    #: the smaller training set of the adapted-LM routers (lora, prompt)
    lm_train: TrainingSet
    tasks: list[BenchmarkTask]
    #: the evaluation tasks of the ``lm_routers`` (a subset of ``tasks``)
    lm_tasks: list[BenchmarkTask]
    #: the project's own set (``load_project_set``, gold agents known), empty when not loaded
    project: list[BenchmarkTask] = field(default_factory=list)
    #: the project-set tasks of the ``lm_routers`` (a subset of ``project``)
    lm_project: list[BenchmarkTask] = field(default_factory=list)
    #: every demonstration (the ``<kind>@all`` rows of a routing table), when drawn
    full: TrainingSet | None = None
    #: the routers evaluated on ``lm_tasks`` / ``lm_project`` (default: those that decode per task)
    lm_routers: frozenset[str] = DECODING_ROUTERS

    def train_for(self, kind: str) -> TrainingSet:
        return self.lm_train if kind in ADAPTED_LM_ROUTERS else self.train

    def tasks_for(self, kind: str) -> list[BenchmarkTask]:
        return self.lm_tasks if kind in self.lm_routers else self.tasks

    def project_for(self, kind: str) -> list[BenchmarkTask]:
        return self.lm_project if kind in self.lm_routers else self.project


def single_app_tasks(pool: AgentPool) -> list[BenchmarkTask]:
    """OSWorld single-app and AppAgent tasks whose domain some agent of ``pool`` serves."""
    domains = {a.domain for a in pool}
    return [t for t in load_osworld() + load_appagent() if t.domain in domains]


def evaluation_tasks(pool: AgentPool, section: str) -> list[BenchmarkTask]:
    """The single-app tasks a routing section is judged on: the public benchmarks' when they have
    been fetched, else (with one line saying so and naming ``agentlab benchmarks fetch``) the
    project's own routing set, so the section still runs on a clone that has only its own data."""
    from agentlab.eval import public_lists

    if not public_lists.skip(f"{section} on the 313 OSWorld and AppAgent tasks (judged on the project's routing set instead)"):
        return single_app_tasks(pool)
    domains = {a.domain for a in pool}
    return [t for t in load_project_set() if t.domain in domains]


def load_routing_data(
    pool: AgentPool,
    *,
    per_agent: int | None,
    lm_per_agent: int | None,
    max_eval_tasks: int | None,
    lm_eval_tasks: int | None,
    seed: int = 0,
    documents: bool = False,
    project: bool = False,
) -> RoutingData:
    """A seeded sample of at most ``max_eval_tasks`` single-app tasks (:func:`evaluation_tasks`: the
    public benchmarks', else the project set's; all when falsy), the first
    ``lm_eval_tasks`` of them for LM routers, and ``per_agent`` / ``lm_per_agent`` demonstrations per agent.

    ``documents`` adds every agent's document requests (:mod:`agentlab.metaagent.augment`) to
    both training sets; ``project`` also loads the project set's tasks whose domain the pool
    serves (the LM routers get its first ``lm_eval_tasks``, after a seeded shuffle)."""
    rng = random.Random(seed)
    single = evaluation_tasks(pool, "the routing studies")
    tasks = rng.sample(single, min(len(single), max_eval_tasks)) if max_eval_tasks else single
    train = load_training_set(pool, per_agent=per_agent, seed=seed)
    lm_train = load_training_set(pool, per_agent=lm_per_agent, seed=seed)
    if documents:
        train, lm_train = add_document_requests(train, pool), add_document_requests(lm_train, pool)
    own: list[BenchmarkTask] = []
    if project:
        domains = {a.domain for a in pool}
        own = [t for t in load_project_set() if t.domain in domains]
    return RoutingData(
        train=train,
        lm_train=lm_train,
        tasks=tasks,
        lm_tasks=tasks[:lm_eval_tasks],
        project=own,
        lm_project=random.Random(seed).sample(own, len(own))[:lm_eval_tasks],
    )


def leak_check(train: TrainingSet, tasks: Sequence[BenchmarkTask]) -> None:
    """A :class:`~agentlab.errors.DataError` when a task's instruction is verbatim in the training texts."""
    seen = {t.strip().lower() for t in train.texts}
    leaks = [t.instruction for t in tasks if t.instruction.strip().lower() in seen]
    if leaks:
        raise DataError(f"{len(leaks)} benchmark task(s) appear verbatim in the training data, e.g. {leaks[0]!r}")


def benchmark_data(
    pool: AgentPool,
    *,
    per_agent: int | None,
    per_domain: int | None = None,
    limit: int | None = None,
    documents: bool = True,
    project: bool = True,
    all_data: bool = False,
    lm_routers: Collection[str] = DECODING_ROUTERS,
    lm_per_domain: int | None = None,
    lm_max: int | None = None,
    seed: int = 0,
    lm_per_agent: int | None = -1,
) -> RoutingData:
    """The Table-4 analog's data: at most ``per_domain`` tasks per domain of OSWorld, then of AppAgent
    (and of the project set when ``project``), the first ``limit`` of each; ``per_agent``
    demonstrations per agent for every router (plus every document's requests when ``documents``;
    ``all_data`` also draws every demonstration, ``full``). The ``lm_routers`` are evaluated on at
    most ``lm_per_domain`` per domain of those, ``lm_max`` in all, spread evenly; the adapted-LM routers
    (LoRA, prompt tuning) train on ``lm_per_agent`` demonstrations per agent (-1: the same set as the
    others), for when their fits would not fit the time. A training text equal to a task's instruction
    is a :class:`~agentlab.errors.DataError`."""
    tasks = stratified(load_osworld(), per_domain, seed) + stratified(load_appagent(), per_domain, seed)
    own = stratified(load_project_set(), per_domain, seed) if project else []
    if limit:
        tasks, own = tasks[:limit], own[:limit]

    def demos(n: int | None) -> TrainingSet:
        ts = load_training_set(pool, per_agent=n, seed=seed)
        ts = add_document_requests(ts, pool) if documents else ts
        leak_check(ts, tasks + own)
        return ts

    train = demos(per_agent)
    return RoutingData(
        train=train, lm_train=train if lm_per_agent == -1 else demos(lm_per_agent), tasks=tasks, lm_tasks=evenly(stratified(tasks, lm_per_domain, seed), lm_max),
        project=own, lm_project=evenly(stratified(own, lm_per_domain, seed), lm_max),
        full=demos(None) if all_data else None, lm_routers=frozenset(lm_routers),
    )
