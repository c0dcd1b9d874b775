"""AppAgent's deployment over typed GUI actions (``actions="typed"``): with a SCRIPTED model
(agentlab.llm.testing.ScriptedChat) the loop's branches — the grammar or the tools each step gets,
refusals fed back, the expansion to env actions, done/fail — and, under Xvfb, the embedded
SmolLM2 on the GTK demo app: every reply is a valid typed action on a visible mark."""

from __future__ import annotations

import pytest

from agentlab.agents import AppAgent, AppAgentConfig
from agentlab.agents.appagent.runner import GuiRunner
from agentlab.envs.actions.desktop import DESKTOP, Click, Type
from agentlab.envs.base import Element, Env, Observation, StepResult
from agentlab.llm.base import Capabilities
from agentlab.llm.testing import ScriptedChat
from agentlab.toolkits.grammar import CallGrammar
from agentlab.envs.trajectory import load_trajectory

PLACEHOLDER = "Action: <one action call such as click(3), or FINISH if the task is complete>"


class _Form(Env):
    """TEST DOUBLE desktop: a Greet button and a Name field; remembers what it was sent."""

    actions = DESKTOP

    def __init__(self) -> None:
        self.sent: list[object] = []

    def _obs(self) -> Observation:
        return Observation(screenshot=None, elements=[
            Element(1, (0, 0, 100, 30), "push button", "Greet", None, True),
            Element(2, (0, 40, 200, 70), "text", "Name", None, False, focusable=True)])

    def reset(self, task=None):  # type: ignore[no-untyped-def]
        return self._obs()

    def step(self, action):  # type: ignore[no-untyped-def]
        self.obs = self._obs()
        self.obs.element(action.element)  # an unknown number is the env's refusal, as DesktopEnv's
        self.sent.append(action)
        return StepResult(self.obs, done=False)


def _agent(llm, tmp_path, **kw) -> AppAgent:  # type: ignore[no-untyped-def]
    return AppAgent(llm, AppAgentConfig(app="form", docs_dir=tmp_path / "docs", actions="typed", **kw))


def test_a_local_model_gets_the_screens_grammar_and_its_calls_become_env_actions(tmp_path) -> None:
    llm = ScriptedChat(["click(99)", "type(2, 'Ada')", "click(1)", "done()"], Capabilities(plan_grammar=True))
    env = _Form()
    res = _agent(llm, tmp_path).deploy(env, 'Greet "Ada"', tmp_path / "ep")
    assert (res.status, res.steps) == ("done", 2), res.error
    assert env.sent == [Type("Ada", element=2), Click(element=1)]
    first, later = llm.params[0].grammar, llm.params[2].grammar
    assert isinstance(first, CallGrammar) and isinstance(later, CallGrammar)
    assert first.tools["click"] == (("1", "2"),) and first.tools["type"][0] == ("2",)  # only the field takes text
    assert "'Ada'" in (first.tools["type"][1] or ()) and "done" not in first.tools  # nothing is done yet
    assert "done" in later.tools and llm.params[1].temperature > 0  # the retry after click(99) samples
    t = load_trajectory(tmp_path / "ep")
    assert "one of the numbers on screen" in (t.steps[0].error or "")
    assert [s.info.get("gui_call") for s in t.steps if s.action] == ["type(2, \"Ada\")", "click(1)", "done()"]
    assert t.steps[1].info["expanded"] == ['type("Ada", element=2)']
    assert t.meta.status == "done"


def test_an_endpoint_gets_the_same_choices_as_tools(tmp_path) -> None:
    llm = ScriptedChat(["click(element=1)", "fail(reason='no such button')"], Capabilities(tool_calls=True))
    res = _agent(llm, tmp_path).deploy(_Form(), "Greet", None)
    assert res.status == "failed" and res.error == "the agent gave up: no such button"
    tools = {t["function"]["name"]: t["function"]["parameters"]["properties"] for t in llm.params[0].tools}
    assert tools["click"]["element"]["enum"] == [1, 2] and llm.params[0].grammar is None
    assert "fail" in {t["function"]["name"] for t in llm.params[1].tools}


def test_the_placeholder_is_refused_and_the_episode_bounded(tmp_path) -> None:
    """A plain model (no grammar, no tools) copying the prompt's placeholder takes no action."""
    llm = ScriptedChat([PLACEHOLDER, PLACEHOLDER])
    env = _Form()
    res = _agent(llm, tmp_path, max_retries=1).deploy(env, "Greet", None)
    assert res.status == "failed" and res.steps == 0 and "no action call" in (res.error or "") and env.sent == []


def test_the_desktop_runner_takes_typed_actions_by_default_and_raw_as_an_option() -> None:
    from agentlab.pool.document import AgentDocument

    doc = AgentDocument(name="GtkAgent", platform="desktop", interface="GUI", modality="text", base_model="",
                        domain="gtk", supports_extension=False, applications="", capabilities="", limitations="",
                        demonstrations=())
    assert GuiRunner(doc).config.actions == "typed"  # the desktop specialists' default (#40)
    assert GuiRunner(doc, {"actions": "raw"}).config.actions == "raw"  # the raw-action ablation


@pytest.mark.xvfb
@pytest.mark.timeout(240)
def test_the_embedded_model_only_replies_with_valid_actions_on_the_gtk_demo(backend, xdisplay, demo_app,
                                                                           needs_a11y, tmp_path) -> None:
    """The symptom of #40: the raw loop's replies were the prompt's placeholder. Under the grammar
    every reply is a typed action on a mark of the screen it was asked about."""
    from agentlab.envs.desktop import DesktopEnv

    env = DesktopEnv(display=xdisplay, app="demo_gtk")
    env.observe_until(lambda o: any(e.text == "Add one" for e in o.elements), timeout_s=15)
    agent = _agent(backend, tmp_path, max_steps=2, max_retries=0, max_new_tokens=32, use_docs=False)
    res = agent.deploy(env, "Add one to the counter", tmp_path / "ep")
    t = load_trajectory(tmp_path / "ep")
    acted = [s for s in t.steps if s.action]
    assert res.steps == 2 and res.llm_calls == 2 and not [s.error for s in t.steps if s.error]
    for s in acted:
        assert s.info["gui_call"].split("(")[0] in {"click", "type", "key", "scroll", "select"}
        n = s.parsed_action().element_ref  # type: ignore[union-attr]
        assert n is None or n in {e.id for e in s.elements}
    assert demo_app.state()["count"] >= 0  # what it did is reported, not required (see docs/failures.md)
