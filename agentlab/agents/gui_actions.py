"""A typed GUI action space over what is on screen, the same for a local model and an endpoint.

Seven operations, each a typed signature (:data:`GUI_OPS`)::

    click(element)            type(element, text)        key(combo)
    scroll(element, direction)   select(path)   done()   fail(reason)

``element`` is one of the numbered marks of the current screen (:class:`GuiScreen`: the
accessibility tree's elements; OCR text lines when the tree is empty and the env fell back to
its grid). For one screen and one request, :class:`GuiChoices` gives every parameter its
candidates — the visible marks' numbers (for ``type``, the editable ones when there are any),
text drawn from the request (quoted words, names, numbers, paths, URLs:
:func:`agentlab.toolkits.slots.request_values`), keys from :data:`DESKTOP_KEYS`, a direction,
the visible menus — and from those one table both constraints are generated:

* a local model decodes under :meth:`GuiChoices.grammar`, a
  :class:`~agentlab.toolkits.grammar.CallGrammar` of one call (CallGrammar expresses this
  space as it is: per operation, per parameter, a list of literal candidates or free quoted
  text; the reply is one line, so a placeholder, prose or an element that is not on screen
  cannot be decoded);
* an endpoint with function calling gets :meth:`GuiChoices.tools`, OpenAI tools whose JSON
  schemas carry the same candidates as ``enum`` (the element numbers, keys, directions, menus).

:func:`parse_gui_reply` reads a reply (a grammar's line, a function call rendered as a call line,
or a free model's prose) into a :class:`GuiCall` and checks it against the same choices;
:func:`carry_out` maps it onto the env's own low-level actions (PC-Agent's desktop space or
AppAgent's phone space) and performs them.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import math
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from agentlab.envs.actions.base import DIRECTIONS, Action, bind_arguments, is_int, lit
from agentlab.envs.actions.desktop import Click, Hotkey, Scroll, Stop, Type
from agentlab.envs.actions.parse import call_arguments
from agentlab.envs.actions.phone import PHONE, Back, Finish, Swipe, Tap, Text
from agentlab.envs.base import Element, Env, Observation, StepResult, clip
from agentlab.errors import ActionParseError, InvalidActionError
from agentlab.agents.gui_skills import CELL_RANGE, SHEET_APPS, GuiSkill, first_target, fits_shape, run_skill, value_shape, word_before
from agentlab.toolkits.grammar import CallGrammar
from agentlab.toolkits.slots import QUOTED, combine_priors, request_values, said_words, shared_words, word_prior

log = logging.getLogger(__name__)

Kind = Literal["element", "text", "key", "direction", "menu", "reason", "label"]

#: keys and combinations ``key()`` may press on a desktop (names the desktop env knows)
DESKTOP_KEYS = ("enter", "tab", "esc", "backspace", "delete", "space", "up", "down", "left", "right", "home", "end",
                "pageup", "pagedown", "f2", "ctrl+a", "ctrl+c", "ctrl+v", "ctrl+x", "ctrl+z", "ctrl+s", "ctrl+shift+s",
                "ctrl+o", "ctrl+n", "ctrl+f", "ctrl+w", "ctrl+q", "ctrl+p", "ctrl+t", "ctrl+l", "ctrl+h", "ctrl+b",
                "ctrl+i", "ctrl+u", "ctrl+enter", "shift+tab", "alt+f4")
#: a phone has one key the apps see
PHONE_KEYS = ("back",)
#: ``select("File > Save As...")``: the path's parts, clicked in turn
MENU_SEP = ">"
#: A hand-set prior over the operations (not fitted on any task): most GUI steps are clicks. It is
#: multiplied into the model's choice of the operation under the grammar (``CallGrammar.name_prior``),
#: renormalised over the operations a screen offers; a fitted prior per application is #40's later part.
OP_PRIOR = {"click": 0.5, "type": 0.15, "key": 0.1, "scroll": 0.05, "select": 0.1, "done": 0.08, "fail": 0.02}
#: how strongly a mark whose words the request says is preferred (nats per shared word)
GROUNDING_WEIGHT = 2.0
#: how strongly a mark whose learned document (AppAgent's per-element documentation: "Opens a
#: screen showing: Vibrate, Dark theme") shares words with the request is preferred, per word.
#: Half the mark's own words' weight: a document is longer than a label and describes what the
#: element leads to, not the element, so a shared word is weaker evidence. Set before any
#: measurement on the clock tasks and not tuned on them (benchmarks/phone_docs.py)
DOC_GROUNDING_WEIGHT = 1.0
#: An app skill's share of the operation prior before grounding (:mod:`agentlab.agents.gui_skills`):
#: one skill call does what several clicks would, so it starts level with ``select``; each request
#: word its name or line shares adds :data:`SKILL_GROUNDING_WEIGHT` nats ("download the menu" prefers
#: ``download_link``). Both set by hand before any measurement, as ``OP_PRIOR`` was, and not tuned on tasks
SKILL_PRIOR = 0.1
SKILL_GROUNDING_WEIGHT = 1.0
#: A skill's share when the app has a fitted skill prior (``skill_bias``): level with ``click``. The
#: fitted prior says which skill the ask wants; one call that carries the whole ask out is then no
#: less likely than one click. Why: with the save left to the deployment, the embedded model
#: clicked mark 1 on every step of three development desktop tasks (Calc, GIMP, Writer) whose asks
#: each had a skill, at SKILL_PRIOR (a skill needed two request words to draw level with a click)
FITTED_SKILL_PRIOR = OP_PRIOR["click"]
#: nats added to ``done`` once as many skill calls ran to their end as the request has asks
#: (:func:`~agentlab.tasks.requests.split_pieces`): a skill carries a whole operation out, so a
#: one-ask request is then most likely done. Why: the embedded model, its skill done, went on
#: clicking and switched the clock's dark theme back off. The scale of the model's own lean
#: measured on the clock's first screens (2.8 nats for mark 1: benchmarks/results/phone_docs.md)
DONE_AFTER_SKILLS = 3.0


#: the parameter kinds whose values are names or text (two in a row of a skill must differ)
STRING_KINDS = frozenset({"text", "label"})


@dataclass(frozen=True)
class GuiParam:
    name: str
    kind: Kind


@dataclass(frozen=True)
class GuiOp:
    """One typed operation: its parameters and the line the prompt shows for it."""

    name: str
    params: tuple[GuiParam, ...]
    doc: str

    def signature(self) -> str:
        return f"{self.name}({', '.join(p.name for p in self.params)})"


GUI_OPS: tuple[GuiOp, ...] = (
    GuiOp("click", (GuiParam("element", "element"),), "click the element with that number"),
    GuiOp("type", (GuiParam("element", "element"), GuiParam("text", "text")), "click the field, then type the text"),
    GuiOp("key", (GuiParam("combo", "key"),), "press a key or a combination"),
    GuiOp("scroll", (GuiParam("element", "element"), GuiParam("direction", "direction")),
          "scroll the content under the element"),
    GuiOp("select", (GuiParam("path", "menu"),), "open a menu and pick through it, e.g. 'File > Save As'"),
    GuiOp("done", (), "the task is complete"),
    GuiOp("fail", (GuiParam("reason", "reason"),), "the task cannot be done"),
)
OPS: dict[str, GuiOp] = {op.name: op for op in GUI_OPS}
#: what a free model may write for an operation (the raw spaces' names and AppAgent's FINISH)
ALIASES = {"tap": "click", "press": "key", "hotkey": "key", "text": "type", "input_text": "type",
           "stop": "done", "finish": "done", "exit": "done"}
_CALL = re.compile(r"\b([A-Za-z_]+)\s*\(")
_PLACEHOLDER = re.compile(r"<[^<>\n]*>")
_BARE_DONE = re.compile(r"^\W*(finish|done|stop|exit)\W*$", re.I)


@dataclass(frozen=True)
class GuiCall:
    """One typed action: an operation's name and its arguments by parameter name."""

    name: str
    args: dict[str, Any] = field(default_factory=dict)

    @property
    def terminal(self) -> bool:
        return self.name in ("done", "fail")

    def render(self) -> str:
        """The call as a line; arguments in their parameters' order (a checked call keeps it)."""
        return f"{self.name}({', '.join(lit(v) for v in self.args.values())})"


