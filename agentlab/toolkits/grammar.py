"""Tool calls well-formed by construction: decoding restricted to a toolkit's calls.

A :class:`CallGrammar` says what a specialist's reply may be::

    reply := call{1..max_calls} EOS          (done() or fail('...') ends the reply)
    call  := NAME "(" arg (", " arg)* ")" "\\n"
    arg   := one of the slot's candidates    (a workspace file, a sheet, a phrase of the request ...)
           | "'" free text "'"               (a slot without candidates: new text)

with NAME a tool of the toolkit, every parameter given in order, and each argument's candidates
from :mod:`agentlab.toolkits.slots`. The grammar is Lark text (:meth:`CallGrammar.lark`) that
llguidance enforces (:mod:`agentlab.llm.guidance`): a local model decodes under it, and an
OpenAI-compatible server running the same engine gets the same text as ``guided_grammar`` (one
with regex-guided decoding only gets :meth:`CallGrammar.regex`). The tool and element priors are
the one hand-written part: a preference, not a rule, added as a bias on the text decoded so far.
Every reply then parses (:func:`agentlab.toolkits.base.parse_calls`), so a small model spends its
probability mass choosing *which* call and *which* values, not spelling them.
"""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agentlab.errors import ConfigError
from agentlab.llm.guidance import GrammarProcessor, alternatives, lit, lse
from agentlab.toolkits.base import END_CALLS, Toolkit
from agentlab.toolkits.slots import (DEFAULT_NUMBERS, MEANING_PRIOR_KINDS, QUOTE_PRIOR_KINDS, WORD_PRIOR_KINDS, SlotValues, combine_priors,
                                     flag_prior, meaning_prior, polarity_prior, quote_prior, word_prior)


#: a swap's two arguments are decoded as one choice among their differing pairs up to this many
MAX_PAIRS = 1600


