"""The tool agent (runner ``tools``): a specialist that carries a task out by calling its toolkit.

A document names its toolkit (``runner_options: {toolkit: sheets}``); the agent sees the
request, the workspace's files as its toolkit describes them (sheets and their first rows, slide
titles, paragraphs, settings), and answers with calls, one per line (:mod:`agentlab.toolkits.base`).
The calls run in the sandboxed workspace (:mod:`agentlab.toolkits.runtime`) and what each returned
or raised is the next turn's observation; ``done()`` ends the episode (after the calls before it
succeeded), ``fail('why')`` gives up.

How the reply is kept to calls, by what the model offers (``constrained``, default on):
a local model decodes under the toolkit's grammar, every argument a choice among what the
request and the workspace hold (:mod:`agentlab.toolkits.grammar`); an endpoint with function
calling gets the toolkit as OpenAI ``tools``; one with regex-guided decoding gets the grammar
as a regex; any other is asked plainly (said once in the log). ``-O constrained=false`` is the
ablation; ``-O mode=code`` runs the code agent instead, with the toolkit importable and
documented in its prompt, so a strong model can mix both. ``-O best_of=K`` tries K candidate
replies per step on scratch copies of the workspace and runs the one whose result best reflects
the request (:mod:`agentlab.agents.best_of`).
"""

from __future__ import annotations

import contextlib
import json
import functools
import logging
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from agentlab.agents.base import AgentResult, runner_config
from agentlab.agents.best_of import Candidate, choose, sample
from agentlab.agents.roles import DEFAULT_ROLE
from agentlab.agents.code import CodeAgent
from agentlab.agents.context import RunContext
from agentlab.agents.steps import ChatSteps, Episode
from agentlab.dialogue.ask import Attempt
from agentlab.dialogue.templates import load_template, template_hashes
from agentlab.envs.actions.workspace import WORKSPACE, Reply, RunProgram
from agentlab.envs.base import Env, clip
from agentlab.errors import ActionParseError, ConfigError
from agentlab.llm.base import ChatMessage, LLMBackend, SamplingParams
from agentlab.paths import data_dir
from agentlab.pool.document import AgentDocument
from agentlab.safepath import SafeFolder
from agentlab.toolkits import load_toolkit
from agentlab.tasks.requests import split_asks
from agentlab.toolkits.base import END_CALLS, Call, Toolkit, parse_calls, value_the_error_names
from agentlab.toolkits.asks import unanswered_asks
from agentlab.toolkits.check import unmet_asks
from agentlab.toolkits.grammar import CallGrammar
from agentlab.toolkits.prior import CARD as PRIOR_CARD
from agentlab.toolkits.prior import ToolPrior
from agentlab.toolkits.runtime import program, results
from agentlab.toolkits.slots import merge, request_values, workspace_values

if TYPE_CHECKING:  # pragma: no cover
    from agentlab.llm.similarity import SentenceEncoder

log = logging.getLogger(__name__)

PROMPTS = ("tools/system", "tools/task", "tools/step", "tools/correction")
_warned: set[str] = set()


@functools.cache
def _encoder() -> SentenceEncoder:
    """MiniLM, loaded once per process (every episode's tool retrieval uses it)."""
    from agentlab.llm.similarity import default_encoder

    return default_encoder()


#: sentence embeddings of texts the meaning prior compared, kept for the process: a grammar is
#: built every step, over the same setting keys (a catalogue, a profile's hundreds of keys) and the
#: same request, so each text is encoded once, not once per step and episode
_EMBEDDED: dict[str, np.ndarray] = {}
_EMBEDDED_MAX = 50_000


def _encode_once(texts: list[str]) -> np.ndarray:
    """:meth:`SentenceEncoder.encode` of ``texts``, each text encoded only the first time it is seen."""
    new = [t for t in dict.fromkeys(texts) if t not in _EMBEDDED]
    if new:
        if len(_EMBEDDED) + len(new) > _EMBEDDED_MAX:
            _EMBEDDED.clear()
        _EMBEDDED.update(zip(new, _encoder().encode(new)))
    return np.stack([_EMBEDDED[t] for t in texts])