# -- the screen's marks ------------------------------------------------------------------------
def _editable(e: Element, phone: bool = False) -> bool:
    """A mark that takes text: a phone names its fields (EditText: ``editable``); a desktop's
    tree is less sure, so there a focusable mark that is not a button counts too (a phone's
    focusable list, a RecyclerView, is no field)."""
    return "editable" in e.state or (not phone and e.focusable and not e.clickable)


def _is_menu(e: Element) -> bool:
    return "menu" in e.role.lower() and bool(e.text.strip())


@dataclass
class GuiScreen:
    """The marks one observation offers: the env's elements, or OCR lines where it only has a grid.

    ``ocr`` is True when the marks are OCR text lines: a mark is then clicked at its centre (the
    env only knows its grid cells by number)."""

    observation: Observation
    marks: list[Element]
    ocr: bool = False
    note: str = ""

    @classmethod
    def of(cls, obs: Observation, max_elements: int, *, ocr: bool = True) -> GuiScreen:
        """The screen's marks: the first ``max_elements`` elements; when the env fell back to a grid
        (no accessibility tree) and OCR can run, the screenshot's text lines instead (numbered from 1;
        PC-Agent's perception reads them)."""
        marks = obs.elements[:max_elements]
        if ocr and obs.info.get("source") == "grid" and obs.screenshot is not None:
            from agentlab.agents.pcagent.perception import perceive

            seen = perceive(dataclasses.replace(obs, elements=[]), max_elements=0, ocr=True,
                            max_ocr_lines=max_elements)
            if seen.items:
                return cls(obs, [i.as_element() for i in seen.items], ocr=True)
            return cls(obs, marks, note=seen.note)
        return cls(obs, marks)

    def mark(self, number: int) -> Element:
        m = next((e for e in self.marks if e.id == number), None)
        if m is None:
            raise InvalidActionError(f"no element {number} on this screen; the marks are "
                                     f"{_ranges([e.id for e in self.marks])}")
        return m

    def listing(self) -> str:
        lines = [e.label() for e in self.marks] or ["(no elements)"]
        if self.ocr:
            lines.insert(0, "(no accessibility tree: the numbered items are text read on the screen)")
        return "\n".join(lines)


