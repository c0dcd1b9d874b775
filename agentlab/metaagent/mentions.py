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
from dataclasses import dataclass

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


@dataclass(frozen=True)
class ApplicationLexicon:
    """Per (platform, domain): the terms that name that application and no other of the platform."""

    terms: dict[tuple[str, str], frozenset[str]]

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
        for key, ts in self.terms.items():
            if platform is not None and key[0] != platform:
                continue
            for t in ts:
                if t.startswith("."):
                    m = re.search(re.escape(t) + r"\b", text, re.IGNORECASE)
                else:
                    m = re.search(r"(?<![\w.])" + re.escape(t) + r"\b", text, re.IGNORECASE if _case_free(t) else 0)
                if m and m.start() < first.get(key, len(text) + 1):
                    first[key] = m.start()
        return sorted(first, key=lambda k: first[k])

    def domains(self, text: str, platform: str | None = None) -> list[str]:
        """The domains ``text`` names, in order of first mention."""
        return [d for _, d in self.named(text, platform)]


def names_two_applications(lexicon: ApplicationLexicon, text: str, platform: str | None = None) -> bool:
    """True when ``text`` names two or more applications of one platform (``platform``: of that one)."""
    named = lexicon.named(text, platform)
    return any(sum(p == q for q, _ in named) > 1 for p, _ in named)


def multi_app_flags(lexicon: ApplicationLexicon, texts: Sequence[str]) -> list[bool]:
    """:func:`names_two_applications` of each text."""
    return [names_two_applications(lexicon, t) for t in texts]
