"""ICL router: every agent document in the prompt, the model names the agent (paper's Appendix G.2).

Two outputs per task, both from the frozen backbone with no training:

- ``route``: greedy generation, parsed for ``###Name###`` (:func:`parse_agent_name`). This
  is the paper's ICL router; an answer without a pool agent is a failure with the reason.
- ``rank``: the log-likelihood of each agent's answer ``###Name###`` as the continuation
  of the prompt, normalised over the pool (softmax of the summed token log-probs), so the
  router gives a full distribution like every other router. Sum, not mean, because the
  sum is the probability of the whole answer; it favours names with fewer tokens, which is
  the model's real preference, not an artefact (``length_norm=True`` switches to the mean).

Cost: the documents are identical for every task, so the prompt up to the task is
encoded once into a key/value cache (:class:`agentlab.llm.prefix_cache.PrefixLM`) and each task only pays
for its own tokens plus the packed candidate answers (:mod:`agentlab.llm.scoring`).

Context: documents stop fitting long before the pool is large (30 agents x ~230 tokens
already fill most of SmolLM2's 8,192). With ``max_demos=None`` the router keeps as many
demonstrations per document (up to ``max_demos_cap``) as fit; when not even the bare
documents fit it raises :class:`ContextOverflowError` saying how many tokens were needed.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from collections.abc import Collection
from typing import TYPE_CHECKING, Any
from functools import cached_property

import numpy as np
import torch
from pydantic import BaseModel, ConfigDict, Field

from agentlab.errors import ConfigError, DataError
from agentlab.llm.base import ChatMessage
from agentlab.llm.config import LLMConfig
from agentlab.metaagent.baselines.adapted_lm import ANSWER_PROBE, answer_text
from agentlab.metaagent.baselines.common import rankings, softmax_rows
from agentlab.llm.prefix_cache import PrefixCachedBackend, PrefixLM
from agentlab.llm.scoring import split_common_prefix
from agentlab.metaagent.data import TrainingSet
from agentlab.metaagent.manager import HashManager, render_state
from agentlab.dialogue.templates import PromptTemplate, load_template
from agentlab.tasks.decisions import RouteResult
from agentlab.metaagent.router import Router, parse_options
from agentlab.pool import AgentPool

if TYPE_CHECKING:
    from agentlab.llm.local import LocalHFBackend

log = logging.getLogger(__name__)

_TASK, _STATE = "\x00TASK\x00", "\x00STATE\x00"
NAME_RE = re.compile(r"#{2,}[ \t]*([A-Za-z][A-Za-z0-9_]*)[ \t]*#{2,}")
OPEN_RE = re.compile(r"#{2,}[ \t]*([A-Za-z][A-Za-z0-9_]*)")


class ContextOverflowError(ConfigError):
    """The agent documents (or a task) do not fit the backbone's context window."""


@dataclass
class ParsedName:
    agent: str | None
    problem: str | None = None  # failure reason, or a warning when agent is set


def parse_agent_name(text: str, names: list[str]) -> ParsedName:
    """The agent named in a router answer.

    Accepts ``###Name###`` (first pool name wins; case-insensitive), then an unterminated
    ``###Name`` (small models often stop early), then -- flagged with a warning -- the first
    pool name mentioned as a whole word. Anything else is a failure with the reason.
    """
    canon = {n.lower(): n for n in names}
    unknown: list[str] = []
    for rx, note in ((NAME_RE, None), (OPEN_RE, "answer lacks the closing ###")):
        for m in rx.finditer(text):
            real = canon.get(m.group(1).lower())
            if real is not None:
                return ParsedName(real, note)
            unknown.append(m.group(1))
    if names:
        words = re.compile(r"\b(" + "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True)) + r")\b", re.I)
        mentioned = words.search(text)
        if mentioned:
            return ParsedName(canon[mentioned.group(1).lower()], "answer not in ###Name### form; took the first agent name mentioned")
    if unknown:
        return ParsedName(None, f"answer names unknown agent(s): {', '.join(dict.fromkeys(unknown))}")
    snippet = text.strip().replace("\n", " ")[:80]
    return ParsedName(None, f"no ###Name### in the answer: {snippet!r}")


class ICLRouterConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    template: str = "metaagent/router_icl"
    max_demos: int | None = Field(None, ge=0, description="demonstrations per document; None = as many as fit")
    max_demos_cap: int = Field(3, ge=0)
    reserve_tokens: int = Field(256, ge=16, description="context kept free for the task, state and answer")
    max_new_tokens: int = Field(16, ge=1)
    chat: bool = True
    length_norm: bool = False
    prefill_chunk: int = Field(1024, ge=16)


