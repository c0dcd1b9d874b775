"""The one interface every MetaAgent router implements (AgentToken and all baselines).

A router ranks the agents of a pool for each task; ``route`` is the one routing call (its choice,
kept to the task's device and, given a :class:`~agentlab.metaagent.store.StoreRule`, under the store's
policy) and ``plan`` turns the top-K into a multi-agent plan through the manager prompt (hash-manager mode).
Benchmarks, the CLI and notebooks only talk to :class:`Router`, so every method is
measured through the same front door.

Every router's constructor takes the same run options (:class:`RunOptions`: ``progress``,
``use_cache``, ``seed``) next to its own, so a caller builds any kind the same way:
``router_class(kind)(pool, llm, progress=False, use_cache=True, seed=0, **router_specific)``.
An unknown option is a :class:`~agentlab.errors.ConfigError` naming the router and the option.
"""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from collections.abc import Collection, Sequence
from pathlib import Path
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from agentlab.errors import ConfigError
from agentlab.llm.config import LLMConfig
from agentlab.pool import AgentPool

from agentlab.tasks.decisions import RouteResult

if TYPE_CHECKING:
    from agentlab.metaagent.data import TrainingSet
    from agentlab.metaagent.store import StoreRule
    from agentlab.metaagent.manager import HashManager
    from agentlab.tasks.spec import ExecTask


C = TypeVar("C", bound=BaseModel)


def parse_options(config_cls: type[C], options: dict[str, Any], router: str) -> C:
    """Router options -> its pydantic config; a bad or unknown option is one clear line."""
    try:
        return config_cls(**options)
    except ValidationError as exc:
        probs = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'options'}: {e['msg']}" for e in exc.errors()
        )
        raise ConfigError(f"invalid options for the {router} router: {probs}") from None


