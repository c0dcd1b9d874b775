"""Synthesized (request -> skill call) pairs for the clock's GUI specialist (issue #40): each call is
replayed on its own start state on the fake device and kept only when the end state is the asked
one; the skill prior fitted on them is read by the typed deployment, per ask."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentlab.selfinstruct.calls.gui import build_skill_prior, clock_device, clock_drafts, replay_draft


def test_every_skill_gets_drafts_that_replay_and_a_wrong_expectation_is_caught() -> None:
    drafts = clock_drafts(8, seed=3)
    assert {d.skill for d in drafts} == {"toggle_alarm", "toggle_setting", "delete_alarm", "add_alarm"}
    with clock_device() as (env, app):
        assert all(replay_draft(env, app, d).ok for d in drafts), [replay_draft(env, app, d).why for d in drafts]
        bad = drafts[3]  # an add_alarm draft whose expected hour is off by one
        assert bad.skill == "add_alarm"
        bad.expected["alarms"][-1]["hour"] = (bad.expected["alarms"][-1]["hour"] + 1) % 24
        r = replay_draft(env, app, bad)
        assert not r.ok and "differs" in r.why


def test_the_prior_is_fitted_on_the_kept_pairs_and_records_where_they_came_from(tmp_path: Path) -> None:
    card = build_skill_prior("clock", 12, seed=5, out=tmp_path / "prior", pairs_out=tmp_path / "pairs.jsonl")
    rows = [json.loads(line) for line in (tmp_path / "pairs.jsonl").read_text().splitlines()]
    assert card["examples"] == len(rows) > 0 and card["drafts"] == 12 and card["pairs_sha256"]
    assert all(r["max_cosine"] <= card["max_cosine"] and r["reply"].startswith(r["skill"] + "(") for r in rows)
    assert set(json.loads((tmp_path / "prior" / "prior.json").read_text())["names"]) <= {
        "toggle_alarm", "toggle_setting", "delete_alarm", "add_alarm"}
    from agentlab.errors import ConfigError

    with pytest.raises(ConfigError, match="no .* generator for app 'vlc'"):
        build_skill_prior("vlc", 4)  # one skill, no templates


def test_the_typed_deployment_reads_the_shipped_prior_per_ask_and_a_corrupt_one_is_one_line(tmp_path: Path) -> None:
    from agentlab.agents.appagent.core import AppAgentConfig
    from agentlab.agents.appagent.typed import _due, skill_biases
    from agentlab.agents.gui_skills import load_skills
    from agentlab.errors import ConfigError

    skills = tuple(load_skills("clock"))
    cfg = AppAgentConfig(app="clock")
    texts = ["Please get rid of the Tennis alarm and make a new alarm called Tea at 16:00.",
             "Please get rid of the Tennis alarm", "make a new alarm called Tea at 16:00"]
    whole, first, second = skill_biases(cfg, skills, texts)
    assert max(first.values()) == 0.0 and first["delete_alarm"] == 0.0
    assert second["add_alarm"] == 0.0
    assert _due([whole, first, second], 0, 2) is first and _due([whole, first, second], 1, 2) is second
    assert _due([whole, first, second], 2, 2) is whole and _due([], 0, 1) is None
    assert skill_biases(AppAgentConfig(app="clock", skill_prior="none"), skills, texts) == []
    (tmp_path / "prior.json").write_text("{not json")
    with pytest.raises(ConfigError):
        skill_biases(AppAgentConfig(app="clock", skill_prior=str(tmp_path)), skills, texts)


# -- a desktop app's pairs: from templates, checked as the grammar would call them ----------------
def test_desktop_pairs_name_a_learned_skill_with_request_values_of_its_shapes() -> None:
    import re

    from agentlab.agents.gui_skills import fits_shape, load_skills
    from agentlab.selfinstruct.calls.gui_templates import desktop_drafts

    for app in ("calc", "writer", "impress", "gimp", "os", "thunderbird", "chrome"):
        library = {s.name: s for s in load_skills(app)}
        pairs, skipped = desktop_drafts(app, 24, seed=1)
        assert len(pairs) == 24 and {p["skill"] for p in pairs} <= set(library)
        # the skills of the library without templates are named, never silently missing
        assert set(library) - {p["skill"] for p in pairs} <= set(skipped), app
        for p in pairs:
            skill = library[p["skill"]]
            assert sorted(p["args"]) == sorted(skill.params)
            for name, value in p["args"].items():
                if name not in skill.on_screen:
                    assert re.search(r"(?<!\w)" + re.escape(value) + r"(?!\w)", p["request"], re.I), p
                if name in skill.shapes:
                    assert fits_shape(value, skill.shapes[name]), p
        assert desktop_drafts(app, 24, seed=1)[0] == pairs  # a seed is a pair set


def test_bad_desktop_templates_are_one_line_naming_the_file(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from agentlab.errors import ConfigError
    from agentlab.selfinstruct.calls import gui_templates

    monkeypatch.setattr(gui_templates, "templates_dir", lambda: tmp_path)
    (tmp_path / "calc.yaml").write_text("pools: {cell: [A1]}\nskills:\n  set_cell:\n    args: {cell: '{cell}'}\n"
                                        "    requests: ['Put {value} in {cell}.']\n")
    with pytest.raises(ConfigError, match=r"slot \{value\} has no pool") as exc:
        gui_templates.desktop_drafts("calc", 4)
    assert "calc.yaml" in str(exc.value)
    (tmp_path / "calc.yaml").write_text("pools: {cell: [A1], value: ['7']}\nskills:\n  set_cell:\n    args: {cell: '{cell}'}\n"
                                        "    requests: ['Put {value} in {cell}.']\n")
    with pytest.raises(ConfigError, match=r"the templates fill \(cell\) but the skill takes \(cell, value\)"):
        gui_templates.desktop_drafts("calc", 4)
    (tmp_path / "calc.yaml").write_text("pools: [")
    with pytest.raises(ConfigError, match="not a request template file"):
        gui_templates.desktop_drafts("calc", 4)


def test_a_desktop_prior_is_fitted_on_template_pairs_and_says_they_were_not_replayed(tmp_path: Path) -> None:
    card = build_skill_prior("calc", 16, seed=2, out=tmp_path / "prior", pairs_out=tmp_path / "pairs.jsonl")
    rows = [json.loads(line) for line in (tmp_path / "pairs.jsonl").read_text().splitlines()]
    assert card["examples"] == len(rows) > 0 and card["replayed"].startswith("no")
    assert card["generator"].endswith("desktop_drafts") and card["left_out_failed_replay"] == {}
    assert {r["skill"] for r in rows} <= {"set_cell", "save_keep_format", "rename_sheet", "delete_row", "fill_down"}


def test_context_phrases_go_around_a_share_of_the_asks_and_never_hold_a_value(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from agentlab.errors import ConfigError
    from agentlab.selfinstruct.calls import gui_templates
    from agentlab.selfinstruct.calls.gui_templates import with_context

    assert with_context("Star the message Rent reminder.", "In Thunderbird,", "please") == \
        "In Thunderbird, star the message Rent reminder, please."
    assert with_context("B7 should read 12", "In the spreadsheet,", None) == "In the spreadsheet, B7 should read 12"
    assert with_context("I need 17 in C4?", "Quick fix:", "thanks") == "Quick fix: I need 17 in C4, thanks?"
    pairs, _ = gui_templates.desktop_drafts("thunderbird", 60, seed=3)
    framed = [p for p in pairs if any(p["request"].startswith(b) for b in gui_templates.load_templates("thunderbird").before)]
    assert 0 < len(framed) < len(pairs)  # a share, not all
    monkeypatch.setattr(gui_templates, "templates_dir", lambda: tmp_path)
    (tmp_path / "calc.yaml").write_text("pools: {cell: [A1]}\ncontext: {before: ['In {cell},']}\nskills:\n"
                                        "  set_cell:\n    args: {cell: '{cell}'}\n    requests: ['Clear {cell}.']\n")
    with pytest.raises(ConfigError, match="context holds no values"):
        gui_templates.load_templates("calc")
