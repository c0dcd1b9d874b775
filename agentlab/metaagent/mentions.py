"""Which applications a request *names*: a lexicon read from the agent documents themselves.

Why: clause routing (:mod:`agentlab.metaagent.multiapp`) asks the router what each part of a
request is about, and a part such as "prices.xlsx (open in LibreOffice Calc), fill the 'Price
USD' column" is often not confidently anything to a 135M backbone. Yet the request says, in so
many words, which two applications it needs. People write requests like that ("copy the table
from the Writer report into the Calc sheet"), and the store already knows every application's
name: each specialist's document says what it runs in (``# Applications``).

How (:meth:`ApplicationLexicon.from_pool`): for every specialist of a platform's domain, the
terms of its ``# Applications`` line that say *which* application:

* the product name that opens the line (its leading capitalised words: "LibreOffice Calc",
  "Google Chrome", "GIMP", "VLC"; a leading article is skipped);
* the file kinds it lists (".xlsx", ".pptx", ".docx", ".png");
* the domain's own name wherever the line spells it (".vscode/settings.json").

A term two domains of one platform share ("LibreOffice", "Terminal") names neither and is dropped,
and generalists and each platform's catch-all domain contribute nothing (they are not one
application). So enrolling an agent with a new application extends the lexicon with no code.

Matching (:meth:`ApplicationLexicon.named`): a file kind anywhere, case-insensitively; a word as
a whole word, case-insensitively when it is written in capitals, mixed case or lower case in the
document ("GIMP", "LibreOffice", "vscode"), otherwise only capitalised ("Calc", "Writer",
"Chrome": so "the writer of the letter" names nothing).

:func:`names_two_applications` is the multi-application rule the store policy reads: a request
that names two applications of one platform is no single specialist's. It has no threshold; what
it costs is measured on held-out single-application requests (``benchmarks/generalist_fallback.py``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from agentlab.pool import AgentDocument, AgentPool
from agentlab.metaagent.store_policy import CATCH_ALL, is_generalist

#: words that may open an Applications line without naming anything
_ARTICLES = frozenset({"A", "An", "Any", "The", "All"})
_EXTENSION = re.compile(r"\.[a-z][a-z0-9]{1,4}\b")
_LEADING = re.compile(r"^\s*([A-Z]\w*(?:\s+[A-Z]\w*)*)")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*")


def _case_free(term: str) -> bool:
    """A term matched case-insensitively: all capitals, mixed case or all lower case."""
    return term.isupper() or term.islower() or any(c.isupper() for c in term[1:])


def document_terms(doc: AgentDocument) -> set[str]:
    """The terms of ``doc``'s Applications line that may name its application (before the
    uniqueness cut of :meth:`ApplicationLexicon.from_pool`)."""
    line = doc.applications.strip().splitlines()[0] if doc.applications.strip() else ""
    terms = {m.group(0).lower() for m in _EXTENSION.finditer(line)}
    if lead := _LEADING.match(line):
        terms |= {w for w in lead.group(1).split() if w not in _ARTICLES}
    terms |= {w for w in _WORD.findall(line) if w.lower() == doc.domain.lower()}
    return terms


def _patterns(terms: frozenset[str]) -> tuple[re.Pattern[str], ...]:
    """``terms`` as at most two compiled alternations: the case-free ones, then the capitalised ones."""
    def word(t: str) -> str:
        return re.escape(t) + r"\b" if t.startswith(".") else r"(?<![\w.])" + re.escape(t) + r"\b"

    free = sorted(t for t in terms if t.startswith(".") or _case_free(t))
    exact = sorted(t for t in terms if t not in free)
    out = [re.compile("|".join(map(word, free)), re.IGNORECASE)] if free else []
    return (*out, *([re.compile("|".join(map(word, exact)))] if exact else []))


@dataclass(frozen=True)
class ApplicationLexicon:
    """Per (platform, domain): the terms that name that application and no other of the platform."""

    terms: dict[tuple[str, str], frozenset[str]]
    #: each key's terms compiled once (:func:`_patterns`), not on every request
    patterns: dict[tuple[str, str], tuple[re.Pattern[str], ...]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "patterns", {k: _patterns(ts) for k, ts in self.terms.items()})

    @classmethod
    def from_pool(cls, pool: AgentPool | Iterable[AgentDocument]) -> ApplicationLexicon:
        """The lexicon of ``pool``'s specialists (see the module docstring)."""
        raw: dict[tuple[str, str], set[str]] = {}
        for doc in pool:
            if is_generalist(doc) or doc.domain == CATCH_ALL.get(doc.platform):
                continue
            raw.setdefault((doc.platform, doc.domain), set()).update(document_terms(doc))
        terms: dict[tuple[str, str], frozenset[str]] = {}
        for key, ts in raw.items():
            others = set().union(*(v for k, v in raw.items() if k != key and k[0] == key[0]))
            clash = {t.lower() for t in others}
            terms[key] = frozenset(t for t in ts if t.lower() not in clash)
        return cls(terms)

    def named(self, text: str, platform: str | None = None) -> list[tuple[str, str]]:
        """The (platform, domain) pairs ``text`` names, in the order of their first mention
        (``platform``: only that platform's)."""
        first: dict[tuple[str, str], int] = {}
        for key, patterns in self.patterns.items():
            if platform is not None and key[0] != platform:
                continue
            starts = [m.start() for pat in patterns if (m := pat.search(text))]
            if starts:
                first[key] = min(starts)
        return sorted(first, key=lambda k: first[k])

    def domains(self, text: str, platform: str | None = None) -> list[str]:
        """The domains ``text`` names, in order of first mention."""
        return [d for _, d in self.named(text, platform)]


def names_two_applications(lexicon: ApplicationLexicon, text: str, platform: str | None = None) -> bool:
    """True when ``text`` names two or more applications of one platform (``platform``: of that one)."""
    named = lexicon.named(text, platform)
    return len(named) > len({p for p, _ in named})  # some platform is named twice


def multi_app_flags(lexicon: ApplicationLexicon, texts: Sequence[str]) -> list[bool]:
    """:func:`names_two_applications` of each text."""
    return [names_two_applications(lexicon, t) for t in texts]