def _ranges(ids: list[int]) -> str:
    if not ids:
        return "none"
    return f"{min(ids)}..{max(ids)}" if len(ids) == max(ids) - min(ids) + 1 else ", ".join(map(str, ids))


# -- the choices, the grammar and the tools --------------------------------------------------------
@dataclass(frozen=True)
class GuiChoices:
    """Every parameter kind's candidates on one screen for one request (``None``: free quoted text)."""

    elements: tuple[int, ...]
    editable: tuple[int, ...]
    texts: tuple[str, ...] | None
    keys: tuple[str, ...]
    menus: tuple[str, ...]
    phone: bool = False
    #: log-prior over the element numbers: marks whose words the request says first (:func:`grounding`)
    element_prior: tuple[tuple[int, float], ...] = ()
    #: the application's learned skills (:mod:`agentlab.agents.gui_skills`), offered beside the GUI operations
    skills: tuple[GuiSkill, ...] = ()
    #: the request's words (for grounding the skills' names and lines)
    request: str = ""
    #: the screen's marks (a skill's on-screen parameter is one of their labels)
    marks: tuple[Element, ...] = ()
    #: nats added to ``done``'s prior (:data:`DONE_AFTER_SKILLS` once the request's asks each had a skill)
    end_push: float = 0.0
    #: skill calls that already ran to their end in the episode (rendered): not offered again (a
    #: toggle repeated undoes itself; a save repeated does nothing, and a 135M model under the
    #: grammar asked for ``save_keep_format()`` four times in a row once it had run)
    finished: frozenset[str] = frozenset()
    #: skill name -> the learned document of the element its first step acts on, on this screen
    #: ("Opens a screen showing: Vibrate, Dark theme" for the clock's Settings button): what the
    #: app's exploration saw behind the skill, which grounds the skill on the request's words too
    skill_notes: tuple[tuple[str, str], ...] = ()
    #: skill name -> log-prior (nats, the best skill at 0) from the app's fitted skill prior
    #: (``data/gui_priors/<app>``, :mod:`agentlab.selfinstruct.calls.gui`): which skill the request
    #: (or the ask now due) wants, learned from synthesized pairs whose calls replayed
    skill_bias: tuple[tuple[str, float], ...] = ()
    #: offer only the skills callable here (and done/fail) while any is: the GUI operations are
    #: the fallback (the typed deployment sets it until a skill fails or every ask had one)
    skills_first: bool = False
    #: ``(skill, parameter, value)`` the screen showed a parameter cannot take in this episode (the
    #: old name found on screen as the value given for the new one: ``ruled_out`` of run_skill)
    ruled_out: frozenset[tuple[str, str, str]] = frozenset()

    @classmethod
    def build(cls, screen: GuiScreen, request: str, *, phone: bool = False, max_texts: int = 40,
              docs: Mapping[int, str] | None = None, no_push: Collection[int] = (),
              skills: Sequence[GuiSkill] = (), end_push: float = 0.0, finished: Collection[str] = (),
              skill_bias: Mapping[str, float] | None = None, skills_first: bool = False,
              ruled_out: Collection[tuple[str, str, str]] = ()) -> GuiChoices:
        """Candidates from the screen's marks and the request: text is what the request says (its
        URLs and paths, quoted phrases, cell references, file names, numbers, then runs of its
        words), free only when it says nothing.

        ``docs`` (mark number -> its learned documentation) and ``no_push`` (marks grounding must
        not favour) go to :func:`grounding`."""
        ids = tuple(e.id for e in screen.marks)
        # a phone says which fields take text (its EditTexts are "editable"), and a type() on
        # anything else taps it before the text is refused: on the clock's settings page the
        # embedded model's type(3, 'dark') after toggle_setting switched the dark theme back off.
        # A desktop's tree is less sure of its fields, so there any mark may be typed into
        editable = tuple(e.id for e in screen.marks if _editable(e, phone)) or (() if phone else ids)
        v = request_values(request)
        # the request's exact values first (its URLs and paths, quoted phrases, cell references, file
        # names, numbers), then runs of its words: a long request's 40 runs crowded out the cells
        # A4 and B4 Calc's set_cell needed (a development task: the model then selected menus)
        quoted = [m.group(2).strip() for m in re.finditer(QUOTED, request) if m.group(2).strip()]
        ranges = re.findall(rf"(?<![\w:]){CELL_RANGE.pattern}(?![\w:])", request)
        texts = list(dict.fromkeys([*v.urls, *quoted, *ranges, *v.cells, *v.mentioned_files, *v.numbers, *v.spans]))[:max_texts]
        menus = () if phone or screen.ocr else tuple(dict.fromkeys(e.text.strip() for e in screen.marks if _is_menu(e)))
        notes = []
        for sk in skills:
            t = first_target(sk)
            mark = next((e for e in screen.marks if t is not None and t.matches(e.role, e.text)), None)
            if mark is not None and docs and docs.get(mark.id):
                notes.append((sk.name, docs[mark.id]))
        return cls(ids, editable, tuple(texts) or None, PHONE_KEYS if phone else DESKTOP_KEYS, menus, phone,
                   grounding(screen.marks, request, docs=docs, no_push=no_push), tuple(skills), request,
                   tuple(screen.marks), end_push, frozenset(finished), tuple(notes), tuple((skill_bias or {}).items()),
                   skills_first, frozenset(ruled_out))

    def skill(self, name: str) -> GuiSkill | None:
        return next((s for s in self.skills if s.name == name), None)

    def op(self, name: str) -> GuiOp | None:
        """The operation called ``name``: a GUI operation or one of the app's skills (a skill's
        parameters are text the request gives, or a label on screen: :attr:`GuiSkill.on_screen`)."""
        if name in OPS:
            return OPS[name]
        sk = self.skill(name)
        return None if sk is None else GuiOp(
            sk.name, tuple(GuiParam(p, "label" if p in sk.on_screen else "text") for p in sk.params), sk.doc)

    def labels(self, op: GuiOp, p: GuiParam) -> tuple[str, ...]:
        """A skill's on-screen parameter's candidates: the labels of the visible marks of the role
        its first step acts on (any role when the demonstration named none)."""
        sk = self.skill(op.name)
        role = sk.on_screen.get(p.name, "") if sk else ""
        return tuple(dict.fromkeys(e.text.strip() for e in self.marks if e.text.strip() and (not role or e.role == role)))

    def values(self, op: GuiOp, p: GuiParam) -> tuple[Any, ...] | None:
        """The values of ``op``'s parameter ``p`` (``None``: any text); a one-parameter skill's
        values whose call already ran to its end (:attr:`finished`) are left out, and so is a
        value the screen ruled out (:attr:`ruled_out`)."""
        vals = self._values(op, p)
        if vals is not None and self.ruled_out:
            vals = tuple(v for v in vals if (op.name, p.name, str(v)) not in self.ruled_out)
        if vals is None or not self.finished or self.skill(op.name) is None:
            return vals
        if len(op.params) == 1:
            return tuple(v for v in vals if GuiCall(op.name, {p.name: v}).render() not in self.finished)
        if p != op.params[0]:
            return vals
        # a skill of several parameters that ran to its end on a target (its first argument) is not
        # offered that target again: under the grammar the embedded model asked for the finished
        # set_cell('A4', ...) on eight attempts running (a development task), each refused
        return tuple(v for v in vals if not any(f.startswith((f"{op.name}({v!r},", f"{op.name}({json.dumps(str(v))},"))
                                                for f in self.finished))

    def _values(self, op: GuiOp, p: GuiParam) -> tuple[Any, ...] | None:
        if p.kind == "element":
            return self.editable if op.name == "type" else self.elements
        if p.kind == "text":
            sk = self.skill(op.name)
            shape = sk.shapes.get(p.name) if sk is not None else None
            if sk is not None and shape is None and self.texts is not None:
                # a name the skill finds on a screen it opens (a bookmark, a message's subject): any
                # run of the request's words, but never one holding a quotation mark, whose quoted
                # phrase is the name (the embedded model called delete_bookmark("bookmark
                # 'Intranet (old)' from Chromium's bookmarks bar"), a development task)
                return tuple(v for v in self.texts if not cuts_a_quote(v))
            if shape is None or self.texts is None or sk is None:
                return self.texts
            cells = sk.app in SHEET_APPS and shape not in ("cell", "range")  # a sheet's value is not a cell's name
            return tuple(v for v in self.texts if fits_shape(v, shape) and not _names_app(v, sk.app)
                         and not (shape == "words" and cuts_a_quote(v))
                         and not (cells and value_shape(v, cells=True) in ("cell", "range"))
                         and not (shape == "words" and _says_only_the_skill(v, sk)))
        if p.kind == "key":
            return self.keys
        if p.kind == "direction":
            return DIRECTIONS
        if p.kind == "menu":
            return self.menus
        if p.kind == "label":
            return self.labels(op, p)
        return None  # a reason is the model's own words

    def ops(self, *, allow_end: bool = True) -> list[GuiOp]:
        """The operations callable here: one whose parameter has no candidate is left out (it could
        only be called with a made-up value), and so is a skill whose first element is not on this
        screen (:func:`~agentlab.agents.gui_skills.first_target`); ``allow_end=False`` (an episode's first step, when
        nothing is done yet) leaves out ``done`` and ``fail``."""
        out = []
        # a phone skill is offered on every screen of its app: it first goes Back to the screen its
        # first element is on (run_skill); after one skill the clock app sat on its alarm list,
        # where no skill was offered and the model clicked instead of the second ask's skill
        shown = [s for s in self.skills if self.phone or (t := first_target(s)) is None
                 or any(t.matches(e.role, e.text) for e in self.marks)]
        # the best-grounded skill first: a 135M model leans to the first of a list's names (it
        # called the clock's first skill, toggle_alarm, for the dark theme with the Settings
        # button's document saying "Dark theme"); ties keep the library's order
        shown.sort(key=lambda s: -self.op_weight(s.name))
        skill_ops = [o for o in (self.op(s.name) for s in shown)
                     if o is not None and not (not o.params and f"{o.name}()" in self.finished)]
        for op in [*GUI_OPS[:-2], *skill_ops, *GUI_OPS[-2:]]:
            if op.name in ("done", "fail") and not allow_end:
                continue
            if all(self.values(op, p) is None or self.values(op, p) for p in op.params):
                out.append(op)
        if self.skills_first and any(self.skill(o.name) for o in out):
            # a specialist replies with its skills and falls back to the GUI operations when none
            # fits (issue #40): with a fitted skill prior the embedded model still chose click(1)
            # or select('File') on every step of development desktop tasks whose asks had a skill
            return [o for o in out if self.skill(o.name) or o.name in ("done", "fail")]
        return out

    def op_weight(self, name: str) -> float:
        """An operation's log-weight before renormalising: :data:`OP_PRIOR`'s, or a skill's
        :data:`SKILL_PRIOR` (:data:`FITTED_SKILL_PRIOR` when the app has a fitted skill prior) plus :data:`SKILL_GROUNDING_WEIGHT` per request word its name, its
        line or the learned document of its first element (:attr:`skill_notes`) says, plus the
        fitted skill prior's log-weight (:attr:`skill_bias`)."""
        if name in OP_PRIOR:
            return math.log(OP_PRIOR[name]) + (self.end_push if name == "done" else 0.0)
        sk = self.skill(name)
        said = said_words(self.request)
        note = dict(self.skill_notes).get(name, "")
        shared = shared_words(f"{name.replace('_', ' ')} {sk.doc if sk else ''} {note}", said)
        base = FITTED_SKILL_PRIOR if self.skill_bias else SKILL_PRIOR
        return math.log(base) + SKILL_GROUNDING_WEIGHT * shared + dict(self.skill_bias).get(name, 0.0)

    def grammar(self, *, allow_end: bool = True, max_text_tokens: int = 24) -> CallGrammar:
        """One call of :meth:`ops`, each argument one of its candidates as written in a call
        (``3``, ``'ctrl+s'``, ``'up'``) or free quoted text."""
        tools: dict[str, tuple[tuple[str, ...] | None, ...]] = {}
        ops = self.ops(allow_end=allow_end)
        for op in ops:
            args = []
            for p in op.params:
                vals = self.values(op, p)
                args.append(None if vals is None else tuple(str(x) if is_int(x) else repr(x) for x in vals))
            tools[op.name] = tuple(args)
        prior = dict(self.element_prior)
        arg_prior = tuple((op.name, i, tuple((c, prior[int(c)]) for c in tools[op.name][i] or ()))
                          for op in ops for i, p in enumerate(op.params)
                          if p.kind == "element" and prior)
        for op in ops:  # a skill's label: grounded on the request's words as the marks are
            for i, p in enumerate(op.params):
                labels = list(self.values(op, p) or ()) if p.kind == "label" else []
                ground = word_prior(labels, self.request, GROUNDING_WEIGHT) if labels else None
                if ground is not None:
                    arg_prior += ((op.name, i, tuple((repr(c), v) for c, v in zip(labels, ground))),)
            sk = self.skill(op.name)
            for i, p in enumerate(op.params):  # a skill's typed value: the request's name for it
                # a parameter without a learned shape (a name found on a screen the skill opens) is
                # read as words here: a quoted or named value of the request is its likeliest
                shape = (sk.shapes.get(p.name) or "words") if sk is not None and p.kind == "text" else None
                given = [str(v) for v in self.values(op, p) or ()] if shape else []
                # a skill with two texts to fill tells them apart by the word its demonstration put
                # before each ("rename ... to 'Weather'": the new name follows "to")
                two = sk is not None and sum(q.kind == "text" for q in op.params) > 1
                cue = sk.cues.get(p.name) if two and sk is not None else None
                others = tuple(c for q, c in sk.cues.items() if q != p.name and c != cue) if two and sk is not None else ()
                named = _value_prior(given, self.request, str(shape), cue, others) if given else None
                if named is not None:
                    arg_prior += ((op.name, i, tuple((repr(c), v) for c, v in zip(given, named))),)
        weights = {n: self.op_weight(n) for n in tools}
        top = max(weights.values())
        norm = top + math.log(sum(math.exp(w - top) for w in weights.values()))
        name_prior = tuple((n, w - norm) for n, w in weights.items())
        # a skill's two names in a row may not be one value (``move_to_folder('archive', 'archive')``
        # was refused eight times in a row on a development task: the refusal alone does not teach
        # the embedded model, the grammar does)
        differs = tuple((op.name, i) for op in ops if self.skill(op.name) is not None
                        for i, p in enumerate(op.params)
                        if i and p.kind in STRING_KINDS and op.params[i - 1].kind in STRING_KINDS)
        return CallGrammar(tools, max_calls=1, max_text_tokens=max_text_tokens, name_prior=name_prior,
                           arg_prior=arg_prior, differs=differs)

    def tools(self, *, allow_end: bool = True) -> tuple[dict[str, Any], ...]:
        """:meth:`ops` as OpenAI function-calling tools, the candidates as each parameter's ``enum``."""
        out = []
        for op in self.ops(allow_end=allow_end):
            props: dict[str, Any] = {}
            for p in op.params:
                vals = self.values(op, p)
                prop: dict[str, Any] = {"type": "integer" if p.kind == "element" else "string"}
                if vals is not None:
                    prop["enum"] = list(vals)
                props[p.name] = prop
            out.append({"type": "function", "function": {
                "name": op.name, "description": op.doc,
                "parameters": {"type": "object", "properties": props, "required": [p.name for p in op.params]}}})
        return tuple(out)

    def doc(self, *, allow_end: bool = True) -> str:
        """The prompt's action list: one line per callable operation, with its choices where short."""
        lines = []
        for op in self.ops(allow_end=allow_end):
            extra = ""
            if op.name == "key":
                extra = f"; combo one of {', '.join(self.keys[:12])}{', ...' if len(self.keys) > 12 else ''}"
            elif op.name == "scroll":
                extra = "; direction one of up, down, left, right"
            elif op.name not in OPS:
                extra = " (a skill of this application: one call carries it out)"
            lines.append(f"- {op.signature()}: {op.doc}{extra}")
        return "\n".join(lines)

    def example(self) -> str:
        return f"click({self.elements[0]})" if self.elements else "done()"