@dataclass(frozen=True)
class CallGrammar:
    """The calls a reply may hold: per tool, each parameter's candidates (``None``: free text)."""

    tools: dict[str, tuple[tuple[str, ...] | None, ...]]
    max_calls: int = 3
    max_text_tokens: int = 32
    #: ``done()`` may be a reply's first call (not in an episode's first reply)
    done_first: bool = True
    #: ``fail(...)`` may be a reply's first call (not in an episode's first reply: a small model
    #: copies the prompt's ``fail('why')`` before trying anything -- three of the four browser tasks
    #: of the second development set ended so)
    fail_first: bool = True
    #: a log-prior per tool name added to the logits of a reply's *first* call's name, along its
    #: trie (:mod:`agentlab.toolkits.prior`): the model and the prior multiply; empty: none
    name_prior: tuple[tuple[str, float], ...] = ()
    #: a log-prior over one argument's candidates, per ``(tool, argument index)``, added along that
    #: argument's trie in the same way (the GUI space's grounding of an element on the request's
    #: words, :mod:`agentlab.agents.gui_actions`); empty: none
    arg_prior: tuple[tuple[str, int, tuple[tuple[str, float], ...]], ...] = ()
    #: per tool, the argument indices whose value may not equal the argument's before it (a swap's
    #: second thing: ``swap_paragraphs('cake.docx', 'oven', 'oven')`` cannot be decoded)
    differs: tuple[tuple[str, int], ...] = ()
    #: whole calls that may not be decoded again, as ``(tool, each argument as written)``: the calls
    #: that already ran in the episode (:meth:`build`'s ``exclude``); only :meth:`lark` enforces them
    banned: tuple[tuple[str, tuple[str, ...]], ...] = ()

    @classmethod
    def build(cls, kit: Toolkit, values: SlotValues, *, max_calls: int = 3, max_text_tokens: int = 32,
              names: list[str] | None = None, allow_done: bool = True, allow_fail: bool = True,
              name_prior: dict[str, float] | None = None, request: str = "",
              avoid: Mapping[tuple[str, int], Collection[str]] | None = None,
              encode: Callable[[list[str]], Any] | None = None,
              exclude: Sequence[tuple[str, Sequence[Any]]] = ()) -> CallGrammar:
        """The grammar of ``kit``'s tools (``names``: only these) over ``values``; a tool with a
        parameter that has no candidate here is left out (it could only be called with made-up values).
        ``allow_done=False`` (the first reply of an episode): ``done()`` may not be the reply's first
        call, since nothing is done yet (it may follow calls); ``allow_fail=False`` likewise for
        ``fail(...)`` (nothing was tried yet), unless no tool can be called here at all. ``name_prior``: a log-prior per tool
        for the first call's name (see :attr:`name_prior`); names the grammar does not hold are dropped.
        ``request``: an argument naming a thing the request may call by other words (a setting key,
        a column, a sheet: :data:`~agentlab.toolkits.slots.WORD_PRIOR_KINDS`) gets the request's
        word prior over its candidates (:func:`~agentlab.toolkits.slots.word_prior`) as an
        :attr:`arg_prior`; text the request gives as written (:data:`~agentlab.toolkits.slots.QUOTE_PRIOR_KINDS`)
        prefers a phrase it quotes whole (:func:`~agentlab.toolkits.slots.quote_prior`), and a setting's
        new value leans yes or no the request's way (:func:`~agentlab.toolkits.slots.polarity_prior`); a yes/no parameter the request names ("bold") is preferred on
        (:func:`~agentlab.toolkits.slots.flag_prior`). ``avoid``: per ``(tool, argument index)``,
        written values left out of that argument's candidates while others remain (a value an
        earlier call's error named: :func:`~agentlab.toolkits.base.value_the_error_names`).
        ``encode`` (sentence embeddings): a setting key's word prior is multiplied by the request's
        meaning prior (:func:`~agentlab.toolkits.slots.meaning_prior`): "the text in the editor is
        too small" shares only "editor" with every ``editor.*`` key. ``exclude``: calls as
        ``(tool, argument values)`` that may not be written again, word for word (:attr:`banned`;
        a call with a value that is not among its argument's candidates could not be written anyway)."""
        tools: dict[str, tuple[tuple[str, ...] | None, ...]] = {}
        arg_prior: list[tuple[str, int, tuple[tuple[str, float], ...]]] = []
        for name, tool in kit.tools.items():
            if names is not None and name not in names:
                continue
            args = []
            for i, p in enumerate(tool.params):
                cands = values.candidates(p.slot)
                if cands is not None and p.type is int:  # a whole number slot offers whole numbers only
                    whole = [c for c in cands if re.fullmatch(r"[-+]?\d+", c)]
                    if not whole and p.slot.kind == "number":  # the request names none that fits: the defaults
                        whole = [c for c in DEFAULT_NUMBERS if re.fullmatch(r"\d+", c)]
                    cands = whole
                if cands and avoid and (name, i) in avoid:
                    cands = [c for c in cands if c not in avoid[name, i]] or cands
                args.append(None if cands is None else tuple(cands))
                words = word_prior(cands, request) if cands and request and p.slot.kind in WORD_PRIOR_KINDS else (
                    combine_priors(quote_prior(cands, request),
                                   polarity_prior(cands, request) if p.slot.kind == "value" else None)
                    if cands and request and p.slot.kind in QUOTE_PRIOR_KINDS else None)
                if cands and encode is not None and request and p.slot.kind in MEANING_PRIOR_KINDS:
                    words = combine_priors(words, meaning_prior(cands, request, encode))
                if cands and words is not None:
                    arg_prior.append((name, i, tuple(zip(cands, words))))
                flag = flag_prior(p.name, request) if request and p.slot.kind == "bool" else None
                if flag is not None:
                    arg_prior.append((name, i, flag))
            if all(a is None or a for a in args):
                tools[name] = tuple(args)
        tools["done"] = ()
        tools["fail"] = (None,)
        if len(tools) == 2:  # nothing can be called here: giving up is the one reply left
            allow_fail = True
        banned = tuple(dict.fromkeys((n, b) for n, vals in exclude if n in tools and n not in END_CALLS
                                     for b in [_written(tools[n], vals)] if b is not None))
        prior = tuple((n, float(v)) for n, v in (name_prior or {}).items() if n in tools)
        return cls(tools, max_calls=max_calls, max_text_tokens=max_text_tokens, done_first=allow_done, fail_first=allow_fail,
                   name_prior=prior, arg_prior=tuple(a for a in arg_prior if a[0] in tools),
                   differs=tuple((name, i) for name, tool in kit.tools.items() if name in tools
                                 for i, p in enumerate(tool.params) if i and p.slot.differs),
                   banned=banned)

    def regex(self) -> str:
        """The grammar as a regular expression (for servers with regex-guided decoding)."""
        free = r"'[^'\"\n\\]{0,200}'"
        calls = []
        for name, args in self.tools.items():
            parts = [free if a is None else "(" + "|".join(re.escape(c) for c in a) + ")" for a in args]
            calls.append(re.escape(name) + r"\(" + ", ".join(parts) + r"\)")
        call = "(" + "|".join(calls) + r")\n"
        return rf"({call}){{1,{self.max_calls}}}"

    def lark(self) -> str:
        """The grammar as Lark text for llguidance (:mod:`agentlab.llm.guidance`): what a local
        model decodes under and what a server running the same engine gets as ``guided_grammar``."""
        rules: list[str] = []
        normal, ends, first_ends = [], [], []
        differs = set(self.differs)
        for i, (name, args) in enumerate(self.tools.items()):
            parts: list[str] = []
            for j, a in enumerate(args):
                before = args[j - 1] if j else None
                if (name, j) in differs and a is not None and before is not None and len(before) * len(a) <= MAX_PAIRS:
                    # this argument and the one before, as one choice among the pairs that differ
                    pairs = [f"{x}, {y}" for x in before for y in a if x != y]
                    if pairs:
                        parts[-1] = alternatives(pairs)
                        continue
                parts.append("free" if a is None else alternatives(a))
            mine = [b for n, b in self.banned if n == name and len(b) == len(args)]
            if mine and all(a is not None for a in args) and not any(n == name for n, _ in differs):
                # the calls that already ran, left out word for word: every other tuple of values
                inner = _excluding([a for a in args if a is not None], mine)
                if inner is None:  # every value this tool could take here already ran
                    continue
                parts = [inner] if inner else []
            body = f"{lit(name + '(')} " + (f' {lit(", ")} '.join(parts) + " " if parts else "") + lit(")\n")
            rules.append(f"call{i}: {body}")
            if name in END_CALLS:
                ends.append(f"call{i}")
                if (name != "done" or self.done_first) and (name != "fail" or self.fail_first):
                    first_ends.append(f"call{i}")
            else:
                normal.append(f"call{i}")
        if not normal:  # every call here already failed (:attr:`banned`): giving up or done is what is left
            first_ends = list(ends)
        if not normal and not first_ends:
            raise ConfigError("a call grammar needs at least one call it can start with")
        if normal:
            rules.append("normal: " + " | ".join(normal))
        if ends:
            rules.append("end: " + " | ".join(ends))
        # more_k: up to k more calls after a normal one; an end call (done/fail) ends the reply
        for k in range(1, self.max_calls):
            alts = (["normal" + (f" more{k - 1}" if k > 1 else "")] if normal else []) + (["end"] if ends else [])
            rules.append(f"more{k}: ({' | '.join(alts)})?")
        start = []
        if normal:
            start.append("normal" + (f" more{self.max_calls - 1}" if self.max_calls > 1 else ""))
        start += first_ends
        rules.insert(0, "start: " + " | ".join(start))
        # free text: quoted, no quote, backslash or line break inside; at most max_text_tokens tokens
        rules.append("free: \"'\" text \"'\"")
        rules.append(f"text[max_tokens={self.max_text_tokens}]: /[^'\"\\n\\\\]*/")
        return "\n".join(rules) + "\n"

    def logits_processor(self, tokenizer: Any) -> GrammarProcessor:
        """The local decoder's constraint: llguidance over :meth:`lark`, the priors as a bias.

        Tokens are left to the engine: it forces the canonical tokens of every fixed stretch and
        lets the model choose among any spelling of a name or candidate. Restricting choices to
        each candidate's own encoding (as the hand-written walker this replaced did) was tried and
        did worse on the development set (``benchmarks/RESULTS.md``, "Grammar engine")."""
        return GrammarProcessor(tokenizer, self.lark(), bias=self._bias if self.name_prior or self.arg_prior else None)

    # -- priors (a preference, not a rule: the one part the engine cannot hold) --------------
    def _segment(self, text: str) -> bool:
        """Whether a reply's text ends where a prior applies: inside the first call's name, or
        inside (not past) an argument that has a prior. Elsewhere no bias is computed at all."""
        first = "\n" not in text
        cur = text.rsplit("\n", 1)[-1]
        if "(" not in cur:
            return first and bool(self.name_prior)
        name, rest = cur.split("(", 1)
        for tool, index, _ in self.arg_prior:
            part = _arg_text(self.tools.get(name, ()), rest, index) if tool == name else None
            if part is not None and not _closed(self.tools[name][index], part):
                return True
        return False

    def _mass(self, text: str) -> float:
        """log of the prior mass of every completion consistent with ``text`` (names and
        arguments with a prior multiply); a bias is the change of it from one token."""
        total = 0.0
        first = "\n" not in text
        cur = text.rsplit("\n", 1)[-1]
        if first and self.name_prior:
            names = [n for n, _ in self.name_prior
                     if (n != "done" or self.done_first) and (n != "fail" or self.fail_first)]
            prior = dict(self.name_prior)
            if "(" not in cur:
                total += lse(prior[n] for n in names if n.startswith(cur))
            else:
                total += prior.get(cur.split("(", 1)[0], -math.inf)
        if "(" in cur and self.arg_prior:
            name, rest = cur.split("(", 1)
            for tool, index, values in self.arg_prior:
                if tool != name:
                    continue
                part = _arg_text(self.tools.get(name, ()), rest, index)
                if part is not None:
                    total += lse(v for c, v in values if _consistent(c, part))
        return total

    def _bias(self, text: str, allowed: Any, texts: list[str]) -> dict[int, float]:
        if not self._segment(text):
            return {}
        here = self._mass(text)
        if here == -math.inf:
            return {}
        return {int(t): self._mass(text + texts[int(t)]) - here for t in allowed}


