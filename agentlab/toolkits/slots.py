"""The values an argument may take, read from the request and the workspace only.

A specialist's calls name things that exist (files, sheets, headers, slide titles, keys) or that
the request says (a new name, a number, a quoted phrase). This module collects them, so that a
local model decodes each argument as a choice among them (:mod:`agentlab.toolkits.grammar`)
instead of spelling it freely. It reads the instruction and the workspace's files, never a
task file: no evaluator, expected value or reference solution can reach a candidate.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentlab.llm.guidance import lse
from agentlab.toolkits.base import Slot, Toolkit

#: words a phrase is not made of (they are glue, not names)
STOP = frozenset("""a an the and or but of to in on at by for from with into onto as is are be been was were it its
this that these those there here my our your their his her me we you they i can could would should will please
just also so then than too very all any each every one two some more most less same other only not no yes do does
did done make made put set get keep change add remove delete move rename give take turn file files want need like
should stay stays still right now new up down out over under about after before between while when where which what
who whom whose how why let it's i'd i'm don't doesn't we're they're""".split())
#: numbers a domain often needs without the request saying them (halving, a right angle): offered
#: only when the request names no number at all, so a named value is never outvoted by a made-up one
DEFAULT_NUMBERS = ("1", "2", "0.5", "90", "180", "270")
#: numbers people write as words ("three slides", "the second sheet", "half the size")
_UNITS = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
          "sixteen seventeen eighteen nineteen").split()
_TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90}
_ORDINALS = ("first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth").split()
_WORD_VALUES = {"half": "0.5", "halve": "0.5", "twice": "2", "double": "2", "triple": "3", "dozen": "12",
                "hundred": "100", "thousand": "1000"}


@dataclass
class SlotValues:
    """Everything an argument of any kind may be, for one request in one workspace."""

    files: list[str] = field(default_factory=list)
    mentioned_files: list[str] = field(default_factory=list)
    folders: list[str] = field(default_factory=list)
    sheets: list[str] = field(default_factory=list)
    headers: list[str] = field(default_factory=list)
    cells: list[str] = field(default_factory=list)
    row_keys: list[str] = field(default_factory=list)
    slides: list[str] = field(default_factory=list)
    settings: list[str] = field(default_factory=list)
    phrases: list[str] = field(default_factory=list)
    numbers: list[str] = field(default_factory=list)
    #: numbers the request writes as words (a ``number`` slot's candidates, not a checked value:
    #: "one" is as often a pronoun as a count)
    word_numbers: list[str] = field(default_factory=list)
    #: runs of 1-8 words of the request (new text is usually the request's own words)
    spans: list[str] = field(default_factory=list)
    #: INI sections of the workspace's settings files
    sections: list[str] = field(default_factory=list)
    #: the text of the workspace's documents (paragraphs, slide texts, lines), lower-cased
    texts: list[str] = field(default_factory=list)
    #: things named inside files: bookmarks and bookmark folders, mail folders, message subjects,
    #: playlist entries (slot kind ``item``)
    items: list[str] = field(default_factory=list)
    #: URLs and absolute or home paths the request names, whole (slot kind ``value``)
    urls: list[str] = field(default_factory=list)
    #: the values the toolkit's catalogue keys take (:attr:`Toolkit.catalogue_values`; kind ``value``)
    setting_values: list[str] = field(default_factory=list)
    #: the headers (subject, sender, recipient) of the workspace's mail messages, lower-cased
    #: (slot kind ``match``: a text that picks messages)
    mail_headers: list[str] = field(default_factory=list)
    #: file patterns over the workspace, ``folder/*.ext`` (``*.ext`` at the top) for every folder
    #: and extension its files have (slot kind ``pattern``: "all the PDFs in downloads")
    patterns: list[str] = field(default_factory=list)
    #: the request itself (a named value it mentions narrows its slot to the mentioned ones)
    request: str = ""

    def candidates(self, slot: Slot) -> list[str] | None:
        """The values of ``slot`` (strings as they are written in a call), or ``None``: free text
        (only ``text`` slots; a named kind with no value here has none, so its tools cannot be called)."""
        kind = slot.kind
        if kind == "file":
            files = [f for f in self.files if _fits_file(f, slot)]
            # a slot that names its files (vlcrc, Preferences, prefs.js) offers those when there are
            # any: an application's profile holds other files of the same kind (VLC writes
            # vlc-qt-interface.conf beside vlcrc), and the extensions are for workspaces without them
            by_name = [f for f in files if Path(f).name in slot.names]
            files = by_name or files
            if slot.new:
                fresh = [f for f in self.mentioned_files if f not in files and _fits_file(f, slot)]
                if fresh:  # the request names a file that does not exist yet: that is where the result goes
                    return _quoted(fresh)
            named_here = [f for f in files if f in self.mentioned_files or _names_file(self.request, Path(f).name)]
            return _quoted(named_here or files)
        if kind == "folder":
            return _quoted(self.folders)
        if kind == "choice":
            return _quoted(list(slot.choices))
        if kind == "bool":
            return ["True", "False"]
        if kind == "number":  # what the request says, in digits or words; the defaults only if it says none
            return _unique(self.numbers + self.word_numbers) or list(DEFAULT_NUMBERS)
        if kind == "value":  # a setting's new value: what the request says, or a yes/no, or "all"
            # several columns the request names, as one list ("the name and phone columns")
            cols = mentioned(self.headers, self.request)
            columns = [", ".join(sorted(cols, key=lambda h: _first_at(h, self.request)))] if len(cols) > 1 else []
            return _quoted(self.urls + self.phrases + self.numbers + self.word_numbers + ["true", "false", "*"]
                           + self.setting_values + columns)
        if kind == "text":  # new text: a quoted phrase or a run of the request's words, else free
            return _quoted(self.spans) or None
        if kind == "match":  # a text that picks messages: the request's words found in their headers
            headers = " | ".join(self.mail_headers)
            found = [v for v in self.spans + self.phrases + self.urls if v.lower() in headers]
            found = _unique(sorted(found, key=len, reverse=True))
            every = ["*"] if re.search(r"\b(?:all|every|everything|each|any|whole|entire)\b", self.request, re.I) else []
            return _quoted(found + every) if found else _quoted(self.phrases + ["*"])
        if kind == "pattern":  # every file of a kind in a folder: the kinds and folders the request names first
            return _quoted(_named_patterns(self.patterns, self.request))
        if kind == "anchor":  # existing text the request points at: its runs found in the documents
            found = [s for s in self.spans if any(s.lower() in t for t in self.texts)]
            # "the title" names the first paragraph (the toolkits resolve it by position)
            titled = ["title"] if re.search(r"\btitle\b", self.request, re.I) else []
            return _quoted(titled + (found or self.phrases))
        named = {"sheet": self.sheets, "header": self.headers, "cell": self.cells, "row_key": self.row_keys,
                 "slide": self.slides, "setting": self.settings, "section": self.sections,
                 "phrase": self.phrases, "item": self.items}.get(kind)
        if named is None:
            return None  # free text
        if slot.new:  # a new name: not one that exists already (renaming a sheet onto another is an error)
            taken = {v.casefold() for v in self.sheets + self.slides + self.files}
            named = [v for v in named if v.casefold() not in taken]
        if kind != "phrase":  # the ones the request names, when it names any
            named = mentioned(named, self.request) or named
        return _quoted(named)  # none known: a call needing one is left out of the grammar