class ToolAgentOptions(BaseModel):
    """A document's ``runner_options`` for the tools runner."""

    model_config = ConfigDict(extra="forbid")

    toolkit: str
    #: ``tools``: calls only; ``code``: the code agent with the toolkit importable
    mode: Literal["tools", "code"] = "tools"
    #: keep replies to the toolkit's calls by what the backend offers (grammar, function calling, regex)
    constrained: bool = True
    max_calls: int = Field(3, ge=1, description="calls per reply")
    #: a reply may instead be a fenced program (the toolkit importable) and/or DONE/FAIL, as the
    #: code agent's; a grammar-constrained reply is always calls
    mix_code: bool = True
    #: tools shown and callable per request: the ones whose description is nearest the request
    #: (MiniLM cosine); 0 shows them all. A small model picks better among a few.
    tools_shown: int = Field(5, ge=0)
    max_attempts: int = Field(2, ge=1, description="asks per step for a usable reply")
    max_new_tokens: int = Field(160, ge=16)
    temperature: float = Field(0.0, ge=0.0)
    retry_temperature: float = Field(0.7, ge=0.0)
    seed: int = 0
    #: the specialist's reply-only LoRA adapter (:mod:`agentlab.llm.adapters`): ``auto`` uses
    #: ``data/adapters/<Agent>/`` when it exists and was trained on this backbone (else says why in
    #: one log line), ``none`` never, anything else is an adapter folder (or a folder of them, one
    #: per agent: ``<folder>/<Agent>/``)
    adapter: str = "auto"
    #: the specialist's tool prior (:mod:`agentlab.toolkits.prior`), multiplied into the first
    #: call's tool choice under the grammar: ``auto`` uses ``data/tool_priors/<Agent>/`` when it
    #: exists, ``none`` never, anything else is a prior folder (or a folder of them, one per agent)
    tool_prior: str = "auto"
    #: the prior's exponent in the product of experts (0: ignore it; 1: as fitted). 5, chosen on
    #: the two development sets (2026-11-28: 1 -> 3 took them from 33 to 37 of 58 and 7 to 9 of 40;
    #: with the later changes, 3 -> 5 from 38 to 39 and 12 to 13; benchmarks/results/prior_weight.md):
    #: fitted on a few hundred pairs, the prior is flat (its best tool often at 0.15-0.35), so at 1
    #: the small model's own first tokens outvoted it even where it was right
    prior_weight: float = Field(5.0, ge=0.0)
    #: the workspace's description in the prompt is cut at a line after this many characters (an
    #: application's profile left after a desktop's file route holds a hundred files)
    max_observation_chars: int = Field(6000, ge=200)
    #: the request's word prior over arguments that name things (a setting key, a column, a sheet;
    #: :func:`~agentlab.toolkits.slots.word_prior`) under the grammar; false: the model alone chooses
    word_prior: bool = True
    #: with ``word_prior``: a setting key's word prior is multiplied by what the request means
    #: (MiniLM similarity of the request and the key's words,
    #: :func:`~agentlab.toolkits.slots.meaning_prior`); false: the word prior alone (the ablation)
    meaning_prior: bool = True
    libraries: list[str] = Field(default_factory=list, description="code mode: libraries the prompt names")
    #: candidate replies per step (:mod:`agentlab.agents.best_of`): the greedy one and ``best_of - 1``
    #: sampled at ``retry_temperature``, each tried on a scratch copy of the workspace and scored
    #: against the request alone; the best runs. 1: the greedy reply runs, as it always did
    best_of: int = Field(1, ge=1)
    #: after each step, the asks of the request the workspace does not reflect yet
    #: (:func:`~agentlab.toolkits.check.unmet_asks`, which reads the request and the files only) are
    #: asked for one by one, each as a request of its own (a fresh conversation, the tools nearest
    #: the ask), and a ``done()`` before each such ask had its step does not end the episode.
    #: false: the model's own ``done()`` ends it (the ablation)
    check_done: bool = True
    #: with ``check_done``: an ask the check cannot test (it names no value: "make it greyscale",
    #: "delete the 'Old wiki' bookmark") still gets a step of its own when the tool prior, read
    #: from that ask alone, gives one tool at least this probability and no call of that tool has
    #: run yet in the episode. The prior (fitted on synthesized single-operation requests) is
    #: what says a piece of the request is an operation, and which; 0 turns it off
    confident_asks: float = Field(0.0, ge=0.0, le=1.0)
    #: with ``check_done``: an ask (a piece of the request asking for an operation) that no call
    #: which ran answered (:func:`~agentlab.toolkits.asks.unanswered_asks`: a call answers the ask
    #: naming its values, or else one whose most likely tool under the prior is its own) gets a
    #: step of its own too. ``strict``: each call answers one ask; ``lenient``: a call its values
    #: placed also answers an ask of its tool that names no value; ``off``: only the value check
    check_asks: Literal["off", "strict", "lenient"] = "strict"
    #: a reply whose every call already ran without error in the episode is refused and asked
    #: again (:meth:`ToolAgent._parse_new`); false: it runs again (the ablation)
    no_repeats: bool = True
    #: a reply whose every call is, word for word, one that already failed in the episode is refused
    #: too, quoting the error, and asked again at ``retry_temperature`` (:meth:`ToolAgent._parse_new`);
    #: false: it runs again, fails the same way, and the episode stops as a repeat (the ablation)
    no_failed_repeats: bool = True
    #: a value an earlier call's error named (no sheet 'Q3', no paragraph contains 'intro') is left
    #: out of that tool's argument in every later step's grammar while the argument has other
    #: candidates (:func:`~agentlab.toolkits.base.value_the_error_names`): refused and asked again,
    #: sampled replies wrote the failing call again in every one of the 16 episodes that met the
    #: refusal; false: only the refusal (the ablation)
    avoid_failed_values: bool = True
    #: a call that failed in the episode cannot be decoded again word for word in a later step
    #: (:attr:`~agentlab.toolkits.grammar.CallGrammar.banned`): refused and re-asked, sampled
    #: replies wrote it again. Calls that succeeded are not banned: a model writing one again has
    #: nothing left to do, and the refusal then ends the episode with the workspace as it is --
    #: banned, it was made to write another call, which undid the work (four development tasks
    #: lost: an image inverted back by a brightness call, a preference set back). False: the
    #: refusal alone (the ablation)
    exclude_failed_calls: bool = True


def _capped(lines: list[str], limit: int) -> str:
    """``lines`` joined, cut at a line boundary before ``limit`` characters, saying how much was left out."""
    text = "\n".join(lines)
    if len(text) <= limit:
        return text
    kept = text[:limit].rsplit("\n", 1)[0]
    return f"{kept}\n... ({len(text) - len(kept)} more characters of the workspace's description left out)"


