"""The data the routing studies share: training demonstrations and single-app benchmark tasks, drawn once per run.

Every router of a run (and every study of notebook 04) sees the identical sets, so their
numbers compare. The LM-trained baselines (LoRA, prompt tuning) get a smaller training set
and the LM routers (ICL, LoRA, prompt tuning) a prefix of the evaluation tasks, because each
of their examples and tasks costs language-model forward passes on the CPU.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from agentlab.eval.benchmarks import BenchmarkTask, load_appagent, load_osworld, load_project_set
from agentlab.metaagent.augment import add_document_requests
from agentlab.metaagent.data import TrainingSet, load_training_set
from agentlab.pool import AgentPool

#: Routers that pay language-model forward passes per evaluated task.
LM_ROUTERS = frozenset({"icl", "lora", "prompt"})
#: Routers that train an adapter on the LM (they get the smaller LM training set).
ADAPTED_LM_ROUTERS = frozenset({"lora", "prompt"})


@dataclass
class RoutingData:
    """Training sets and evaluation tasks for one pool."""

    train: TrainingSet
    #: the smaller training set of the adapted-LM routers (lora, prompt)
    lm_train: TrainingSet
    tasks: list[BenchmarkTask]
    #: the evaluation tasks of the LM routers (a prefix of ``tasks``)
    lm_tasks: list[BenchmarkTask]
    #: the project's own set (``load_project_set``, gold agents known), empty when not loaded
    project: list[BenchmarkTask] = field(default_factory=list)
    #: the project-set tasks of the LM routers (a prefix of ``project``)
    lm_project: list[BenchmarkTask] = field(default_factory=list)

    def train_for(self, kind: str) -> TrainingSet:
        return self.lm_train if kind in ADAPTED_LM_ROUTERS else self.train

    def tasks_for(self, kind: str) -> list[BenchmarkTask]:
        return self.lm_tasks if kind in LM_ROUTERS else self.tasks

    def project_for(self, kind: str) -> list[BenchmarkTask]:
        return self.lm_project if kind in LM_ROUTERS else self.project


def single_app_tasks(pool: AgentPool) -> list[BenchmarkTask]:
    """OSWorld single-app and AppAgent tasks whose domain some agent of ``pool`` serves."""
    domains = {a.domain for a in pool}
    return [t for t in load_osworld() + load_appagent() if t.domain in domains]


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
    """A seeded sample of at most ``max_eval_tasks`` tasks (all when falsy), the first
    ``lm_eval_tasks`` of them for LM routers, and ``per_agent`` / ``lm_per_agent`` demonstrations per agent.

    ``documents`` adds every agent's document requests (:mod:`agentlab.metaagent.augment`) to
    both training sets; ``project`` also loads the project set's tasks whose domain the pool
    serves (the LM routers get its first ``lm_eval_tasks``, after a seeded shuffle)."""
    rng = random.Random(seed)
    single = single_app_tasks(pool)
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