def _named_patterns(patterns: list[str], request: str) -> list[str]:
    """``patterns`` whose kind of file the request names as a kind (".jpg photos", "the PDFs",
    "mp3s", "log files"; not an extension inside a file name such as backup.ini), narrowed to the
    folders it names when it names any. None when it names no kind: a tool acting on every file of
    a kind is then not callable, so "keep backups for 14 days" in backup.ini cannot become
    "delete every .ini file"."""
    def names_kind(p: str) -> bool:
        ext = re.escape(p.rsplit(".", 1)[-1])
        return re.search(rf"(?:^|(?<=[\s(\"']))\.?{ext}s?\b", request, re.IGNORECASE) is not None

    def names_dir(p: str) -> bool:
        folder = p.rsplit("/", 1)[0].rsplit("/", 1)[-1] if "/" in p else ""
        return bool(folder) and re.search(rf"(?<![\w-]){re.escape(folder)}(?![\w-])", request, re.IGNORECASE) is not None

    kinds = [p for p in patterns if names_kind(p)]
    return [p for p in kinds if names_dir(p)] or kinds


def _first_at(name: str, request: str) -> int:
    """Where the request first names ``name`` (its words, or its plural), for keeping its order."""
    words = _words(name)
    m = re.search(rf"\b{re.escape(words)}", _words(request)) if words else None
    return m.start() if m else len(request)


def _fits_file(name: str, slot: Slot) -> bool:
    """Whether a file suits a file slot: its extension, or its base name (``Preferences``)."""
    if not slot.extensions and not slot.names:
        return True
    path = Path(name)
    return path.suffix.lower() in slot.extensions or path.name in slot.names


