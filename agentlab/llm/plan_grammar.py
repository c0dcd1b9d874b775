"""Plans well-formed by construction: decoding restricted to the manager's plan grammar.

A :class:`PlanGrammar` says what a plan may look like::

    plan := step{min_steps..max_steps} EOS
    step := "###" NAME ":" SUBTASK "###" "\\n"

with NAME one of the candidate agents (the router's top-K) and never the previous step's
agent, SUBTASK free text without ``#`` or a line break, 1..``max_subtask_tokens`` tokens
(optionally only words of ``copy_from``, the task's own text). A backend that can honour it
declares ``Capabilities.plan_grammar`` and reads ``SamplingParams.grammar``:

* :class:`~agentlab.llm.local.LocalHFBackend` runs :class:`PlanLogitsProcessor`, a small state
  machine over token ids (the fixed ``###``/``:`` pieces are forced token by token, names walk
  a trie of their token ids, subtask tokens come from a precomputed mask), so every answer
  parses;
* an OpenAI-compatible server configured with ``llm.guided_regex: true`` (vLLM) gets
  :meth:`PlanGrammar.regex` as ``guided_regex``; a regex cannot say "not the previous agent",
  so that rule is left to the manager's check and retry there;
* every other backend refuses a grammar with one :class:`~agentlab.errors.ConfigError` line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agentlab.errors import ConfigError

if TYPE_CHECKING:  # pragma: no cover
    import torch


@dataclass(frozen=True)
class PlanGrammar:
    """The shape of a plan the decoder may produce."""

    agents: tuple[str, ...]
    max_steps: int = 3
    min_steps: int = 1
    max_subtask_tokens: int = 40
    #: restrict subtask words to this text's words (the task instruction); None: any text
    copy_from: str | None = None

    def __post_init__(self) -> None:
        if not self.agents:
            raise ConfigError("a plan grammar needs at least one candidate agent")
        if not 1 <= self.min_steps <= self.max_steps:
            raise ConfigError(f"plan grammar: need 1 <= min_steps ({self.min_steps}) <= max_steps ({self.max_steps})")
        if len(self.agents) == 1 and self.max_steps > 1:  # no agent twice in a row: one agent makes one step
            object.__setattr__(self, "max_steps", 1)
            object.__setattr__(self, "min_steps", 1)

    def regex(self) -> str:
        """The grammar as a regular expression (for servers with regex-guided decoding; it
        cannot forbid the same agent twice in a row)."""
        names = "|".join(re.escape(a) for a in self.agents)
        step = rf"###({names}):[^#\n]{{1,{4 * self.max_subtask_tokens}}}###\n"
        return rf"({step}){{{self.min_steps},{self.max_steps}}}"

    def logits_processor(self, tokenizer: Any) -> PlanLogitsProcessor:
        """The local decoder's constraint for this grammar."""
        return PlanLogitsProcessor(tokenizer, self)


def refuse_grammar(backend: Any, grammar: Any) -> None:
    """Raise the one-line ConfigError a backend without grammar support gives for a grammar."""
    if grammar is not None:
        raise ConfigError(f"{type(backend).__name__} ({getattr(backend, 'model_id', '?')}) cannot constrain decoding to the plan "
                          "grammar (capabilities.plan_grammar is false); use the embedded/local model, an OpenAI-compatible "
                          "server with llm.guided_regex: true (vLLM), or the unconstrained manager (--unconstrained)")


class _Trie:
    __slots__ = ("children", "names", "end")

    def __init__(self) -> None:
        self.children: dict[int, _Trie] = {}
        self.names: set[str] = set()
        self.end: str | None = None


@dataclass
class _Row:
    """Where one sequence is in the grammar."""

    state: str = "forced"  # forced | name | subtask | between | done
    queue: list[int] = field(default_factory=list)
    then: str = "name"
    node: _Trie | None = None
    prev: str | None = None
    chosen: list[str] = field(default_factory=list)
    sub_tokens: int = 0