def grounding(marks: Sequence[Element], request: str, *, docs: Mapping[int, str] | None = None,
              no_push: Collection[int] = ()) -> tuple[tuple[int, float], ...]:
    """A log-prior over the marks: ``GROUNDING_WEIGHT`` per request word a mark's text shares
    (:func:`~agentlab.toolkits.slots.word_prior`: a word also matches one it begins, "count" /
    "counter"), renormalised; every mark keeps some mass. Generic grounding of the request on the
    screen's words, as Agent S2's textual expert finds text: "Add one to the counter" prefers the
    "Add one" button.

    ``docs`` (mark number -> its learned documentation) adds the same word prior over the
    documents at :data:`DOC_GROUNDING_WEIGHT`: where a label does not say what a button leads to,
    its document may ("Switch the app to its dark theme" on a screen of Alarms / Settings / About
    prefers Settings, documented as opening a screen showing "Dark theme"). Marks in ``no_push``
    get neither push (their text and document count as empty): a switch the episode has already
    flipped, which clicking again would undo, or an element known to do nothing."""
    texts = ["" if e.id in no_push else e.text for e in marks]
    prior = word_prior(texts, request, GROUNDING_WEIGHT)
    if docs:
        notes = ["" if e.id in no_push else docs.get(e.id, "") for e in marks]
        prior = combine_priors(prior, word_prior(notes, request, DOC_GROUNDING_WEIGHT))
    return () if prior is None else tuple((e.id, v) for e, v in zip(marks, prior))


