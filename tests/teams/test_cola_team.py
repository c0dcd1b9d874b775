"""The COLA team end to end on a real workspace task, its model replies scripted per role.

csv-sales-summary: read sales.csv, write report.xlsx. The reference program is the correct
agent; a "wrong" agent writes notes.txt instead. Each test asserts what the team did next
(retry, backtrack, question, stop) and what the row and the trajectory record of it.
"""

from __future__ import annotations

import json
from pathlib import Path


from agentlab.run.episode import ExecOptions, run_task
from agentlab.tasks.spec import load_task, tasks_dir
from agentlab.llm.base import ChatMessage
from agentlab.dialogue.person import ScriptedAnswers
from agentlab.teams.cola.options import ColaOptions
from agentlab.envs.trajectory import load_trajectory

from .conftest import TeamScript, py

TASK = load_task(tasks_dir() / "csv-sales-summary.json")
assert TASK.reference_solution is not None
SOLVE = py(TASK.reference_solution.code)
WRONG = py("open('notes.txt', 'w').write('I looked at the sales')")
YES, NO = "Verdict: yes\nReason: report.xlsx holds the summary", "Verdict: no\nReason: report.xlsx was not written"
ONE_STEP = "1. Write the per-region sales summary into report.xlsx"
TWO_STEPS = "1. Write the per-region sales summary into report.xlsx\n2. Check the summary sheet"
READ = py("print(open('sales.csv').read().count(chr(10)))")  # a harmless step: its output is the effect


def _options(**cola: object) -> ExecOptions:
    return ExecOptions(team="cola", max_steps=3, team_settings=ColaOptions(**cola))  # type: ignore[arg-type]


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and not p.relative_to(root).parts[0].startswith(".agentlab")}


def _team_roles(episode: Path) -> list[dict]:
    return [m for rec in load_trajectory(episode / "team").steps for m in rec.info.get("roles", [])]


def test_the_reviewer_rejects_a_step_and_the_team_retries_on_restored_files(tmp_path, pool) -> None:
    llm = TeamScript(planner=[ONE_STEP], agent=[WRONG, SOLVE], reviewer=[NO, YES])
    row = run_task(TASK, pool=pool, llm=llm, out_dir=tmp_path, options=_options())
    assert row["error"] is None and row["success"] is True and row["status"] == "done"
    assert (row["reviews"], row["retries"], row["reassignments"], row["backtracks"], row["questions"]) == (2, 1, 0, 0, 0)
    # the retry was told why, and ran on the files as they were before the step: notes.txt is gone
    assert "report.xlsx was not written" in llm.first_user_text("agent", 1)
    episode = tmp_path / row["trajectory"]
    assert not (episode / "workspace" / "notes.txt").exists()
    assert len(row["step_outcomes"]) == 1 and row["step_outcomes"][0]["success"] is True
    assert row["llm_calls"] == 2 + 1 + 2 and row["attempts"] == 2  # both attempts and the team's calls are paid for
    agent = row["plan"][0]["agent"]
    assert (episode / f"step-1-{agent}-try1" / "traj.jsonl").exists() and (episode / f"step-1-{agent}" / "traj.jsonl").exists()
    assert [m["verdict"] for m in _team_roles(episode) if m["role"] == "reviewer"] == ["no", "yes"]
    reviews = [rec for rec in load_trajectory(episode / "team").steps if "short_term" in rec.info and rec.info.get("attempt")]
    assert any(m["role"] == "reviewer" and "not written" in m["text"] for m in reviews[1].info["short_term"])  # memory recorded


def test_backtracking_to_step_1_restores_the_workspace_byte_for_byte_and_continues(tmp_path, pool) -> None:
    start = tmp_path / "start"
    TASK.prepare(start)
    seen: dict[str, dict[str, bytes]] = {}

    def solve_after_backtrack(messages: list[ChatMessage]) -> str:
        ws = Path(tmp_path / "episodes" / TASK.id / "workspace")
        seen["at backtrack"] = _tree(ws)
        return SOLVE

    llm = TeamScript(planner=[TWO_STEPS], agent=[WRONG, READ, solve_after_backtrack, READ], reviewer=[YES, YES, YES, YES])
    answers = ScriptedAnswers.of(["yes", "backtrack 1: write report.xlsx, not notes", "yes", "yes"])
    row = run_task(TASK, pool=pool, llm=llm, out_dir=tmp_path, options=_options(interaction="active"), ask=answers)
    assert seen["at backtrack"] == _tree(start)  # step 1's notes.txt is gone, sales.csv is as it was
    assert row["success"] is True and (row["backtracks"], row["questions"]) == (1, 4)
    assert "write report.xlsx, not notes" in llm.first_user_text("agent", 2)  # the person's guidance reached the agent
    assert [o["index"] for o in row["step_outcomes"]] == [0, 1]  # the hub forgot the steps rolled back
    episode = tmp_path / row["trajectory"]
    back = [rec for rec in load_trajectory(episode / "team").steps if "backtrack_to" in rec.info]
    assert len(back) == 1 and back[0].info["backtrack_to"] == 1 and back[0].info["roles"][0]["role"] == "manager"
    assert json.loads((episode / "plan.json").read_text())["backtracks"] == 1


