"""A team's settings are checked by the model its registry entry names, whoever fills them (a
YAML mapping, ``ExecOptions``, ``agentlab exec --team-option``), and the run hands a team the
person's callback only when those settings ask a person. Nothing here runs an episode."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from agentlab.errors import ConfigError
from agentlab.run.episode import ExecOptions, suite_manifest
from agentlab.tasks.spec import load_task, tasks_dir
from agentlab.teams.base import TEAMS, TeamSettings, team_settings
from agentlab.teams.cola.options import ColaOptions

from .conftest import TeamScript


def _exec(tmp_path: Path, *args: str):  # type: ignore[no-untyped-def]
    from typer.testing import CliRunner

    from agentlab.cli import _mount, app

    _mount()
    return CliRunner().invoke(app, ["exec", "--tasks", str(tasks_dir() / "csv-sales-summary.json"),
                                    "--out", str(tmp_path / "run"), *args])


def test_every_registered_settings_model_is_a_team_settings_with_defaults() -> None:
    for name, entry in TEAMS.items():
        settings = team_settings(name)
        assert (settings is None) == (entry.settings is None), name
        assert settings is None or (isinstance(settings, TeamSettings) and not settings.asks_person)


def test_a_mapping_is_checked_by_the_teams_own_model() -> None:
    options = ExecOptions(team="cola", team_settings={"max_retries": 3, "interaction": "passive"})
    cola = options.settings(ColaOptions)
    assert (cola.max_retries, cola.interaction, cola.asks_person) == (3, "passive", True)
    assert ExecOptions(team="cola").settings(ColaOptions) == ColaOptions()  # its defaults when none are given
    with pytest.raises(ConfigError, match=r"team 'cola' settings: .*max_retries"):
        ExecOptions(team="cola", team_settings={"max_retries": -1})
    with pytest.raises(ConfigError, match=r"team 'cola' settings: .*no_such_key"):
        ExecOptions(team="cola", team_settings={"no_such_key": 1})
    with pytest.raises(ConfigError, match="team 'single' takes no settings"):
        ExecOptions(team="single", team_settings={"max_retries": 1})
    # a study switching the team off (dataclasses.replace) keeps no other team's settings
    assert replace(ExecOptions(team="cola", team_settings={"max_retries": 2}), team=None).team_settings is None


def test_the_manifest_records_a_teams_settings_under_its_name_and_nothing_without_one() -> None:
    task = load_task(tasks_dir() / "csv-sales-summary.json")
    from agentlab.pool import AgentPool

    pool, llm = AgentPool.from_dir(None), TeamScript([], [])
    with_team = suite_manifest([task], pool=pool, models=llm, options=ExecOptions(team="cola", team_settings={"max_retries": 2}))
    assert with_team.options["cola"] == ColaOptions(max_retries=2).model_dump(mode="json")
    assert with_team.options["team"] == "cola" and "team_settings" not in with_team.options
    alone = suite_manifest([task], pool=pool, models=llm, options=ExecOptions())
    assert not {"cola", "team_settings"} & set(alone.options) and alone.options["team"] is None


@pytest.mark.parametrize(("args", "says"), [
    (["--team", "cola", "--team-option", "no_such_key=1"], "team 'cola' settings: "),
    (["--team", "cola", "--cola-option", "no_such_key=1"], "team 'cola' settings: "),  # its earlier name still works
    (["--team", "cola", "--team-option", "max_retries"], "--team-option must be KEY=VALUE"),
    (["--team", "single", "--team-option", "max_retries=1"], "team 'single' takes no settings"),
    (["--team-option", "max_retries=1"], "they need --team"),
    (["--team", "cola", "--interaction", "sometimes"], "team 'cola' settings: "),
    # answers for a team that will ask nobody were silently dropped before
    (["--team", "cola", "--answers", "answers.txt"], "--answers: --team cola asks nobody with these settings"),
])
def test_exec_refuses_team_settings_it_cannot_use_in_one_line(tmp_path: Path, args: list[str], says: str) -> None:
    res = _exec(tmp_path, *args)
    assert res.exit_code != 0 and isinstance(res.exception, ConfigError) and says in str(res.exception), res.output
    assert not (tmp_path / "run").exists()  # refused before anything was written