def constraint(llm: Any, choices: GuiChoices, *, allow_end: bool) -> dict[str, Any]:
    """What keeps a reply to the typed calls with this backend (an
    :class:`~agentlab.llm.base.LLMBackend`): its grammar, its tools, or nothing (a plain model's
    reply is parsed and checked)."""
    caps = llm.capabilities
    if caps.tool_calls:
        return {"tools": choices.tools(allow_end=allow_end)}
    if caps.plan_grammar:
        return {"grammar": choices.grammar(allow_end=allow_end)}
    return {}


# -- reading a reply -------------------------------------------------------------------------------
def _check(op: GuiOp, values: dict[str, Any], choices: GuiChoices) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for p in op.params:
        if p.name not in values:
            raise ActionParseError(f"{op.signature()} needs {p.name}")
        v = values[p.name]
        if p.kind == "element":
            if isinstance(v, str) and v.strip().strip("[]").isdigit():
                v = int(v.strip().strip("[]"))
            if not is_int(v) or v not in choices.values(op, p):  # type: ignore[operator]
                allowed = choices.values(op, p) or ()
                raise ActionParseError(f"{op.name}: element must be one of the numbers on screen "
                                       f"({_ranges(list(allowed))}), got {v!r}")
        elif not isinstance(v, str):
            raise ActionParseError(f"{op.name}: {p.name} must be a quoted string, got {v!r}")
        elif p.kind in ("key", "direction"):
            v = v.strip().lower()
            allowed = choices.values(op, p) or ()
            if v not in allowed:
                raise ActionParseError(f"{op.name}: {p.name} must be one of {', '.join(allowed)}, got {v!r}")
        elif p.kind == "label":
            allowed = choices.values(op, p) or ()
            if v not in allowed:
                shown = ", ".join(repr(a) for a in list(allowed)[:12]) or "none"
                raise ActionParseError(f"{op.name}: {p.name} must be the label of an element on screen ({shown}), got {v!r}")
        elif p.kind == "menu":
            first = v.split(MENU_SEP)[0].strip().casefold()
            if not any(first == m.casefold() for m in choices.menus):
                raise ActionParseError(f"select: the path must start at a menu on screen "
                                       f"({', '.join(choices.menus) or 'none is open'}), got {v!r}")
        out[p.name] = v
    return out