def _words(text: str) -> str:
    """``editor.fontSize`` / ``retention_days`` / ``Q3 Sales`` as plain lower-case words."""
    text = re.sub(r"([a-z])([A-Z])", r"\1 \2", text)
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


#: log-weight per request word a candidate shares (:func:`word_prior`)
WORD_PRIOR_WEIGHT = 2.0
#: slot kinds whose candidates are names the request may call by other words ("the minimap" for
#: ``editor.minimap.enabled``, "the amounts" for the ``Amount`` column), and a fixed choice the
#: request says as a word ("mark it as read": ``read``, not ``unread``): they get a word prior
WORD_PRIOR_KINDS = frozenset({"setting", "header", "sheet", "slide", "section", "item", "row_key", "choice"})
#: words that name nothing (the request's glue), for :func:`word_prior`
_GLUE = frozenset("a an the to of in on at for and or with into from by it is be this that please my your".split())


def said_words(request: str) -> set[str]:
    """The request's words that can name something (its glue words left out): what
    :func:`shared_words` compares a candidate with."""
    return set(_words(request).split()) - _GLUE


def shared_words(candidate: str, said: set[str]) -> int:
    """How many of ``candidate``'s words the request says (``said``: its words); a word also
    matches one it begins, or that begins it, from four letters on ("count" / "counter",
    "auto" / "automatically", "exclude" / "excludes")."""
    return sum(1 for w in set(_words(candidate).split()) - _GLUE if any(w == s or (min(len(w), len(s)) >= 4 and (
        w.startswith(s) or s.startswith(w))) for s in said))


#: a candidate that is exactly a phrase the request quotes gets this many times ``weight`` more:
#: a quote names a thing as written ("the bookmark misspelt 'Wether'" is the bookmark ``Wether``,
#: not the folder ``Bookmarks bar`` whose two words the request also happens to say)
QUOTE_PRIOR_FACTOR = 2.0


#: a candidate all of whose words the request says gets this many times ``weight`` more: among
#: VLC's 1,500 options "its dark palette" names ``qt-dark-palette`` whole, while hundreds of
#: others share one word of the request ("switch", "interface") and one or two share two
COVER_PRIOR_FACTOR = 1.0


def _all_said(candidate: str, said: set[str]) -> bool:
    """Whether the request says every word of ``candidate``'s last dotted part (``editor.fontSize``
    by "font size"), words of one or two letters aside (the ``qt`` of ``qt-dark-palette``)."""
    words = {w for w in _words(_unquote(candidate).rsplit(".", 1)[-1]).split() if len(w) > 2} - _GLUE
    return bool(words) and shared_words(" ".join(words), said) == len(words)


def _unquote(candidate: str) -> str:
    """A candidate as the grammar writes it (``'Wether'``) without its quotes."""
    c = candidate.strip()
    return c[1:-1] if len(c) >= 2 and c[0] in "'\"" and c[-1] == c[0] else c


def word_prior(candidates: list[str], request: str, weight: float = WORD_PRIOR_WEIGHT) -> tuple[float, ...] | None:
    """A log-prior over ``candidates``: ``weight`` per request word a candidate shares
    (:func:`shared_words`), :data:`COVER_PRIOR_FACTOR` times ``weight`` more for one all of whose
    words it says, and :data:`QUOTE_PRIOR_FACTOR` times ``weight`` for a candidate the request
    quotes whole, renormalised, so every candidate keeps some mass; ``None`` when no
    candidate shares a word (no preference). Grounds a name the request calls by its words, as
    Agent S2's textual grounding finds text on a screen: "switch the minimap off" prefers
    ``editor.minimap.enabled``. It reads only the request and the candidates."""
    said = said_words(request)
    quoted = {m.group(2).strip().lower() for m in re.finditer(QUOTED, request)}
    scores = [weight * shared_words(c, said) + (QUOTE_PRIOR_FACTOR * weight if _unquote(c).lower() in quoted else 0.0)
              + (COVER_PRIOR_FACTOR * weight if _all_said(c, said) else 0.0) for c in candidates]
    if not scores or max(scores) == 0:
        return None
    norm = lse(scores)
    return tuple(v - norm for v in scores)


#: slot kinds whose candidates are compound names a request paraphrases rather than says ("make
#: the text bigger" for ``editor.fontSize``): their word prior is multiplied by :func:`meaning_prior`
MEANING_PRIOR_KINDS = frozenset({"setting"})
#: log-weight per unit of cosine similarity (:func:`meaning_prior`); set before any measurement,
#: not tuned: MiniLM's similarities of a request to a set of key names differ by about 0.05-0.3,
#: so the closest name is preferred by up to ~3x over the next, a preference and not a rule
MEANING_PRIOR_WEIGHT = 10.0
#: at most this many candidates are compared (a Chromium profile lists hundreds of keys)
MEANING_PRIOR_MAX = 400