def test_a_passive_question_reaches_the_callback_and_its_answer_decides(tmp_path, pool) -> None:
    unsure = "Verdict: unsure\nReason: I cannot open xlsx files"
    llm = TeamScript(planner=[ONE_STEP], agent=[WRONG, SOLVE], reviewer=[unsure, YES])
    answers = ScriptedAnswers.of(["retry: write report.xlsx with openpyxl"])
    row = run_task(TASK, pool=pool, llm=llm, out_dir=tmp_path, options=_options(interaction="passive"), ask=answers)
    assert len(answers.asked) == 1 and answers.asked[0][0].kind == "unsure" and "cannot open xlsx" in answers.asked[0][0].text
    # automatic mode would have accepted an unsure step; the answer made the team retry with the guidance
    assert (row["questions"], row["retries"], row["success"]) == (1, 1, True)
    assert "write report.xlsx with openpyxl" in llm.first_user_text("agent", 1)
    roles = _team_roles(tmp_path / row["trajectory"])
    assert any(m["role"] == "person" and m.get("choice") == "retry" for m in roles)


def test_in_automatic_mode_an_unsure_step_is_accepted_without_asking(tmp_path, pool) -> None:
    llm = TeamScript(planner=[ONE_STEP], agent=[WRONG], reviewer=["Verdict: unsure\nReason: cannot tell"])
    row = run_task(TASK, pool=pool, llm=llm, out_dir=tmp_path, options=_options())
    assert (row["questions"], row["retries"], row["success"]) == (0, 0, False)
    assert row["step_outcomes"][0]["success"] is None  # accepted unjudged; the evaluator judged the task


def test_active_mode_stops_when_the_person_declines(tmp_path, pool) -> None:
    llm = TeamScript(planner=[TWO_STEPS], agent=[WRONG], reviewer=[YES])
    answers = ScriptedAnswers.of(["no"])
    row = run_task(TASK, pool=pool, llm=llm, out_dir=tmp_path, options=_options(interaction="active"), ask=answers)
    assert row["status"] == "stopped" and row["success"] is False and row["team_status"] == "stopped"
    assert len(row["step_outcomes"]) == 1 and len(llm.prompts["agent"]) == 1  # step 2 never ran
    assert answers.asked[0][0].kind == "confirm"


def test_no_effect_is_caught_without_a_model_call_then_the_next_agent_takes_over(tmp_path, pool) -> None:
    idle = py("x = 1")
    llm = TeamScript(planner=[ONE_STEP], agent=[idle, idle, SOLVE], reviewer=[YES])
    row = run_task(TASK, pool=pool, llm=llm, out_dir=tmp_path, options=_options())
    assert (row["retries"], row["reassignments"], row["reviews"], row["success"]) == (1, 1, 3, True)
    assert len(llm.prompts["reviewer"]) == 1  # the two idle attempts were judged by the no-effect check
    first, second = [m["agent"] for m in _team_roles(tmp_path / row["trajectory"]) if m["role"] == "decision"][1:3]
    assert first != second and row["plan"][0]["agent"] == second


def test_passive_mode_without_anyone_to_ask_is_a_config_error(tmp_path, pool) -> None:
    llm = TeamScript(planner=[], agent=[])
    row = run_task(TASK, pool=pool, llm=llm, out_dir=tmp_path, options=_options(interaction="passive"))
    assert "needs someone to ask" in row["error"]


def test_memory_of_a_past_task_reaches_the_next_planner(tmp_path, pool) -> None:
    options = _options(review="checks")
    run_task(TASK, pool=pool, llm=TeamScript(planner=[ONE_STEP], agent=[SOLVE]), out_dir=tmp_path, options=options)
    memory = [json.loads(line) for line in (tmp_path / "cola_memory.jsonl").read_text().splitlines()]
    assert memory[0]["task_id"] == TASK.id and memory[0]["success"] is True
    other = TASK.model_copy(update={"id": "csv-sales-again"})
    llm = TeamScript(planner=[ONE_STEP], agent=[SOLVE])
    row = run_task(other, pool=pool, llm=llm, out_dir=tmp_path, options=options)
    assert row["success"] is True and "csv-sales-summary" not in llm.prompts["planner"][0][0].content  # ids are not shown
    assert "succeeded" in llm.prompts["planner"][0][0].content and "Write the per-region" in llm.prompts["planner"][0][0].content