def parse_gui_reply(reply: str, choices: GuiChoices) -> GuiCall:
    """The reply's first typed call, checked against ``choices`` (elements on screen, known keys,
    a direction, a menu on screen); raises :class:`ActionParseError` saying what is wrong. A free
    model's ``tap(3)``, ``hotkey("ctrl", "s")``-style names and a bare FINISH are understood; a call
    inside ``<...>`` (a copied placeholder) is not."""
    if not reply or not reply.strip():
        raise ActionParseError("the model returned an empty reply")
    # a prompt's placeholder (``<one action call such as click(3) ...>``) is no call, whatever it holds
    body = _PLACEHOLDER.sub(" ", reply.replace("`", " "))
    if _BARE_DONE.match(body):
        return GuiCall("done")
    first: ActionParseError | None = None
    for m in _CALL.finditer(body):
        name = ALIASES.get(m.group(1).lower(), m.group(1).lower())
        op = choices.op(name)
        if op is None:
            continue
        try:
            _, args, kwargs = call_arguments(body, m)
            if name == "key" and len(args) > 1 and all(isinstance(a, str) for a in args):
                args = ["+".join(args)]  # hotkey("ctrl", "s")
            if name == "type" and len(args) == 1 and "element" not in kwargs:  # text("...") types into the focus
                focus = [e for e in choices.editable]
                args = [focus[0] if len(focus) == 1 else None, *args]
            if name == "fail" and not args and "reason" not in kwargs:
                kwargs["reason"] = ""
            values = bind_arguments(name, [p.name for p in op.params], args, kwargs)
            return GuiCall(name, _check(op, values, choices))
        except ActionParseError as exc:
            first = first or exc
    if first is not None:
        raise ActionParseError(f"{first.message} (reply: {clip(reply, 160)!r})")
    raise ActionParseError(f"no action call in the reply; write one of {', '.join(o.signature() for o in choices.ops())}, "
                           f"e.g. {choices.example()} (reply: {clip(reply, 160)!r})")


