"""Synthesized (request -> skill call) pairs for a GUI specialist, each kept only when it replays.

Issue #40's recipe for a GUI specialist, the same as the toolkits': synthesize requests in varied
wording with the call that carries each out, *run the call on a synthesized start state* and keep
the pair only when the end state is the one the request asks for, drop any request close to an
evaluation instruction, and fit the app's skill prior (:mod:`agentlab.toolkits.prior`: which skill
a request wants, from its MiniLM embedding) on what is left. The typed deployment multiplies that
prior into its choice among the app's skills (:class:`~agentlab.agents.gui_actions.GuiChoices`).

Here for the fake phone's clock app (the replay is a fraction of a second on the in-process
device, so a few hundred pairs take minutes). A desktop application's pairs would replay under
Xvfb at 10-30 s each: they come from request templates and are checked as the grammar would call
them instead (:mod:`agentlab.selfinstruct.calls.gui_templates`); the fitting is shared. The request templates were written from
the skills' own lines, by the author of the blind phone set (``data/tasks_phone_heldout``) after
that set was committed: a near-copy of any evaluation instruction is dropped
(:data:`~agentlab.selfinstruct.calls.prior.MAX_COSINE`), but the same person's habits of wording
may still be shared, which the closing note says.
"""

from __future__ import annotations

import copy
import logging
import random
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

log = logging.getLogger(__name__)

#: alarm labels and the two settings the synthesized requests use (none is an evaluation task's)
LABELS = ("Karate", "Feed cat", "Bake bread", "Piano practice", "Study", "Bus", "Water plants", "Night shift",
          "Laundry", "Meeting prep", "Vitamins", "School pickup", "Stretch", "Tea", "Podcast", "Trash day",
          "Swim class", "Homework", "Dog walk", "Choir")
SETTINGS = {"Vibrate": "vibrate", "Dark theme": "dark_theme"}

#: per skill, request templates ({label}, {hour} as "15:00", {h} as "3 pm"), and for the toggles
#: which way the request asks (on / off)
TOGGLE_ON = ("Switch on the {label} alarm.", "Enable my {label} alarm in the Clock app.",
             "I want the {label} alarm to ring again.", "Activate the alarm named {label}.",
             "Can you turn the {label} alarm on?", "Re-enable {label} in my alarms.")
TOGGLE_OFF = ("Switch off the {label} alarm but keep it in the list.", "Disable the alarm called {label}.",
              "Mute my {label} alarm for now.", "Turn the {label} alarm off.",
              "I don't need the {label} alarm to ring, deactivate it please.", "Pause the {label} alarm.")
SETTING_ASKS = {
    ("Vibrate", True): ("Turn vibration on for my alarms.", "Make the alarms vibrate again.",
                        "Enable the vibrate option in Clock settings."),
    ("Vibrate", False): ("Switch the vibrate option off.", "Alarms should not vibrate any more.",
                         "Disable vibrate in the Clock settings."),
    ("Dark theme", True): ("Enable the dark theme of the clock.", "Use the dark theme in Clock.",
                           "Put the Clock app in dark mode."),
    ("Dark theme", False): ("Disable dark mode in the Clock app.", "Go back to the light look in Clock.",
                            "Switch the dark theme off."),
}
DELETE = ("Delete my {label} alarm.", "Remove the alarm called {label} from the list.",
          "Erase the {label} alarm, I don't need it anymore.", "Throw away the {hour} {label} alarm.",
          "Clear out the {label} alarm from Clock.", "Get the {label} alarm off my phone.")
ADD = ("Create an alarm at {hour} named {label}.", "New alarm: {label} at {hour}.",
       "Wake me at {h} with an alarm called {label}.", "Schedule a {label} alarm for {hour}.",
       "Add an alarm called {label} at {hour} to my clock.", "Set an alarm for {h}, label it {label}.")


@dataclass
class GuiDraft:
    """One candidate pair: the request, the skill call that carries it out, the start state, and
    the end state the request asks for (the app's saved state, compared whole)."""

    request: str
    skill: str
    args: dict[str, str]
    start: dict[str, Any]
    expected: dict[str, Any]
    family: str = ""

    def reply(self) -> str:
        from agentlab.agents.gui_skills import call_text, load_skills

        skill = next(s for s in load_skills("clock") if s.name == self.skill)
        return call_text(skill, self.args)


def _alarm(hour: int, label: str, enabled: bool) -> dict[str, Any]:
    return {"hour": hour, "label": label, "enabled": enabled}


def _clock(hour: int) -> tuple[str, str]:
    """("15:00", "3 pm"): an hour as a time and as people say it."""
    h12 = hour % 12 or 12
    return f"{hour:02d}:00", f"{h12} {'am' if hour < 12 else 'pm'}"