def meaning_prior(candidates: Sequence[str], request: str, encode: Callable[[list[str]], Any],
                  weight: float = MEANING_PRIOR_WEIGHT) -> tuple[float, ...] | None:
    """A log-prior over ``candidates`` from what they mean: ``weight`` times the cosine similarity
    of the request's sentence embedding and each candidate's words (``editor.fontSize`` as
    "editor font size"), renormalised. Why: :func:`word_prior` grounds a name the request says,
    but people name a setting by its effect ("the text is too small", "stop it saving by
    itself"), which shares no word with the key (or only "editor", with every ``editor.*`` key);
    then the model alone chose, and the development sets' settings tasks failed on the wrong key. ``encode``: normalised embeddings (MiniLM,
    :class:`~agentlab.llm.similarity.SentenceEncoder`); ``None`` for fewer than two candidates."""
    if len(candidates) < 2 or len(candidates) > MEANING_PRIOR_MAX or not request.strip():
        return None
    vectors = encode([request] + [_words(_unquote(c)) or _unquote(c) for c in candidates])
    sims = [float(v) for v in vectors[1:] @ vectors[0]]
    scores = [weight * s for s in sims]
    norm = lse(scores)
    return tuple(v - norm for v in scores)


#: slot kinds of text the request gives as written (new text, a value, the text an edit anchors
#: on, a message's words): only a whole quoted phrase is preferred among their candidates, by
#: :func:`quote_prior` -- a count of shared words would prefer the longest run of the request
QUOTE_PRIOR_KINDS = frozenset({"text", "value", "anchor", "match"})


def quote_prior(candidates: list[str], request: str, weight: float = QUOTE_PRIOR_FACTOR * WORD_PRIOR_WEIGHT
                ) -> tuple[float, ...] | None:
    """A log-prior over ``candidates``: ``weight`` for one that is exactly a phrase the request
    quotes ("Add the paragraph 'Doors open at 19:00.'" is that text with its full stop, not the
    run of words without it; "make 'Summer party' bold" anchors on ``Summer party``, not on
    ``party``), renormalised; ``None`` when the request quotes none of them."""
    quoted = {m.group(2).strip().lower() for m in re.finditer(QUOTED, request)}
    scores = [weight if _unquote(c).lower() in quoted else 0.0 for c in candidates]
    if not scores or max(scores) == 0:
        return None
    norm = lse(scores)
    return tuple(v - norm for v in scores)


#: words that ask for a setting to be off ("turn it off", "disable", "never", "hide", "don't")
_OFF_WORDS = frozenset("not no never off disable disabled disabling stop hide hidden without don dont remove".split())
#: words that ask for one to be on (kept apart from ``on`` the preposition: "on sheet March")
_ON = re.compile(r"\b(?:enable[ds]?|show|allow|always|activate|(?:turn|switch|put)\s+(?:\w+\s+){0,3}?on)\b", re.I)
_TRUE, _FALSE = frozenset({"true", "1", "yes", "on"}), frozenset({"false", "0", "no", "off"})


def polarity_prior(candidates: list[str], request: str, weight: float = WORD_PRIOR_WEIGHT) -> tuple[float, ...] | None:
    """A log-prior over a setting's new values that leans the yes/no ones the request's way: a
    request without a word asking for something to be off ("only one instance", "pause when
    minimized") does not ask for ``false``, so ``false`` (``0``, ``no``, ``off``) loses ``weight``;
    one asking only for off ("never", "disable", "hide") loses ``true`` the same way. Values that
    are not yes/no keep their mass relative to each other; a request saying both ("turn off X and
    enable Y"), or a list without both kinds, gets none."""
    plain = [_unquote(c).strip().lower() for c in candidates]
    if not (set(plain) & _TRUE and set(plain) & _FALSE):
        return None
    off = bool(set(_words(request).split()) & _OFF_WORDS)
    on = _ON.search(request) is not None
    if off and on:
        return None
    losing = _TRUE if off else _FALSE
    scores = [-weight if v in losing else 0.0 for v in plain]
    norm = lse(scores)
    return tuple(v - norm for v in scores)


def combine_priors(*priors: tuple[float, ...] | None) -> tuple[float, ...] | None:
    """Log-priors over the same candidates added (a product of experts) and renormalised; ``None``s skipped."""
    given = [p for p in priors if p is not None]
    if not given:
        return None
    scores = [sum(vals) for vals in zip(*given)]
    norm = lse(scores)
    return tuple(v - norm for v in scores)


