"""App skills: parametrised GUI operations a desktop specialist learns from demonstrations.

What makes a GUI agent a *specialist* (issue #40) is that it knows its application's operations —
for a browser "open a page", "bookmark this page"; for a spreadsheet "set a cell" — and does not
rediscover the clicks each time. A skill here is such an operation: a name, one line saying what it
does, typed parameters, and the GUI steps that carry it out, aimed at elements by accessible role
and name (:class:`~agentlab.tasks.gui_solution.GuiStep`, the format of a task's ``gui_solution``),
so it replays on any screen of the application whatever the element numbers are.

Skills are *learned, not written*: each comes from one demonstration (:class:`SkillDemo`) — a
synthesized request (never a task of an evaluation set), the start state, a checker, and the steps
that carry the request out, recorded in the ``gui_solution`` format. ``agentlab skills check``
replays every demonstration on its real application under Xvfb (the same check as
``agentlab tasks check --gui``) and ``agentlab skills learn`` turns each into a skill by
:func:`learn_skill`: every place a value of the request occurs in the steps (the text typed, the
name of the element clicked) becomes a parameter, so "Put 42 in cell C3" teaches
``set_cell(cell, value)`` with ``C3`` and ``42`` as its slots. The demonstration says which
request values are parameters and what to call them; where they go in the steps is found.

A specialist is offered its application's skills beside the raw typed GUI actions
(:class:`~agentlab.agents.gui_actions.GuiChoices`): under the grammar a skill call's arguments are
the request's own values, and :func:`run_skill` replays the instantiated steps on the screen.
The library ships in ``data/skills/<app>.json``; its agent document lists the skills
(:func:`skills_listing`) so routers and readers see them.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from agentlab.errors import ConfigError
from agentlab.paths import data_dir
from agentlab.tasks.gui_solution import GuiStep
from agentlab.tasks.spec import ExecTask

log = logging.getLogger(__name__)

#: a parameter's place in a skill's steps (``{{cell}}``): doubled braces, which no accessible
#: name or typed text of the demonstrations holds
_SLOT = "{{{{{name}}}}}"
_SLOT_RE = re.compile(r"\{\{([a-z][a-z0-9_]*)\}\}")
_IDENT = re.compile(r"[a-z][a-z0-9_]*")
#: the step fields that hold text a request value can appear in (typed text, an element's label)
_TEXT_FIELDS = ("type", "name", "contains", "pattern", "value")
#: the GUI operations' own names: a skill may not shadow one
RESERVED = frozenset({"click", "type", "key", "scroll", "select", "done", "fail"})


def skills_dir() -> Path:
    """Where the learned libraries (``<app>.json``) and the demonstrations (``demos/``) live."""
    return data_dir() / "skills"


class SkillDemo(BaseModel):
    """One demonstration: the skill it teaches and a synthesized, checkable desktop task.

    ``params`` maps each parameter's name to the value the request gives it (``{"cell": "C3"}``);
    ``task`` is a desktop task whose ``gui_solution`` is the demonstration itself, with a start
    state and an evaluator of its own, so ``agentlab skills check`` can prove it on the real
    application."""

    model_config = ConfigDict(extra="forbid")

    skill: str
    doc: str
    app: str  #: the pool domain of the specialist that gets the skill (``chrome``, ``calc``)
    params: dict[str, str] = Field(default_factory=dict)
    #: which steps of the task's ``gui_solution`` are the skill (``[start, end)``; default all): the
    #: rest complete the task so its end state can be checked (a field typed, then a form sent)
    span: tuple[int, int] | None = None
    #: the skill keeps the application's work (a save in the file's own format, GIMP's overwrite):
    #: the typed deployment runs it once before an episode that changed something ends, when the
    #: model has not (:attr:`GuiSkill.finishes`)
    finishes: bool = False
    task: ExecTask
    source: str | None = Field(None, exclude=True)

    @field_validator("skill")
    @classmethod
    def _name(cls, v: str) -> str:
        if not _IDENT.fullmatch(v) or v in RESERVED:
            raise ValueError(f"skill name {v!r} must be lower_case_with_underscores and not one of {sorted(RESERVED)}")
        return v

    @field_validator("params")
    @classmethod
    def _params(cls, v: dict[str, str]) -> dict[str, str]:
        for name, value in v.items():
            if not _IDENT.fullmatch(name):
                raise ValueError(f"parameter name {name!r} must be lower_case_with_underscores")
            if not value.strip():
                raise ValueError(f"parameter {name!r} has an empty value")
        return v


class GuiSkill(BaseModel):
    """A learned skill: its signature, what it does, and its steps with ``{{param}}`` slots."""

    model_config = ConfigDict(extra="forbid")

    name: str
    doc: str
    app: str
    params: list[str] = Field(default_factory=list)
    steps: list[GuiStep]
    #: the demonstration's request it was learned from (for readers; never an evaluation task)
    learned_from: str = ""
    #: parameters that name the element the first step acts on (a link's, a button's, a field's
    #: label) -> that element's role: on a screen they are chosen among the labels of its marks of
    #: that role, since the request rarely writes a label as the page does ("the Events page")
    on_screen: dict[str, str] = Field(default_factory=dict)
    #: each typed-text parameter's shape as its demonstration's value had it (:func:`value_shape`:
    #: ``"dd:dd"`` for "15:00", ``"words"`` for "Bake bread"): a call's argument is drawn among the
    #: request's values of the same kind, so an hour is not filled with a name nor a label with a time
    shapes: dict[str, str] = Field(default_factory=dict)
    #: it saves the app's work (taught by a demonstration marked ``finishes``): a person's edit of
    #: a document is kept only once it is saved, and a request rarely repeats "save" for every
    #: edit, so the deployment saves once at the end instead of leaving it to the model
    #: (``AppAgentConfig.save_on_end``)
    finishes: bool = False
    #: the word right before each parameter's value in its demonstration's request (articles and
    #: quotation marks skipped: "rename my bookmark 'Town pool' to 'Swimming timetable'" gives
    #: old -> "bookmark", new -> "to"): where a request names two values, the one after the same
    #: word is the likelier for that parameter (:func:`~agentlab.agents.gui_actions._value_prior`)
    cues: dict[str, str] = Field(default_factory=dict)

    def signature(self) -> str:
        return f"{self.name}({', '.join(self.params)})"

    def steps_for(self, args: Mapping[str, Any]) -> list[GuiStep]:
        """The steps with every slot filled by ``args`` (a missing or extra argument: one line).
        A value goes into a ``pattern`` as literal text (escaped)."""
        missing = [p for p in self.params if p not in args]
        extra = [a for a in args if a not in self.params]
        if missing or extra:
            raise ConfigError(f"{self.signature()}: " + "; ".join(
                ([f"missing {', '.join(missing)}"] if missing else []) + ([f"unknown {', '.join(extra)}"] if extra else [])))
        values = {k: str(v) for k, v in args.items()}

        def fill(text: str, key: str) -> str:
            return _SLOT_RE.sub(lambda m: re.escape(values[m.group(1)]) if key == "pattern" else values[m.group(1)], text)

        out = []
        for i, step in enumerate(self.steps):
            raw = _loose_names(step.model_dump(exclude_none=True))
            if i == 0:  # the first element is on the screen the call was made on, or the call is wrong
                raw["timeout_s"] = min(float(raw.get("timeout_s", FIRST_STEP_TIMEOUT_S)), FIRST_STEP_TIMEOUT_S)
            out.append(GuiStep.model_validate(_map_text(raw, fill)))
        return out


#: how long a skill's first step waits for its element: the call was made on a settled screen,
#: so an element that is not there is a wrong argument, fed back at once rather than after the
#: 30 s a demonstration's step may wait for a dialog
FIRST_STEP_TIMEOUT_S = 3.0


def _loose_names(node: Any) -> Any:
    """A target whose ``name`` or ``contains`` holds a slot matches any label that holds the filled
    text as whole words, in any case: a request writes "part number" for the label "Part number",
    "the theme" for the switch "Dark theme", "Lunch" for the alarm "12:00 Lunch" (the label becomes
    a pattern; constant text is escaped here, the slot's value when it is filled)."""
    if isinstance(node, dict):
        out = {k: _loose_names(v) for k, v in node.items()}
        for key in ("name", "contains"):
            text = out.get(key)
            if isinstance(text, str) and _SLOT_RE.search(text) and "pattern" not in out:
                del out[key]
                body = "".join(piece if i % 2 else re.escape(piece)
                               for i, piece in enumerate(re.split(r"(\{\{[a-z][a-z0-9_]*\}\})", text.strip())))
                out["pattern"] = r"(?is).*(?<!\w)" + body + r"(?!\w).*"
                break
        return out
    if isinstance(node, list):
        return [_loose_names(v) for v in node]
    return node


def _acted_on(step: GuiStep) -> Any:
    """The element ``step`` acts on (clicks, drags, types into), or None (a key, a wait, a sleep)."""
    return step.target if step.action in ("click", "double_click", "drag", "type") else None


def first_target(skill: GuiSkill) -> Any:
    """The element a skill's first step acts on when its label is fixed (no slot), else None: a
    skill is offered only on a screen that shows it (Calc's Name Box, the clock's Settings button)."""
    target = _acted_on(skill.steps[0])
    if target is None or any(_SLOT_RE.search(v or "") for v in (target.name, target.contains, target.pattern)):
        return None
    return target


def _map_text(node: Any, fn: Any, key: str = "") -> Any:
    """``node`` (a step's dump) with ``fn(text, field)`` applied to every text field of it."""
    if isinstance(node, dict):
        return {k: _map_text(v, fn, k) for k, v in node.items()}
    if isinstance(node, list):
        return [_map_text(v, fn, key) for v in node]
    if isinstance(node, str) and key in _TEXT_FIELDS:
        return fn(node, key)
    return node


def _occurs(value: str) -> re.Pattern[str]:
    """``value`` as a whole token: ``2`` is not found inside ``HX-4471`` nor ``C3`` inside ``C30``."""
    return re.compile(r"(?<![\w])" + re.escape(value) + r"(?![\w])")


def learn_skill(demo: SkillDemo) -> GuiSkill:
    """The skill a demonstration teaches: each parameter's value, found in the request, is replaced
    by the parameter's slot wherever it occurs in the steps (longest value first, whole tokens
    only, in typed text and in element labels). A value the request does not say, or that no step
    uses, is one clear line: the demonstration would teach a parameter that does nothing."""
    where = demo.source or demo.skill
    steps = demo.task.gui_solution or []
    if demo.span is not None:
        start, end = demo.span
        if not 0 <= start < end <= len(steps):
            raise ConfigError(f"skill {demo.skill}: span {list(demo.span)} is not within the "
                              f"{len(steps)} steps of the demonstration", where=where)
        steps = steps[start:end]
    if not steps:
        raise ConfigError(f"skill {demo.skill}: the demonstration's task has no gui_solution", where=where)
    dumped = [s.model_dump(exclude_none=True) for s in steps]
    for name, value in sorted(demo.params.items(), key=lambda kv: -len(kv[1])):
        if not _occurs(value).search(demo.task.instruction):
            raise ConfigError(f"skill {demo.skill}: parameter {name}'s value {value!r} is not in the request "
                              f"{demo.task.instruction!r}", where=where)
        used = [False]

        def put(text: str, key: str, value: str = value, name: str = name, used: list[bool] = used) -> str:
            target = re.escape(value) if key == "pattern" else value
            # never inside a slot already put ("p0" is a value, and the name of another's slot)
            pieces = re.split(r"(\{\{[a-z][a-z0-9_]*\}\})", text)
            for i in range(0, len(pieces), 2):
                pieces[i], n = _occurs(target).subn(_SLOT.format(name=name), pieces[i])
                used[0] = used[0] or n > 0
            return "".join(pieces)

        dumped = [_map_text(d, put) for d in dumped]
        if not used[0]:
            raise ConfigError(f"skill {demo.skill}: parameter {name}'s value {value!r} is in no step of the "
                              "demonstration", where=where)
    learned = [GuiStep.model_validate(d) for d in dumped]
    on_screen = _first_target_labels(learned)
    skill = GuiSkill(name=demo.skill, doc=demo.doc, app=demo.app, params=list(demo.params), steps=learned,
                     learned_from=demo.task.instruction, on_screen=on_screen, finishes=demo.finishes)
    if demo.finishes and demo.params:
        raise ConfigError(f"skill {demo.skill}: a finishing skill (a save) takes no parameters", where=where)
    late = {p for _, p in late_labels(skill)}
    skill.shapes = {p: value_shape(v, cells=demo.app in SHEET_APPS) for p, v in demo.params.items()
                    if p not in on_screen and p not in late}
    skill.cues = {p: cue for p, v in demo.params.items() if (cue := cue_before(v, demo.task.instruction))}
    return skill


#: words skipped when reading the word before a value: they come before any kind of value
_CUE_SKIP = frozenset({"the", "a", "an", "my", "your", "our", "his", "her", "their", "its", "this", "that"})


def cue_before(value: str, request: str) -> str | None:
    """The word right before the first whole-word occurrence of ``value`` in ``request``, lower
    case, quotation marks and :data:`_CUE_SKIP` words skipped; None when the value is not there
    or opens the request."""
    pattern = r"(?<!\w)" + re.escape(value) + r"(?!\w)"
    m = re.search(pattern, request) or re.search(pattern, request, re.IGNORECASE)  # as written first: "the Video section"
    return None if m is None else word_before(request, m.start())


def word_before(text: str, at: int) -> str | None:
    """The word of ``text`` that ends before position ``at``, lower case, :data:`_CUE_SKIP` words and
    quotation marks skipped (None: none): how a cue is learned and how it is read again."""
    words = re.findall(r"[a-z0-9]+", text[:at].lower())
    while words and words[-1] in _CUE_SKIP:
        words.pop()
    return words[-1] if words else None


#: a value of digits and separators, with an optional am/pm: a time, an hour, a number
_NUMERIC = re.compile(r"\d[\d:.,/\s-]*(?:\s*[ap]\.?m\.?)?", re.IGNORECASE)


#: a spreadsheet's cell reference and a range of them, as a request writes them (C3, b12, B2:B9)
CELL = re.compile(r"[A-Za-z]{1,3}[0-9]{1,7}")
CELL_RANGE = re.compile(r"[A-Za-z]{1,3}[0-9]{1,7}:[A-Za-z]{1,3}[0-9]{1,7}")


#: the applications whose values include cell references (elsewhere "Q3" is a word: a quarter)
SHEET_APPS = frozenset({"calc"})


def value_shape(value: str, *, cells: bool = False) -> str:
    """A value's kind, as a skill's parameter learns it from its demonstration: a numeric value's
    digits replaced by ``d`` (``"15:00"`` -> ``"dd:dd"``, ``"7"`` -> ``"d"``); with ``cells`` (a
    spreadsheet's skill) a cell reference ``"cell"`` (``"C3"``) and a range of cells ``"range"``
    (``"B2:B9"``); anything else ``"words"``."""
    v = value.strip()
    if _NUMERIC.fullmatch(v):
        return re.sub(r"\d", "d", v)
    if not cells:
        return "words"
    if CELL.fullmatch(v):
        return "cell"
    return "range" if CELL_RANGE.fullmatch(v) else "words"


def fits_shape(value: str, shape: str) -> bool:
    """Whether a request's value may fill a parameter of ``shape``: a ``words`` one takes any value
    that is not only a number ("Q3 report" can be a name; "09:00" cannot); a ``cell`` or ``range``
    one only a cell reference or a range (Calc's Name Box took the sheet's name "Items" for a
    row to delete, a development task); a numeric one takes any (an hour may be given as "alarm
    at 9", whose first number is read; its prior prefers the demonstration's way of writing it,
    :func:`value_shape`)."""
    v = value.strip()
    if shape == "cell":
        return CELL.fullmatch(v) is not None
    if shape == "range":
        return CELL_RANGE.fullmatch(v) is not None
    return shape != "words" or _NUMERIC.fullmatch(v) is None


def _first_target_labels(steps: Sequence[GuiStep]) -> dict[str, str]:
    """The parameters that are the whole label of the element the first step acts on (and never
    typed text): parameter -> the element's role ("" when the step names none)."""
    target = _acted_on(steps[0])
    if target is None or target.name is None:
        return {}
    m = _SLOT_RE.fullmatch(target.name.strip())
    if m is None or any(m.group(0) in (s.type or "") for s in steps):
        return {}
    return {m.group(1): target.role or ""}


# -- demonstrations and libraries on disk ---------------------------------------------------------
def load_demos(folder: Path | None = None) -> list[SkillDemo]:
    """Every demonstration under ``folder`` (default ``data/skills/demos``), sorted by path; a
    malformed file is one line naming it."""
    folder = folder or skills_dir() / "demos"
    if not folder.is_dir():
        raise ConfigError(f"no demonstrations folder {folder}")
    out = []
    for path in sorted(folder.rglob("*.json")):
        try:
            demo = SkillDemo.model_validate(json.loads(path.read_text(encoding="utf-8")))
        except (json.JSONDecodeError, ValidationError) as exc:
            first = exc.errors()[0] if isinstance(exc, ValidationError) else None
            why = (f"{'.'.join(map(str, first['loc']))}: {first['msg']}" if first else str(exc))
            raise ConfigError(f"not a skill demonstration: {why}", where=str(path)) from None
        demo.source = str(path)
        out.append(demo)
    return out


def learn_library(demos: Sequence[SkillDemo]) -> dict[str, list[GuiSkill]]:
    """app -> its skills, one per demonstration (a skill name taught twice for one app: one line)."""
    out: dict[str, list[GuiSkill]] = {}
    for demo in demos:
        skill = learn_skill(demo)
        have = out.setdefault(demo.app, [])
        if any(s.name == skill.name for s in have):
            raise ConfigError(f"skill {skill.name} of {demo.app} is taught by two demonstrations", where=demo.source)
        have.append(skill)
    return out


def write_library(app: str, skills: Sequence[GuiSkill], out: Path | None = None) -> Path:
    """``<out>/<app>.json`` (default ``data/skills``), written atomically."""
    from agentlab.fileio import atomic_write_json

    path = (out or skills_dir()) / f"{app}.json"
    atomic_write_json(path, {"app": app, "learned_by": "agentlab skills learn",
                             "skills": [s.model_dump(exclude_none=True) for s in skills]})
    return path


def load_skills(app: str, folder: Path | None = None) -> list[GuiSkill]:
    """The learned skills of ``app`` (``[]`` when it has none); a corrupt library is one line."""
    path = (folder or skills_dir()) / f"{app}.json"
    if not re.fullmatch(r"[\w.-]+", app) or not path.is_file():
        return []
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        return [GuiSkill.model_validate(s) for s in raw["skills"]]
    except (json.JSONDecodeError, ValidationError, KeyError, TypeError) as exc:
        raise ConfigError(f"not a skill library ({type(exc).__name__}); run `agentlab skills learn` again",
                          where=str(path)) from None


def finishing_skill(skills: Sequence[GuiSkill]) -> GuiSkill | None:
    """The app's skill that keeps its work (:attr:`GuiSkill.finishes`), or None (a phone app, a
    browser, a mail client: what they do is kept as it happens)."""
    return next((s for s in skills if s.finishes), None)


def skills_listing(skills: Sequence[GuiSkill]) -> str:
    """The lines an agent document shows: ``- set_cell(cell, value): put a value into a cell``."""
    return "\n".join(f"- {s.signature()}: {s.doc}" for s in skills)


def document_with_skills(text: str, skills: Sequence[GuiSkill]) -> str:
    """An agent document's text with its ``# Skills`` section (the last one) set to ``skills``'
    listing; other sections are left as written, and no skills means no section."""
    head = re.split(r"(?m)^# Skills\s*$", text, maxsplit=1)[0].rstrip("\n") + "\n"
    return head + (f"\n# Skills\n{skills_listing(skills)}\n" if skills else "")


def list_in_documents(library: Mapping[str, Sequence[GuiSkill]], folder: Path | None = None) -> list[Path]:
    """Write each application's skills into the documents of its GUI and phone specialists
    (``runner: gui`` or ``appagent``, that ``domain``) under ``folder`` (default the pool's): routers and readers see what the agent
    can do. Returns the documents changed (each written atomically, re-read to check it parses)."""
    from agentlab.errors import AgentDocumentError
    from agentlab.fileio import atomic_write_text
    from agentlab.paths import agents_dir
    from agentlab.pool.document import load_document

    changed = []
    for path in sorted((folder or agents_dir()).rglob("*.md")):
        try:
            doc = load_document(path)
        except AgentDocumentError:  # not an agent document (a README) or a broken one: `agentlab pool` reports those
            continue
        if doc.runner not in ("gui", "appagent") or (doc.domain not in library and not doc.skills):
            continue
        text = path.read_text(encoding="utf-8")
        new = document_with_skills(text, library.get(doc.domain, ()))
        if new != text:
            atomic_write_text(path, new)
            load_document(path)
            changed.append(path)
    return changed


# -- carrying a skill out ---------------------------------------------------------------------------
def late_labels(skill: GuiSkill) -> list[tuple[int, str]]:
    """The parameters a skill finds on a screen it reaches itself: (index of the first step whose
    element's label holds the slot, parameter), in step order. A parameter typed as text, or chosen
    among the labels on the calling screen (:attr:`GuiSkill.on_screen`), is not one."""
    typed = {m.group(1) for s in skill.steps for m in _SLOT_RE.finditer(s.type or "")}
    out: dict[str, int] = {}
    for i, step in enumerate(skill.steps):
        for t in (step.target, step.to):  # a drag's destination is found on screen too (the folder)
            if t is None:
                continue
            for text in (t.name, t.contains, t.pattern):
                for m in _SLOT_RE.finditer(text or ""):
                    p = m.group(1)
                    if p not in typed and p not in skill.on_screen and p not in out:
                        out[p] = i
    return sorted(((i, p) for p, i in out.items()))


def slot_field(step: GuiStep, param: str) -> str:
    """Which target of ``step`` holds ``param``'s slot: ``"target"`` (the element it acts on) or
    ``"to"`` (a drag's destination); read on the skill's own step, whose labels still hold the slots."""
    slot = "{{" + param + "}}"
    t = step.target
    return "target" if t is not None and any(slot in (text or "") for text in (t.name, t.contains, t.pattern)) else "to"


#: two words are one when they share this many first letters ("vibration" / "Vibrate", "alarms" /
#: "alarm"): a label on screen is matched to the words of a call and a request the way a person reads it
STEM_LETTERS = 5


def _stems(text: str) -> set[str]:
    return {w[:STEM_LETTERS] for w in re.findall(r"[a-z0-9:]+", text.lower()) if len(w) > 1} - _GLUE_STEMS


_GLUE_STEMS = {w[:STEM_LETTERS] for w in ("the", "a", "an", "of", "on", "off", "in", "to", "my", "and", "or", "for",
                                          "app", "it", "its", "is", "at", "with", "from", "please", "switch", "turn")}


def ground_label(labels: Sequence[str], given: str, request: str) -> str | None:
    """The label of ``labels`` a skill's argument ``given`` means, read the way the specialist's
    grammar cannot: the one whose words the argument says most (whole words or a shared stem of
    :data:`STEM_LETTERS` letters), ties and an argument that says none of them broken by the
    words of the ``request``. None when no label shares a word with either (the argument stays as
    given and the skill stops where its element is missing, which the model reads)."""
    said, asked = _stems(given), _stems(request)
    best: tuple[int, int] = (0, 0)
    chosen: str | None = None
    for label in dict.fromkeys(l.strip() for l in labels if l.strip()):
        words = _stems(label)
        score = (len(words & said), len(words & asked))
        if score > best:
            best, chosen = score, label
    return chosen


def _slot_part(label: str, template: Any, param: str) -> str | None:
    """What of an on-screen ``label`` fills ``param``'s slot in the step's ``template`` label
    ("Intranet (old)" of "More actions for Intranet (old)" for "More actions for {{bookmark}}"):
    grounding the whole label put the fixed words in twice. None when the template has fixed
    words around the slot and the label does not fit them (a button "Chromium" is no bookmark's
    menu button); the label itself when the template's label is the slot alone."""
    slot = "{{" + param + "}}"
    for text in (template.name, template.contains):
        if text and slot in text:
            head, _, tail = text.partition(slot)
            # a name is the whole label; a "contains" is anywhere in it (its slot then runs to the end)
            pattern = re.escape(head) + r"(.+?)" + (re.escape(tail) if tail else "$")
            find_in = re.fullmatch if text == template.name else re.search
            m = find_in(pattern, label.strip(), re.IGNORECASE | re.DOTALL)
            if m and m.group(1).strip():
                return m.group(1).strip()
            if head.strip() or tail.strip():
                return None
    return label


def call_text(skill: GuiSkill, values: Mapping[str, Any]) -> str:
    """``toggle_alarm("12:00 Lunch")``: a skill call with these values, as the trajectory shows it."""
    return f"{skill.name}({', '.join(json.dumps(str(values[p]), ensure_ascii=False) for p in skill.params)})"


def run_skill(env: Any, skill: GuiSkill, args: Mapping[str, Any], request: str = "",
              finished: Collection[str] = (), made: Collection[tuple[str, str]] = ()) -> tuple[list[Any], Any]:
    """Replay ``skill`` with ``args`` on a desktop or phone env; returns (the env actions sent, the
    last step's result). A skill whose first step cannot be carried out raises
    :class:`~agentlab.errors.InvalidActionError` naming it, which the loop feeds back; one that
    stops later returns what it sent, its result's ``skill_error`` saying where it stopped.

    A parameter that names an element on a screen the skill itself opens (:func:`late_labels`: the
    alarm of ``toggle_alarm``, whose list is one tap away) is *grounded there*, as Agent S2's
    grounding places what its worker describes: when the screen shows no element of that role
    whose label holds the argument, the label the argument (else the ``request``) says most is
    used instead (:func:`ground_label`), and the result's ``grounded`` says so. Why: a 135M model
    picks the skill well more often than it copies a label it has not seen yet ("deleting" for
    the "12:00 Lunch" alarm). The result's ``call`` is the call as grounded (:func:`call_text`);
    one that is in ``finished`` (it already ran to its end in the episode, whatever words the
    model used for it) stops before its remaining steps: a toggle run twice undoes itself. So does
    one whose found name is a name an earlier call of the skill wrote (``made``: ``(skill, value)``;
    the result's ``made`` lists what this one wrote): renaming 'Wether' to 'Weather' and then
    'Weather' to something else undoes the ask."""
    from agentlab.envs.actions.phone import PHONE
    from agentlab.envs.base import StepResult
    from agentlab.envs.desktop import DesktopEnv
    from agentlab.envs.gui_replay import GuiReplayError, find, replay, scroll_to
    from agentlab.errors import InvalidActionError

    sent: list[Any] = []
    grounded: dict[str, str] = {}
    #: the whole label of the element each late parameter found (the call's identity whatever words
    #: reached it: "06:00" and "06:00 Yoga" both switch the Yoga alarm, and a toggle run twice undoes itself)
    acted: dict[str, str] = {}
    #: parameter -> a value the screen showed it cannot take (the current name is no new name)
    ruled: dict[str, str] = {}

    def stopped(why: str) -> tuple[list[Any], Any]:
        """A skill that fails after acting has changed the screen: the step happened (the loop
        looks again and the model reads where it stopped); one that failed before acting is refused.
        On a desktop what it opened is closed first (Escape, :data:`CLOSE_KEYS` times): a menu left
        open hid the File menu from the save GIMP ran next (a development task, transform called again)."""
        if not sent:
            raise InvalidActionError(why)
        if not phone:
            from agentlab.envs.actions.desktop import Hotkey

            for _ in range(CLOSE_KEYS):
                action = Hotkey("escape")
                env.step(action)
                sent.append(action)
        info = {"skill": skill.name, "call": call_text(skill, values), "skill_error": why,
                **({"grounded": grounded} if grounded else {}), **({"ruled_out": ruled} if ruled else {}),
                **({"acted_on": call_text(skill, {**values, **acted})} if acted else {})}
        return sent, StepResult(observation=env.observe(), done=False, info=info)

    phone = env.actions is PHONE
    if not phone:
        inner = env
        while not isinstance(inner, DesktopEnv) and getattr(inner, "inner", None) is not None:
            inner = inner.inner  # a wrapper (the episode's TimedEnv) still checks its deadline per action
        if not isinstance(inner, DesktopEnv):
            raise InvalidActionError(f"{skill.name}: a skill replays on a desktop, not on {type(env).__name__}")

    def run(steps: list[GuiStep]) -> None:
        if not steps:
            return
        if phone:
            replay_phone(env, steps, label=skill.name, sent=sent)
        else:
            try:
                replay(env, steps, on_step=lambda _i, _s, _o, a: sent.append(a) if a is not None else None,
                       scroll=True)
            except GuiReplayError as exc:
                raise InvalidActionError(f"{skill.name}: {exc.message}") from None

    values = {k: str(v) for k, v in args.items()}

    def ground(param: str, label: str | None) -> None:
        """``param`` is ``label``, the name found on screen (None or the same: as called)."""
        if label is None or label == values[param]:
            return
        other = next((n for n, v in values.items() if n != param and v == label), None)
        if other is not None:
            # rename_bookmark('Wether', 'Wether') once the old name grounded on the bookmark 'Wether':
            # the call would change nothing, and the on-screen name is no value for ``other`` either
            ruled[other] = label
            raise InvalidActionError(f"{call_text(skill, values)}: {param} found on screen as {label!r}, "
                                     f"the value of {other}; nothing would change")
        grounded[param] = label
        values[param] = label

    start = 0
    lates = late_labels(skill)
    late = {p for _, p in lates}
    try:
        if phone:
            _back_to(env, skill.steps_for(values)[0], sent, skill.name)
        for k, param in lates:
            run(skill.steps_for(values)[start:k])
            start = k
            field = slot_field(skill.steps[k], param)
            template, target = getattr(skill.steps[k], field), getattr(skill.steps_for(values)[k], field)
            assert target is not None and template is not None  # late_labels only names steps with a target
            role = template.role
            obs = _screen_with(env, role, phone)
            if not phone and find(obs, target) is None:  # below the fold: look there before grounding
                obs = scroll_to(env, target, LOOK_S, k + 1, skill.steps[k],
                                lambda _i, _s, _o, a: sent.append(a) if a is not None else None, [])
            hits = [e for e in obs.elements if target.matches(e.role, e.text)]
            if len(hits) > 1:
                # several elements fit what the call says ("save" in four switches' labels): the one
                # the request's words say most, not the first (toggle_setting('save') switched
                # "Offer to save passwords" on a development task asking where to save downloads)
                fits = [part for e in hits if (part := _slot_part(e.text, template, param)) is not None]
                ground(param, ground_label(fits, values[param], request))
            elif not hits:
                parts = (_slot_part(e.text, template, param) for e in obs.elements if role is None or e.role == role)
                shown = [part for part in parts if part is not None]
                label = ground_label(shown, values[param], request)
                if label is None and phone:  # a list's rows below its fold are labels too (the fifth alarm)
                    label = ground_label(shown + _list_labels(env, obs, role, sent), values[param], request)
                ground(param, label)
            now = getattr(skill.steps_for(values)[k], field)
            hit = find(obs, now) if now is not None else None
            if hit is not None and hit.text.strip():
                acted[param] = hit.text.strip()
        remade = next((v for p in late for v in (values[p], acted.get(p)) if (skill.name, v) in made), None)
        if remade is not None:
            raise InvalidActionError(f"{call_text(skill, values)}: {remade!r} is what an earlier {skill.name} "
                                     "call made; call done() if nothing else is asked")
        if call_text(skill, values) in finished or (acted and call_text(skill, {**values, **acted}) in finished):
            raise InvalidActionError(f"{call_text(skill, values)} already ran to its end in this episode; "
                                     "call done() if nothing else is asked")
        run(skill.steps_for(values)[start:])
    except InvalidActionError as exc:
        return stopped(exc.message)
    wrote = {p: values[p] for p in skill.params if p not in late and p not in skill.on_screen}
    info: dict[str, Any] = {"skill": skill.name, "call": call_text(skill, values),
                            **({"made": wrote} if wrote and late else {}),
                            **({"grounded": grounded} if grounded else {}),
                            **({"acted_on": call_text(skill, {**values, **acted})} if acted else {})}
    return sent, StepResult(observation=env.observe(), done=False, info=info)


#: Escapes a desktop skill that stopped part-way presses: a submenu and its menu, or a dialog
CLOSE_KEYS = 2

#: seconds a desktop skill looks (waiting, then scrolling) for the element a late parameter
#: names before grounding it on what the screen shows (:func:`~agentlab.envs.gui_replay.scroll_to`)
LOOK_S = 8.0

#: how many times a phone skill presses Back looking for the screen its first element is on
MAX_BACKS = 4


def _back_to(env: Any, first: GuiStep, sent: list[Any], name: str) -> None:
    """Press Back until the element ``first`` acts on shows (a phone skill called from deeper in
    its app: the clock's alarm list after another skill); at most :data:`MAX_BACKS` times, and
    never when the screen already shows it or shows no element at all. Never found: one line."""
    from agentlab.envs.actions.phone import Back
    from agentlab.envs.gui_replay import find
    from agentlab.errors import InvalidActionError

    target = first.target
    if target is None:
        return
    obs = env.observe()
    for _ in range(MAX_BACKS):
        if find(obs, target) is not None or not obs.elements:
            return
        action = Back()
        obs = env.step(action).observation
        sent.append(action)
    if find(obs, target) is None:
        raise InvalidActionError(f"{name}: its first element ({target.describe()}) is on no screen Back leads to")


def _screen_with(env: Any, role: str | None, phone: bool, timeout_s: float = 3.0, poll_s: float = 0.3) -> Any:
    """The screen once it shows an element of ``role`` (any element when None), or after
    ``timeout_s``: the screen the skill's last step opened may still be drawing."""
    import time

    deadline = time.monotonic() + timeout_s
    obs = env.observe()
    while not any(role is None or e.role == role for e in obs.elements) and time.monotonic() < deadline:
        time.sleep(poll_s)
        obs = env.observe()
    return obs


#: the longest a phone step waits for its element: a phone app's screens change in well under a
#: second (the 30 s a desktop step may wait is for LibreOffice's dialogs), so a skill called with
#: a value that names nothing on the screen it reaches is fed back after this
PHONE_WAIT_S = 5.0


def replay_phone(env: Any, steps: Sequence[GuiStep], *, label: str = "skill", poll_s: float = 0.3,
                 sent: list[Any] | None = None) -> tuple[list[Any], Any]:
    """Carry ``steps`` out on a phone env (a tap for a click, a tap then the text for a ``type``
    into an element, Back for the ``back`` key, a long press for ``long_press``, short swipes on a
    number picker for ``spin``; ``wait``/``gone`` poll the screen): the phone's counterpart of
    :func:`agentlab.envs.gui_replay.replay`, so an app skill (and its demonstration) replays on the
    fake device or a real one. An element that is not on screen while a list is, is scrolled into
    view first (:func:`_reveal`, as uiautomator's ``scrollIntoView``): a list shows only its first
    rows. Returns (the actions sent, the last result); a step that cannot be carried out raises
    :class:`InvalidActionError` naming it."""
    import time

    from agentlab.envs.actions.phone import Back, LongPress, Tap, Text
    from agentlab.envs.base import StepResult
    from agentlab.envs.gui_replay import find
    from agentlab.errors import InvalidActionError

    sent = [] if sent is None else sent  # the caller's list: what was sent before a failure

    def until(target: Any, present: bool, timeout_s: float) -> Any:
        deadline = time.monotonic() + min(timeout_s, PHONE_WAIT_S)
        seen = env.observe()
        revealed = not present  # the list is scrolled through once, not on every poll
        while (find(seen, target) is not None) != present and time.monotonic() < deadline:
            if not revealed:
                revealed = True
                seen = _reveal(env, seen, target, sent)
                if find(seen, target) is not None:
                    break
            time.sleep(poll_s)
            seen = env.observe()
        return seen

    obs = env.observe()
    for i, step in enumerate(steps, start=1):
        where = f"{label}: step {i} ({step.describe()})"
        if step.sleep is not None:
            time.sleep(step.sleep)
            obs = env.observe()
            continue
        if step.action in ("wait", "gone"):
            assert step.target is not None  # a wait or gone step names its element (GuiStep's validator)
            obs = until(step.target, step.action == "wait", step.timeout_s)
            if (find(obs, step.target) is not None) != (step.action == "wait"):
                raise InvalidActionError(f"{where}: {'never showed' if step.action == 'wait' else 'still on screen'}")
            continue
        if step.action == "key":
            if str(step.key).lower() != "back":
                raise InvalidActionError(f"{where}: a phone has only the back key")
            actions: list[Any] = [Back()]
        elif step.action in ("click", "long_press", "spin", "type") and (step.action != "type" or step.into is not None):
            target = step.target
            assert target is not None  # a click, a long press, a spin or a type into an element names it
            el = find(obs, target) or find(obs := until(target, True, step.timeout_s), target)
            if el is None:
                raise InvalidActionError(f"{where}: its element never showed; on screen: "
                                         + "; ".join(f"[{e.id}] {e.text!r}" for e in obs.elements[:30]))
            if step.action == "spin":
                obs = _spin(env, obs, target, str(step.value), sent, where)
                continue
            actions = ([Tap(el.id)] if step.action == "click" else [LongPress(el.id)] if step.action == "long_press"
                       else [Tap(el.id), Text(str(step.type))])
        elif step.action == "type":
            actions = [Text(str(step.type))]
        else:
            raise InvalidActionError(f"{where}: a phone cannot {step.action}")
        result = None
        for action in actions:
            result = env.step(action)
            sent.append(action)
        assert result is not None
        obs = result.observation
    return sent, StepResult(observation=obs, done=False, info={"skill": label})


#: how many swipes a list is scrolled each way looking for an element, and a number picker is spun
#: at most: a phone list of a few dozen rows, a picker of 24 hours or 60 minutes
MAX_REVEAL_SWIPES = 8
MAX_SPIN_SWIPES = 30
_LIST_ROLES = ("RecyclerView", "ListView", "ScrollView")


def _reveal(env: Any, obs: Any, target: Any, sent: list[Any]) -> Any:
    """``obs`` once ``target`` is on it: the screen's first scrollable list is swiped up (later
    rows) then back down until the element shows; the screen as it ends when it never does."""
    from agentlab.envs.actions.phone import Swipe
    from agentlab.envs.gui_replay import find

    for direction in ("up", "down"):
        for _ in range(MAX_REVEAL_SWIPES):
            lists = [e for e in obs.elements if e.role.rsplit(".", 1)[-1] in _LIST_ROLES]
            if not lists or find(obs, target) is not None:
                return obs
            before = [e.text for e in obs.elements]
            action = Swipe(lists[0].id, direction, "medium")
            obs = env.step(action).observation
            sent.append(action)
            if [e.text for e in obs.elements] == before:  # the list's end: nothing moved
                break
    return obs


def _list_labels(env: Any, obs: Any, role: str | None, sent: list[Any]) -> list[str]:
    """The labels of ``role`` a phone list holds below its fold: it is swiped up (later rows) until
    nothing moves, collecting them, then back to its top; [] when the screen has no list."""
    from agentlab.envs.actions.phone import Swipe

    labels: list[str] = []
    moved = 0
    for direction in ("up", "down"):
        for _ in range(MAX_REVEAL_SWIPES if direction == "up" else moved):
            lists = [e for e in obs.elements if e.role.rsplit(".", 1)[-1] in _LIST_ROLES]
            if not lists:
                return labels
            before = [e.text for e in obs.elements]
            action = Swipe(lists[0].id, direction, "medium")
            obs = env.step(action).observation
            sent.append(action)
            if [e.text for e in obs.elements] == before:
                break
            moved += direction == "up"
            labels += [e.text for e in obs.elements if role is None or e.role == role]
    return labels


def hour_of(value: str) -> int | None:
    """The number a picker should show for ``value``: its first number, 12 added for a "pm"
    hour ("9 pm" -> 21, "09:00" -> 9, "12 am" -> 0); None when it holds no number."""
    m = re.search(r"\d+", value)
    if m is None:
        return None
    n = int(m.group(0))
    if re.search(r"\bp\.?m\b", value, re.IGNORECASE) and n < 12:
        n += 12
    elif re.search(r"\ba\.?m\b", value, re.IGNORECASE) and n == 12:
        n = 0
    return n


def _spin(env: Any, obs: Any, target: Any, value: str, sent: list[Any], where: str) -> Any:
    """Swipe the picker ``target`` names a notch at a time until its number is ``value``'s
    (:func:`hour_of`), the short way round; the screen then. A value with no number, a picker
    that shows none or never gets there: one line naming the step."""
    from agentlab.envs.actions.phone import Swipe
    from agentlab.envs.gui_replay import find
    from agentlab.errors import InvalidActionError

    want = hour_of(value)
    if want is None:
        raise InvalidActionError(f"{where}: {value!r} holds no number to spin to")
    for _ in range(MAX_SPIN_SWIPES):
        el = find(obs, target)
        shown = hour_of(el.text) if el is not None else None
        if el is None or shown is None:
            raise InvalidActionError(f"{where}: the picker shows no number")
        if shown == want:
            return obs
        action = Swipe(el.id, "up" if (want - shown) % 24 <= 12 else "down", "short")
        obs = env.step(action).observation
        sent.append(action)
    raise InvalidActionError(f"{where}: the picker never showed {want} after {MAX_SPIN_SWIPES} swipes")


def check_demo(demo: SkillDemo, folder: Path) -> tuple[bool, str]:
    """Replay a demonstration on its real application (a desktop task under a private Xvfb, as
    ``agentlab tasks check --gui``; a phone task on the fake device): (ok, the line to print).
    ok: the start state fails the demonstration's checker and the end state passes it."""
    from agentlab.envs.gui_replay import check_task_gui

    if demo.task.env == "desktop":
        res = check_task_gui(demo.task, folder)
        return res.ok, res.line()
    return check_phone_gui(demo.task, folder, label=demo.skill)


def check_phone_gui(task: ExecTask, folder: Path, *, device: str | None = None, label: str = "gui_solution") -> tuple[bool, str]:
    """A phone task's ``gui_solution`` replayed on a fresh device (the fake one by default) by
    :func:`replay_phone`: (ok, the line to print); ok when the start state scores 0 and the end
    state 1. Never raises for what the device does: a device that cannot open or a step that
    cannot be carried out is the line."""
    import time

    from agentlab.envs.phone_task import FAKE, open_phone_task
    from agentlab.envs.task_env import TaskEnvOptions
    from agentlab.errors import AgentlabError

    t0 = time.monotonic()
    try:
        opened = open_phone_task(task, folder, TaskEnvOptions(device=device or FAKE))
    except AgentlabError as exc:  # one task's device: the others are still checked
        return False, f"FAIL {task.id}: cannot open ({exc.message})"
    try:
        opened.collect()
        before = task.evaluate(opened.root, env=opened.eval_env).score
        try:
            sent, _ = replay_phone(opened.env, task.gui_solution or [], label=label)
        except AgentlabError as exc:
            return False, f"FAIL {task.id}: start {before:.2f} ({exc.message})"
        opened.collect()
        after = task.evaluate(opened.root, env=opened.eval_env).score
    finally:
        opened.close()
    ok = before == 0.0 and after >= 1.0 - 1e-9
    where = "the fake device" if (device or FAKE) == FAKE else device
    return ok, (f"{'ok  ' if ok else 'FAIL'} {task.id}: start {before:.2f}, solved {after:.2f} "
                f"(phone: {len(sent)} actions in {time.monotonic() - t0:.1f}s on {where})")
