"""Learned documents ground the typed deploy (agentlab.agents.gui_actions.grounding with ``docs``),
and a switch the episode flipped is not pushed again (agentlab.agents.appagent.typed): on the
prior itself, under the grammar with the embedded model's tokenizer, and in the typed loop with a
SCRIPTED model (agentlab.llm.testing.ScriptedChat) on the fake phone and a test-double desktop."""

from __future__ import annotations

import random

import pytest

from agentlab.agents import AppAgent, AppAgentConfig, DocStore
from agentlab.agents.appagent.survey import DEAD_END, OPENS, survey_app
from agentlab.agents.gui_actions import GuiCall, GuiChoices, GuiScreen, grounding, parse_gui_reply
from agentlab.envs import AndroidEnv
from agentlab.envs.actions.desktop import DESKTOP
from agentlab.envs.base import Element, Env, Observation, StepResult
from agentlab.llm.base import Capabilities
from agentlab.llm.testing import ScriptedChat
from agentlab.toolkits.grammar import CallGrammar

DARK = "Switch the Clock app to its dark theme."


def _home() -> list[Element]:
    """The fake clock app's home screen marks, as AndroidEnv lists them."""
    def b(i: int, text: str, uid: str) -> Element:
        return Element(i, (20, 40 + 100 * i, 520, 120 + 100 * i), "android.widget.Button", text, None, True, uid=uid)

    return [b(1, "Alarms", "alarms"), b(2, "Settings", "settings"), b(3, "About", "about"), b(4, "Ad", "ad")]


#: what the survey writes for them (test_appagent_survey checks the survey writes these)
HOME_DOCS = {1: f"{OPENS}Navigate up, 07:00, Wake up, 08:00, Gym, Add alarm",
             2: f"{OPENS}Navigate up, Vibrate, Dark theme",
             3: f"{DEAD_END}Navigate up, Clock 1.0. Licences and legal notices., Open source licences",
             4: f"{DEAD_END}Navigate up, Sponsored, Try SuperGame now!, Install now"}


def _best(prior: tuple[tuple[int, float], ...]) -> int:
    return max(prior, key=lambda p: p[1])[0]


def test_documents_ground_a_dark_theme_request_on_settings() -> None:
    assert grounding(_home(), DARK) == ()  # no label says anything of a theme: no preference
    with_docs = grounding(_home(), DARK, docs=HOME_DOCS)
    assert _best(with_docs) == 2
    p = dict(with_docs)
    assert p[2] > p[3] > p[1] == p[4]  # About's document says "Clock" (one word), Settings' two
    # a mark's own words still weigh more than its document's
    assert _best(grounding(_home(), "Open the alarms", docs=HOME_DOCS)) == 1


def test_no_push_takes_both_pushes_away() -> None:
    p = dict(grounding(_home(), DARK, docs=HOME_DOCS, no_push={2}))
    assert _best(tuple(p.items())) == 3 and p[2] == p[1] == p[4]
    assert grounding(_home(), "Open settings", no_push={2}) == ()


@pytest.fixture(scope="module")
def tokenizer():
    from transformers import AutoTokenizer

    from agentlab.llm.embedded import converted_smollm2_dir

    return AutoTokenizer.from_pretrained(converted_smollm2_dir())


def test_under_the_grammar_documents_overrule_a_mild_liking_for_the_first_mark(tokenizer) -> None:
    """A stand-in model that likes "1" by one nat (the embedded model's habit is to click element
    1): without documents it clicks Alarms, with them Settings."""
    import torch

    from tests.toolkits.test_toolkits import _walk

    one = set(tokenizer.encode("click(1)", add_special_tokens=False)) - set(tokenizer.encode("click(2)", add_special_tokens=False))

    def scores():
        out = torch.zeros((1, len(tokenizer)))
        out[0, sorted(one)] = 1.0
        return out

    screen = GuiScreen.of(Observation(screenshot=None, elements=_home()), 50, ocr=False)
    for docs, want in ((None, 1), (HOME_DOCS, 2)):
        choices = GuiChoices.build(screen, DARK, phone=True, docs=docs)
        text = _walk(choices.grammar(allow_end=False), tokenizer, random.Random(0), scores_fn=scores)
        assert parse_gui_reply(text, choices) == GuiCall("click", {"element": want}), (docs is not None, text)