@dataclass
class _ToolEpisode(Episode):
    """The tool agent's episode: the tools shown, the prior on the first call's name, the workspace
    as the episode found it (best of K), and the current step's constraint."""

    shown: list[str] = field(default_factory=list)
    name_prior: dict[str, float] | None = None
    start: Path | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    #: the workspace as the episode found it, for the check of what is still to do (``check_done``)
    origin: Path | None = None
    #: the ask this step is for (an ask the workspace did not reflect yet), and every ask so asked
    focus: str | None = None
    asked: list[str] = field(default_factory=list)
    #: the focus step's tools and first-call prior (read from the ask)
    focus_shown: list[str] = field(default_factory=list)
    focus_prior: dict[str, float] | None = None
    tool_prior: ToolPrior | None = None
    #: the tools whose calls ran without error so far (``confident_asks``)
    called: set[str] = field(default_factory=set)
    #: each piece of the request with the tool the prior is sure of for it (``confident_asks``;
    #: read once per episode: the request and the prior do not change)
    sure: list[tuple[str, str]] | None = None
    #: every call that ran without error so far, as its JSON text (``no_repeats``)
    ran: set[str] = field(default_factory=set)
    #: each call that failed so far (its JSON text) -> the error it got (``no_failed_repeats``)
    failed: dict[str, str] = field(default_factory=dict)
    #: per (tool, argument index), the written values failed calls' errors named (``avoid_failed_values``)
    avoid: dict[tuple[str, int], set[str]] = field(default_factory=dict)
    #: every call that failed so far, as (tool, argument values) (``exclude_failed_calls``)
    failed_calls: list[tuple[str, tuple[Any, ...]]] = field(default_factory=list)
    #: the calls that ran without error so far, in order (``check_asks``)
    done_calls: list[Call] = field(default_factory=list)
    #: ``check_asks``' reading of the episode's fixed inputs, once: the files at the start, and
    #: each piece's most likely tool (MiniLM and the prior, per piece, not per step)
    existed: frozenset[str] | None = None
    tops: dict[str, str | None] = field(default_factory=dict)


def _call_key(call: Call) -> str:
    return json.dumps(call.as_json(), sort_keys=True, default=str)


