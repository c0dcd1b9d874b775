"""The workspace action space: the code agent's reply protocol, and the WorkspaceEnv observation."""

from __future__ import annotations

import pytest

from agentlab.envs.actions import SPACES, action_space
from agentlab.envs.actions.base import Action
from agentlab.envs.actions.workspace import WORKSPACE, Done, Fail, RunProgram
from agentlab.envs.workspace import Workspace, WorkspaceConfig
from agentlab.envs.workspace_env import WorkspaceEnv, trim
from agentlab.errors import ActionParseError, InvalidActionError


def test_space_is_registered_and_actions_round_trip() -> None:
    assert action_space("workspace") is WORKSPACE and SPACES["workspace"] is WORKSPACE
    assert WORKSPACE.terminal is Done
    for action in (RunProgram("bash", "ls\n"), Done(), Fail()):
        assert action in WORKSPACE and Action.from_dict(action.to_dict()) == action
    assert "DONE" in WORKSPACE.doc() and "```python" in WORKSPACE.doc()
    assert WORKSPACE.parse(WORKSPACE.example()) == RunProgram("python", "print(open('notes.txt').read())\n")


@pytest.mark.parametrize(
    ("text", "program", "end"),
    [
        ("look\n```python\nprint(1)\n```", RunProgram("python", "print(1)\n"), None),
        ("```bash\nls\n```\nDONE", RunProgram("bash", "ls\n"), Done()),
        ("```sh\nls\n```\n\n**DONE**\n", RunProgram("bash", "ls\n"), Done()),
        ("All finished.\nDONE", None, Done()),
        ("I cannot do this.\nFAIL", None, Fail()),
        ("DONE would be nice\n```py\nx = 1\n```", RunProgram("python", "x = 1\n"), None),
    ],
)
def test_reply_protocol(text: str, program: RunProgram | None, end: Action | None) -> None:
    reply = WORKSPACE.parse_reply(text)
    assert (reply.program, reply.end) == (program, end)


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("```python\na=1\n```\n```bash\nls\n```", "2 fenced blocks"),
        ("just thinking aloud", "no program and no end"),
        ("```\nls\n```", "open it with ```python or ```bash"),
        ("```ruby\nputs 1\n```", "'ruby'"),
        ("```python\n\n```", "empty"),
        ("```python\nprint(1)\n", "not closed"),
    ],
)
def test_unusable_replies_say_why(text: str, why: str) -> None:
    with pytest.raises(ActionParseError, match=why.replace("(", r"\(").replace("`", "`")):
        WORKSPACE.parse_reply(text)


def test_env_observation_lists_files_and_last_program(tmp_path) -> None:
    ws = Workspace(tmp_path / "ws", WorkspaceConfig(sandbox="none"))
    ws.write_text("a.txt", "hello")
    env = WorkspaceEnv(ws, max_output_chars=50)
    obs = env.reset("t")
    assert "Files in the workspace (1)" in obs.text and "a.txt  5 B" in obs.text and "Last program" not in obs.text
    res = env.step(RunProgram("python", "import sys\nprint('x' * 120)\nsys.exit('boom')"))
    assert not res.done and res.info["returncode"] == 1 and res.info["ok"] is False
    assert set(res.info) == {"returncode", "ok", "duration_s", "timed_out", "stdout", "stderr"}
    assert 0 < res.info["duration_s"] < 30 and res.info["timed_out"] is False
    # the program's output rides along in the step info (trimmed like the observation) for the trajectory
    assert res.info["stderr"].strip() == "boom" and "[... 71 bytes cut (the output was 121 bytes" in res.info["stdout"]
    text = res.observation.text
    assert "exit code 1" in text and "71 bytes cut" in text and "boom" in text
    assert env.step(Done()).done
    with pytest.raises(InvalidActionError, match="not a workspace action"):
        from agentlab.envs.actions.phone import Tap

        env.step(Tap(1))
    assert trim("abcdef", 3) == "a\n[... 3 bytes cut (the output was 6 bytes; its start and end are shown) ...]\nef"
