"""Tool calls well-formed by construction: decoding restricted to a toolkit's calls.

A :class:`CallGrammar` says what a specialist's reply may be::

    reply := call{1..max_calls} EOS          (done() or fail('...') ends the reply)
    call  := NAME "(" arg (", " arg)* ")" "\\n"
    arg   := one of the slot's candidates    (a workspace file, a sheet, a phrase of the request ...)
           | "'" free text "'"               (a slot without candidates: new text)

with NAME a tool of the toolkit, every parameter given in order, and each argument's candidates
from :mod:`agentlab.toolkits.slots`. A local model decodes under :class:`CallLogitsProcessor` (the
fixed pieces forced token by token, names and candidates walked in tries of their token ids, free
text from a mask); an OpenAI-compatible server with regex-guided decoding gets :meth:`regex`.
Every reply then parses (:func:`agentlab.toolkits.base.parse_calls`), so a small model spends its
probability mass choosing *which* call and *which* values, not spelling them.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agentlab.errors import ConfigError
from agentlab.llm.plan_grammar import token_texts
from agentlab.toolkits.base import END_CALLS, Toolkit
from agentlab.toolkits.slots import SlotValues

if TYPE_CHECKING:  # pragma: no cover
    import torch

#: free text may not hold these (they close the argument, the call or the line)
_FORBIDDEN = ("'", '"', "\n", "\r", "\\")


@dataclass(frozen=True)
class CallGrammar:
    """The calls a reply may hold: per tool, each parameter's candidates (``None``: free text)."""

    tools: dict[str, tuple[tuple[str, ...] | None, ...]]
    max_calls: int = 3
    max_text_tokens: int = 32
    #: ``done()`` may be a reply's first call (not in an episode's first reply)
    done_first: bool = True
    #: a log-prior per tool name added to the logits of a reply's *first* call's name, along its
    #: trie (:mod:`agentlab.toolkits.prior`): the model and the prior multiply; empty: none
    name_prior: tuple[tuple[str, float], ...] = ()
    #: a log-prior over one argument's candidates, per ``(tool, argument index)``, added along that
    #: argument's trie in the same way (the GUI space's grounding of an element on the request's
    #: words, :mod:`agentlab.agents.gui_actions`); empty: none
    arg_prior: tuple[tuple[str, int, tuple[tuple[str, float], ...]], ...] = ()

    @classmethod
    def build(cls, kit: Toolkit, values: SlotValues, *, max_calls: int = 3, max_text_tokens: int = 32,
              names: list[str] | None = None, allow_done: bool = True,
              name_prior: dict[str, float] | None = None) -> CallGrammar:
        """The grammar of ``kit``'s tools (``names``: only these) over ``values``; a tool with a
        parameter that has no candidate here is left out (it could only be called with made-up values).
        ``allow_done=False`` (the first reply of an episode): ``done()`` may not be the reply's first
        call, since nothing is done yet (it may follow calls). ``name_prior``: a log-prior per tool
        for the first call's name (see :attr:`name_prior`); names the grammar does not hold are dropped."""
        tools: dict[str, tuple[tuple[str, ...] | None, ...]] = {}
        for name, tool in kit.tools.items():
            if names is not None and name not in names:
                continue
            args = []
            for p in tool.params:
                cands = values.candidates(p.slot)
                if cands is not None and p.type is int:  # a whole number slot offers whole numbers only
                    cands = [c for c in cands if re.fullmatch(r"[-+]?\d+", c)]
                args.append(None if cands is None else tuple(cands))
            if all(a is None or a for a in args):
                tools[name] = tuple(args)
        tools["done"] = ()
        tools["fail"] = (None,)
        prior = tuple((n, float(v)) for n, v in (name_prior or {}).items() if n in tools)
        return cls(tools, max_calls=max_calls, max_text_tokens=max_text_tokens, done_first=allow_done,
                   name_prior=prior)

    def regex(self) -> str:
        """The grammar as a regular expression (for servers with regex-guided decoding)."""
        free = r"'[^'\"\n\\]{0,200}'"
        calls = []
        for name, args in self.tools.items():
            parts = [free if a is None else "(" + "|".join(re.escape(c) for c in a) + ")" for a in args]
            calls.append(re.escape(name) + r"\(" + ", ".join(parts) + r"\)")
        call = "(" + "|".join(calls) + r")\n"
        return rf"({call}){{1,{self.max_calls}}}"

    def logits_processor(self, tokenizer: Any) -> CallLogitsProcessor:
        return CallLogitsProcessor(tokenizer, self)