def clock_drafts(n: int, seed: int = 0) -> list[GuiDraft]:
    """``n`` candidate pairs over the clock app's four skills, in turn, each on its own random
    start state (2-6 alarms, random settings)."""
    rng = random.Random(seed)
    out: list[GuiDraft] = []
    makers: list[Callable[[dict[str, Any]], GuiDraft]] = []

    def start() -> dict[str, Any]:
        labels = rng.sample(LABELS, rng.randint(2, 6))
        hours = sorted(rng.sample(range(24), len(labels)))
        return {"alarms": [_alarm(h, lab, rng.random() < 0.5) for h, lab in zip(hours, labels)],
                "vibrate": rng.random() < 0.5, "dark_theme": rng.random() < 0.5}

    def toggle(s: dict[str, Any]) -> GuiDraft:
        a = rng.choice(s["alarms"])
        end = copy.deepcopy(s)
        next(b for b in end["alarms"] if b["label"] == a["label"])["enabled"] = not a["enabled"]
        text = rng.choice(TOGGLE_OFF if a["enabled"] else TOGGLE_ON).format(label=a["label"])
        return GuiDraft(text, "toggle_alarm", {"alarm": a["label"]}, s, end, "on" if not a["enabled"] else "off")

    def setting(s: dict[str, Any]) -> GuiDraft:
        name = rng.choice(sorted(SETTINGS))
        key = SETTINGS[name]
        end = copy.deepcopy(s)
        end[key] = not s[key]
        text = rng.choice(SETTING_ASKS[(name, not s[key])])
        return GuiDraft(text, "toggle_setting", {"setting": name}, s, end, name)

    def delete(s: dict[str, Any]) -> GuiDraft:
        a = rng.choice(s["alarms"])
        end = copy.deepcopy(s)
        end["alarms"] = [b for b in s["alarms"] if b["label"] != a["label"]]
        text = rng.choice(DELETE).format(label=a["label"], hour=_clock(a["hour"])[0])
        return GuiDraft(text, "delete_alarm", {"alarm": a["label"]}, s, end)

    def add(s: dict[str, Any]) -> GuiDraft:
        label = rng.choice([x for x in LABELS if x not in {a["label"] for a in s["alarms"]}])
        hour = rng.randrange(24)
        hh, h = _clock(hour)
        end = copy.deepcopy(s)
        end["alarms"].append(_alarm(hour, label, True))
        text = rng.choice(ADD).format(label=label, hour=hh, h=h)
        return GuiDraft(text, "add_alarm", {"label": label, "hour": hh}, s, end)

    makers = [toggle, setting, delete, add]
    for i in range(n):
        out.append(makers[i % len(makers)](start()))
    return out


@dataclass
class Replayed:
    """What replaying a draft's call did: ok (the end state is the expected one), and why not."""

    ok: bool
    why: str = ""
    actions: int = 0
    extra: dict[str, Any] = field(default_factory=dict)


@contextmanager
def clock_device() -> Iterator[tuple[Any, Any]]:
    """(an AndroidEnv, the fake clock app behind it) on an in-process protocol-level fake adb server."""
    import os

    os.environ.setdefault("ADBUTILS_ADB_PATH", "/bin/false")  # never start a real adb daemon
    from agentlab.envs.android import AndroidEnv
    from agentlab.envs.testing.fake_adb import FakeAdbServer, FakeDevice

    with FakeAdbServer(FakeDevice()) as server:
        env = AndroidEnv(serial=server.device.serial, adb_port=server.port, settle=0.0, retry_delay=0.05)
        try:
            yield env, server.device.app
        finally:
            env.close()


def replay_draft(env: Any, app: Any, draft: GuiDraft) -> Replayed:
    """Put the fake app in the draft's start state (on its home screen), run the skill call as the
    typed deployment would (:func:`~agentlab.agents.gui_skills.run_skill`, request and all), and
    compare the app's state with the expected one."""
    from agentlab.agents.gui_skills import load_skills, run_skill
    from agentlab.envs.testing.fake_app import Alarm
    from agentlab.errors import AgentlabError

    s = draft.start
    app.alarms = [Alarm(a["hour"], a["label"], a["enabled"]) for a in s["alarms"]]
    app.vibrate, app.dark = s["vibrate"], s["dark_theme"]
    app.stack, app.scroll, app.selected, app.label_focused = ["home"], 0, None, False
    skill = next(k for k in load_skills("clock") if k.name == draft.skill)
    try:
        sent, result = run_skill(env, skill, draft.args, draft.request)
    except AgentlabError as exc:
        return Replayed(False, exc.message)
    if result.info.get("skill_error"):
        return Replayed(False, str(result.info["skill_error"]), len(sent))
    state = app.state()
    if state != draft.expected:
        return Replayed(False, "end state differs from the one asked for", len(sent))
    return Replayed(True, actions=len(sent))


def gui_priors_dir() -> Any:
    """Where the fitted skill priors live: ``data/gui_priors/<app>/`` (``prior.json`` + weights)."""
    from agentlab.paths import data_dir

    return data_dir() / "gui_priors"