class PlanLogitsProcessor:
    """A transformers logits processor that keeps every sequence inside a :class:`PlanGrammar`.

    Built per ``generate`` call (it remembers where each sequence is); token texts are read
    once per tokenizer. Works for any batch size (each row has its own state).
    """

    def __init__(self, tokenizer: Any, grammar: PlanGrammar) -> None:
        import torch

        self.grammar = grammar
        self.eos = int(tokenizer.eos_token_id)
        enc = lambda s: list(tokenizer.encode(s, add_special_tokens=False))  # noqa: E731
        self.open_ids, self.sep_ids = enc("###"), enc(":")
        self.close_ids = enc("###\n")
        if not self.open_ids or not self.sep_ids or not self.close_ids:
            raise ConfigError("the tokenizer encodes a plan delimiter to no tokens; cannot constrain decoding")
        self.root = _Trie()
        for name in grammar.agents:
            node = self.root
            node.names.add(name)
            for t in enc(name):
                node = node.children.setdefault(t, _Trie())
                node.names.add(name)
            node.end = name
        texts = token_texts(tokenizer)
        special = set(getattr(tokenizer, "all_special_ids", []) or [])
        ok = [bool(t) and "#" not in t and "\n" not in t and "\r" not in t and i not in special for i, t in enumerate(texts)]
        if grammar.copy_from is not None:
            words = {w.lower() for w in re.findall(r"[\w'.,/-]+|\S", grammar.copy_from)}
            keep = set()
            for w in words:
                for variant in (w, " " + w):
                    keep.update(enc(variant))
            for i, t in enumerate(texts):  # pieces of a task word (and plain spacing) stay allowed
                if ok[i] and i not in keep and t.strip().lower() not in words:
                    ok[i] = False
        self.free = torch.tensor(ok, dtype=torch.bool)
        self.rows: list[_Row] | None = None
        self.prompt_len = 0

    # -- the state machine ----------------------------------------------------------
    def _enter(self, row: _Row, queue: list[int], then: str) -> None:
        row.state, row.queue, row.then = "forced", list(queue), then
        if not row.queue:
            self._arrive(row, then)

    def _arrive(self, row: _Row, state: str) -> None:
        row.state = state
        if state == "name":
            row.node = self.root
        elif state == "subtask":
            row.sub_tokens = 0

    def _advance(self, row: _Row, tok: int) -> None:
        if row.state == "forced":
            row.queue.pop(0)
            if not row.queue:
                self._arrive(row, row.then)
        elif row.state == "name":
            assert row.node is not None
            if tok in row.node.children and self._name_open(row.node.children[tok], row.prev):
                row.node = row.node.children[tok]
            else:  # the separator's first token after a complete name
                assert row.node.end is not None
                row.chosen.append(row.node.end)
                row.prev = row.node.end
                self._enter(row, self.sep_ids[1:], "subtask")
        elif row.state == "subtask":
            if tok == self.close_ids[0] and row.sub_tokens > 0:
                self._enter(row, self.close_ids[1:], "between")
            else:
                row.sub_tokens += 1
        elif row.state == "between":
            if tok == self.eos:
                row.state = "done"
            else:
                self._enter(row, self.open_ids[1:], "name")

    def _name_open(self, node: _Trie, prev: str | None) -> bool:
        return bool(node.names - {prev}) if prev is not None else bool(node.names)

    def _allowed(self, row: _Row) -> list[int] | str:
        """Token ids allowed next, or ``"free"`` / ``"free+close"`` for subtask text."""
        if row.state == "forced":
            return [row.queue[0]]
        if row.state == "name":
            assert row.node is not None
            ids = [t for t, child in row.node.children.items() if self._name_open(child, row.prev)]
            if row.node.end is not None and row.node.end != row.prev:
                ids.append(self.sep_ids[0])
            return ids
        if row.state == "subtask":
            if row.sub_tokens >= self.grammar.max_subtask_tokens:
                return [self.close_ids[0]]
            return "free+close" if row.sub_tokens > 0 else "free"
        if row.state == "between":
            steps = len(row.chosen)
            ids = [self.eos] if steps >= self.grammar.min_steps else []
            if steps < self.grammar.max_steps:
                ids.append(self.open_ids[0])
            return ids
        return [self.eos]

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        import torch

        if self.rows is None or len(self.rows) != input_ids.shape[0]:
            self.rows = [_Row() for _ in range(input_ids.shape[0])]
            for row in self.rows:
                self._enter(row, self.open_ids, "name")
            self.prompt_len = input_ids.shape[1]
        elif input_ids.shape[1] > self.prompt_len:
            last = input_ids[:, -1].tolist()
            for row, tok in zip(self.rows, last):
                self._advance(row, int(tok))
        mask = torch.zeros_like(scores, dtype=torch.bool)
        free = self.free.to(scores.device)
        for i, row in enumerate(self.rows):
            allowed = self._allowed(row)
            if isinstance(allowed, str):
                mask[i, : free.shape[0]] = free
                if allowed == "free+close":
                    mask[i, self.close_ids[0]] = True
            else:
                mask[i, allowed] = True
        return scores.masked_fill(~mask, float("-inf"))

    def chosen(self) -> list[list[str]]:
        """The agents each sequence chose so far (for tests and logs)."""
        return [list(r.chosen) for r in self.rows or []]


_TEXTS: dict[int, list[str]] = {}


def token_texts(tokenizer: Any) -> list[str]:
    """The decoded text of every token id (computed once per tokenizer)."""
    key = id(tokenizer)
    if key not in _TEXTS:
        n = len(tokenizer)
        _TEXTS[key] = tokenizer.batch_decode([[i] for i in range(n)], skip_special_tokens=False)
    return _TEXTS[key]
