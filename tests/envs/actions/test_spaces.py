"""Action spaces as objects: what the env hands out, what a name resolves to, how a space grows."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from agentlab.envs import AndroidEnv
from agentlab.envs.actions import SPACES, action_space
from agentlab.envs.actions.base import Action
from agentlab.envs.actions.desktop import DESKTOP, Click, Stop
from agentlab.envs.actions.phone import PHONE, Finish, Swipe, Tap
from agentlab.envs.actions.space import ActionSpace
from agentlab.errors import ActionParseError, ConfigError


@pytest.mark.parametrize("space", [PHONE, DESKTOP], ids=lambda s: s.name)
def test_doc_example_parse_round_trip(space: ActionSpace) -> None:
    doc = space.doc().splitlines()
    assert len(doc) == len(space.classes) and all(line.startswith("- ") for line in doc)
    for cls, line in zip(space.classes, doc, strict=True):
        assert line == f"- {cls.doc_line()}" and line.startswith(f"- {cls.call_name}(")
        action = space.parse(f"Thought: go\nAction: {cls.doc_example()}")
        assert type(action) is cls and action in space and space.accepts(action)
        assert space.parse(action.to_call()) == action == Action.from_dict(action.to_dict())
    assert type(space.parse(space.example())) is space.classes[0]
    assert space.example() in space.doc()


def test_example_and_terminal_per_space() -> None:
    assert (PHONE.example(), DESKTOP.example()) == ("tap(5)", "click(3)")
    assert (PHONE.terminal, DESKTOP.terminal) == (Finish, Stop)
    assert PHONE.parse("FINISH") == Finish() and DESKTOP.parse("FINISH") == Stop()


def test_membership_separates_the_spaces() -> None:
    assert Tap(1) in PHONE and Tap(1) not in DESKTOP
    assert Click(element=1) in DESKTOP and not PHONE.accepts(Click(element=1))
    assert "tap(1)" not in PHONE  # text is parsed, never a member
    with pytest.raises(ActionParseError, match="click is not a phone action"):
        PHONE.parse("click(2)")


def test_names_resolve_to_the_objects() -> None:
    assert action_space("phone") is PHONE and action_space("desktop") is DESKTOP
    assert set(SPACES) == {"phone", "desktop", "workspace"}
    assert all(cls.space == space.name for space in SPACES.values() for cls in space.classes)


@pytest.mark.parametrize("name", ["android", "Phone", "", None])
def test_unknown_space_name_is_a_config_error_naming_the_known_spaces(name: object) -> None:
    with pytest.raises(ConfigError) as info:
        action_space(name, where="run.yaml:3")  # type: ignore[arg-type]
    msg = str(info.value)
    assert msg.startswith("run.yaml:3: unknown action space") and repr(name) in msg
    assert "known spaces: desktop, phone" in msg


def test_envs_hand_out_their_space(fake_adb) -> None:  # type: ignore[no-untyped-def]
    assert AndroidEnv(adb_port=fake_adb.port).actions is PHONE


def test_a_new_space_is_one_module_of_classes() -> None:
    """What the next space needs: an ActionSpace, decorated classes; doc, example and parse follow."""
    toy = ActionSpace("toy")

    @toy.action("toy_wave", "wave")
    @dataclass(frozen=True)
    class Wave(Action):
        """toy_wave(times: int) - wave, e.g. toy_wave(2)."""

        times: int = 1

    @toy.action("toy_done")
    @dataclass(frozen=True)
    class Done(Action):
        """toy_done() - end, e.g. toy_done()."""

        terminal = True

    assert toy.doc() == "- toy_wave(times: int) - wave, e.g. toy_wave(2).\n- toy_done() - end, e.g. toy_done()."
    assert toy.parse("Action: Wave(3)") == Wave(3) and toy.parse("FINISH") == Done()
    assert Action.from_dict(Wave(3).to_dict()) == Wave(3) and Wave(3) in toy and Wave(3) not in PHONE
    with pytest.raises(ActionParseError, match="tap is not a toy action"):
        toy.parse("tap(2)")
    with pytest.raises(TypeError, match="already"):
        toy.action("tap")(type("Tap2", (Swipe,), {}))  # a record name belongs to one class