class RunOptions(BaseModel):
    """How a router runs, not what it learns: options every router's constructor accepts.

    A router ignores an option that means nothing to it (the embedding router shows no
    progress bars and keeps no cache; ICL and embedding routers use no randomness).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    #: show tqdm bars while fitting and ranking
    progress: bool = True
    #: reuse and fill on-disk caches (AgentToken's hidden states, trained LoRA / prompt-tuning adapters)
    use_cache: bool = True
    #: training seed; None keeps the router's own default (AgentToken: ``train.seed``; adapters: 0)
    seed: int | None = None


class Router(ABC):
    """Ranks a pool's agents for tasks. Subclasses set ``name`` and implement fit/rank.

    ``options`` are the router's own (validated by the subclass, typically with
    :func:`parse_options`); the run options are keyword-only here and live in ``self.run_options``.
    """

    name: ClassVar[str]
    #: In manager mode, put every document into the prompt instead of the top-K (ICL baseline).
    manager_uses_all_documents: ClassVar[bool] = False
    #: A task with a gold plan runs that plan under this router (ground truth); others route the task.
    follows_gold_plans: ClassVar[bool] = False

    def __init__(
        self,
        pool: AgentPool,
        llm: LLMConfig | None = None,
        *,
        progress: bool = True,
        use_cache: bool = True,
        seed: int | None = None,
        **options: Any,
    ) -> None:
        self.pool = pool
        self.llm = llm or LLMConfig.from_env()
        self.run_options = parse_options(RunOptions, {"progress": progress, "use_cache": use_cache, "seed": seed}, self.name)
        self.options = options

    def trainable_parameters(self) -> int:
        """How many parameters :meth:`fit` trains (0: nothing trained, or not built yet)."""
        return 0

    @abstractmethod
    def fit(self, train: TrainingSet) -> dict[str, float]:
        """Train on labelled demonstrations; return metrics (at least ``seconds``)."""

    @abstractmethod
    def rank(
        self, tasks: list[str], states: list[str | None] | None = None
    ) -> list[list[tuple[str, float]]]:
        """For each task, every agent of the pool with its probability, sorted descending."""

    def _choose(self, tasks: list[str], states: list[str | None] | None = None) -> list[RouteResult]:
        """The router's own decision per task (top-1 of :meth:`rank`; AgentToken decodes, ICL generates)."""
        return [RouteResult(agent=r[0][0] if r else None, ranking=r) for r in self.rank(tasks, states)]

    def route(
        self,
        tasks: Sequence[str | ExecTask],
        states: list[str | None] | None = None,
        *,
        platforms: Sequence[str | None] | None = None,
        acting: Collection[str] | None = None,
        policy: StoreRule | None = None,
    ) -> list[RouteResult]:
        """The one routing call: each task (an instruction, or a task file: its instruction on the
        platform its env runs on) to an agent. ``platforms`` (None: a task file's, else any) keeps each
        task to its device's agents (:func:`~agentlab.metaagent.device.on_platform`); ``acting`` (None:
        every agent) to the agents that can act on the task's env; ``policy`` (None: every agent
        competes, the paper's tables) applies the store's policy
        (:class:`~agentlab.metaagent.store.StoreRule`: specialists first, a generalist for a request
        naming two applications); build it once per pool and pass it to every call."""
        from agentlab.metaagent.device import on_platform, platform_of_env, restrict

        if platforms is None:
            platforms = [None if isinstance(t, str) else platform_of_env(getattr(t, "env", "")) for t in tasks]
        if len(platforms) != len(tasks):
            raise ConfigError(f"route: {len(tasks)} tasks but {len(platforms)} platforms")
        texts = [t if isinstance(t, str) else t.instruction for t in tasks]
        out = []
        for r, text, platform in zip(self._choose(texts, states) if texts else [], texts, platforms):
            if acting is not None:
                r = restrict(r, acting, "the agents that can act on the task's env")
            out.append(policy.decide(r, text, platform) if policy else on_platform(r, self.pool, platform))
        return out

    def plan(
        self,
        tasks: list[str],
        manager: HashManager,
        *,
        k: int = 5,
        states: list[str | None] | None = None,
        acting: Collection[str] | None = None,
    ) -> list[RouteResult]:
        """Hash-manager mode: the documents of the top-``k`` candidates (:meth:`HashManager.candidates`:
        specialists unless the manager admits generalists) go into the manager prompt; ``acting``
        (None: every agent) keeps only the agents that can act on the tasks' env."""
        rankings = self.rank(tasks, states)
        out: list[RouteResult] = []
        for i, (task, ranking) in enumerate(zip(tasks, rankings)):
            docs = [self.pool.get(n) for n, _ in ranking if acting is None or n in acting]
            if not self.manager_uses_all_documents:
                docs = manager.candidates(docs, k)
            state = states[i] if states else None
            res = manager.plan(task, docs, state=state)
            res.ranking = ranking
            out.append(res)
        return out

    def manager_for(self, manager: HashManager) -> HashManager:
        """The manager :meth:`plan` prompts: ``manager`` itself unless the router adapts it
        (the ICL router fits all documents into the context)."""
        return manager

    def save(self, path: Path) -> None:
        raise NotImplementedError(f"the {self.name} router has no trained state to save")

    @classmethod
    def load(cls, path: Path, pool: AgentPool, llm: LLMConfig | None = None) -> Router:
        raise NotImplementedError(f"the {cls.name} router has no trained state to load")


@dataclass(frozen=True)
class RouterEntry:
    """One router kind of :data:`ROUTERS`: where its class lives (imported lazily: baselines pull in
    peft etc.) and what a caller must know before building it, so no list elsewhere repeats it."""

    target: str  #: "module:Class"
    #: where its trained state comes from: an AgentToken ``checkpoint`` (loaded, never refitted, by the
    #: CLIs), ``fitted`` on demonstrations when built, or ``none`` (ground truth)
    state: Literal["checkpoint", "fitted", "none"] = "fitted"
    #: generates text for each task (costly: studies give it fewer tasks)
    decodes: bool = False
    #: trains an adapter on the language model (LoRA, prompt tuning: fewer examples, epochs)
    adapts_lm: bool = False


