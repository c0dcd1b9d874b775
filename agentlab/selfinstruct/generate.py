"""Asking the generator LM for new demonstrations, and parsing what it says into clean candidates.

Two prompt styles, both template files in ``data/prompts/selfinstruct/`` (``requests.txt`` is a
completion-style variant that also names the agent's applications and asks for one concrete
task per line; choose it with ``prompt_template: selfinstruct/requests``):

- ``completion`` (default; what works with the 135M model): a one-line summary of the agent,
  then a numbered list of sampled current demonstrations ending with the next number, so the
  model simply continues the list. Every complete line it writes is a candidate.
- ``chat``: the full description plus examples and an explicit instruction, for capable chat
  models behind an OpenAI-compatible server.

The parser is deliberately forgiving about form (numbering, bullets, quotes, "Request:" labels)
and strict about content; every dropped line is counted under one reason so a run report shows
what the generator got wrong.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from dataclasses import dataclass, field

from agentlab.dialogue.templates import PromptTemplate
from agentlab.llm.base import ChatMessage, LLMBackend, SamplingParams
from agentlab.pool import AgentDocument

#: Reasons a generated line is dropped before scoring, in the order they are checked.
PARSE_REASONS = ("chatter", "truncated", "too_short", "too_long", "non_task", "duplicate", "known")

_MARKER = re.compile(r"^\s*(?:\(?\d{1,3}\s*[.):-]|\(?[A-Za-z]\)|[A-Z][.:](?=\s)|[-*•–·>]|#+)\s*")
_LABEL = re.compile(r"^(?:request|task|user|example|instruction|query|new request)\s*\d*\s*[:\-]\s*", re.I)
_QUOTES = "\"'“”‘’`"
_CHATTER = re.compile(
    r"^(?:sure\b|certainly\b|of course\b|here (?:are|is)\b|i hope\b|i can\b|i'm\b|i am\b|note\b|"
    r"these (?:are|requests)\b|as an ai\b|let me know\b|requests (?:that )?users\b|okay\b|ok[,.!]|"
    r"thank you\b|thanks\b|answer\b|output\b|in summary\b|the (?:assistant|agent)\b)",
    re.I,
)
_NORM = re.compile(r"[^a-z0-9]+")


def normalize(text: str) -> str:
    """Key for duplicate detection: lower case, punctuation and spacing collapsed."""
    return _NORM.sub(" ", text.lower()).strip()


def _summary(doc: AgentDocument, max_words: int = 30) -> str:
    """First sentence of the capabilities, capped: enough to steer a small model, short prompt."""
    first = re.split(r"(?<=[.!?])\s", doc.capabilities.strip(), maxsplit=1)[0]
    words = first.split()
    return " ".join(words[:max_words]) + ("..." if len(words) > max_words else "")


def build_prompt(
    template: PromptTemplate,
    doc: AgentDocument,
    examples: list[str],
    *,
    count: int = 8,
) -> str:
    """Fill a template with the agent's description and a numbered list of examples.

    Each style uses some of the offered fields; a placeholder outside them is a ConfigError.
    """
    platform = "a desktop computer" if doc.platform == "desktop" else "an Android phone"
    listing = "\n".join(f"{i}. {t}" for i, t in enumerate(examples, start=1))
    offered = dict(
        name=doc.name,
        platform=platform,
        summary=_summary(doc),
        applications=doc.applications.strip(),
        description=doc.description,
        examples=listing,
        next=len(examples) + 1,
        count=count,
    )
    return template.render_offered(offered).rstrip("\n")


@dataclass
class ParseResult:
    """Clean candidate texts (generation order) and how many lines were dropped, by reason."""

    candidates: list[str] = field(default_factory=list)
    reasons: Counter[str] = field(default_factory=Counter)
    #: a few dropped lines per reason, for the report
    dropped: dict[str, list[str]] = field(default_factory=dict)

    def drop(self, reason: str, line: str, keep: int = 3) -> None:
        self.reasons[reason] += 1
        bucket = self.dropped.setdefault(reason, [])
        if len(bucket) < keep:
            bucket.append(line)

    def merge(self, other: ParseResult) -> None:
        self.candidates.extend(other.candidates)
        self.reasons.update(other.reasons)
        for k, v in other.dropped.items():
            bucket = self.dropped.setdefault(k, [])
            bucket.extend(v[: max(0, 3 - len(bucket))])


def clean_line(line: str) -> str:
    """Strip list markers, labels, wrapping quotes and stray whitespace from one line."""
    s = line.strip()
    for _ in range(2):
        s = _MARKER.sub("", s, count=1)
        s = _LABEL.sub("", s, count=1).strip()
    if len(s) >= 2 and s[0] in _QUOTES and s[-1] in _QUOTES + ".":
        s = s[1:-1] if s[-1] in _QUOTES else s[1:-2] + "."
    s = s.strip(_QUOTES + " ").strip()
    return re.sub(r"\s+", " ", s)


def parse_output(
    text: str,
    *,
    complete: bool = True,
    min_words: int = 4,
    max_chars: int = 220,
    seen: set[str] | None = None,
    known: set[str] | None = None,
) -> ParseResult:
    """Turn one raw generation into candidate requests.

    ``complete=False`` means generation hit its token limit, so the last line may be cut off; it
    is kept only if it ends like a sentence. ``seen`` (normalised texts from this round) is
    updated in place; ``known`` holds the agent's existing demonstrations and earlier candidates.
    """
    res = ParseResult()
    seen = seen if seen is not None else set()
    known = known or set()
    lines = text.split("\n")
    nonblank = [i for i, l in enumerate(lines) if l.strip()]
    if not nonblank:
        res.drop("empty", text)
        return res
    last = nonblank[-1]
    for i in nonblank:
        raw = lines[i]
        s = clean_line(raw)
        if not s:
            res.drop("empty", raw)
            continue
        if _CHATTER.match(s) or s.endswith(":"):
            res.drop("chatter", raw)
            continue
        if i == last and not complete and not re.search(r"[.?!\"”')]$", s):
            res.drop("truncated", raw)
            continue
        if len(s.split()) < min_words:
            res.drop("too_short", raw)
            continue
        if len(s) > max_chars:
            res.drop("too_long", raw)
            continue
        letters = sum(c.isalpha() for c in s)
        if letters < 0.6 * len(s.replace(" ", "")) or not s[0].isalpha() and s[0] not in _QUOTES:
            res.drop("non_task", raw)
            continue
        key = normalize(s)
        if key in known:
            res.drop("known", raw)
            continue
        if key in seen:
            res.drop("duplicate", raw)
            continue
        seen.add(key)
        res.candidates.append(s)
    return res


@dataclass(frozen=True)
class GenerationSettings:
    prompts: int
    per_prompt: int
    shots: int
    max_new_tokens: int
    temperature: float
    top_p: float
    min_words: int
    max_chars: int


def make_prompts(
    template: PromptTemplate, doc: AgentDocument, current: list[str], settings: GenerationSettings, rng: random.Random
) -> list[str]:
    """``settings.prompts`` prompts, each with its own random sample of the current demonstrations."""
    shots = min(settings.shots, len(current))
    return [build_prompt(template, doc, rng.sample(current, shots)) for _ in range(settings.prompts)]


def sampling_params(settings: GenerationSettings, seed: int | None = None) -> SamplingParams:
    return SamplingParams(
        max_new_tokens=settings.max_new_tokens,
        temperature=settings.temperature,
        top_p=settings.top_p,
        n=settings.per_prompt,
        seed=seed,
    )


def run_generator(
    backend: LLMBackend, prompts: list[str], params: SamplingParams, style: str = "completion"
) -> list[list[str]]:
    """All prompts in one batched call (completion style), or one chat call per prompt."""
    if style == "chat":
        return [backend.chat([ChatMessage("user", p)], params) for p in prompts]
    return backend.complete_batch(prompts, params)


def parse_outputs(
    outs: list[list[str]], settings: GenerationSettings, known: set[str], style: str = "completion"
) -> ParseResult:
    """Parse every returned sequence of one agent's prompts, deduplicating across them."""
    result = ParseResult()
    seen: set[str] = set()
    for group in outs:
        for text in group:
            # A completion that ends without a newline may have been cut by the token limit.
            complete = style == "chat" or text.endswith("\n")
            result.merge(
                parse_output(
                    text, complete=complete, min_words=settings.min_words, max_chars=settings.max_chars,
                    seen=seen, known=known,
                )
            )
    return result
