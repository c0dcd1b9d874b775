"""The AgentToken router: agent tokens on a frozen LM, trained on cached features, decoded greedily.

``rank`` scores every agent at the position right after the router prompt (the position
the tokens were trained at): a softmax over the agent rows only, so the ranking sums to 1.
``route`` follows the paper: decode greedily over ``V ∪ A`` and stop as soon as an agent token
wins. If the model prefers words first, up to ``max_word_tokens`` word tokens are appended
and the agent rows are scored again at each new position. If no agent token wins within that
budget (or the model ends its answer), the router falls back to the most probable agent at
the prompt end and says so in ``RouteResult.error``: a usable answer, never a silent one.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any, Literal

import torch
from pydantic import BaseModel, ConfigDict, Field

from agentlab.config import load_config
from agentlab.errors import ConfigError, DataError
from agentlab.llm.config import LLMConfig
from agentlab.metaagent.cache import HiddenCache
from agentlab.metaagent.checkpoint import TokenCheckpoint, check_compatible, load_checkpoint, save_checkpoint
from agentlab.metaagent.data import TrainingSet
from agentlab.metaagent.features import Features, FeatureSpec, Query, TextFeatureExtractor
from agentlab.metaagent.head import AgentHead
from agentlab.metaagent.route_state import RouteStates, TaskRun
from agentlab.tasks.decisions import RouteResult
from agentlab.metaagent.router import Router, parse_options
from agentlab.metaagent.train import TrainConfig, initial_weights, start_head, train_head
from agentlab.pool import AgentPool

log = logging.getLogger(__name__)


class AgentTokenConfig(BaseModel):
    """One AgentToken run: prompt, hidden-state choice, training data and hyper-parameters.

    Loadable from YAML (``AgentTokenConfig.from_yaml``) and fillable from a notebook's
    parameters cell; ``router_options()`` gives the router's keyword options.
    """

    model_config = ConfigDict(extra="forbid")

    template: str = "metaagent/router_agenttoken"
    feature: FeatureSpec = FeatureSpec()
    train: TrainConfig = TrainConfig()
    max_word_tokens: int = 8
    demos: Path | None = None
    #: "seed" by default: on SmolLM2-135M the self-instruct rows have not raised benchmark
    #: accuracy (benchmarks/results/agenttoken_tuning.md, data_size.md); "all" adds them.
    source: Literal["all", "seed", "generated"] = "seed"
    per_agent: int | None = None
    #: add each document's Applications/Capabilities requests (:mod:`agentlab.metaagent.augment`);
    #: off by default: on the seeds they helped the 313 benchmark tasks but not the project set
    documents: bool = False
    #: fit the ranking temperature out of fold (does not change any routing decision)
    calibrate: bool = True

    @classmethod
    def from_yaml(cls, path: str | Path) -> AgentTokenConfig:
        return load_config(cls, path, what="AgentToken config file")

    def router_options(self) -> dict[str, Any]:
        return {"template": self.template, "feature": self.feature, "train": self.train, "max_word_tokens": self.max_word_tokens,
                "calibrate": self.calibrate}


class AgentTokenOptions(BaseModel):
    """The AgentToken router's own options (next to the run options every router takes)."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    template: str = Field("metaagent/router_agenttoken", description="router prompt template in data/prompts/")
    feature: FeatureSpec | None = None
    train: TrainConfig | None = None
    max_word_tokens: int = Field(8, description="word tokens decoded before falling back to the prompt-end ranking")
    batch_size: int = Field(16, description="feature-extraction batch size")
    #: further router prompts the training examples are also rendered in (prompt-template
    #: augmentation); routing always uses ``template``
    augment_templates: list[str] = Field(default_factory=list)
    #: fit the ranking's softmax temperature on out-of-fold logits (see :mod:`agentlab.metaagent.calibrate`)
    calibrate: bool = False
    #: a ready feature extractor (tests, or sharing one across routers); built from ``llm`` when None
    extractor: TextFeatureExtractor | None = None