class ToolAgent(ChatSteps[_ToolEpisode, list[Call] | Reply]):
    """A code specialist acting through a typed toolkit in a :class:`~agentlab.envs.workspace_env.WorkspaceEnv`."""

    env_kind: ClassVar[str] = "workspace"

    @property
    def step_request(self) -> str:
        """What a plan step hands this agent as its request (:func:`agentlab.teams.step.run_step`):
        ``subtask``: the earlier steps' files and output (the hub's context) and its subtask, without
        the whole task the usual step request quotes for reference. Why: a specialist fills its slots
        from the values its request names, and the other parts' values then compete (executed gold
        plans: ``count_lines('dates.txt', ...)`` for the step about notes/, dates.txt being the other
        part's file). ``mode=code`` is the code agent's, which reads the full request."""
        return "full" if self.options.mode == "code" else "subtask"

    def __init__(self, document: AgentDocument, options: Mapping[str, Any] | None = None) -> None:
        self.options = runner_config(ToolAgentOptions, document, options)
        self.document = document
        self.kit: Toolkit = load_toolkit(self.options.toolkit)
        self.templates = {name: load_template(name) for name in PROMPTS}

    # -- prompts ---------------------------------------------------------------------
    @functools.cached_property
    def _tool_vectors(self) -> np.ndarray:
        """The toolkit's tools (name and summary) embedded once per agent, not once per episode."""
        return _encoder().encode([f"{t.name.replace('_', ' ')}: {t.summary}" for t in self.kit.tools.values()])

    def shown_tools(self, task: str, prior: dict[str, float] | None = None, *,
                    vector: np.ndarray | None = None) -> list[str]:
        """The toolkit's tools this request gets (tool retrieval): the ``tools_shown`` whose
        name and summary are most similar to the request, in the toolkit's order; with a tool
        ``prior`` (probabilities), its most likely tool is always among them (in place of the
        least similar one). ``vector``: the request's embedding when the caller has it.

        A request that asks for several things ("write Average in A6, and put the mean below the
        March column") is also cut into its asks (:func:`~agentlab.tasks.requests.split_asks`):
        each ask's nearest tool is shown first, so the second operation's tool is not crowded
        out by tools similar to the whole sentence."""
        names = list(self.kit.tools)
        k = self.options.tools_shown
        if not k or k >= len(names):
            return names
        query = _encoder().encode([task])[0] if vector is None else vector
        sims = self._tool_vectors @ query
        ranked = [names[i] for i in sorted(range(len(names)), key=lambda i: -float(sims[i]))]
        keep: list[str] = []
        pieces = split_asks(task)
        if len(pieces) > 1:
            per_piece = self._tool_vectors @ _encoder().encode(pieces).T  # tools x pieces
            for j in range(per_piece.shape[1]):
                nearest = names[int(np.argmax(per_piece[:, j]))]
                if nearest not in keep and len(keep) < k - 1:
                    keep.append(nearest)
        keep += [n for n in ranked if n not in keep][: k - len(keep)]
        best = max((n for n in (prior or {}) if n in self.kit.tools), key=lambda n: (prior or {})[n], default=None)
        if best is not None and best not in keep:
            keep = [*keep[:-1], best]
        return [n for n in names if n in keep]

    def can_act_on(self, root: Path, task: str) -> bool:
        """Whether any of the toolkit's tools (beyond done and fail) can be called on ``root``'s
        files for ``task``: every argument has a candidate there. A desktop specialist's test
        for taking the file route (:class:`~agentlab.agents.appagent.runner.GuiRunner`); the
        files are read through a private copy, as the episode's observation reads them."""
        with SafeFolder(root).private_copy(_is_scratch) as copy:
            values = merge(request_values(task), workspace_values(copy, self.kit))
        return any(name not in END_CALLS for name in CallGrammar.build(self.kit, values).tools)

    def tool_prior(self) -> ToolPrior | None:
        """This agent's tool prior, or ``None`` (``tool_prior=none``, weight 0, or ``auto`` with none
        shipped); an explicit folder that cannot be read is a :class:`ConfigError`."""
        o = self.options
        if o.tool_prior == "none" or o.prior_weight == 0:
            return None
        folder = (data_dir() / "tool_priors" / self.document.name if o.tool_prior == "auto"
                  else Path(o.tool_prior).expanduser())
        if (folder / self.document.name / PRIOR_CARD).is_file():  # a folder of priors, one per agent (an ablation)
            folder = folder / self.document.name
        if o.tool_prior == "auto" and not (folder / PRIOR_CARD).is_file():
            return None
        try:
            prior = _load_prior(str(folder))
            if prior.encoder != _encoder().model_id:
                raise ConfigError(f"fitted on {prior.encoder!r} embeddings, not {_encoder().model_id!r}", where=str(folder))
        except ConfigError as exc:
            if o.tool_prior != "auto":
                raise ConfigError(f"runner_options.tool_prior: {exc}", where=self.document.path or self.document.name) from None
            _once(f"{self.document.name}: {exc}; no tool prior")
            return None
        return prior

    def system_prompt(self, tools: list[str] | None = None) -> str:
        doc = self.document
        return self.templates["tools/system"].render(
            agent=doc.name, domain=self.kit.description, capabilities=doc.capabilities, tools=self.kit.doc(tools),
            examples=self.kit.examples_text(), code_note=(
                f"\nOnly when the tools cannot do it: reply with one ```python block instead (it may "
                f"`from agentlab.toolkits.{self.kit.name} import ...`), and DONE as the last line once it is finished."
                if self.options.mix_code else "")).strip()

    def first_messages(self, task: str, observation: str, shown: list[str]) -> list[ChatMessage]:
        """The episode's first prompt: the system prompt with the ``shown`` tools, then the request
        and the workspace (what an adapter is trained on, :mod:`agentlab.selfinstruct.calls.fit`)."""
        return [ChatMessage("system", self.system_prompt(shown)),
                ChatMessage("user", self.templates["tools/task"].render(task=task, observation=observation).strip())]

    def observation(self, env: Env) -> str:
        """The workspace's files, each described by the toolkit when it reads that kind of file.

        The toolkit reads a private copy of the workspace's regular files
        (:meth:`~agentlab.safepath.SafeFolder.private_copy`), never the workspace itself: a link a
        program planted there (to ``/proc/self/environ``, a task file, a folder outside) is only
        listed, so nothing outside the workspace reaches the prompt.

        A description naming a file by its path (the files, data, settings, browser and media
        toolkits do) names it relative to the workspace, as the request and the tools do: the
        prompt is the same wherever the run folder is (an absolute path made the same task's
        greedy reply differ between two run folders, docs/failures.md)."""
        ws = env.workspace  # type: ignore[attr-defined]
        lines = [env.listing()]  # type: ignore[attr-defined]
        if self.kit.describe is not None:
            files = ws.files()
            if files:
                with ws.safe.private_copy(_is_scratch) as copy:
                    for rel in files:
                        if not (copy / rel).is_file():  # too large, or changed since the listing
                            continue
                        try:
                            text = self.kit.describe(copy / rel)
                        except Exception:  # a file of another kind (or unreadable) is only listed
                            continue
                        lines.append(_relative(text, copy))
        return _capped(lines, self.options.max_observation_chars)

    def _constraint(self, llm: LLMBackend, env: Env, task: str, tools: list[str], first: bool,
                    prior: dict[str, float] | None = None, words: str | None = None,
                    opening: bool = False, avoid: dict[tuple[str, int], set[str]] | None = None,
                    failed_calls: list[tuple[str, tuple[Any, ...]]] | None = None) -> dict[str, Any]:
        """What keeps the reply to calls with this backend: a grammar (with the tool prior's
        ``log p`` on the first call's name, ``prior``; the word prior read from ``words``, else the
        request) or the tools (or nothing). Argument values come from the whole request. ``first``:
        the reply may not start with ``done()``; ``opening`` (the episode's first reply): nor with
        ``fail(...)``; ``avoid``: values earlier errors named, left out per tool argument; ``failed_calls``:
        calls that failed, left out word for word."""
        if not self.options.constrained:
            return {}
        caps = llm.capabilities
        if caps.tool_calls:
            return {"tools": tuple(self.kit.tools[n].schema() for n in tools)}
        if caps.plan_grammar:
            with env.workspace.safe.private_copy(_is_scratch) as copy:  # type: ignore[attr-defined]
                values = merge(request_values(task), workspace_values(copy, self.kit))
            return {"grammar": CallGrammar.build(self.kit, values, max_calls=self.options.max_calls, names=tools,
                                                 allow_done=not first, allow_fail=not opening, name_prior=prior,
                                                 request=(words or task) if self.options.word_prior else "",
                                                 avoid=avoid, exclude=failed_calls or (),
                                                 encode=_encode_once if self.options.word_prior and self.options.meaning_prior
                                                 else None)}
        if llm.model_id not in _warned:
            _warned.add(llm.model_id)
            log.info("%s: no grammar and no function calling (llm.guided_grammar / llm.guided_regex / llm.tool_calls); "
                     "the tool calls are asked for plainly", llm.model_id)
        return {}

    def adapter_folder(self) -> Path | None:
        """Where this agent's adapter would be (``None``: ``adapter=none``)."""
        if self.options.adapter == "none":
            return None
        if self.options.adapter == "auto":
            return data_dir() / "adapters" / self.document.name
        folder = Path(self.options.adapter).expanduser()
        if (folder / self.document.name).is_dir():  # a folder of adapters, one per agent (an ablation)
            return folder / self.document.name
        return folder

    def _llm(self, ctx: RunContext) -> tuple[LLMBackend, str | None]:
        """The episode's model and the adapter folder it answers with: this agent's adapter when
        there is a usable one. The shared backbone is never changed (:mod:`agentlab.llm.adapters`);
        the adapted model is a role of its own (``agent+<Agent>``, metered apart)."""
        folder = self.adapter_folder()
        if folder is None:
            return ctx.llm(), None
        role = f"{DEFAULT_ROLE}+{self.document.name}"
        if role not in ctx.models.roles:
            from agentlab.llm.adapters import with_adapter

            if self.options.adapter == "auto" and not folder.is_dir():
                _once(f"{self.document.name}: no adapter in {folder}; the backbone answers alone")
                return ctx.llm(), None
            adapted, why = with_adapter(ctx.models.roles.get(DEFAULT_ROLE, ctx.models.default), folder, self.document.name)
            if adapted is None:
                if self.options.adapter != "auto":
                    raise ConfigError(f"runner_options.adapter: {why}", where=self.document.path or self.document.name)
                _once(f"{self.document.name}: {why}")
                return ctx.llm(), None
            ctx.models.roles[role] = adapted
        return ctx.llm(role), str(folder)

    # -- the episode -----------------------------------------------------------------
    def parse(self, reply: str) -> list[Call] | Reply:
        """Calls, one per line; or, from a model that mixes both (``mix_code``), a fenced program
        that may import the toolkit and/or a last line DONE/FAIL, read by the code agent's protocol."""
        if self.options.mix_code and ("```" in reply or _ends_in_marker(reply)):
            return WORKSPACE.parse_reply(reply)
        return parse_calls(reply, self.kit, max_calls=self.options.max_calls)

    def _parse_new(self, ep: _ToolEpisode, reply: str) -> list[Call] | Reply:
        """:meth:`parse`, refusing a reply whose every call already ran without error in this
        episode (``no_repeats``). Why: shown its own last step, a 135M model writes the same call
        again (the second development set: ``set_setting(..., 'editor.tabSize', '15')`` three
        times, ``add_bookmark_folder('Travel', ...)`` twice, making a second folder). Running it
        again at best wastes the step and at worst doubles what it added; refused, the reply is
        asked again at ``retry_temperature`` with the reason, and when every attempt repeats, the
        episode ends with the workspace as the earlier calls left it. A reply that only repeats calls
        that failed (``no_failed_repeats``) is refused the same way, with the error quoted: given its
        own failing call and the error, the model at temperature 0 writes the same call again
        (``set_font('minutes.docx', 'paragraph', ...)`` -> "no paragraph contains 'paragraph'", twice),
        and running it could only fail again."""
        value = self.parse(reply)
        if isinstance(value, list):
            tools = [c for c in value if c.name not in END_CALLS]
            keys = [_call_key(c) for c in tools]
            if tools and self.options.no_repeats and all(k in ep.ran for k in keys):
                raise ActionParseError(f"{tools[0].name}(...) with these values already ran and succeeded; call a "
                                       "tool for what the request still needs, or done() when nothing is left")
            failed = [k for k in keys if k in ep.failed]
            if tools and self.options.no_failed_repeats and failed and all(k in ep.ran or k in ep.failed for k in keys):
                name = next(c.name for c, k in zip(tools, keys) if k in ep.failed)
                raise ActionParseError(f"{name}(...) with these values already failed ({ep.failed[failed[0]]}); "
                                       "change the value the error names, using the request's own words, or call another tool")
        return value

    def run(self, env: Env, task_instruction: str, ctx: RunContext) -> AgentResult:
        if self.options.mode == "code":
            return self._as_code_agent().run(env, task_instruction, ctx)
        o, rec = self.options, ctx.recorder
        llm, adapter = self._llm(ctx)
        rec.meta.extra.update(prompts=template_hashes(PROMPTS), runner="tools", runner_options=o.model_dump())
        if adapter is not None:
            rec.meta.extra["adapter"] = adapter
        env.reset(task_instruction)
        tool_prior = self.tool_prior()
        retrieving = 0 < o.tools_shown < len(self.kit.tools)
        # embedded once per episode: tool retrieval and the prior both read it (MiniLM only loads when needed)
        vector = _encoder().encode([task_instruction])[0] if tool_prior is not None or retrieving else None
        probs = tool_prior.probs(vector) if tool_prior is not None and vector is not None else None
        shown = self.shown_tools(task_instruction, probs, vector=vector)
        name_prior = (tool_prior.log_bias(vector, [*shown, "done", "fail"], o.prior_weight)
                      if tool_prior is not None and vector is not None else None)
        if probs is not None:
            rec.meta.extra["tool_prior"] = {n: round(v, 4) for n, v in sorted(probs.items(), key=lambda kv: -kv[1])[:3]}
        messages = self.first_messages(task_instruction, self.observation(env), shown)
        with contextlib.ExitStack() as keep:
            # best of K scores every candidate against the workspace as the episode found it, and
            # the check of what is still to do compares with it too
            origin = (keep.enter_context(env.workspace.safe.private_copy(_is_scratch))  # type: ignore[attr-defined]
                      if o.best_of > 1 or o.check_done else None)
            ep = _ToolEpisode(env, task_instruction, ctx, llm, messages, shown=shown, name_prior=name_prior,
                              start=origin if o.best_of > 1 else None, origin=origin, tool_prior=tool_prior)
            parse = functools.partial(self._parse_new, ep) if o.no_repeats or o.no_failed_repeats else self.parse
            return self.chat_loop(ep, parse, max_attempts=o.max_attempts, correction=self.templates["tools/correction"],
                                  correction_fields={"example": self._example()}, label="tool calls")

    def step_params(self, ep: _ToolEpisode) -> Callable[[int], SamplingParams]:
        """This step's constraint (grammar, tools or none), in every attempt's sampling."""
        o, steps = self.options, ep.steps
        if ep.focus is None:
            ep.extra = extra = self._constraint(ep.llm, ep.env, ep.task, ep.shown, first=steps == 0, prior=ep.name_prior,
                                                opening=steps == 0, avoid=ep.avoid,
                                                failed_calls=ep.failed_calls)
        else:  # a step for one ask: its nearest tools, the prior and the word prior read that ask
            ep.extra = extra = self._constraint(ep.llm, ep.env, ep.task, ep.focus_shown, first=True,
                                                prior=ep.focus_prior, words=ep.focus, opening=True, avoid=ep.avoid,
                                                failed_calls=ep.failed_calls)

        def params(attempt: int) -> SamplingParams:
            return SamplingParams(max_new_tokens=o.max_new_tokens, seed=o.seed + attempt + 10 * steps,
                                  temperature=o.temperature if attempt == 0 else o.retry_temperature, **extra)
        return params

    def act(self, ep: _ToolEpisode, last: Attempt[list[Call] | Reply], value: list[Call] | Reply) -> str | None:
        """Run the calls (or the program), best of K first when asked; ``done()`` after calls that
        succeeded ends the episode, ``fail()`` gives up."""
        env, model_s = ep.env, time.perf_counter() - ep.t_step
        reply, best, t_best = last.reply, None, time.perf_counter()
        if ep.start is not None and isinstance(value, list):  # calls: try K candidates, keep the best
            value, reply, best = self._best_of(ep.llm, env, ep.ctx, ep.task, ep.start, last, value, ep.extra, ep.steps)
        best_s = time.perf_counter() - t_best
        new = ep.accept(last, reply)
        if isinstance(value, Reply):  # a program (and/or DONE/FAIL) instead of calls
            action, report, ok, end_name, ran = self._run_program(env, value)
            calls: list[Call] = []
        else:
            calls = value
            tools = [c for c in calls if c.name not in ("done", "fail")]
            ends = [c for c in calls if c.name in ("done", "fail")]
            action = RunProgram("python", program(self.kit.name, [c.as_json() for c in tools])) if tools else None
            report, ok, ran = self._execute(env, tools, action) if action is not None else ("", True, {})
            if ok:
                ep.called.update(c.name for c in tools)
                ep.done_calls.extend(tools)
                ep.ran.update(_call_key(c) for c in tools)
            else:  # each call's line of the report, in order: the ones that failed, with their error
                for call, line in zip(tools, report.split("\n")):
                    _, arrow, said = line.partition(" -> ERROR ")
                    if arrow:
                        ep.failed[_call_key(call)] = clip(said, 160)
                        if self.options.exclude_failed_calls:
                            ep.failed_calls.append((call.name, tuple(call.args.values())))
                        named = value_the_error_names(call, said) if self.options.avoid_failed_values else None
                        if named is not None:
                            ep.avoid.setdefault((call.name, named[0]), set()).add(named[1])
            end_name = ends[0].name if ends else None
            if ends and ends[0].name == "fail":
                ep.error = f"the agent gave up: {ends[0].args.get('reason', '')}"
        # a step whose calls failed is answered with what failed, as always: an ask is set up on
        # its own only after calls that ran; a program (mix_code) is the model's own judgement, as the
        # code agent's is, and ends the episode on its DONE
        pending = (self._pending(ep) if ok and calls and end_name != "fail" and ep.steps < ep.ctx.max_steps
                   else [])
        unchecked_done = end_name == "done" and ok and bool(pending)
        finished = end_name == "fail" or (end_name == "done" and ok and not pending)
        timing = {"model_s": round(model_s, 6), "step_s": round(time.perf_counter() - ep.t_step, 6),
                  "program_s": float(ran.get("duration_s", 0.0))}
        info: dict[str, Any] = {
            "attempt": last.index + 1, "messages": new,
            "calls": [c.as_json() for c in calls], "results": report, "program": ran, "end": end_name, "timing": timing}
        if best is not None:
            info["best_of"], timing["best_of_s"] = best, round(best_s, 6)
        if ep.focus is not None:
            info["ask"] = ep.focus
        if pending:
            info["unmet"] = pending
        if unchecked_done:
            info["done_refused"] = True
        ep.ctx.recorder.record(None, action, action_text=reply, done=finished, info=info)
        if finished:
            ep.status = "done" if end_name == "done" else "failed"
            ep.error = None if ep.status == "done" else (ep.error or "the agent gave up (FAIL)")
            return None
        ep.error = None if ok else f"step {ep.steps}: a call failed"
        if action is not None and ep.failed_again(repr(action), ok):
            ep.status, ep.error = "failed", f"step {ep.steps}: the same failing calls as the step before; stopped (a repeat)"
            return None
        if pending:
            return self._ask_alone(ep, pending[0])
        ep.focus = None
        return self.templates["tools/step"].render(
            results=report or "(no calls)", observation=self.observation(env), task=ep.task).strip()

    def _ask_alone(self, ep: _ToolEpisode, ask: str) -> str:
        """Set the next step up for ``ask`` alone, as a request of its own: a fresh conversation
        (the system prompt with the ask's nearest tools, then the ask and the workspace as it is
        now, in the episode's first prompt's form, which the adapters were trained on), its tool
        prior read from the ask; like the episode's first reply, it may open with neither ``done()``
        nor ``fail(...)`` (nothing was tried for this ask yet). Why fresh: a
        135M model shown its own last reply writes it again word for word (the second
        development set: the first ask's call repeated under "Not done yet"); alone, an ask is the
        single-operation request the specialists do best. The files the request names and the
        ask does not ride along, so "add 'renew passport' at the bottom" still says where."""
        ep.focus = ask
        ep.asked.append(ask)
        o, tp = self.options, ep.tool_prior
        vector = _encoder().encode([ask])[0]
        probs = tp.probs(vector) if tp is not None else None
        ep.focus_shown = self.shown_tools(ask, probs, vector=vector)
        ep.focus_prior = tp.log_bias(vector, [*ep.focus_shown, "done", "fail"], o.prior_weight) if tp is not None else None
        said = request_values(ep.task)
        where = [f for f in said.mentioned_files if f not in ask]
        request = ask + (f" ({', '.join(where)})" if where else "")
        ep.messages = [ChatMessage("system", self.system_prompt(ep.focus_shown))]
        ep.sent = 0  # the next record carries the fresh conversation from its system prompt
        return self.templates["tools/task"].render(task=request, observation=self.observation(ep.env)).strip()

    def _pending(self, ep: _ToolEpisode) -> list[str]:
        """The request's asks the workspace does not reflect yet and that have not had a step of
        their own (``check_done``; :func:`~agentlab.toolkits.check.unmet_asks`); [] when off."""
        if not self.options.check_done or ep.origin is None:
            return []
        with ep.env.workspace.safe.private_copy(_is_scratch) as now:  # type: ignore[attr-defined]
            unmet = unmet_asks(ep.task, ep.origin, now, self.kit)
        if self.options.confident_asks > 0 and ep.tool_prior is not None:
            confident = {piece for piece, tool in self._sure(ep) if tool not in ep.called}
            unmet = [a for a in split_asks(ep.task) if a in unmet or a in confident]
        if self.options.check_asks != "off" and ep.tool_prior is not None:
            prior = ep.tool_prior
            if ep.existed is None:
                ep.existed = _listing(ep.origin)

            def top(piece: str) -> str | None:
                if piece not in ep.tops:
                    ep.tops[piece] = _top_tool(prior, piece)
                return ep.tops[piece]

            unanswered = set(unanswered_asks(ep.task, ep.done_calls, self.kit, ep.existed, top,
                                             by_tool_always=self.options.check_asks == "lenient"))
            unmet = [a for a in split_asks(ep.task) if a in unmet or a in unanswered]
        return [a for a in unmet if a not in ep.asked]

    def _sure(self, ep: _ToolEpisode) -> list[tuple[str, str]]:
        """The request's pieces (when it has several) whose most likely tool under the prior, read
        from the piece alone, reaches ``confident_asks``, each with that tool (once per episode)."""
        if ep.sure is None:
            pieces = split_asks(ep.task)
            ep.sure = []
            if len(pieces) > 1 and ep.tool_prior is not None:
                for piece, vector in zip(pieces, _encoder().encode(pieces)):
                    name, p = max(ep.tool_prior.probs(vector).items(), key=lambda kv: kv[1])
                    if p >= self.options.confident_asks and name in self.kit.tools:
                        ep.sure.append((piece, name))
        return ep.sure

    def _best_of(self, llm: LLMBackend, env: Env, ctx: RunContext, task: str, start: Path, last: Attempt[Any],
                 greedy: list[Call], extra: dict[str, Any], step: int) -> tuple[list[Call], str, list[dict[str, Any]]]:
        """The step's kept calls, its reply text and every candidate with its score
        (:mod:`agentlab.agents.best_of`): the greedy reply is candidate 0; ``best_of - 1`` more are
        asked with the accepted attempt's messages and constraint at ``retry_temperature``, seed
        ``seed + 10 * step + 1000 * j`` (none of the step's own attempts has it). Nothing here
        touches the workspace: the candidates run on private copies. What it cost beyond K = 1 is
        added up in the episode's ``meta.extra["best_of"]`` (the model calls are metered anyway)."""
        o = self.options

        def params(j: int) -> SamplingParams:
            return SamplingParams(max_new_tokens=o.max_new_tokens, seed=o.seed + 10 * step + 1000 * j,
                                  temperature=o.retry_temperature, **extra)

        t0 = time.perf_counter()
        cands = [Candidate(0, last.reply, last.params.seed, greedy), *sample(llm, last.messages, params, o.best_of, self.parse)]
        kept = choose(cands, instruction=task, start=start, ws=env.workspace, kit=self.kit,  # type: ignore[attr-defined]
                      deadline=ctx.deadline)
        cost = ctx.recorder.meta.extra.setdefault("best_of", {"k": o.best_of, "steps": 0, "extra_llm_calls": 0,
                                                              "candidates_run": 0, "seconds": 0.0, "kept_sampled": 0})
        cost["steps"] += 1
        cost["extra_llm_calls"] += len(cands) - 1
        cost["candidates_run"] += sum(1 for c in cands if c.score is not None and not c.why.startswith("same calls"))
        cost["seconds"] = round(cost["seconds"] + time.perf_counter() - t0, 6)
        cost["kept_sampled"] += kept.index != 0
        assert isinstance(kept.value, list)  # only candidates with calls are scored; candidate 0 has them
        return kept.value, kept.reply, [c.record(kept.index) for c in cands]

    def _run_program(self, env: Env, reply: Reply) -> tuple[RunProgram | None, str, bool, str | None, dict[str, Any]]:
        """A program reply: (its action, what it printed, whether it succeeded, 'done'/'fail'/None,
        the run as the code agent records it)."""
        end_name = {"done": "done", "failed": "fail"}.get(reply.status or "")
        if reply.program is None:
            return None, "", True, end_name, {}
        stepped = env.step(reply.program)
        ok = bool(stepped.info.get("ok", True))
        out = str(stepped.info.get("stdout", ""))[-1500:]
        err = str(stepped.info.get("stderr", ""))[-800:]
        report = f"program exited with {stepped.info.get('returncode')}\n{out}" + (f"\nstderr:\n{err}" if err.strip() else "")
        return reply.program, report.strip(), ok, end_name, _ran(stepped.info)

    def _execute(self, env: Env, calls: list[Call], action: RunProgram) -> tuple[str, bool, dict[str, Any]]:
        """Run ``calls`` (as ``action``, their program) in the workspace; (what each did, one per
        line; whether all succeeded; the run)."""
        stepped = env.step(action)
        done = results(str(stepped.info.get("stdout", "")))
        lines = []
        for call, res in zip(calls, done):
            lines.append(f"{call.render()} -> " + (res["result"] if res.get("ok") else f"ERROR {res.get('error')}"))
        for call in calls[len(done):]:
            lines.append(f"{call.render()} -> not run" + (f" ({stepped.info.get('stderr', '')[-300:]})"
                                                          if not done else ""))
        ok = len(done) == len(calls) and all(r.get("ok") for r in done)
        return "\n".join(lines), ok, _ran(stepped.info)

    def _example(self) -> str:
        return next(iter(self.kit.examples), ("", "done()"))[1].splitlines()[0]

    def _as_code_agent(self) -> CodeAgent:
        """The code agent with this toolkit importable and listed in its prompt (``mode=code``)."""
        return CodeAgent(self.document, {"libraries": self.options.libraries, "toolkit": self.options.toolkit,
                                         "seed": self.options.seed})