# -- carrying it out -------------------------------------------------------------------------------
def expand(call: GuiCall, screen: GuiScreen, *, phone: bool) -> list[Action]:
    """The env's own actions for ``call`` (``select`` is carried out by :func:`carry_out`, one
    part at a time, since each part is found on the screen the previous click opened)."""
    a = call.args
    if call.name in ("done", "fail"):
        return [Finish() if phone else Stop()]
    if call.name == "key":
        return [Back()] if phone else [Hotkey(a["combo"])]
    mark = screen.mark(a["element"])
    if phone:
        if call.name == "click":
            return [Tap(mark.id)]
        if call.name == "type":
            return [Tap(mark.id), Text(a["text"])]
        if call.name == "scroll":  # to see what is below, the finger moves up
            opposite = {"up": "down", "down": "up", "left": "right", "right": "left"}[a["direction"]]
            return [Swipe(mark.id, opposite, "medium")]
    else:
        where: dict[str, Any] = {"x": mark.center[0], "y": mark.center[1]} if screen.ocr else {"element": mark.id}
        if call.name == "click":
            return [Click(**where)]
        if call.name == "type":
            if screen.ocr:
                return [Click(**where), Type(a["text"])]
            return [Type(a["text"], element=mark.id)]
        if call.name == "scroll":
            return [Scroll(a["direction"], 3, **where)]
    raise InvalidActionError(f"{call.render()} cannot be carried out here")


def _menu_match(elements: Sequence[Element], part: str) -> Element | None:
    def norm(s: str) -> str:
        return re.sub(r"[_.…\s]+", " ", s).strip().casefold()

    want = norm(part)
    return next((e for e in elements if norm(e.text) == want), None) or next(
        (e for e in elements if want and norm(e.text).startswith(want)), None)


@dataclass
class Carried:
    """What :func:`carry_out` did: the env's actions in order and the last step's result."""

    actions: list[Action] = field(default_factory=list)
    result: StepResult | None = None


def carry_out(env: Env, call: GuiCall, screen: GuiScreen, skills: Sequence[GuiSkill] = (), request: str = "",
              finished: Collection[str] = (), made: Collection[tuple[str, str]] = ()) -> Carried:
    """Perform ``call`` on ``env`` through its own action space; nothing is sent for ``done``/``fail``.

    ``select("A > B")`` clicks the element named A, then, on the screen that click opened, the
    element named B (an :class:`InvalidActionError` names the part not found). A call of one of
    ``skills`` replays that skill's steps with the call's arguments (:func:`run_skill`, which grounds a
    label on a screen the skill opens on the call's and the ``request``'s words)."""
    phone = env.actions is PHONE
    out = Carried()
    if call.terminal:
        return out
    skill = next((s for s in skills if s.name == call.name), None)
    if skill is not None:
        out.actions, out.result = run_skill(env, skill, call.args, request, finished, made)
        return out
    if call.name == "select":
        elements = screen.marks
        for part in [p.strip() for p in call.args["path"].split(MENU_SEP) if p.strip()]:
            el = _menu_match(elements, part)
            if el is None:
                raise InvalidActionError(f"select: no {part!r} on the screen"
                                         + (f" after {out.actions[-1].describe()}" if out.actions else ""))
            action = Click(element=el.id)
            out.result = env.step(action)
            out.actions.append(action)
            elements = out.result.observation.elements
        return out
    for step in expand(call, screen, phone=phone):
        out.result = env.step(step)
        out.actions.append(step)
    return out