class AgentTokenRouter(Router):
    """Options: :class:`AgentTokenOptions` (``template``, ``feature``, ``train``,
    ``max_word_tokens``, ``batch_size``, ``extractor``) plus the run options: ``use_cache``
    keeps hidden-state features on disk, ``seed`` (when given) overrides ``train.seed``."""

    name = "agenttoken"

    def __init__(self, pool: AgentPool, llm: LLMConfig | None = None, **options: Any) -> None:
        super().__init__(pool, llm, **options)
        opts = parse_options(AgentTokenOptions, self.options, self.name)
        self.template_name = opts.template
        self.feature = opts.feature or FeatureSpec()
        train = opts.train or TrainConfig()
        if self.run_options.seed is not None:
            train = train.model_copy(update={"seed": self.run_options.seed})
        self.train_config = train
        self.max_word_tokens = opts.max_word_tokens
        self.augment_templates = list(opts.augment_templates)
        self.calibrate = opts.calibrate
        #: divides the agent logits of the ranking (never the greedy V ∪ A decision)
        self.temperature = 1.0
        #: out-of-fold agent logits of the last calibrated fit (training examples x agents), else None
        self.oof_logits: torch.Tensor | None = None
        self.use_cache = self.run_options.use_cache
        self.batch_size = opts.batch_size
        self.progress = self.run_options.progress
        self.head: AgentHead | None = None
        self.agents: list[str] = []
        self.metrics: dict[str, Any] = {}
        self.history: list[dict[str, Any]] = []
        self._extractor: TextFeatureExtractor | None = opts.extractor
        self._cache: HiddenCache | None = None
        self._route_states: RouteStates | None = None

    # ------------------------------------------------------------------ backbone
    @property
    def extractor(self) -> TextFeatureExtractor:
        if self._extractor is None:
            from agentlab.llm import load_local

            self._extractor = TextFeatureExtractor(load_local(self.llm), self.template_name, self.feature)
        return self._extractor

    @property
    def route_states(self) -> RouteStates:
        """Single-task states over the once-computed prompt head (:mod:`agentlab.metaagent.route_state`),
        kept beside the disk cache: both belong to the router, the extractor stays a pure function."""
        if self._route_states is None or self._route_states.fx is not self.extractor:
            self._route_states = RouteStates(self.extractor)
        return self._route_states

    def features(self, queries: list[Query]) -> Features:
        if not self.use_cache:
            return self.extractor.features(queries, batch_size=self.batch_size)
        if self._cache is None:
            self._cache = HiddenCache(self.extractor)
        return self._cache.get(queries, batch_size=self.batch_size, progress=self.progress)

    def _states(self, queries: list[Query]) -> tuple[torch.Tensor, list[TaskRun | None]]:
        """h for routing ``queries`` (``[n, d]``), and for a task routed alone without the disk cache
        its forward pass (:class:`~agentlab.metaagent.route_state.TaskRun`), which word decoding continues.

        A new task routed alone is the cold route: it runs only its own tokens over the shared prompt
        head (:mod:`agentlab.metaagent.route_state`) and skips ``logsumexp(W_V h)``, which routing
        never reads. Everything else (batches, the disk cache) goes through :meth:`features`."""
        if not self.use_cache and len(queries) == 1 and self.feature.is_next_token:
            fast = self.route_states
            fast.warm()
            if fast.supported:
                run = fast.run(queries[0])
                return run.h[None], [run]
        return self.features(queries).h, [None] * len(queries)

    def warm_up(self) -> None:
        """Task-independent one-off work before the first route (the shared prompt head's key/value
        cache), so a new task's first route pays only for its own tokens. Called by :meth:`load`."""
        if self.feature.is_next_token:
            self.route_states.warm()

    @staticmethod
    def _queries(tasks: list[str], states: list[str | None] | None) -> list[Query]:
        if states is not None and len(states) != len(tasks):
            raise DataError(f"{len(states)} states for {len(tasks)} tasks")
        return [Query(t, states[i] if states else None) for i, t in enumerate(tasks)]

    # ------------------------------------------------------------------ training
    def _training_features(self, train: TrainingSet) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        """(h, vocab_lse, labels, groups) of ``train`` under the router prompt and every
        augmentation prompt; ``groups[i]`` is the index of row i's text in ``train``."""
        queries = self._queries(train.texts, train.states)
        feats = [self.features(queries)]
        for name in self.augment_templates:
            fx = TextFeatureExtractor(self.extractor.backend, name, self.feature)
            if self.use_cache:
                feats.append(HiddenCache(fx).get(queries, batch_size=self.batch_size, progress=self.progress))
            else:
                feats.append(fx.features(queries, batch_size=self.batch_size))
        k = len(feats)
        labels = torch.tensor(train.labels).repeat(k)
        groups = torch.arange(len(train)).repeat(k)
        return torch.cat([f.h for f in feats]), torch.cat([f.vocab_lse for f in feats]), labels, groups

    def fit(self, train: TrainingSet) -> dict[str, float]:
        """Train one token per agent of ``train.agents`` (the row order) from scratch."""
        for a in train.agents:
            self.pool.get(a)  # unknown agent -> UnknownAgentError
        start = time.perf_counter()
        counts = train.counts()
        if empty := [a for a, c in counts.items() if c == 0]:
            raise DataError(f"no demonstrations for agent(s) {', '.join(empty)}")
        h, lse, labels, groups = self._training_features(train)
        cfg = self.train_config
        w, _ = self.extractor.word_head()
        init = initial_weights(cfg, train.agents, self.extractor.tokenizer, w, h.shape[1])
        self.head = start_head(cfg, init, h, lse, labels)
        self.agents = list(train.agents)
        m = train_head(self.head, h, lse, labels, cfg, progress=self.progress)
        self.temperature = 1.0
        if self.calibrate:
            from agentlab.metaagent.calibrate import calibrate

            self.temperature, m["oof_acc"], oof = calibrate(h, lse, labels, groups, init, cfg)
            self.oof_logits = oof[: len(train)]  # the router prompt's rows, in ``train`` order
        m["temperature"] = self.temperature
        m["seconds_total"] = time.perf_counter() - start
        self.metrics = m
        self.history = [{"op": "fit", "agents": len(self.agents), "examples": len(train)}]
        return m

    def add_agent(self, name: str, train: TrainingSet) -> dict[str, float]:
        """Incremental enrolment: append a row for ``name`` and train only that row.

        ``train`` should hold the new agent's demonstrations *and* the existing agents' (the
        new row also has to learn where it does not belong); existing rows stay bit-identical.
        """
        if self.head is None:
            raise ConfigError("train or load the router before adding an agent")
        self.pool.get(name)
        if name in self.agents:
            raise ConfigError(f"agent '{name}' already has a token; retrain to change it")
        if name not in train.agents or train.counts()[name] == 0:
            raise DataError(f"no demonstrations for new agent '{name}'")
        agents = self.agents + [name]
        sub = train.restrict(agents)
        h, lse, labels, _ = self._training_features(sub)
        cfg = self.train_config
        w, _ = self.extractor.word_head()
        new_row = initial_weights(cfg, [name], self.extractor.tokenizer, w, h.shape[1])
        bias = None
        if cfg.init == "lda" or self.head.has_bias:
            # the new row (and its bias) from the discriminant of every agent's examples; old rows kept
            start = start_head(cfg.model_copy(update={"init": "lda"}), torch.zeros(len(agents), h.shape[1]), h, lse, labels)
            new_row = start.weight.detach()[-1:]
            bias = torch.cat([self.head.bias.detach(), start.bias.detach()[-1:]])
        head = AgentHead(len(agents), h.shape[1], logit_bias=self.head.logit_bias,
                         init=torch.cat([self.head.weight.detach(), new_row]), bias=bias)
        m = train_head(head, h, lse, labels, cfg, trainable_rows=[len(agents) - 1], progress=self.progress)
        self.head, self.agents = head, agents
        self.history.append({"op": "add", "agent": name, "examples": len(sub), "train_acc": m["train_acc"]})
        self.metrics = {**self.metrics, f"add:{name}": m}
        return m

    # ------------------------------------------------------------------ inference
    def _require_head(self) -> AgentHead:
        if self.head is None:
            raise ConfigError("the AgentToken router has no tokens: call fit() or load a checkpoint")
        return self.head

    def trainable_parameters(self) -> int:
        """The agent-token rows ``W_A`` (agents x hidden size, plus one bias per agent when the head
        has one); 0 before fit or load."""
        return 0 if self.head is None else sum(int(p.numel()) for p in self.head.parameters_to_train())

    def _ranking(self, logits: torch.Tensor) -> list[tuple[str, float]]:
        """Agents by ``softmax(logits / temperature)``, most probable first."""
        probs = torch.softmax(logits.float() / self.temperature, -1)
        order = torch.argsort(probs, descending=True)
        return [(self.agents[i], float(probs[i])) for i in order]

    @torch.no_grad()
    def agent_logits(self, tasks: list[str], states: list[str | None] | None = None) -> torch.Tensor:
        """``W_A h + b`` at the prompt end, ``[tasks, agents]`` (columns in ``self.agents`` order)."""
        head = self._require_head()
        return head.agent_logits(self._states(self._queries(tasks, states))[0])

    @torch.no_grad()
    def rank(self, tasks: list[str], states: list[str | None] | None = None) -> list[list[tuple[str, float]]]:
        return [self._ranking(z) for z in self.agent_logits(tasks, states)]

    @torch.no_grad()
    def _choose(self, tasks: list[str], states: list[str | None] | None = None) -> list[RouteResult]:
        return self.decode(tasks, states)

    @torch.no_grad()
    def decode(
        self, tasks: list[str], states: list[str | None] | None = None, prior: torch.Tensor | None = None
    ) -> list[RouteResult]:
        """Greedy decoding over ``V ∪ A`` per task; ``prior [tasks, agents]`` (log-space, e.g. another
        router's log-probabilities) is added to the agent logits at every position (product of experts)."""
        head = self._require_head()
        queries = self._queries(tasks, states)
        if prior is not None and tuple(prior.shape) != (len(tasks), head.n_agents):
            raise DataError(f"prior of shape {tuple(prior.shape)} for {len(tasks)} tasks and {head.n_agents} agents")
        hs, runs = self._states(queries)
        results: list[RouteResult] = []
        for i, (q, h, run) in enumerate(zip(queries, hs, runs)):
            bias = None if prior is None else prior[i].float()
            z = head.agent_logits(h[None])[0]
            first = self._ranking(z if bias is None else z + bias)
            if not self.feature.is_next_token:
                # A pooled / intermediate-layer h is not a next-token state: no word decoding.
                results.append(RouteResult(agent=first[0][0], ranking=first))
                continue
            results.append(self._decode(q, h, first, bias, run))
        return results

    def _decode(self, q: Query, h: torch.Tensor, first: list[tuple[str, float]], bias: torch.Tensor | None = None,
                run: TaskRun | None = None) -> RouteResult:
        """Greedy decoding over V ∪ A from the prompt end, at most ``max_word_tokens`` words; each word
        continues ``run`` (the task's own forward pass) when there is one, else re-runs ``prefix + task + words``."""
        head, fx = self._require_head(), self.extractor
        stop_ids = {i for i in (fx.tokenizer.eos_token_id, fx.tokenizer.pad_token_id) if i is not None}
        im_end = fx.tokenizer.convert_tokens_to_ids("<|im_end|>")
        if isinstance(im_end, int) and im_end != fx.tokenizer.unk_token_id:
            stop_ids.add(im_end)
        words: list[int] = []
        for step in range(self.max_word_tokens + 1):
            if step > 0:
                h = run.extend(words[-1]) if run is not None else fx.hidden_for_ids([fx.check_length([q])[0] + words])[0]
            word_logits = fx.vocab_logits(h[None])[0]
            agent_logits = head.agent_logits(h[None])[0]
            if bias is not None:
                agent_logits = agent_logits + bias
            if agent_logits.max() > word_logits.max():
                ranking = self._ranking(agent_logits)
                return RouteResult(agent=ranking[0][0], ranking=ranking, raw=fx.tokenizer.decode(words) or None)
            nxt = int(word_logits.argmax())
            if nxt in stop_ids or step == self.max_word_tokens:
                break
            words.append(nxt)
        text = fx.tokenizer.decode(words)
        return RouteResult(
            agent=first[0][0],
            ranking=first,
            error=f"no agent token won within {len(words)} decoded word token(s) (model wrote {text!r}); "
            "fell back to the most probable agent at the prompt end",
            raw=text,
        )

    # ------------------------------------------------------------------ persistence
    def checkpoint(self) -> TokenCheckpoint:
        head = self._require_head()
        fx = self.extractor
        return TokenCheckpoint(
            weight=head.weight.detach().clone(),
            bias=head.bias.detach().clone() if head.has_bias else None,
            agents=list(self.agents),
            backbone_id=fx.model_id,
            backbone_fingerprint=fx.fingerprint,
            template_name=fx.template.name,
            template_sha256=fx.template.sha256,
            feature=self.feature.model_dump(),
            logit_bias=head.logit_bias,
            temperature=self.temperature,
            train_config=self.train_config.model_dump(),
            metrics={k: v for k, v in self.metrics.items() if isinstance(v, (int, float, dict))},
            history=self.history,
        )

    def save(self, path: Path) -> None:
        save_checkpoint(self.checkpoint(), path)

    @classmethod
    def load(cls, path: Path, pool: AgentPool, llm: LLMConfig | None = None, **options: Any) -> AgentTokenRouter:
        ckpt = load_checkpoint(path)
        router = cls(
            pool,
            llm,
            template=ckpt.template_name,
            feature=FeatureSpec(**ckpt.feature),
            train=TrainConfig(**ckpt.train_config) if ckpt.train_config else None,
            **options,
        )
        fx = router.extractor
        check_compatible(
            ckpt,
            path,
            backbone_id=fx.model_id,
            fingerprint=fx.fingerprint,
            template=fx.template,
            pool_names=pool.names,
        )
        router.head = AgentHead(len(ckpt.agents), ckpt.weight.shape[1], logit_bias=ckpt.logit_bias, init=ckpt.weight, bias=ckpt.bias)
        router.agents = list(ckpt.agents)
        router.temperature = ckpt.temperature
        router.metrics, router.history = dict(ckpt.metrics), list(ckpt.history)
        router.warm_up()
        missing = [a for a in pool.names if a not in router.agents]
        if missing:
            log.warning(
                "%s: %d pool agent(s) have no token and cannot be chosen: %s (add them with `agentlab train --add NAME`)",
                path, len(missing), ", ".join(missing),
            )
        return router