#: a yes/no parameter the request names is wanted on almost always ("make it bold", "in
#: italics", "sort descending"), and the small model's habit is the default ``False`` (on the
#: development sets it wrote ``set_font(..., False, False, False)``, a call that changes nothing,
#: for "make it bold" under the 2 nats of :data:`WORD_PRIOR_WEIGHT`): a named flag gets this much
FLAG_PRIOR_WEIGHT = 6.0
#: words that turn a named flag off when they come just before it ("not bold", "remove the italics")
_NEGATIONS = frozenset("not no remove without unset drop stop never off non un".split())


def flag_prior(name: str, request: str, weight: float = FLAG_PRIOR_WEIGHT) -> tuple[tuple[str, float], ...] | None:
    """A log-prior over a yes/no parameter's values (``True``, ``False``): a flag the request names
    ("in italics" for ``italic``, "bold" for ``bold``) is preferred on by ``weight``, or off when a
    negation stands within the two words before it ("not bold", "remove the italics",
    "un-bold"); a flag it does not name gets no prior, since a request can ask for one without
    its word ("biggest first" is ``descending``)."""
    words = _words(request).split()
    said = set(words) - _GLUE
    if not shared_words(name, said):
        return None
    at = [i for i, w in enumerate(words) if shared_words(name, {w})]
    negated = any(words[j] in _NEGATIONS for i in at for j in range(max(0, i - 2), i))
    norm = lse((weight, 0.0))
    on, off = (-norm, weight - norm) if negated else (weight - norm, -norm)
    return (("True", on), ("False", off))


def mentioned(values: list[str], request: str) -> list[str]:
    """The values the request names: as written, or as words (a dotted or camel-cased key by
    its last part: ``editor.fontSize`` is named by "font size"), or in the plural (the column
    ``amount`` is named by "the biggest amounts")."""
    said = f" {_words(request)} "
    out = []
    for v in values:
        whole, last = _words(v), _words(v.rsplit(".", 1)[-1])
        as_written = re.search(rf"(?<!\w){re.escape(v.lower())}(?!\w)", request.lower()) if v else None
        if v and (as_written or any(w and any(f" {w}{end} " in said for end in ("", "s", "es")) for w in (whole, last))):
            out.append(v)
    return out


def _names_file(request: str, name: str) -> bool:
    """Whether ``request`` names the file ``name``: as written anywhere in it, or as a whole word
    in any case -- a mail folder is the file ``Inbox`` and people write "the inbox"."""
    return bool(name) and (name in request or re.search(rf"(?<![\w.]){re.escape(name)}(?![\w])", request, re.I) is not None)


#: a quoted phrase: the opening quote starts a word and the closing one ends it, so an apostrophe
#: ("the Pricing slide's title to 'Pricing (2027)'") neither opens nor closes a quote
QUOTED = re.compile(r"(?<!\w)(['\"‘“])(.+?)(['\"’”])(?!\w)")


def _spans(text: str, longest: int = 8) -> list[str]:
    """Quoted phrases, then every run of 1..``longest`` words of each sentence (trailing
    punctuation dropped), longest first."""
    quoted = [m.group(2).strip() for m in re.finditer(QUOTED, text) if m.group(2).strip()]
    runs: list[str] = []
    for sentence in re.split(r"(?<=[.!?;:])\s+", text):
        words = sentence.split()
        for n in range(min(longest, len(words)), 0, -1):
            for i in range(len(words) - n + 1):
                run = " ".join(words[i:i + n]).strip(".,;:!?\"'()‘’“”")
                edges = run.split()
                # new text is a run of content words: glue or a command word at either edge ("Add milk",
                # "the end") is the request talking, not the text
                if edges and edges[0].lower() not in STOP and edges[-1].lower() not in STOP:
                    runs.append(run)
    return _unique(quoted + runs)


def _quoted(values: list[str]) -> list[str]:
    return [repr(v) for v in _unique(values)]


def _unique(values: list[str]) -> list[str]:
    seen: dict[str, None] = {}
    for v in values:
        if v and v not in seen:
            seen[v] = None
    return list(seen)


#: a file name as a request writes it (``report.xlsx``, ``music/song.mp3``)
#: (never a piece of an e-mail address: jo.doe@example.org names no file)
_FILE_NAME = r"(?<![\w/.@+-])((?:[\w-]+/)*[\w.-]+\.[A-Za-z][A-Za-z0-9]{1,4})(?![\w@])"
#: an e-mail address, kept whole as a value (its parts are not offered as words of their own)
_EMAIL = r"(?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)+"
#: words before "folder" that describe it rather than name it ("a new folder", "the same folder")
_NOT_A_FOLDER = frozenset("new empty separate different another same other whole main that this my your our its their "
                          "own shared right wrong".split())


