"""AppAgent's deployment over typed GUI actions (``AppAgentConfig.actions = "typed"``).

The same loop as :meth:`~agentlab.agents.appagent.AppAgent.deploy` — screen, documentation, task,
what was done so far; one action per step; unusable replies fed back and bounded — but the reply
is one call of :mod:`agentlab.agents.gui_actions` (``click(3)``, ``type(5, 'Ada')``, ``done()``)
over the marks of *this* screen, and the model is held to it by what it offers: a local model
decodes under the screen's grammar, an endpoint with function calling is given the screen's
tools, any other is asked plainly and its reply parsed and checked. Under the grammar the
embedded model can no longer answer with the prompt's placeholder or a number that is not on
screen: every reply is an action. ``done()`` and ``fail()`` are not offered on the first step
(nothing is done yet). Each step records the typed call and the env actions it expanded to.

The learned documents (``use_docs``) do two things here: the prompt shows them, as in the raw
loop, and they ground the request on the marks (:func:`~agentlab.agents.gui_actions.grounding`):
a mark whose document shares the request's words is favoured under the grammar, one on the
app's useless list is not. What happened in this episode counts too: a mark whose click flipped
a switch (a checkable element's state) is not favoured again, since clicking it again would undo
what was done. Documents are AppAgent's per app (``data/docs/<app>/``); when the agent's own
``app`` folder holds none, those of the Android package on screen are used (a survey names its
folder after the package, while a pool document names its app by domain, ``clock``).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Collection
from typing import TYPE_CHECKING, Any

from agentlab.agents.appagent.core import AppAgentConfig, EpisodeResult, NullRecorder, block
from agentlab.agents.appagent.docs_store import DocStore
from agentlab.agents.gui_actions import (
    DONE_AFTER_SKILLS,
    Carried,
    GuiCall,
    GuiChoices,
    GuiScreen,
    carry_out,
    constraint,
    parse_gui_reply,
)
from agentlab.agents.gui_skills import GuiSkill, finishing_skill, load_skills, run_skill
from agentlab.dialogue.ask import Attempt
from agentlab.envs.actions.phone import PHONE
from agentlab.envs.base import Element, Env, Observation
from agentlab.envs.marks import draw_marks
from agentlab.envs.trajectory import TrajectoryRecorder
from agentlab.tasks.requests import split_pieces
from agentlab.errors import ConfigError, InvalidActionError

if TYPE_CHECKING:  # pragma: no cover
    from agentlab.agents.appagent.core import AppAgentCore

log = logging.getLogger(__name__)

#: the documents a typed call's element can act on: a click is a tap, type types, scroll swipes
#: (a phone's long press has no typed call, so what it does is no reason to click)
TYPED_KEYS = frozenset({"tap", "click", "text", "v_swipe", "h_swipe", "scroll", "double_click"})
#: a mark across the screens of one episode: its uid (its text when it has none) and its box
MarkKey = tuple[str, tuple[int, int, int, int]]


class _Act:
    """The last check on a reply: carry the typed call out (an env refusal is fed back)."""

    def __init__(self, env: Env, screen: GuiScreen, skills: tuple[GuiSkill, ...] = (), request: str = "",
                 finished: Collection[str] = (), stopped: Collection[str] = (),
                 made: Collection[tuple[str, str]] = ()) -> None:
        self.env, self.screen, self.skills, self.request = env, screen, skills, request
        #: skill calls that already ran to their end in this episode (as rendered)
        self.finished = finished
        #: skill calls that stopped part-way in this episode: the same call stops at the same place
        self.stopped = stopped
        #: (skill, name) a finished call of the skill wrote into the app (a bookmark's new name)
        self.made = made
        self.carried: Carried | None = None

    def __call__(self, call: GuiCall) -> None:
        if call.render() in self.stopped:
            raise InvalidActionError(f"{call.render()} already stopped part-way in this episode; "
                                     "try another call or the GUI operations")
        if call.render() in self.finished:  # a toggle called twice undoes itself
            raise InvalidActionError(f"{call.render()} already ran to its end in this episode; "
                                     "call done() if nothing else is asked")
        texts = [str(v) for v in call.args.values() if isinstance(v, str)]
        if any(s.name == call.name for s in self.skills) and len(texts) != len(set(texts)):
            # rename_sheet('People', 'People') on a development task: a no-op that counted as the ask done
            raise InvalidActionError(f"{call.render()} gives two parameters the same value, which changes nothing")
        self.carried = carry_out(self.env, call, self.screen, self.skills, self.request, self.finished, self.made)


def _identities(call: GuiCall, info: dict[str, Any]) -> list[str]:
    """A skill call as the model wrote it, as grounded (``call``) and as acted on (``acted_on``:
    the element's whole label): the model words one call many ways, and each is the same call."""
    return [call.render(), str(info.get("call", call.render())), *([str(info["acted_on"])] if "acted_on" in info else [])]


def _said(call: GuiCall, screen: GuiScreen) -> str:
    """``click(2) on "Add one"``: the call and what it aimed at, for the running summary."""
    n = call.args.get("element")
    el = next((e for e in screen.marks if e.id == n), None) if n is not None else None
    return f'{call.render()} on "{el.text}"' if el is not None and el.text else call.render()


def mark_key(el: Element) -> MarkKey:
    return (el.uid or el.text, el.bbox)


def flipped_switch(before: Observation, after: Observation) -> bool:
    """Whether a checkable element present on both screens (same mark) changed its checked state."""
    def states(obs: Observation) -> dict[MarkKey, bool]:
        return {mark_key(e): "checked" in e.state for e in obs.elements if {"checked", "unchecked"} & set(e.state)}

    b, a = states(before), states(after)
    return any(k in a and a[k] != v for k, v in b.items())


class ScreenDocs:
    """The documents a screen's marks are grounded on, resolved once per app for an episode."""

    def __init__(self, agent: AppAgentCore) -> None:
        self.agent = agent
        self._stores: dict[str, DocStore] = {}

    def store(self, obs: Observation) -> DocStore:
        """The agent's own documents when it has any, else those of the package on screen, if any."""
        own = self.agent.docs
        package = str(obs.info.get("package") or "")
        if not package or package == own.app:
            return own
        if package not in self._stores:
            chosen = own
            if not own.has_docs():
                try:
                    other = DocStore(package, self.agent.config.docs_dir)
                except ConfigError:  # not a usable folder name
                    other = own
                if other.has_docs():
                    log.info("documents of %s (the package on screen) stand in for %s's, which has none", package, own.app)
                    chosen = other
            self._stores[package] = chosen
        return self._stores[package]


#: why an episode ended without the model's done(): the trajectory says so
AUTO_DONE = "every ask of the request had a skill run to its end"

#: a piece of a request that only asks to keep the work ("then save the file keeping the .xlsx
#: format", "and overwrite logo.png") or to leave things alone ("Change nothing else."): no
#: operation of its own, so not an ask a skill must carry out when the app saves at the end
_NOT_AN_ASK = re.compile(r"^\W*(?:(?:and|then|please|also|finally)\W+)*(?:save|overwrite|re-?save|store|keep|leave|"
                         r"change nothing|do not|don't|dont|nothing else)\b", re.IGNORECASE)


def operation_pieces(pieces: list[str], finishing: bool) -> list[str]:
    """The pieces of a request that ask for an operation (never none of a non-empty request): with
    a finishing skill (the app saves at the end) a piece that only asks to save, keep or leave
    something is not one."""
    if not finishing:
        return pieces
    return [p for p in pieces if not _NOT_AN_ASK.match(p)] or pieces[:1]


def _finish(env: Env, skill: GuiSkill, task: str, obs: Observation,
            rec: TrajectoryRecorder | NullRecorder) -> Observation:
    """Run the app's finishing skill (its save) as the episode ends, recording it as a step of its
    own (``auto_finish``); returns the screen after it. A save that cannot
    run is recorded and the episode still ends: what the model did is judged as it stands."""
    call = f"{skill.name}()"
    try:
        sent, result = run_skill(env, skill, {}, task)
    except InvalidActionError as exc:
        rec.record(obs, None, action_text=call, error=f"saving at the end: {exc.message}", save_images=False,
                   info={"gui_call": call, "auto_finish": skill.name})
        return obs
    rec.record(obs, sent[-1] if sent else None, action_text=call,
               info={"gui_call": call, "auto_finish": skill.name, "expanded": [a.to_call() for a in sent], **result.info})
    return result.observation


def skill_biases(cfg: AppAgentConfig, skills: tuple[GuiSkill, ...], texts: list[str]) -> list[dict[str, float]]:
    """The app's fitted skill prior (``cfg.skill_prior``) read on each of ``texts`` (the request,
    then each of its asks): skill -> ``weight * log p``, renormalised over the app's skills, the
    best at 0. [] when there are no skills, the prior is off, or the app has none."""
    if not skills or cfg.skill_prior == "none" or cfg.skill_prior_weight == 0 or not texts:
        return []
    from pathlib import Path

    from agentlab.llm.similarity import default_encoder
    from agentlab.paths import data_dir
    from agentlab.toolkits.prior import CARD, ToolPrior

    folder = data_dir() / "gui_priors" / cfg.app if cfg.skill_prior == "auto" else Path(cfg.skill_prior).expanduser()
    if cfg.skill_prior == "auto" and not (folder / CARD).is_file():
        return []
    prior = ToolPrior.load(folder)  # a missing or corrupt one named (ConfigError) when asked for by path
    encoder = default_encoder()
    if prior.encoder != encoder.model_id:
        raise ConfigError(f"{folder}: the skill prior was fitted on {prior.encoder}, not {encoder.model_id}")
    out = []
    for text, vector in zip(texts, encoder.encode(texts)):
        bias = prior.log_bias(prior.features(vector, text), [s.name for s in skills], cfg.skill_prior_weight)
        top = max(bias.values())
        out.append({k: v - top for k, v in bias.items()})
    return out


def _due(biases: list[dict[str, float]], ran: int, asks: int) -> dict[str, float] | None:
    """The bias for the step now: the ask due next (the ``ran``-th piece) when the request has
    several, else the whole request's."""
    if not biases:
        return None
    if asks > 1 and ran < asks:
        return biases[1 + ran]
    return biases[0]


def deploy_typed(agent: AppAgentCore, env: Env, task: str, rec: TrajectoryRecorder | NullRecorder) -> EpisodeResult:
    """Carry ``task`` out with typed GUI actions, recording into ``rec`` (see the module docstring)."""
    cfg = agent.config
    phone = env.actions is PHONE
    done_so_far: list[str] = []
    steps, status, error = 0, "max_steps", None
    screen_docs = ScreenDocs(agent)
    #: marks whose click flipped a switch in this episode: grounding does not push them again
    flipped: set[MarkKey] = set()
    skills = tuple(load_skills(cfg.app)) if cfg.skills else ()
    #: the app's save (a desktop document app): the deployment runs it once at the end, so the
    #: model is not offered it (the embedded model called Calc's save first, then clicked about)
    saver = finishing_skill(skills) if cfg.save_on_end and not phone else None
    skills = tuple(s for s in skills if s is not saver)
    pieces = operation_pieces(split_pieces(task), saver is not None) if skills else []
    asks = len(pieces)  #: the asks that are operations (a save is the saver's)
    biases = skill_biases(cfg, skills, [task, *pieces])
    finished: list[str] = []  #: skill calls that ran to their end (as called and as grounded): never again
    #: skill calls that stopped part-way (as called and as grounded): never again either. The
    #: embedded model called toggle_setting("save") three times on a development task, each
    #: waiting out the same missing switch
    stopped: list[str] = []
    #: (skill, parameter, value) a stopped call's screen showed the parameter cannot take
    ruled_out: set[tuple[str, str, str]] = set()
    #: (skill, name) a finished skill call wrote (acting on it again with the same skill undoes the ask)
    made: set[tuple[str, str]] = set()
    skills_ran = 0  #: how many: once they cover the asks, done() is favoured
    skill_failed = False  #: a skill stopped or was refused: the GUI operations are offered from then on
    unsaved = False  #: something was done in the app (its save then runs at the end)

    def save_now(obs: Observation) -> Observation:
        nonlocal unsaved
        if saver is None or not unsaved:
            return obs
        unsaved = False
        return _finish(env, saver, task, obs, rec)
    with agent.episode(rec):
        obs = env.reset(task)
        while steps < cfg.max_steps:
            screen = GuiScreen.of(obs, cfg.max_elements, ocr=not phone)
            learned = cfg.use_docs and not screen.ocr
            store = screen_docs.store(obs) if learned else agent.docs
            by_mark = store.by_mark(screen.marks, keys=TYPED_KEYS) if learned else {}
            useless = store.useless() if learned else set()
            no_push = {m.id for m in screen.marks if mark_key(m) in flipped or (m.uid in useless and m.id not in by_mark)}
            choices = GuiChoices.build(screen, task, phone=phone, docs=by_mark, no_push=no_push, skills=skills,
                                       end_push=DONE_AFTER_SKILLS if skills and skills_ran >= asks else 0.0,
                                       finished=[*finished, *stopped], skill_bias=_due(biases, skills_ran, asks),
                                       skills_first=cfg.skills_first and bool(biases) and skills_ran < asks
                                       and not skill_failed, ruled_out=ruled_out)
            allow_end = steps > 0
            docs = store.for_screen(screen.marks) if learned else ""
            act = _Act(env, screen, skills, task, finished, stopped, made)

            def record_failure(a: Attempt[GuiCall]) -> None:
                nonlocal skill_failed
                if not a.ok and a.value is not None and choices.skill(a.value.name):
                    skill_failed = True  # refused (its element never showed): the GUI is the fallback
                if not a.ok:
                    rec.record(obs, None, action_text=a.reply, error=f"step {steps + 1}, attempt {a.index + 1}: {a.problem}",
                               save_images=False, info={"attempt": a.index + 1})

            images = ((draw_marks(obs.screenshot, screen.marks),)
                      if obs.screenshot is not None and agent.llm.capabilities.images else ())
            asked = agent.ask(
                "appagent/deploy_typed", agent.platform(env), lambda reply: parse_gui_reply(reply, choices),
                dict(task=task, app=cfg.app, ui=screen.listing(),
                     docs=block("appagent/docs_block", docs=docs) if docs else "",
                     actions=choices.doc(allow_end=allow_end), example=choices.example(),
                     last_summary="; ".join(done_so_far) or "nothing yet"),
                checks=[act], correction="appagent/deploy_feedback", on_attempt=record_failure,
                images=images, constraint=constraint(agent.llm, choices, allow_end=allow_end),
            )
            call = asked.value
            if call is None and choices.skills_first:  # no skill call would do: the GUI operations are the fallback
                skill_failed = True
                continue
            if call is None:
                status = "failed"
                error = f"{len(asked.attempts)} unusable replies in a row; last: {asked.attempts[-1].problem}"
                break
            reply = asked.attempts[-1].reply
            if call.terminal:
                gave_up = call.name == "fail"
                status, error = ("failed", f"the agent gave up: {call.args.get('reason', '')}") if gave_up else ("done", None)
                if not gave_up:
                    obs = save_now(obs)
                rec.record(obs, env.actions.terminal(), action_text=reply, done=True, error=error,
                           reflection="; ".join(done_so_far), info={"gui_call": call.render()})
                break
            carried = act.carried
            assert carried is not None and carried.result is not None
            steps += 1
            last = carried.actions[-1] if carried.actions else None
            error = None
            done_so_far.append(_said(call, screen))
            if carried.result.info.get("skill_error"):  # it acted, then stopped: the model reads where
                done_so_far[-1] += f" (stopped: {carried.result.info['skill_error']})"
                skill_failed = True
                stopped += _identities(call, carried.result.info)
                ruled_out |= {(call.name, p, v) for p, v in carried.result.info.get("ruled_out", {}).items()}
            elif choices.skill(call.name):  # as called, and as grounded (the model words one call many ways)
                finished += _identities(call, carried.result.info)
                made |= {(call.name, v) for v in carried.result.info.get("made", {}).values()}
                skills_ran += 1
            unsaved = True
            if call.name == "click" and flipped_switch(obs, carried.result.observation):
                flipped.add(mark_key(screen.mark(call.args["element"])))
            rec.record(obs, last, action_text=reply, reflection="; ".join(done_so_far),
                       info={"gui_call": call.render(), "expanded": [a.to_call() for a in carried.actions],
                             **({"not_pushed": sorted(no_push)} if no_push else {}),
                             **({"skill": call.name} if choices.skill(call.name) else {}), **carried.result.info})
            obs = carried.result.observation
            if (cfg.stop_after_skills and skills and asks and skills_ran >= asks and choices.skill(call.name)
                    and not carried.result.info.get("skill_error")):
                # every ask had a skill run to its end: a phone app keeps what a skill did, a document
                # app saves it first (save_on_end), and the embedded model, offered done() with
                # DONE_AFTER_SKILLS nats, went on clicking instead (the development clock tasks:
                # deleting Sleep, the Yoga alarm)
                obs = save_now(obs)
                status = "done"
                rec.record(obs, env.actions.terminal(), action_text="done()", done=True,
                           reflection="; ".join(done_so_far), info={"gui_call": "done()", "auto_done": AUTO_DONE})
                break
        if status == "max_steps" or (status == "failed" and not (error or "").startswith("the agent gave up")):
            obs = save_now(obs)  # what was done stays done: a person's edits are saved when they stop
        summary = "; ".join(done_so_far) or "nothing yet"
        if status not in ("done",) and not (status == "failed" and error and error.startswith("the agent gave up")):
            rec.record(obs, None, done=True, error=error, reflection=summary)
        rec.finish(status, error=error, steps=steps, llm_calls=agent.llm_calls)
    return EpisodeResult(status, steps, summary, error, rec.path, agent.llm_calls)