class ICLRouter(Router):
    """All documents in context; generation for ``route``, name likelihood for ``rank``."""

    name = "icl"
    manager_uses_all_documents = True

    def __init__(self, pool: AgentPool, llm: LLMConfig | None = None, **options: Any) -> None:
        super().__init__(pool, llm, **options)
        self.cfg = parse_options(ICLRouterConfig, self.options, self.name)
        self.template: PromptTemplate = load_template(self.cfg.template)
        pos = [self.template.text.find("{" + f + "}") for f in ("documents", "state", "task")]
        if pos[0] < 0 or pos[2] < 0 or (pos[1] >= 0 and pos[1] < pos[0]) or pos[2] < pos[0]:
            raise ConfigError("an ICL template needs {documents} before {state} and {task}", where=self.template.path)
        self._lm: PrefixLM | None = None
        self._key: tuple[str, ...] | None = None
        self.suffix_text = ""
        self.demos_used: int | None = None
        self._manager: tuple[tuple[object, ...], HashManager] | None = None
        self.manager_demos: int | None = None

    @cached_property
    def backend(self) -> LocalHFBackend:
        from agentlab.llm import load_local

        return load_local(self.llm)

    def fit(self, train: TrainingSet) -> dict[str, float]:
        """Nothing to train: the documents (with their demonstrations) are the router's knowledge."""
        return {"seconds": 0.0, "examples": 0.0}

    # ------------------------------------------------------------------ prompt
    def _split(self, max_demos: int) -> tuple[str, str]:
        documents = "\n\n".join(d.render(max_demos) for d in self.pool)
        text = self.template.render(documents=documents, task=_TASK, state=_STATE)
        if self.cfg.chat:
            text = self.backend.chat_prompt([ChatMessage("user", text)])
        cut = min(i for i in (text.find(_TASK), text.find(_STATE)) if i >= 0)
        return text[:cut], text[cut:]

    def _encode(self, text: str) -> list[int]:
        return list(self.backend.tokenizer(text, add_special_tokens=False)["input_ids"])

    def prompt_tokens(self, max_demos: int) -> int:
        """Tokens of the shared prompt part (instructions + all documents) for ``max_demos``."""
        return len(self._encode(self._split(max_demos)[0]))

    def _choose_demos(self) -> tuple[int, list[int], str]:
        limit = self.backend.context_length
        # down to -1: the brief documents (no limitations, no examples) when even bare ones do not fit
        candidates = [self.cfg.max_demos] if self.cfg.max_demos is not None else range(self.cfg.max_demos_cap, -2, -1)
        need = None
        for k in candidates:
            prefix, suffix = self._split(k)
            ids = self._encode(prefix)
            if len(ids) + self.cfg.reserve_tokens <= limit:
                return k, ids, suffix
            need = len(ids)
        raise ContextOverflowError(
            f"{len(self.pool)} agent documents need {need} prompt tokens "
            f"(+{self.cfg.reserve_tokens} reserved for the task) with "
            f"{candidates[-1] if isinstance(candidates, list) else 'no'} demonstration(s) each (brief documents), "
            f"but the model's context is {limit}; use fewer agents or a longer-context backbone",
            where=self.template.path,
        )

    @property
    def prefix_ids(self) -> list[int]:
        return self.lm.prefix_ids

    @property
    def lm(self) -> PrefixLM:
        """Instructions + all documents, encoded once per pool (rebuilt if the pool changes)."""
        key = tuple(self.pool.names)
        if self._lm is None or self._key != key:
            self.demos_used, ids, self.suffix_text = self._choose_demos()
            self._lm, self._key = PrefixLM(self.backend, ids, chunk=self.cfg.prefill_chunk), key
            log.info("ICL prompt: %d agents, %d demonstration(s) each, %d tokens", len(self.pool), self.demos_used, len(ids))
        return self._lm

    def _suffix_ids(self, task: str, state: str | None) -> list[int]:
        self.lm  # noqa: B018 - builds the prompt split on first use
        text = self.suffix_text.replace(_STATE, render_state(state)).replace(_TASK, task.strip())
        ids = self._encode(text)
        if len(self.prefix_ids) + len(ids) + 32 > self.backend.context_length:
            raise DataError(
                f"task does not fit: prompt {len(self.prefix_ids)} + task {len(ids)} tokens exceed the "
                f"context of {self.backend.context_length}: {task[:60]!r}"
            )
        return ids

    # ------------------------------------------------------------------ ranking
    def scores(self, tasks: list[str], states: list[str | None] | None = None) -> np.ndarray:
        """Summed (or mean, with ``length_norm``) log-likelihood of each pool agent's answer."""
        from tqdm.auto import tqdm

        lm = self.lm
        states = states or [None] * len(tasks)
        answers = [self._encode(answer_text(n)) for n in self.pool.names]
        forced, _ = split_common_prefix(answers + [self._encode(answer_text(n)) for n in ANSWER_PROBE])
        cands = [a[len(forced) :] for a in answers]
        lengths = torch.tensor([len(c) for c in cands], dtype=torch.float32)
        out = np.empty((len(tasks), len(cands)))
        pairs = list(zip(tasks, states))
        for i, (task, state) in enumerate(tqdm(pairs, desc="icl rank", disable=not self.run_options.progress, leave=False)):
            lp = lm.score(self._suffix_ids(task, state) + forced, cands)
            out[i] = (lp / lengths if self.cfg.length_norm else lp).numpy()
        return out

    def rank(self, tasks: list[str], states: list[str | None] | None = None) -> list[list[tuple[str, float]]]:
        if not tasks:
            return []
        return rankings(self.pool.names, softmax_rows(self.scores(tasks, states)))

    # ------------------------------------------------------------------ generation
    def generate(self, task: str, state: str | None = None) -> str:
        """Greedy answer after the cached documents, stopped at the closing ``###`` or a new line."""
        stop = lambda text: bool(NAME_RE.search(text)) or "\n" in text.strip()  # noqa: E731
        return self.lm.generate(self._suffix_ids(task, state), self.cfg.max_new_tokens, stop)

    def _choose(self, tasks: list[str], states: list[str | None] | None = None) -> list[RouteResult]:
        """The paper's ICL router: the generated, parsed name (ranking attached for reference)."""
        states = states or [None] * len(tasks)
        ranks = self.rank(tasks, states)
        out = []
        for task, state, ranking in zip(tasks, states, ranks):
            raw = self.generate(task, state)
            parsed = parse_agent_name(raw, self.pool.names)
            out.append(RouteResult(agent=parsed.agent, ranking=ranking, error=parsed.problem, raw=raw))
        return out

    # ------------------------------------------------------------------ manager mode
    def manager_for_all(self, manager: HashManager) -> HashManager:
        """``manager`` over *all* documents (the paper's ICL manager), made to fit the context.

        Demonstrations per document shrink (from ``max_demos_cap``) until the prompt plus the
        answer budget and one corrective retry fit. On a local backend the prompt part before
        the task is cached once (:class:`PrefixCachedBackend`), so later tasks only pay for
        their own tokens. Built once per (manager, pool) and reused across calls.
        """
        key = (id(manager), id(manager.backend), manager.template.sha256, tuple(sorted(manager.settings().items())),
               tuple(self.pool.names))
        if self._manager is not None and self._manager[0] == key:
            return self._manager[1]
        backend = manager.backend
        new = manager.params.max_new_tokens
        docs = list(self.pool.agents)
        caps = backend.capabilities
        limit = caps.context_length or 0
        # The prefix cache needs the local model's weights and its chat template as text.
        local = caps.hidden_states and caps.chat_template
        need = 0
        for demos in range(self.cfg.max_demos_cap, -2, -1):  # -1: brief documents (AgentDocument.render)
            probe = manager.variant(max_demos=demos)
            plain = probe.prompt(_TASK, docs)
            with_state = probe.prompt(_TASK, docs, state=_STATE)
            if local:
                plain = backend.chat_prompt([ChatMessage("user", plain)])
                with_state = backend.chat_prompt([ChatMessage("user", with_state)])
            need = backend.count_tokens(plain) if caps.token_counting else 0
            if not limit or need + 2 * new + 200 <= limit:
                break
        else:
            raise ContextOverflowError(
                f"the manager prompt with all {len(docs)} documents needs {need} tokens in their brief form, "
                f"plus {2 * new + 200} for the answer and one retry; the model's context is {limit}",
                where=manager.template.path,
            )
        if local:
            common = 0
            while common < min(len(plain), len(with_state)) and plain[common] == with_state[common]:
                common += 1
            prefix = plain[: min(common, plain.index(_TASK))]
            backend = PrefixCachedBackend(backend, prefix, chunk=self.cfg.prefill_chunk)
        built = manager.variant(backend, max_demos=demos)
        self._manager, self.manager_demos = (key, built), demos
        log.info("ICL manager: %d documents with %d demonstration(s) each, %d prompt tokens", len(docs), demos, need)
        return built

    def manager_for(self, manager: HashManager) -> HashManager:
        """All documents, fitted to the context (:meth:`manager_for_all`)."""
        return self.manager_for_all(manager)

    def plan(
        self, tasks: list[str], manager: HashManager, *, k: int = 5, states: list[str | None] | None = None,
        acting: Collection[str] | None = None,
    ) -> list[RouteResult]:
        """ICL manager mode: every document (of the agents that can act, ``acting``) in the manager
        prompt (``k`` is ignored), pool order."""
        states = states or [None] * len(tasks)
        rankings = self.rank(tasks, states)
        full = self.manager_for_all(manager)
        docs = [d for d in self.pool.agents if acting is None or d.name in acting]
        out = []
        for task, state, ranking in zip(tasks, states, rankings):
            res = full.plan(task, docs, state=state)
            res.ranking = ranking
            out.append(res)
        return out

