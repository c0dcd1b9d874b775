"""Quality check for generated lines: is this a concrete request for THIS agent, in its own words?

The 135M generator writes many lines that pass the parser and even Algorithm 1's band but are
not tasks: statements ("The project will not stop now."), meta talk about the assistant ("When
I use the CalcAgent, ..."), near-copies of a demonstration with one word changed, or requests for
another agent's app (a Gmail line naming Telegram). Algorithm 1 judges similarity only, so such
lines are dropped here, before the leakage check and the band, each under one reason the run
report counts:

- ``not_a_request``: the line does not open like a request: an imperative verb ("Set ..."),
  a polite or question opener ("Could you ...", "I need ...", "How do I ..."), or a short lead-in
  ("In the sheet, ...", "Every Monday, ...") followed by one of those;
- ``names_agent``: it names a pool agent ("CalcAgent"): talk about the assistant, not a task;
- ``other_app``: it names an application of another domain that the agent's own document never
  mentions;
- ``copies_seed``: its wording is a near-copy (difflib ratio >= ``copy_ratio``) of one of the
  agent's current demonstrations.

The opener and verb lists are plain data below; every hand-written demonstration of the pool
passes the check (tested), so it only removes what the seeds never look like.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from dataclasses import dataclass

from agentlab.pool import AgentDocument
from agentlab.selfinstruct.generate import ParseResult

#: reasons, in the order they are checked
QUALITY_REASONS = ("not_a_request", "names_agent", "other_app", "copies_seed")

#: words a request may open with besides an imperative verb (questions, polite forms, first person)
OPENERS = frozenset(
    "could can would will please i i'd i'm i've i'll id im my we we'd let's lets how what which who whom "
    "whose where when why is are am do does did should shall may might".split()
)

#: lead-ins after which the request proper follows (after the first comma or "and"):
#: "In the sheet, bold row 1", "Every Monday at 9, remind me ..."
LEAD_INS = frozenset(
    "in on at for from after before every each when whenever if once while during within using with "
    "by to until starting tomorrow tonight today this next".split()
)

#: imperative verbs of computer and phone tasks (lower case, base form)
VERBS = frozenset(
    """accept activate add adjust align allow analyse analyze annotate append apply archive arrange ask assign
    attach auto autofill back backup batch block bold book bookmark boost browse build bump buy calculate call
    cancel capitalise capitalize center centre change check choose clean clear click clone close collapse
    collect colour color combine comment commit compare compile compose compress compute configure confirm
    connect convert copy correct count create crop cut deactivate debug decline decrease delay delete deselect
    desaturate describe detect disable discard dismiss display download draft drag draw duplicate edit email
    empty enable encrypt end enlarge enter erase estimate exclude execute expand export extract favorite
    favourite fetch fill filter find fix flag flip follow force format forward freeze generate get give go grab
    group hide highlight identify ignore implement import increase indent insert install invert invite italicise
    italicize join jump keep label launch leave like limit link list load locate lock log look lower make
    manage map mark maximise maximize measure merge minimise minimize mirror modify monitor move mute name
    navigate normalise normalize note notify number open order organise organize outline overwrite pack pad
    paste pause pay pick pin place plan play point plot post preview print prioritise prioritize profile protect
    publish pull purchase push put queue quit raise rate read rearrange record redo redirect refactor refresh
    register reload remind remove rename render rent reopen reorder repeat replace reply report request reserve
    reset resize restart restore resume retweet return reverse review rewrite rotate round run save scale
    scan schedule scroll search select sell send set setup share shift show shrink shuffle shut sign skip snooze
    sort speed split star start stop store stream strip submit subscribe subtract sum summarise summarize swap
    switch sync tag take tell test time toggle track transcribe transfer translate transpose trim turn type
    underline undo unfollow uninstall unlock unmute unpin unstar unsubscribe update upgrade upload use validate
    verify view visit wake watch wrap write zip zoom""".split()
)

#: application names by domain; a line naming another domain's app (absent from the agent's own
#: document) is for another agent
APP_NAMES: dict[str, tuple[str, ...]] = {
    "gmail": ("gmail",),
    "maps": ("google maps",),
    "spotify": ("spotify",),
    "telegram": ("telegram",),
    "temu": ("temu",),
    "x": ("twitter", "tweet", "retweet"),
    "yelp": ("yelp",),
    "youtube": ("youtube",),
    "chrome": ("chrome",),
    "vlc": ("vlc",),
    "gimp": ("gimp",),
    "thunderbird": ("thunderbird",),
    "vscode": ("vs code", "vscode", "visual studio code"),
    "impress": ("impress", "powerpoint"),
    "writer": ("libreoffice writer", "microsoft word"),
    "calc": ("libreoffice calc", "excel"),
}

_WORD = re.compile(r"[a-z][a-z']*")


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower().replace("’", "'"))


def _opens_request(words: list[str]) -> bool:
    return bool(words) and (words[0] in OPENERS or words[0] in VERBS)


def is_request(text: str) -> bool:
    """True if ``text`` opens like a request (directly, or after a short lead-in clause)."""
    words = _words(text)
    if _opens_request(words):
        return True
    if words and words[0] in LEAD_INS:
        # the request proper starts after the lead-in's comma: "In cell B2, put ..."
        _, sep, rest = text.partition(",")
        if sep and _opens_request(_words(rest)):
            return True
    return False


def _mentions(text: str, name: str) -> bool:
    return re.search(rf"(?<![a-z]){re.escape(name)}(?![a-z])", text) is not None


@dataclass
class QualityCheck:
    """The check for one agent: its own document decides which app names it may mention."""

    agent_names: tuple[str, ...]
    foreign_apps: tuple[str, ...]
    copy_ratio: float = 0.8

    @classmethod
    def for_agent(cls, doc: AgentDocument, agent_names: Iterable[str], copy_ratio: float = 0.8) -> QualityCheck:
        own = " ".join([doc.description, *(d.text for d in doc.demonstrations)]).lower()
        foreign = tuple(
            n for dom, names in APP_NAMES.items() if dom != doc.domain for n in names if not _mentions(own, n)
        )
        # only names no sentence uses as a word: "CalcAgent", "GoogleDrive" -- not "Friday"
        coined = tuple(n.lower() for n in agent_names if re.search(r"[a-z0-9][A-Z0-9]", n))
        return cls(coined, foreign, copy_ratio)

    def reason(self, text: str, current: list[str]) -> str | None:
        """Why ``text`` is dropped (one of :data:`QUALITY_REASONS`), or None if it passes."""
        low = text.lower()
        if not is_request(text):
            return "not_a_request"
        if any(_mentions(low, n) for n in self.agent_names):
            return "names_agent"
        if any(_mentions(low, n) for n in self.foreign_apps):
            return "other_app"
        matcher = difflib.SequenceMatcher(None, "", low, autojunk=False)  # b (the candidate) is cached
        for c in current:
            matcher.set_seq1(c.lower())
            if matcher.quick_ratio() >= self.copy_ratio and matcher.ratio() >= self.copy_ratio:
                return "copies_seed"
        return None

    def filter(self, parsed: ParseResult, current: list[str]) -> ParseResult:
        """``parsed`` with failing candidates moved to its dropped lines, counted by reason."""
        out = ParseResult(reasons=parsed.reasons.copy(), dropped={k: list(v) for k, v in parsed.dropped.items()})
        for text in parsed.candidates:
            why = self.reason(text, current)
            if why is None:
                out.candidates.append(text)
            else:
                out.drop(why, text)
        return out