def _click_prior(grammar: object) -> dict[int, float]:
    assert isinstance(grammar, CallGrammar)
    return {int(c): v for tool, _, vals in grammar.arg_prior if tool == "click" for c, v in vals}


def test_the_typed_deploy_grounds_on_the_surveyed_documents_and_leaves_a_flipped_switch(fake_adb, tmp_path) -> None:
    """The survey's documents (in the package's folder: the agent's own ``clock`` folder is empty)
    push Settings, then the Dark theme switch; once flipped, the switch is no longer pushed."""
    env = AndroidEnv(adb_port=fake_adb.port, settle=0, retry_delay=0.01)

    def relaunch() -> Observation:
        env.launch_app("com.example.clock")
        return env.reset()

    survey_app(env, DocStore("com.example.clock", tmp_path / "docs"), relaunch=relaunch)
    llm = ScriptedChat(["click(2)", "click(3)", "done()"], Capabilities(plan_grammar=True))
    # (the GUI operations at every step, as when no skill fits: skills_first off)
    agent = AppAgent(llm, AppAgentConfig(app="clock", docs_dir=tmp_path / "docs", actions="typed", skills_first=False))
    res = agent.deploy(env, DARK, None)
    assert (res.status, res.steps) == ("done", 2) and fake_adb.device.app.dark is True
    home, settings, after = (_click_prior(p.grammar) for p in llm.params)
    assert max(home, key=home.__getitem__) == 2  # Settings: its document shows "Dark theme"
    assert max(settings, key=settings.__getitem__) == 3  # the Dark theme switch
    assert after[3] < after[2]  # flipped: no push; Vibrate's "Switches ..." still shares "switch"

    plain = ScriptedChat(["click(2)", "done()"], Capabilities(plan_grammar=True))
    AppAgent(plain, AppAgentConfig(app="clock", docs_dir=tmp_path / "docs", actions="typed", use_docs=False,
                                   skills_first=False)).deploy(env, DARK, None)
    # without documents, on the screen the first episode left (Settings): only the marks' own words
    # ground the request, and the switch's row label ("Dark theme", android_ui.row_label) is one
    plain_prior = _click_prior(plain.params[0].grammar)
    assert max(plain_prior, key=plain_prior.__getitem__) == 3 and plain_prior[1] == plain_prior[2]


class _WifiPanel(Env):
    """TEST DOUBLE desktop: a "Wi-Fi" check box and an "Apply" button; ``flips`` says whether
    clicking the box changes its state (a dead control does not)."""

    actions = DESKTOP

    def __init__(self, flips: bool) -> None:
        self.flips, self.on = flips, False

    def _obs(self) -> Observation:
        return Observation(screenshot=None, elements=[
            Element(1, (0, 0, 100, 30), "check box", "Wi-Fi", None, True, uid="wifi",
                    state=("checked",) if self.on else ("unchecked",)),
            Element(2, (0, 40, 100, 70), "push button", "Apply", None, True, uid="apply")])

    def reset(self, task=None):
        return self._obs()

    def step(self, action):
        if action.element == 1 and self.flips:
            self.on = not self.on
        return StepResult(self._obs(), done=False)


@pytest.mark.parametrize("flips", [True, False])
def test_a_mark_whose_click_flipped_a_switch_is_not_pushed_again(flips: bool, tmp_path) -> None:
    """Generic (no documents, no phone): grounding pushes "Wi-Fi" for "Turn Wi-Fi on"; after the
    click flipped it, clicking again would undo it, so it is pushed no more. A click that flipped
    nothing leaves the push (the rule reads what happened, not what was clicked)."""
    llm = ScriptedChat(["click(1)", "done()"], Capabilities(plan_grammar=True))
    agent = AppAgent(llm, AppAgentConfig(app="panel", docs_dir=tmp_path / "docs", actions="typed"))
    agent.deploy(_WifiPanel(flips), "Turn Wi-Fi on", None)
    first, second = (_click_prior(p.grammar) for p in llm.params)
    assert first[1] > first[2]
    if flips:
        assert second == {}  # nothing on screen is pushed any more
    else:
        assert second[1] > second[2]