#: Router kinds: the only list of them (the CLIs, studies and benchmarks derive theirs from it).
ROUTERS: dict[str, RouterEntry] = {
    "gt": RouterEntry("agentlab.metaagent.ground_truth:GroundTruthRouter", state="none"),
    "agenttoken": RouterEntry("agentlab.metaagent.agenttoken:AgentTokenRouter", state="checkpoint"),
    "hybrid": RouterEntry("agentlab.metaagent.hybrid:HybridRouter", state="checkpoint"),
    "embedding": RouterEntry("agentlab.metaagent.baselines.embedding:EmbeddingRouter"),
    "icl": RouterEntry("agentlab.metaagent.baselines.icl:ICLRouter", decodes=True),
    "lora": RouterEntry("agentlab.metaagent.baselines.lora:LoRARouter", decodes=True, adapts_lm=True),
    "prompt": RouterEntry("agentlab.metaagent.baselines.prompt_tuning:PromptTuningRouter", decodes=True, adapts_lm=True),
}
#: the router a run uses when none is named: ground truth (each task's gold agent)
DEFAULT_ROUTER = "gt"

#: Kinds whose trained state is an AgentToken checkpoint (default ``data/tokens``): loaded, never refitted, by the CLIs.
CHECKPOINT_ROUTERS: frozenset[str] = frozenset(k for k, e in ROUTERS.items() if e.state == "checkpoint")
#: Kinds that generate text per task (ICL, LoRA, prompt tuning)
DECODING_ROUTERS: frozenset[str] = frozenset(k for k, e in ROUTERS.items() if e.decodes)
#: Kinds that train an adapter on the language model
ADAPTED_LM_ROUTERS: frozenset[str] = frozenset(k for k, e in ROUTERS.items() if e.adapts_lm)
#: Kinds that learn from demonstrations (every router but ground truth)
LEARNED_ROUTERS: tuple[str, ...] = tuple(k for k, e in ROUTERS.items() if e.state != "none")


def check_router(kind: str, *, option: str = "--router") -> str:
    """``kind`` when it is a registered router; else one :class:`ConfigError` line listing them."""
    if kind not in ROUTERS:
        raise ConfigError(f"{option} must be one of {', '.join(ROUTERS)}, not '{kind}'")
    return kind


def router_class(kind: str) -> type[Router]:
    """The router class for ``kind``; an unknown kind is a :class:`ConfigError`."""
    try:
        target = ROUTERS[kind].target
    except KeyError:
        raise ConfigError(f"unknown router '{kind}'; choose one of {', '.join(ROUTERS)}") from None
    module, _, attr = target.partition(":")
    try:
        cls = getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f"router '{kind}' is not available ({module}:{attr}: {exc})") from None
    return cls


def build_router(
    kind: str,
    pool: AgentPool,
    tokens: Path | None = None,
    *,
    demos: Path | None = None,
    llm: LLMConfig | None = None,
    progress: bool = True,
    default_tokens: Path | None = None,
) -> Router:
    """The router every command uses, built one way: a checkpoint router (AgentToken, the hybrid)
    loaded from ``tokens`` (default ``default_tokens``, else the shipped checkpoint of ``llm``'s backbone:
    :func:`~agentlab.metaagent.shipped.shipped_tokens`), any router given
    ``tokens`` loaded from it, the other baselines fitted on ``demos`` (default: the pool's seed
    demonstrations). ``llm``: the router's own model (None: ``AGENTLAB_LLM_*``)."""
    from agentlab.metaagent.data import load_training_set
    from agentlab.metaagent.shipped import shipped_tokens

    cls = router_class(kind)
    if ROUTERS[kind].state == "none":  # nothing to learn (ground truth)
        return cls(pool, llm, progress=progress)
    if kind in CHECKPOINT_ROUTERS or tokens is not None:
        return cls.load(tokens or default_tokens or shipped_tokens(llm), pool, llm)
    router = cls(pool, llm, progress=progress)
    router.fit(load_training_set(pool, demos))
    return router


class RouterShelf:
    """The routers one run has built, by kind and checkpoint, as :func:`build_router` builds them
    (``progress`` off): a run builds each once (fitting encodes every demonstration) and they go
    with the run, not with the process (a second run with another pool or checkpoint builds its own)."""

    def __init__(self, pool: AgentPool) -> None:
        self.pool = pool
        self._built: dict[tuple[str, str], Router] = {}

    def get(self, kind: str, tokens: Path | None = None) -> Router:
        key = (kind, str(tokens))
        if key not in self._built:
            self._built[key] = build_router(kind, self.pool, tokens, progress=False)
        return self._built[key]
