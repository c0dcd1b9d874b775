"""AppAgent's exploration phase: learn what elements do, by acting or by watching a demo.

Autonomous exploration asks the LLM for an action towards a goal, performs it, then asks
it to compare the screens before and after and document the element under one of four
decisions (BACK: useless page, go back; INEFFECTIVE: nothing happened; CONTINUE; SUCCESS).
Two deliberate differences from the paper, both to keep a weak model from writing noise:
an action whose screen did not change at all is judged INEFFECTIVE without asking the LLM,
and ineffective elements are persisted in the app's useless list and no longer offered.

Learning from a demonstration reads a recorded trajectory (a person's actions, recorded
with :func:`record_demo`) and documents each element the person used from the screens
before and after, without touching a device.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from agentlab.agents.appagent.core import (
    AppAgentCore,
    EpisodeResult,
    block,
    screen_changed,
    target_element,
)
from agentlab.agents.appagent.docs_store import doc_key
from agentlab.agents.response import (
    ActReply,
    ReflectReply,
    parse_act_reply,
    parse_reflect_reply,
)
from agentlab.dialogue.ask import Attempt
from agentlab.envs.actions.base import Action
from agentlab.envs.actions.phone import PHONE, Back
from agentlab.envs.base import Element, Env, Observation, StepResult
from agentlab.errors import ActionParseError, InvalidActionError
from agentlab.envs.trajectory import TrajectoryRecorder, load_trajectory

log = logging.getLogger(__name__)


def _old_doc(agent: AppAgentCore, el: Element, key: str) -> str:
    doc = agent.docs.get(el.uid)
    old = doc.docs.get(key, "") if doc else ""
    return block("appagent/old_doc", old=old) if old else ""


def _reflect(agent: AppAgentCore, rec: Any, env: Env, task: str, before: Observation, after: Observation,
             action: Action, el: Element) -> tuple[ReflectReply | None, str]:
    """Ask for a decision + documentation, with bounded retries; (reply or None, last error)."""
    key = doc_key(action)

    def record_failure(a: Attempt[ReflectReply]) -> None:
        if not a.ok:
            rec.record(after, None, action_text=a.reply, error=f"reflection attempt {a.index + 1}: {a.problem}",
                       save_images=False, info={"phase": "reflect"})

    asked = agent.ask(
        "appagent/explore_reflect", agent.platform(env), parse_reflect_reply,
        dict(app=agent.config.app, task=task, action=action.describe(), element=el.label(),
             before=agent.ui_text(before), after=agent.ui_text(after), old_doc=_old_doc(agent, el, key),
             action_kind=key.replace("_", " ").replace("v swipe", "swipe vertically").replace("h swipe", "swipe horizontally")),
        on_attempt=record_failure,
    )
    if asked.value is not None:
        return asked.value, ""
    last = asked.attempts[-1]
    return None, f"reflection attempt {last.index + 1}: {last.problem}"


class _Try:
    """The last check on an exploration reply: refuse elements known to do nothing, else act."""

    def __init__(self, env: Env, obs: Observation, useless: set[str]) -> None:
        self.env, self.obs, self.useless = env, obs, useless
        self.element: Element | None = None
        self.result: StepResult | None = None

    def __call__(self, parsed: ActReply) -> str | None:
        self.element, self.result = None, None
        if parsed.action.terminal:
            return None
        self.element = target_element(parsed.action, self.obs)
        if self.element is not None and self.element.uid in self.useless:
            return f"element {self.element.id} was found to do nothing before; pick another element"
        self.result = self.env.step(parsed.action)
        return None


def run_exploration(agent: AppAgentCore, env: Env, task: str, episode_dir: str | Path | None) -> EpisodeResult:
    cfg = agent.config
    space = env.actions
    rec = agent.recorder(episode_dir, task, env, "explore")
    useless = agent.docs.useless()
    summary, rounds = "nothing yet", 0
    status, error = "max_steps", None
    written: list[str] = []
    with agent.episode(rec):
        obs = env.reset(task)
        while rounds < cfg.max_rounds:
            attempt = _Try(env, obs, useless)

            def record_failure(a: Attempt[ActReply]) -> None:
                if not a.ok:
                    rec.record(obs, a.value.action if a.value else None, action_text=a.reply,
                               error=f"round {rounds + 1}, attempt {a.index + 1}: {a.problem}", save_images=False)

            asked = agent.ask(
                "appagent/explore_act", agent.platform(env), lambda reply: parse_act_reply(reply, space),
                dict(app=cfg.app, task=task, ui=agent.ui_text(obs, hide=useless),
                     actions=space.doc(), example=space.example(), last_summary=summary),
                checks=[attempt], on_attempt=record_failure,
            )
            parsed = asked.value
            if parsed is None:
                last = asked.attempts[-1]
                status, error = "failed", f"{len(asked.attempts)} unusable replies in a row; last: {last.problem}"
                break
            if parsed.action.terminal:
                rec.record(obs, parsed.action, action_text=parsed.action_text, thought=parsed.thought, done=True)
                status = "done"
                failed = asked.attempts[:-1]
                # as before: a FINISH right after unusable replies keeps the last one's message
                error = f"round {rounds + 1}, attempt {len(failed)}: {failed[-1].problem}" if failed else None
                break
            assert attempt.result is not None
            el, error = attempt.element, None
            rounds += 1
            summary = parsed.summary or f"{summary}; {parsed.action.describe()}"
            after = attempt.result.observation
            decision, doc_text, note = "CONTINUE", "", ""
            if el is None:
                note = "no element to document"
            elif not screen_changed(obs, after):
                decision, note = "INEFFECTIVE", "the screen did not change"
            else:
                refl, note = _reflect(agent, rec, env, task, obs, after, parsed.action, el)
                if refl is not None:
                    decision, doc_text, note = refl.decision, refl.documentation, refl.thought
            if el is not None and decision == "INEFFECTIVE":
                agent.docs.mark_useless(el.uid)
                useless.add(el.uid)
            elif el is not None and doc_text:
                agent.docs.update(el, doc_key(parsed.action), doc_text, source="explore")
                written.append(el.uid)
            rec.record(obs, parsed.action, action_text=parsed.action_text, thought=parsed.thought,
                       reflection=f"{decision}: {doc_text or note}",
                       info={"decision": decision, "uid": el.uid if el else None, "doc_key": doc_key(parsed.action),
                             "documented": bool(el is not None and doc_text)})
            obs = after
            if decision == "BACK" and space is PHONE:
                obs = env.step(Back()).observation
        if status != "done":
            rec.record(obs, None, done=True, error=error, reflection=summary)
        rec.finish(status, error=error, rounds=rounds, documented=sorted(set(written)), llm_calls=agent.llm_calls)
    return EpisodeResult(status, rounds, summary, error, rec.path, agent.llm_calls,
                         extra={"documented": sorted(set(written)), "useless": sorted(useless)})


def learn_from_demo(agent: AppAgentCore, demo_dir: str | Path) -> dict[str, Any]:
    """Document every element a recorded demonstration acted on; returns what was written."""
    traj = load_trajectory(demo_dir)
    written: list[str] = []
    errors: list[str] = []
    skipped = 0
    steps = traj.steps
    platform = "phone" if traj.meta.env == "AndroidEnv" else "computer"
    for i, rec in enumerate(steps):
        action = rec.parsed_action()
        if action is None or action.terminal:
            continue
        before = Observation(screenshot=None, elements=rec.elements, text="")
        try:
            el = target_element(action, before)
        except InvalidActionError as exc:
            errors.append(f"step {rec.step}: {exc.message}")
            continue
        nxt = next((s for s in steps[i + 1 :] if s.observation), None)
        if el is None or nxt is None:
            skipped += 1
            continue
        key = doc_key(action)
        asked = agent.ask(
            "appagent/demo_doc", platform, lambda reply: parse_reflect_reply(reply, need_decision=False).documentation,
            dict(app=agent.config.app, action=action.describe(), element=el.label(),
                 before=rec.observation, after=nxt.observation, old_doc=_old_doc(agent, el, key),
                 action_kind=key.replace("_", " ")),
        )
        errors += [f"step {rec.step}, attempt {a.index + 1}: {a.problem}" for a in asked.attempts if not a.ok]
        doc = asked.value or ""
        if doc:
            agent.docs.update(el, key, doc, source="demo")
            written.append(el.uid)
    return {"documented": sorted(set(written)), "skipped": skipped, "errors": errors, "steps": len(steps)}


def record_demo(
    env: Env,
    recorder: TrajectoryRecorder,
    lines: Iterable[str],
    on_screen: Callable[[Observation], None] | None = None,
    on_error: Callable[[str], None] | None = None,
) -> int:
    """Record a person's demonstration: each line is an action (``tap(3)``), applied and logged.

    ``on_screen`` is called with every new screen (the CLI prints it); unusable lines are
    reported through ``on_error`` and skipped. Returns the number of actions recorded.
    """
    obs = env.reset(recorder.meta.task)
    if on_screen:
        on_screen(obs)
    n = 0
    for line in lines:
        line = line.strip()
        if not line:
            continue
        try:
            action = env.actions.parse(line)
            if action.terminal:
                recorder.record(obs, action, action_text=line, thought="human demonstration", done=True)
                break
            result = env.step(action)
        except (ActionParseError, InvalidActionError) as exc:
            if on_error:
                on_error(exc.message)
            continue
        recorder.record(obs, action, action_text=line, thought="human demonstration")
        n += 1
        obs = result.observation
        if on_screen:
            on_screen(obs)
    else:
        recorder.record(obs, None, done=True)
    recorder.finish("done", actions=n)
    return n