class _Trie:
    __slots__ = ("children", "end")

    def __init__(self) -> None:
        self.children: dict[int, _Trie] = {}
        self.end: str | None = None


def _lse(values: list[float]) -> float:
    top = max(values)
    return top + math.log(sum(math.exp(v - top) for v in values)) if top > -math.inf else -math.inf


def _prior_bias(root: _Trie, prior: dict[str, float]) -> dict[int, dict[int | None, float]]:
    """Per trie node (by ``id``), the log-prior of each way on: a child token, or ``None`` for
    stopping at the name the node completes. Summed along a name's path it is that name's
    log-prior, renormalised over the names in the trie (names without a prior count as impossible)."""
    out: dict[int, dict[int | None, float]] = {}

    def total(node: _Trie) -> float:
        parts = [prior.get(node.end, -math.inf)] if node.end is not None else []
        parts += [total(child) for child in node.children.values()]
        return _lse(parts) if parts else -math.inf

    def walk(node: _Trie) -> None:
        here = total(node)
        if here == -math.inf:
            return
        ways: dict[int | None, float] = {tok: total(child) - here for tok, child in node.children.items()}
        if node.end is not None:
            ways[None] = prior.get(node.end, -math.inf) - here
        out[id(node)] = ways
        for child in node.children.values():
            walk(child)

    walk(root)
    return out


def _trie(strings: list[str], enc: Any) -> _Trie:
    root = _Trie()
    for s in strings:
        node = root
        for t in enc(s):
            node = node.children.setdefault(t, _Trie())
        node.end = s
    return root


@dataclass
class _Row:
    """Where one sequence is: a queue of segments still to produce, and the one in progress."""

    queue: list[tuple[str, Any]] = field(default_factory=list)
    seg: tuple[str, Any] = ("name", None)
    node: _Trie | None = None
    free_tokens: int = 0
    calls: int = 0
    done: bool = False