#: words after which a request gives a thing its name ("an alarm called Flight", "label it Gym")
NAMING_CUES = ("called", "named", "labelled", "labeled", "titled", "call it", "name it", "label it", "title it")
#: words a name does not run on into ("Yoga class at 18:00": the name ends before "at")
_NAME_ENDS = frozenset({"at", "in", "on", "for", "and", "from", "to", "with", "of", "by", "please", "then", "but"})


def _names_app(value: str, app: str) -> bool:
    """Whether ``value`` is only the application's own name ("Clock", "Clock app"): never an
    argument of one of its skills."""
    words = set(re.findall(r"[a-z0-9]+", value.lower()))
    return bool(words) and words <= {app.lower(), "app"}


def _says_only_the_skill(value: str, skill: GuiSkill) -> bool:
    """Whether ``value``'s words are all the skill's own (its name's, its line's: "alarm" or
    "labelled" for ``add_alarm``, whose line says "alarm" and "label"): a name given to a thing is
    not the thing's kind. The embedded model filled add_alarm's label with "alarm" for "Add a new
    alarm at 09:00 labelled Dentist" (a development task)."""
    from agentlab.agents.gui_skills import _stems

    own = _stems(f"{skill.name.replace('_', ' ')} {skill.doc} {skill.app}")
    words = _stems(value)
    ends = [w for w in (value.split()[:1] + value.split()[-1:]) if _stems(w)]
    # and a run of the request that starts or ends on one ("labelled Dentist", "Dentist in the
    # Clock"): the name is the tighter run inside it, which is a candidate too
    return bool(words) and (words <= own or any(_stems(w) <= own for w in ends))


#: a quotation mark at a word's edge (not an apostrophe inside one: "don't", "Kim's")
_QUOTE_MARK = re.compile(r"(?:^|(?<=[^\w]))['\"‘’“”]|['\"‘’“”](?=[^\w]|$)")


def cuts_a_quote(value: str) -> bool:
    """Whether a run of the request's words holds a quotation mark: the request's quoted phrase is
    a value of its own, so a run that starts or ends inside one ("19:00.' to concert.docx") is not."""
    return _QUOTE_MARK.search(value) is not None


def _quoted(value: str, request: str) -> bool:
    """Whether the request writes ``value`` whole between quotation marks."""
    return any(m.group(2).strip() == value.strip() for m in re.finditer(QUOTED, request))


def _follows(cue: str, value: str, request: str) -> bool:
    """Whether ``value`` occurs in ``request`` right after the word ``cue`` (articles and
    quotation marks between them skipped, as :func:`~agentlab.agents.gui_skills.cue_before` reads it)."""
    return any(word_before(request, m.start()) == cue
               for m in re.finditer(r"(?<![\w])" + re.escape(value) + r"(?![\w])", request))


def _cue_factor(v: str, request: str, cue: str | None, others: tuple[str, ...]) -> float:
    """2 when ``v`` follows its parameter's cue, 0 when it follows another parameter's instead
    (the folder after "into" is not the subject), else 1."""
    if cue and _follows(cue, v, request):
        return 2.0
    return 0.0 if any(_follows(c, v, request) for c in others) else 1.0


def _value_prior(values: list[str], request: str, shape: str, cue: str | None = None,
                 others: tuple[str, ...] = ()) -> tuple[float, ...] | None:
    """A log-prior over a skill's typed-text candidates (:data:`GROUNDING_WEIGHT` nats for each):
    a ``words`` one the request quotes whole, or *names* (right after a naming word,
    :data:`NAMING_CUES`, and ending where the sentence moves on: punctuation, its end, or a word
    such as "at"); a numeric one
    written as its demonstration's value was (``"09:00"`` for an hour learned from "15:00", not
    ``"00"``). ``cue`` (the word before the parameter's value in its demonstration,
    :attr:`~agentlab.agents.gui_skills.GuiSkill.cues`): a quoted or named candidate right after it
    gets as much again, and none when it follows another parameter's cue instead (``others``) --
    a tie-break between the request's values, never a reason to take a common word ("Move the
    message ..." does not make "message" a subject; a number is told by its shape already). None when no candidate gets anything. A language rule, set before any measurement."""
    out = []
    for v in values:
        score = 0.0
        if shape == "words":
            if _quoted(v, request):  # the request marks it as a value: 'Doors open at 19:00.'
                out.append(GROUNDING_WEIGHT * _cue_factor(v, request, cue, others))
                continue
            if set(re.findall(r"[a-z]+", v.lower())) & _NAME_ENDS:  # "Dentist in the Clock app" runs on
                out.append(score)
                continue
            for m in re.finditer(r"(?<![\w])" + re.escape(v) + r"(?![\w])", request):  # as written: "Flight", not "flight"
                before = request[:m.start()].rstrip().lower()
                after = request[m.end():].lstrip().lower()
                next_word = re.match(r"[a-z]+", after)
                ends = not after or not after[0].isalnum() or (next_word is not None and next_word.group(0) in _NAME_ENDS)
                if ends and any(before.endswith(c) for c in NAMING_CUES):
                    score = GROUNDING_WEIGHT * _cue_factor(v, request, cue, others)
                    break
        elif value_shape(v) == shape:
            score = GROUNDING_WEIGHT
        out.append(score)
    return tuple(out) if any(out) else None