@functools.lru_cache(maxsize=16)
def _load_prior(folder: str) -> ToolPrior:
    """A prior folder read once per process (every episode of a specialist uses it)."""
    return ToolPrior.load(folder)


def _top_tool(prior: ToolPrior, piece: str) -> str | None:
    """The tool ``prior`` finds most likely for ``piece`` read alone (``check_asks``)."""
    probs = prior.probs(prior.features(_encoder().encode([piece])[0], piece))
    return max(probs, key=lambda n: probs[n]) if probs else None


def _listing(folder: Path) -> frozenset[str]:
    """Every file and folder under ``folder`` (a private copy of the workspace), relative, without
    following links: what existed when the episode began (``check_asks``)."""
    out: set[str] = set()
    for root, dirs, files in os.walk(folder):  # links are not followed (os.walk's default)
        rel = Path(root).relative_to(folder)
        out.update((rel / name).as_posix() for name in [*dirs, *files])
    return frozenset(out)


def _relative(text: str, folder: Path) -> str:
    """``text`` with every path under ``folder`` written relative to it (``folder`` itself as ``.``)."""
    return text.replace(f"{folder}/", "").replace(str(folder), ".")


def _is_scratch(rel: str) -> bool:
    """The workspace's own scratch folder (``.agentlab``: the programs run): not the task's files."""
    return rel.split("/", 1)[0].startswith(".agentlab")


def _once(line: str) -> None:
    """Log ``line`` once per process (every episode of a run would say it again)."""
    if line not in _warned:
        _warned.add(line)
        log.info("%s", line)


def _ends_in_marker(reply: str) -> bool:
    lines = [ln.strip("*_`.!: ") for ln in reply.splitlines() if ln.strip()]
    return bool(lines) and lines[-1].upper() in ("DONE", "FAIL")


def _ran(info: dict[str, Any]) -> dict[str, Any]:
    """What the workspace said of a program's run, as the code agent records it (the hub, COLA
    and the viewer read ``info.program``)."""
    return {k: info[k] for k in ("returncode", "timed_out", "stdout", "stderr", "duration_s") if k in info}