def request_values(instruction: str) -> SlotValues:
    """What the request itself says: quoted phrases, words and pairs of words, numbers, cell
    references, column letters and file or folder names."""
    text = instruction
    quoted = [m.group(2).strip() for m in re.finditer(QUOTED, text) if m.group(2).strip()]
    files = re.findall(_FILE_NAME, text)
    folders = [f.rstrip("/") for f in re.findall(r"(?<![\w/.-])((?:[\w.-]+/)+)", text)]
    # "the archive folder", not "a new folder" (a word that only describes the folder names none)
    folders += [m.group(1) for m in re.finditer(r"\b(?:the|a|an|into|in)\s+([\w.-]+)\s+folder\b", text, re.I)
                if m.group(1).lower() not in _NOT_A_FOLDER]
    # "a new folder called pdfs inside downloads": the new folder where the request puts it (only
    # there: a pdfs/ at the top would be another folder)
    for m in re.finditer(r"\bfolder\s+(?:called|named)\s+['\"]?([\w.-]*\w)['\"]?(?:\s+(?:inside|in|under|within)\s+"
                         r"(?:the\s+|my\s+)?([\w.-]*\w)(?:\s+folder)?)?", text, re.I):
        folders.append(f"{m.group(2)}/{m.group(1)}" if m.group(2) else m.group(1))
    # a number may end a sentence ("to position 3.") but not run into a letter or another number;
    # sizes written as 310x130 give both sides
    numbers = re.findall(r"(?<![\w.])(?<!\d,)[-+]?\d+(?:\.\d+)?(?!\w|\.\d|,\d{3})", text)
    numbers += [n for pair in re.findall(r"(?<![\w.])(\d+)\s*[x×]\s*(\d+)(?![\w.]|\.\d)", text) for n in pair]
    # a unit or an ordinal written onto the number (28pt, 12px, 1.5x, 3rd) and thousands with commas
    numbers += re.findall(r"(?<![\w.])(\d+(?:\.\d+)?)(?=[A-Za-z]{1,3}\b)", text)
    numbers += [m.replace(",", "") for m in re.findall(r"(?<![\w.,])(\d{1,3}(?:,\d{3})+)(?![\w,]|\.\d)", text)]
    cells = [c.upper() for c in re.findall(r"\b([A-Za-z]{1,2}[1-9]\d{0,4})\b", text) if re.search(r"\d", c)
             and not re.fullmatch(r"[A-Za-z]\d+[a-z]", c)]
    columns = [m.group(1).upper() for m in re.finditer(r"\bcolumns?\s+([A-Za-z])\b", text)]
    # two words are a value only when the request writes them side by side: not the halves of a
    # file name ("server.json" is not the value 'server json') nor words either side of one
    bare = re.sub(rf"{_FILE_NAME}|\b(?:https?://|www\.)\S+|{_EMAIL}", " | ", text)
    tokens = re.findall(r"[A-Za-z0-9][\w'-]*|\|", bare)
    # a one-character word is a phrase only when it is a digit (a setting's value: "tab size 4")
    words = [w for w in re.findall(r"[A-Za-z0-9][\w.'-]*", bare) if w.lower() not in STOP and (len(w) > 1 or w.isdigit())]
    words = [w.rstrip(".'") for w in words if not re.fullmatch(r"[\w.-]+\.[A-Za-z]{2,4}", w)]
    pairs = [f"{a} {b}" for a, b in zip(tokens, tokens[1:])
             if "|" not in (a, b) and a.lower() not in STOP and b.lower() not in STOP]
    # URLs and absolute paths stay whole (a value the request gives: a home page, a download folder)
    # (an address ending a question or an exclamation does not take its "?" or "!")
    urls = [u.rstrip(".,;:)'\"?!") for u in re.findall(r"\b(?:https?://|file://|www\.)[^\s'\"<>]+", text)]
    urls += [m.rstrip(".,;:)") for m in re.findall(r"(?<![\w.~/:])/[\w.-]+(?:/[\w.-]*[\w-])+/?", text)]
    # a path under the home folder keeps its "~" (~/Music, ~/Pictures/vlc)
    urls += [m.rstrip(".,;:)") for m in re.findall(r"(?<![\w.])~/[\w.-]*[\w-](?:/[\w.-]*[\w-])*/?", text)]
    urls += re.findall(r"(?<![\w/])\.[A-Za-z][A-Za-z0-9]{1,4}\b", text)  # a file kind: ".mp3"
    # an e-mail address stays whole too (a reply-to address, a sender): its parts are no value
    urls += [m.rstrip(".") for m in re.findall(_EMAIL, text)]
    # a relative path without an extension names a file too (an mbox folder: Mail/Invoices)
    files += [m for m in re.findall(r"(?<![\w/.~-])((?:[\w-]+/)+[\w-]+)(?![\w/.])", text) if m not in files]
    return SlotValues(mentioned_files=files, folders=folders, cells=cells, headers=columns, numbers=_unique(numbers),
                      word_numbers=word_numbers(text),
                      phrases=_unique(quoted + words + pairs), spans=_spans(text), urls=_unique(urls), request=text)