def _written(args: tuple[tuple[str, ...] | None, ...], values: Sequence[Any]) -> tuple[str, ...] | None:
    """``values`` as the candidates of ``args`` write them (``'B2:B5'``, ``14``, ``True``); ``None``
    when one is not among its argument's candidates or the argument is free text: such a call is
    not a choice the grammar offers, so there is nothing to leave out."""
    if len(values) != len(args):
        return None
    out = []
    for cands, value in zip(args, values):
        if cands is None:
            return None
        match = next((c for c in cands for v in [_literal(c)] if v == value and type(v) is type(value)), None)
        if match is None:
            return None
        out.append(match)
    return tuple(out)


def _literal(text: str) -> Any:
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def _excluding(args: list[tuple[str, ...]], banned: list[tuple[str, ...]]) -> str | None:
    """A Lark expression for the argument list ``args`` (each a tuple of candidates, joined by
    ``", "``) that matches every tuple of values except those of ``banned``; ``""`` for no
    arguments, ``None`` when nothing is left. Built as a trie over the banned tuples: a first value
    no banned tuple starts with is followed by any rest; one that some do is followed by the rest
    with only their tails banned (Lark cannot subtract, so the set difference is spelt out)."""
    if not args:
        return None if banned else ""
    first, rest = args[0], args[1:]
    sep = f" {lit(', ')} "
    free_rest = sep.join(alternatives(a) for a in rest)
    hit = {b[0] for b in banned}
    branches: list[str] = []
    open_first = [c for c in first if c not in hit]
    if open_first:
        branches.append(alternatives(open_first) + (sep + free_rest if rest else ""))
    for value in dict.fromkeys(c for c in first if c in hit):
        tail = _excluding(list(rest), [b[1:] for b in banned if b[0] == value])
        if tail is None:
            continue
        branches.append(lit(value) + (sep + tail if tail else ""))
    if not branches:
        return None
    return branches[0] if len(branches) == 1 else "(" + " | ".join(branches) + ")"