def test_agentlab_exec_team_cola_through_a_loopback_openai_endpoint(tmp_path, chat_server) -> None:
    """``agentlab exec --team cola --interaction passive --answers FILE``: the endpoint plays a correct
    planner and agent and an unsure reviewer; the scripted answer accepts the step; the task succeeds."""
    from typer.testing import CliRunner

    from agentlab.cli import _mount, app
    from agentlab.fileio import read_jsonl

    def capable(body: dict, k: int) -> str:
        first = body["messages"][0]["content"]
        if first.startswith("You are the planner"):
            assert "sales.csv" in first  # the planner sees the task's files
            return ONE_STEP
        if first.startswith("You review one step"):
            assert "added: report.xlsx" in first  # the reviewer sees the change
            return "Verdict: unsure\nReason: I cannot read xlsx"
        return SOLVE

    url = chat_server(capable)
    cfg = tmp_path / "llm.yaml"
    cfg.write_text(f"llm:\n  kind: openai\n  base_url: {url}\n  model: strong-model\n")
    answers = tmp_path / "answers.txt"
    answers.write_text("# the person accepts the step\nyes\n")
    out = tmp_path / "run"
    _mount()
    res = CliRunner().invoke(app, ["exec", "--tasks", str(tasks_dir() / f"{TASK.id}.json"), "--out", str(out), "--llm-config",
                                   str(cfg), "--team", "cola", "--interaction", "passive", "--answers", str(answers),
                                   "--max-steps", "3"])
    assert res.exit_code == 0, res.output
    assert res.output.strip().splitlines()[-1] == "execution_acc=1.0000 n=1 harness_errors=0"
    (row,) = read_jsonl(out / "results.jsonl")
    assert (row["team"], row["interaction"], row["questions"], row["reviews"], row["retries"]) == ("cola", "passive", 1, 1, 0)
    assert row["llm_calls"] == 3 == len(chat_server.requests) and row["model_id"] == "strong-model"
    bad = CliRunner().invoke(app, ["exec", "--tasks", str(tasks_dir() / f"{TASK.id}.json"), "--out", str(tmp_path / "x"),
                                   "--interaction", "active"])
    assert bad.exit_code != 0 and "they need --team" in str(bad.exception)
    both = CliRunner().invoke(app, ["exec", "--tasks", str(tasks_dir() / f"{TASK.id}.json"), "--out", str(tmp_path / "y"),
                                    "--team", "cola", "--mode", "manager"])
    assert both.exit_code != 0 and "drop --mode manager" in str(both.exception)


def test_the_team_messages_read_in_order(tmp_path, pool) -> None:
    from agentlab.viz.team import team_messages, team_messages_frame

    llm = TeamScript(planner=[ONE_STEP], agent=[WRONG, SOLVE], reviewer=[NO, YES])
    row = run_task(TASK, pool=pool, llm=llm, out_dir=tmp_path, options=_options())
    episode = tmp_path / row["trajectory"]
    roles = [m.role for m in team_messages(episode)]
    assert roles[:3] == ["memory", "planner", "scheduler"]
    assert roles[3:] == ["decision", "reviewer", "manager", "decision", "reviewer", "manager", "manager"]
    frame = team_messages_frame(episode)
    assert list(frame.columns) == ["record", "step", "role", "text", "backtrack_to"] and len(frame) == len(roles)
    assert "verdict: no" in frame[frame.role == "reviewer"].text.iloc[0]


def test_the_inspector_shows_the_team_and_every_attempt(tmp_path, pool) -> None:
    from agentlab.viz.trajectory import TrajectoryInspector

    llm = TeamScript(planner=[ONE_STEP], agent=[WRONG, SOLVE], reviewer=[NO, YES])
    row = run_task(TASK, pool=pool, llm=llm, out_dir=tmp_path, options=_options())
    agent = row["plan"][0]["agent"]
    for folder in (tmp_path / row["trajectory"], tmp_path / "episodes"):
        keys = list(TrajectoryInspector(folder).episodes)
        assert [k.split("/")[-1] for k in keys] == ["team", f"step-1-{agent}", f"step-1-{agent}-try1"] or \
            [k.split("/")[-1] for k in keys] == ["team", f"step-1-{agent}-try1", f"step-1-{agent}"]


def _candidates(messages: list[ChatMessage]) -> list[str]:
    """The agents the scheduler's prompt lists, in order (``- Name: capabilities``)."""
    import re

    return re.findall(r"^- (\w+): ", messages[-1].content, re.M)


