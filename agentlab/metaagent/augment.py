"""Training requests written from the agent documents themselves, beyond the 12 seed demonstrations.

Each document says what its agent is for in two prose sections: *Applications* (a list of
applications, file types, tools) and *Capabilities* (sentences such as "It sends, forwards
and pins messages"). Both carry the vocabulary a user's request for that agent contains, so
they are rewritten here, deterministically, as requests:

- every item of the Applications list becomes "I need to get something done in <item>."
  (one of a few fixed wordings, chosen by position, so the data do not depend on a seed);
- every Capabilities sentence whose subject is the agent ("TelegramAgent sends ...",
  "It can also ...") becomes an imperative request ("Please send ..."): the subject and any
  modal are dropped and the first verb is turned into its base form. Sentences that describe
  the agent rather than an action ("It is specialised in ...", "It acts through ...") are kept
  out, and so is any sentence that still names the agent.

The Limitations section is never used: it names what the agent must *not* get.
"""

from __future__ import annotations

import re

from agentlab.metaagent.data import TrainingSet
from agentlab.pool import AgentDocument, AgentPool

#: Wordings for an Applications item; item i uses ``APPLICATION_WORDINGS[i % len]``.
APPLICATION_WORDINGS: tuple[str, ...] = (
    "I need to get something done in {item}.",
    "Help me with a task in {item}.",
    "Please do this for me in {item}.",
)
#: Capabilities sentences whose first verb only describes how the agent works, not a request.
DESCRIPTIVE_VERBS = frozenset({
    "is", "are", "was", "has", "have", "acts", "works", "relies", "uses", "knows", "reads", "sees",
    "specialises", "specializes", "plans", "depends", "runs", "cannot", "does", "follows", "gets",
    "answers", "stops", "keeps", "turns", "understands", "combines", "operates",
})
MODALS = ("can also ", "can ", "also ", "will ", "may ")
_SUBJECTS = ("it ", "this agent ", "the agent ")


def _split_items(text: str) -> list[str]:
    """Top-level items of a comma/semicolon list (separators inside parentheses do not split)."""
    items: list[str] = []
    cur: list[str] = []
    depth = 0
    for ch in text:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth = max(depth - 1, 0)
        if ch in ",;" and depth == 0:
            items.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    items.append("".join(cur))
    return [i.strip().rstrip(".") for i in items if len(i.strip()) > 2]


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+", " ".join(text.split())) if s.strip()]


def base_form(verb: str) -> str:
    """Third-person singular -> base form (``creates`` -> ``create``, ``applies`` -> ``apply``)."""
    v = verb.lower()
    if v.endswith("ies") and len(v) > 4:
        return v[:-3] + "y"
    if re.search(r"(ch|sh|ss|x|z|o)es$", v):
        return v[:-2]
    if v.endswith("s") and not v.endswith("ss"):
        return v[:-1]
    return v


def capability_request(sentence: str, name: str) -> str | None:
    """One Capabilities sentence as an imperative request, or None when it is not about an action."""
    s = sentence.strip()
    low = s.lower()
    for subj in (name.lower() + " ",) + _SUBJECTS:
        if low.startswith(subj):
            s = s[len(subj):]
            break
    else:
        return None  # the subject is not the agent ("Because it edits cells in code, ...")
    for modal in MODALS:
        if s.lower().startswith(modal):
            s = s[len(modal):]
    first, _, rest = s.partition(" ")
    verb, comma = first.rstrip(","), "," if first.endswith(",") else ""
    if not rest or verb.lower() in DESCRIPTIVE_VERBS or not verb.isalpha():
        return None
    text = f"Please {base_form(verb)}{comma} {rest}".rstrip()
    if name.lower() in text.lower():
        return None
    return text if text.endswith((".", "!", "?")) else text + "."


def document_requests(doc: AgentDocument) -> list[str]:
    """The requests written from one document (Applications items first, then Capabilities)."""
    out: list[str] = []
    for i, item in enumerate(_split_items(doc.applications)):
        out.append(APPLICATION_WORDINGS[i % len(APPLICATION_WORDINGS)].format(item=item))
    for sentence in _sentences(doc.capabilities):
        req = capability_request(sentence, doc.name)
        if req:
            out.append(req)
    seen: set[str] = set()
    return [r for r in out if not (r.lower() in seen or seen.add(r.lower()))]  # type: ignore[func-returns-value]


def pool_requests(pool: AgentPool) -> dict[str, list[str]]:
    """Agent name -> its document requests, for every agent of ``pool``."""
    return {doc.name: document_requests(doc) for doc in pool.agents}


def add_document_requests(train: TrainingSet, pool: AgentPool) -> TrainingSet:
    """``train`` plus the document requests of each of its agents (after its own examples).

    A request that already is a training text (case-insensitive) is not added twice.
    """
    seen = {t.strip().lower() for t in train.texts}
    texts, labels, domains = list(train.texts), list(train.labels), list(train.domains)
    states = list(train.states)
    for k, name in enumerate(train.agents):
        if name not in pool:
            continue
        doc = pool.get(name)
        for req in document_requests(doc):
            if req.lower() not in seen:
                seen.add(req.lower())
                texts.append(req)
                labels.append(k)
                domains.append(doc.domain)
                states.append(None)
    return TrainingSet(agents=list(train.agents), texts=texts, labels=labels, domains=domains, states=states)
