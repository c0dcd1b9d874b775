"""Every runner checks its ``runner_options`` through one validator (agents.base.runner_config),
so a bad option reads the same whichever runner it is: the document, the option, the known ones."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from agentlab.agents.base import AGENTS, agent_class, build_agent
from agentlab.errors import ConfigError
from agentlab.pool import AgentPool
from agentlab.pool.document import AgentDocument


def _doc(runner: str) -> AgentDocument:
    return dataclasses.replace(AgentPool.from_dir(None).get("ClockAgent"), path=Path("data/agents/Probe.md"), runner=runner,
                               runner_options={"toolkit": "sheets"} if runner == "tools" else {})


@pytest.mark.parametrize("runner", sorted(AGENTS))
def test_a_misspelt_option_is_one_line_naming_the_document_and_the_known_options(runner: str) -> None:
    with pytest.raises(ConfigError) as exc:
        build_agent(_doc(runner), {"colour": "blue"})
    msg = str(exc.value)
    assert msg.startswith("data/agents/Probe.md: runner_options.colour: unknown key"), msg
    assert "known: " in msg and "seed" in msg.split("known: ")[1] and "\n" not in msg


@pytest.mark.parametrize("runner", sorted(AGENTS))
def test_a_bad_value_names_the_option_and_what_was_given(runner: str) -> None:
    with pytest.raises(ConfigError, match=r"Probe.md: runner_options.seed: .*\(got 'x'\)"):
        agent_class(runner)(_doc(runner), {**_doc(runner).runner_options, "seed": "x"})