def test_a_model_scheduler_chooses_among_the_rankings_best_from_their_capabilities(tmp_path, pool) -> None:
    """scheduler=model: the scheduler role's model reads the candidates' capability descriptions and
    names one; that agent takes the step, the router's order behind it."""
    seen: list[list[str]] = []

    def pick_the_third(messages: list[ChatMessage]) -> str:
        names = _candidates(messages)
        seen.append(names)
        assert "Subtask: Write the per-region sales summary into report.xlsx" in messages[-1].content
        assert pool.get(names[0]).capabilities.split()[0] in messages[-1].content  # the descriptions are shown
        return names[2]

    llm = TeamScript(planner=[ONE_STEP], agent=[SOLVE], reviewer=[YES], scheduler=[pick_the_third])
    row = run_task(TASK, pool=pool, llm=llm, out_dir=tmp_path, options=_options(scheduler="model", scheduler_candidates=4))
    assert row["error"] is None and len(seen) == 1 and len(seen[0]) == 4
    assert row["plan"][0]["agent"] == seen[0][2] and row["team_llm_calls"] == 3  # planner, scheduler, reviewer
    said = [m for m in _team_roles(tmp_path / row["trajectory"]) if m["role"] == "scheduler"][0]
    assert said["chosen_by"] == "model" and said["agent"] == seen[0][2] and said["reply"] == seen[0][2]


def test_a_scheduler_reply_naming_no_candidate_leaves_the_routers_choice(tmp_path, pool) -> None:
    default = TeamScript(planner=[ONE_STEP], agent=[SOLVE], reviewer=[YES])
    routed = run_task(TASK, pool=pool, llm=default, out_dir=tmp_path / "router", options=_options())
    llm = TeamScript(planner=[ONE_STEP], agent=[SOLVE], reviewer=[YES], scheduler=["the best one", "no idea"])
    row = run_task(TASK, pool=pool, llm=llm, out_dir=tmp_path / "model", options=_options(scheduler="model"))
    assert row["plan"][0]["agent"] == routed["plan"][0]["agent"] and len(llm.prompts["scheduler"]) == 2  # one re-ask
    said = [m for m in _team_roles(tmp_path / "model" / row["trajectory"]) if m["role"] == "scheduler"][0]
    assert said["chosen_by"] == "router (the model named no candidate)"


def test_a_decision_agent_refines_its_subtask_with_its_model_before_acting(tmp_path, pool) -> None:
    """refine=true: the agent's model restates the subtask (reading the team's messages) and the
    agent acts on the restatement; the team trajectory keeps it as the refiner's message."""
    refined = "Subtask: Read sales.csv and write the per-region totals into report.xlsx"
    llm = TeamScript(planner=[ONE_STEP], agent=[refined, SOLVE], reviewer=[YES])
    row = run_task(TASK, pool=pool, llm=llm, out_dir=tmp_path, options=_options(refine=True))
    assert row["success"] is True and row["step_outcomes"][0]["success"] is True
    asked = llm.first_user_text("agent", 0)
    assert "Your subtask: Write the per-region sales summary into report.xlsx" in asked and "- planner" in asked
    assert "Read sales.csv and write the per-region totals into report.xlsx" in llm.first_user_text("agent", 1)
    said = [m for m in _team_roles(tmp_path / row["trajectory"]) if m["role"] == "refiner"]
    assert len(said) == 1 and said[0]["by_model"] is True and said[0]["text"].startswith("Read sales.csv")


def test_a_refinement_that_drops_the_subtasks_file_is_not_used(tmp_path, pool) -> None:
    lossy = "Subtask: Write the summary"  # report.xlsx is gone: asked again, then the subtask goes as it was
    llm = TeamScript(planner=[ONE_STEP], agent=[lossy, lossy, SOLVE], reviewer=[YES])
    row = run_task(TASK, pool=pool, llm=llm, out_dir=tmp_path, options=_options(refine=True))
    assert row["success"] is True and "drops report.xlsx" in llm.first_user_text("agent", 1)
    assert "Your subtask: Write the per-region sales summary into report.xlsx\n" in llm.first_user_text("agent", 2)
    said = [m for m in _team_roles(tmp_path / row["trajectory"]) if m["role"] == "refiner"][0]
    assert said["by_model"] is False and said["text"].startswith("kept as given")


def test_with_shared_memory_the_decision_agent_reads_the_teams_messages(tmp_path, pool) -> None:
    llm = TeamScript(planner=[ONE_STEP], agent=[SOLVE], reviewer=[YES])
    row = run_task(TASK, pool=pool, llm=llm, out_dir=tmp_path, options=_options(share_memory=True))
    asked = llm.first_user_text("agent", 0)
    assert row["success"] is True and "Team messages so far:" in asked and "- scheduler (step 1): step 1 ->" in asked
    plain = TeamScript(planner=[ONE_STEP], agent=[SOLVE], reviewer=[YES])
    run_task(TASK, pool=pool, llm=plain, out_dir=tmp_path / "plain", options=_options())
    assert "Team messages so far:" not in plain.first_user_text("agent", 0)  # off by default