def word_numbers(text: str) -> list[str]:
    """The numbers ``text`` writes as words, as digits: ``three`` 3, ``twenty-five`` 25, ``the
    second`` 2, ``half`` 0.5, ``a dozen`` 12 (whole numbers up to 99, ordinals up to twelfth)."""
    out: list[str] = []
    words = re.findall(r"[a-z]+", text.lower())
    i = 0
    while i < len(words):
        w = words[i]
        if w in _TENS:
            value = _TENS[w]
            if i + 1 < len(words) and words[i + 1] in _UNITS[1:10]:
                value += _UNITS.index(words[i + 1])
                i += 1
            out.append(str(value))
        elif w in _UNITS:
            out.append(str(_UNITS.index(w)))
        elif w in _ORDINALS:
            out.append(str(_ORDINALS.index(w) + 1))
        elif w in _WORD_VALUES:
            out.append(_WORD_VALUES[w])
        i += 1
    return _unique(out)


def workspace_values(root: Path, kit: Toolkit) -> SlotValues:
    """What the workspace holds: its files and folders and, per file type the toolkit reads,
    sheet names, headers and first-column values, slide titles, and setting keys.

    Reads ``root`` by path, following links: a folder a sandboxed program wrote is given here as
    its private copy (:meth:`agentlab.safepath.SafeFolder.private_copy`, as the tool agent does)."""
    files: list[str] = []
    folders: list[str] = []
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root)
        if rel.parts[0].startswith(".agentlab"):
            continue
        (folders if p.is_dir() else files).append(rel.as_posix())
    patterns = _unique([(f"{Path(f).parent.as_posix()}/*{Path(f).suffix.lower()}" if "/" in f else f"*{Path(f).suffix.lower()}")
                        for f in files if Path(f).suffix and not Path(f).name.startswith(".")])
    values = SlotValues(files=files, folders=folders, settings=list(kit.catalogue),
                        setting_values=list(kit.catalogue_values), patterns=patterns)
    for f in files:
        path, suffix = root / f, Path(f).suffix.lower()
        try:
            if _app_file(path, values):  # a browser, mail or media player's own file (no telling suffix)
                continue
            if suffix == ".xlsx":
                _xlsx(path, values)
            elif suffix == ".pptx":
                _pptx(path, values)
            elif suffix == ".json":
                _json_keys(path, values)
            elif suffix in (".csv", ".tsv"):
                _csv_header(path, values)
            elif suffix in (".ini", ".cfg", ".conf"):
                _ini_keys(path, values)
            elif suffix == ".docx":
                _docx(path, values)
            if suffix in (".txt", ".md", ".csv", ".ini", ".cfg", ".conf", ".log"):
                values.texts += [line.lower() for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        except Exception:  # an unreadable file offers no values (the agent sees it in the listing)
            continue
    return values


def merge(request: SlotValues, workspace: SlotValues) -> SlotValues:
    """One set of values: the workspace's first, then what the request adds."""
    out = SlotValues(request=request.request or workspace.request)
    for name in out.__dataclass_fields__:
        if name != "request":
            setattr(out, name, _unique(getattr(workspace, name) + getattr(request, name)))
    return out


def _xlsx(path: Path, values: SlotValues) -> None:
    import openpyxl

    wb = openpyxl.load_workbook(path, read_only=True)
    for ws in wb.worksheets:
        values.sheets.append(ws.title)
        for r, row in enumerate(ws.iter_rows(values_only=True), start=1):
            if r == 1:
                values.headers += [str(v) for v in row if v is not None]
            elif r <= 200:
                values.row_keys += [str(v) for v in row[:2] if v is not None]
    wb.close()


def _pptx(path: Path, values: SlotValues) -> None:
    import pptx

    prs = pptx.Presentation(str(path))
    for slide in prs.slides:
        for shape in slide.shapes:
            if shape.has_text_frame:
                values.texts += [p.text.lower() for p in shape.text_frame.paragraphs if p.text.strip()]
    for i, slide in enumerate(prs.slides, start=1):
        title = slide.shapes.title
        if title is not None and title.text.strip():
            values.slides.append(title.text.strip())
        values.slides.append(str(i))
    values.slides += ["first", "last"]


def _json_keys(path: Path, values: SlotValues) -> None:
    import json

    data = json.loads(re.sub(r"^\s*//.*$", "", path.read_text(encoding="utf-8"), flags=re.M) or "{}")
    if isinstance(data, dict):
        values.settings += list(data)
        for c in data.get("configurations", []) if isinstance(data.get("configurations"), list) else []:
            if isinstance(c, dict):
                values.settings += list(c)


def _csv_header(path: Path, values: SlotValues) -> None:
    """A CSV's (or TSV's) header cells, read as a CSV reader reads them (a quoted header may hold a comma)."""
    import csv

    first = path.read_text(encoding="utf-8-sig").splitlines()[:1]
    if first:
        dialect = csv.excel_tab if path.suffix.lower() == ".tsv" else csv.excel
        values.headers += [h.strip() for h in next(csv.reader(first, dialect), []) if h.strip()]


def _ini_keys(path: Path, values: SlotValues) -> None:
    import configparser

    cfg = configparser.ConfigParser(interpolation=None)
    cfg.read(path, encoding="utf-8")
    for section in cfg.sections():
        values.sections.append(section)
        values.settings += list(cfg[section])


def _docx(path: Path, values: SlotValues) -> None:
    import docx

    values.texts += [p.text.lower() for p in docx.Document(str(path)).paragraphs if p.text.strip()]


def _app_file(path: Path, values: SlotValues) -> bool:
    """The values of an application's own file, recognised by its name or its first bytes:
    Chromium's ``Preferences`` (every setting as a dotted key) and ``Bookmarks`` (bookmark and
    folder names), a Gecko ``prefs.js`` (its pref keys), an mbox mail folder (the folder and its
    message subjects), a VLC ``vlcrc`` (sections and keys, also the commented-out defaults) and a
    playlist (its entries). ``False``: not one of these."""
    import json

    name = path.name
    if name == "prefs.js":
        values.settings += re.findall(r'user_pref\(\s*"([^"]+)"', path.read_text(encoding="utf-8", errors="replace"))
        return True
    if path.suffix.lower() in (".m3u", ".m3u8", ".pls"):
        values.items += [ln.strip() for ln in path.read_text(encoding="utf-8", errors="replace").splitlines()
                         if ln.strip() and not ln.startswith("#")]
        return True
    if path.suffix or path.stat().st_size > 2_000_000:
        return False
    head = path.read_bytes()[:64]
    if head.lstrip().startswith(b"{"):
        data = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(data, dict) and isinstance(data.get("roots"), dict):  # Chromium Bookmarks
            values.items += list(data["roots"])
            _bookmark_names(data["roots"], values.items)
        elif isinstance(data, dict):  # Chromium Preferences: every leaf as a dotted key
            values.settings += _dotted(data)[:400]
        return True
    if head.startswith(b"From "):  # an mbox mail folder: its name and its messages' subjects
        values.items.append(name)
        text = path.read_text(encoding="utf-8", errors="replace")
        values.items += re.findall(r"(?im)^Subject:\s*(.+?)\s*$", text)
        values.mail_headers += [h.lower() for h in re.findall(r"(?im)^(?:Subject|From|To):\s*(.+?)\s*$", text)]
        return True
    text = path.read_text(encoding="utf-8", errors="replace")
    if re.search(r"(?m)^\[[\w-]+\]", text):  # an INI-like rc file (vlcrc): sections, set and commented keys
        values.sections += re.findall(r"(?m)^\[([\w-]+)\]", text)
        values.settings += re.findall(r"(?m)^#?\s*([\w][\w.-]*)\s*=", text)
        return True
    return False


def _dotted(data: dict[str, object], prefix: str = "") -> list[str]:
    out: list[str] = []
    for k, v in data.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict) and v:
            out += _dotted(v, key + ".")
        else:
            out.append(key)
    return out


def _bookmark_names(node: object, out: list[str]) -> None:
    if isinstance(node, dict):
        if node.get("name"):
            out.append(str(node["name"]))
        for child in node.get("children", []) if isinstance(node.get("children"), list) else []:
            _bookmark_names(child, out)
        if "children" not in node:
            for v in node.values():
                if isinstance(v, dict):
                    _bookmark_names(v, out)