def build_skill_prior(app: str, n: int, *, seed: int = 0, out: Any = None, pairs_out: Any = None,
                      max_cosine: float | None = None) -> dict[str, Any]:
    """Synthesize ``n`` drafts for ``app``, check each (the clock's: replayed on the fake device; a
    desktop app's: as the grammar would call it, :mod:`~agentlab.selfinstruct.calls.gui_templates`),
    drop those that fail or sit near an evaluation instruction, write the kept pairs (``pairs_out``,
    JSON lines: request, reply, skill, max_cosine) and fit the app's skill prior into ``out``;
    returns the prior's card. An app with no generator is one clear line."""
    import time

    from tqdm import tqdm

    from agentlab.errors import ConfigError
    from agentlab.llm.similarity import default_encoder
    from agentlab.selfinstruct.calls.gui_templates import desktop_drafts, has_templates
    from agentlab.selfinstruct.calls.leakage import NearCopyFilter, evaluation_instructions
    from agentlab.selfinstruct.calls.prior import MAX_COSINE

    if app != "clock" and not has_templates(app):
        raise ConfigError(f"no (request -> skill call) generator for app {app!r}: the clock app has one, and each "
                          "app with request templates (data/gui_priors/templates/<app>.yaml)")
    limit = MAX_COSINE if max_cosine is None else max_cosine
    t0 = time.perf_counter()
    encoder = default_encoder()
    kept: list[dict[str, Any]] = []
    failed: dict[str, int] = {}
    near = 0
    if app != "clock":  # a desktop app: pairs checked as the grammar would call them, not replayed (gui_templates)
        pairs, skipped = desktop_drafts(app, n, seed=seed)
        leakage = NearCopyFilter(encoder, evaluation_instructions(), threshold=1.0).check([p["request"] for p in pairs])
        for p, cos in zip(pairs, leakage.max_cosine):
            if float(cos) > limit:
                near += 1
                continue
            kept.append({"request": p["request"], "reply": p["reply"], "skill": p["skill"], "app": app,
                         "max_cosine": round(float(cos), 4)})
        extra = {"generator": "agentlab.selfinstruct.calls.gui_templates.desktop_drafts",
                 "replayed": "no: each pair's call is checked as the grammar offers it (the skill, its parameters, "
                             "request values of the learned shapes); each skill's demonstration replays under "
                             "`agentlab skills check`", "skills_left_out": skipped}
        return _fit_and_save(app, kept, n, seed, limit, near, failed, extra, encoder, t0, out, pairs_out)
    drafts = clock_drafts(n, seed=seed)
    leakage = NearCopyFilter(encoder, evaluation_instructions(), threshold=1.0).check([d.request for d in drafts])
    with clock_device() as (env, dev_app):
        for d, cos in tqdm(list(zip(drafts, leakage.max_cosine)), desc=f"replaying {app} pairs", unit="pair"):
            if float(cos) > limit:
                near += 1
                continue
            r = replay_draft(env, dev_app, d)
            if not r.ok:
                failed[d.skill] = failed.get(d.skill, 0) + 1
                log.info("dropped (%s): %s -> %s: %s", d.skill, d.request, d.reply(), r.why)
                continue
            kept.append({"request": d.request, "reply": d.reply(), "skill": d.skill, "app": app,
                         "max_cosine": round(float(cos), 4), "actions": r.actions})
    return _fit_and_save(app, kept, n, seed, limit, near, failed,
                         {"generator": "agentlab.selfinstruct.calls.gui.clock_drafts"}, encoder, t0, out, pairs_out)


def _fit_and_save(app: str, kept: list[dict[str, Any]], n: int, seed: int, limit: float, near: int,
                  failed: dict[str, int], extra: dict[str, Any], encoder: Any, t0: float, out: Any,
                  pairs_out: Any) -> dict[str, Any]:
    """Write the kept pairs, fit the prior on them and save it with its card; returns the card."""
    import hashlib
    import time
    from pathlib import Path

    from agentlab.errors import ConfigError
    from agentlab.fileio import write_jsonl
    from agentlab.toolkits.prior import fit

    if not kept:
        raise ConfigError(f"{app}: no synthesized pair was kept")
    pairs_path = Path(pairs_out) if pairs_out is not None else gui_priors_dir() / f"{app}.pairs.jsonl"
    pairs_path.parent.mkdir(parents=True, exist_ok=True)
    write_jsonl(pairs_path, kept)
    card = {"encoder": encoder.model_id, "app": app, "pairs": pairs_path.name,
            "pairs_sha256": hashlib.sha256(pairs_path.read_bytes()).hexdigest(), "drafts": n, "seed": seed,
            "max_cosine": limit, "left_out_near_evaluation": near, "left_out_failed_replay": failed, **extra}
    texts = [p["request"] for p in kept]
    # a desktop app's prior reads the words too (toolkits.prior.word_features); the clock's was
    # fitted and measured on its embedding alone and stays so
    prior = fit(encoder.encode(texts), [p["skill"] for p in kept], card=card, texts=None if app == "clock" else texts)
    prior.card["build_seconds"] = round(time.perf_counter() - t0, 1)
    prior.save(Path(out) if out is not None else gui_priors_dir() / app)
    return prior.card