def _past(candidate: str, part: str) -> bool:
    """Whether ``part`` is ``candidate`` followed by the separator that ends an argument."""
    return part.startswith(candidate) and part[len(candidate):len(candidate) + 1] in (",", ")")


def _consistent(candidate: str, part: str) -> bool:
    """Whether an argument's text so far (``part``, which may run on past it) can be ``candidate``."""
    return candidate.startswith(part) or _past(candidate, part)


def _closed(candidates: tuple[str, ...] | None, part: str) -> bool:
    """Whether the argument ``part`` starts is already complete (a separator follows a candidate)."""
    return candidates is not None and any(_past(c, part) for c in candidates)


def _arg_text(args: tuple[tuple[str, ...] | None, ...], rest: str, index: int) -> str | None:
    """The text of argument ``index`` in a call's text after ``(`` (``None``: not reached yet)."""
    for j in range(index):
        if j >= len(args):
            return None
        cands = args[j]
        if cands is None:
            m = re.match(r"'[^'\"\n\\]*', ", rest)
            if m is None:
                return None
            rest = rest[m.end():]
        else:
            hit = next((c for c in cands if rest.startswith(c + ", ")), None)
            if hit is None:
                return None
            rest = rest[len(hit) + 2:]
    return rest if index < len(args) else None