class CallLogitsProcessor:
    """A transformers logits processor keeping every sequence inside a :class:`CallGrammar`."""

    def __init__(self, tokenizer: Any, grammar: CallGrammar) -> None:
        import torch

        self.grammar = grammar
        self.eos = int(tokenizer.eos_token_id)
        self.enc = lambda s: list(tokenizer.encode(s, add_special_tokens=False))
        self.open, self.sep, self.close, self.quote = self.enc("("), self.enc(", "), self.enc(")\n"), self.enc("'")
        if not (self.open and self.sep and self.close and self.quote):
            raise ConfigError("the tokenizer encodes a call delimiter to no tokens; cannot constrain decoding")
        self.names = _trie(list(grammar.tools), self.enc)
        self.first_names = self.names if grammar.done_first else _trie([n for n in grammar.tools if n != "done"], self.enc)
        prior = dict(grammar.name_prior)
        self.prior_bias = _prior_bias(self.first_names, prior) if prior else {}
        self.args = {name: [None if a is None else _trie(list(a), self.enc) for a in args]
                     for name, args in grammar.tools.items()}
        #: per argument trie node (by ``id``), the log-prior of each way on (see :func:`_prior_bias`)
        self.arg_bias: dict[int, dict[int | None, float]] = {}
        for name, index, values in grammar.arg_prior:
            tries = self.args.get(name)
            trie = tries[index] if tries is not None and index < len(tries) else None
            if trie is not None:
                self.arg_bias.update(_prior_bias(trie, dict(values)))
        texts = token_texts(tokenizer)
        special = set(getattr(tokenizer, "all_special_ids", []) or [])
        ok = [bool(t) and not any(c in t for c in _FORBIDDEN) and i not in special for i, t in enumerate(texts)]
        self.free = torch.tensor(ok, dtype=torch.bool)
        self.rows: list[_Row] | None = None
        self.prompt_len = 0

    # -- segments -----------------------------------------------------------------------
    def _start_call(self, row: _Row) -> None:
        row.queue = []
        row.seg, row.node = ("name", None), self.first_names if row.calls == 0 else self.names

    def _after_name(self, row: _Row, name: str) -> None:
        segs: list[tuple[str, Any]] = [("forced", list(self.open))]
        for i, trie in enumerate(self.args[name]):
            if i:
                segs.append(("forced", list(self.sep)))
            segs += [("choice", trie)] if trie is not None else [("forced", list(self.quote)), ("free", None)]
        segs.append(("forced", list(self.close)))
        segs.append(("end_call", name))
        row.queue = segs
        self._next(row)

    def _next(self, row: _Row) -> None:
        if not row.queue:
            row.seg = ("between", None)
            return
        row.seg = row.queue.pop(0)
        kind, data = row.seg
        if kind == "choice":
            row.node = data
        elif kind == "free":
            row.free_tokens = 0
        elif kind == "end_call":
            row.calls += 1
            row.done = data in END_CALLS or row.calls >= self.grammar.max_calls
            self._next(row)

    def _advance(self, row: _Row, tok: int) -> None:
        kind, data = row.seg
        if kind == "forced":
            data.pop(0)
            if not data:
                self._next(row)
        elif kind in ("name", "choice"):
            assert row.node is not None
            if tok in row.node.children:
                row.node = row.node.children[tok]
                if kind == "name" and not row.node.children and row.node.end is not None:
                    self._after_name(row, row.node.end)
                elif kind == "choice" and not row.node.children and row.node.end is not None:
                    self._next(row)
            elif row.node.end is not None:  # the token after a complete name or value starts the next piece
                if kind == "name":
                    self._after_name(row, row.node.end)
                else:
                    self._next(row)
                self._advance(row, tok)
        elif kind == "free":
            if tok == self.quote[0] and len(self.quote) == 1:
                self._next(row)
            else:
                row.free_tokens += 1
        elif kind == "between":
            if tok != self.eos:
                self._start_call(row)
                self._advance(row, tok)

    def _allowed(self, row: _Row) -> list[int] | str:
        kind, data = row.seg
        if row.done and kind == "between":
            return [self.eos]
        if kind == "forced":
            return [data[0]]
        if kind in ("name", "choice"):
            assert row.node is not None
            ids = list(row.node.children)
            if row.node.end is not None and row.node.children:
                nxt = self._first_after(row)
                if nxt is not None:
                    ids.append(nxt)
            return ids
        if kind == "free":
            return [self.quote[0]] if row.free_tokens >= self.grammar.max_text_tokens else "free"
        if kind == "between":
            return [self.eos, *self.names.children]
        return [self.eos]

    def _first_after(self, row: _Row) -> int | None:
        """The first token of whatever follows a complete name or value."""
        if row.seg[0] == "name":
            return self.open[0]
        return row.queue[0][1][0] if row.queue and row.queue[0][0] == "forced" else None

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        import torch

        if self.rows is None or len(self.rows) != input_ids.shape[0]:
            self.rows = [_Row() for _ in range(input_ids.shape[0])]
            for row in self.rows:
                self._start_call(row)
            self.prompt_len = input_ids.shape[1]
        elif input_ids.shape[1] > self.prompt_len:
            for row, tok in zip(self.rows, input_ids[:, -1].tolist()):
                self._advance(row, int(tok))
        mask = torch.zeros_like(scores, dtype=torch.bool)
        free = self.free.to(scores.device)
        bias = torch.zeros_like(scores) if self.prior_bias or self.arg_bias else None
        for i, row in enumerate(self.rows):
            allowed = self._allowed(row)
            if isinstance(allowed, str):
                mask[i, : free.shape[0]] = free
                mask[i, self.quote[0]] = True
            else:
                mask[i, allowed] = True
                if bias is not None and row.calls == 0 and row.seg[0] == "name" and row.node is not None:
                    self._add_prior(bias[i], row.node)
                elif bias is not None and row.seg[0] == "choice" and row.node is not None and id(row.node) in self.arg_bias:
                    stop = self._first_after(row)
                    for tok, value in self.arg_bias[id(row.node)].items():
                        tid = stop if tok is None else tok
                        if tid is not None:
                            bias[i, tid] = value if value > -math.inf else -1e4
        out = scores if bias is None else scores + bias
        return out.masked_fill(~mask, float("-inf"))

    def _add_prior(self, bias: torch.Tensor, node: _Trie) -> None:
        """The first call's name prior at ``node`` (a stop at a complete name rides on ``(``)."""
        for tok, value in self.prior_bias.get(id(node), {}).items():
            tid = self.open[0] if tok is None else tok
            if value > -math.inf:
                bias[tid] = value
            else:
                bias[tid] = -1e4
