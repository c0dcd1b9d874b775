"""Manager mode: the router ranks, a manager writes the plan, the plan's steps run. The clause
baseline's splitter, and a loopback OpenAI-compatible endpoint playing a correct (regex-guided)
planner and both agents, end to end."""

from __future__ import annotations

import pytest

from agentlab.run.episode import ExecOptions, run_task
from agentlab.errors import ConfigError
from agentlab.llm.config import LLMConfig
from agentlab.llm.openai_compat import OpenAICompatBackend
from agentlab.metaagent.data import load_training_set
from agentlab.tasks.decisions import PlanStep
from agentlab.metaagent.router import router_class
from agentlab.teams.clauses import merge_steps, split_clauses
from agentlab.teams.planning import ManagerOptions, make_manager, router_planner

from .conftest import py
from .test_executed_plans import REPORT, TOTAL, two_step_task

AGENTS = ["SheetAgent", "WordAgent", "MailAgent", "GimpAgent"]


@pytest.fixture(scope="module")
def router(pool):  # type: ignore[no-untyped-def]
    """The real embedding router (MiniLM), fitted on four agents' seed demonstrations."""
    small = pool.subset(AGENTS)
    r = router_class("embedding")(small, progress=False)
    r.fit(load_training_set(small, None))
    return r


@pytest.mark.parametrize(("text", "parts"), [
    ("Compute the total of column B in sales.xlsx, then email the result to Bob.",
     ["Compute the total of column B in sales.xlsx", "email the result to Bob."]),
    ("Sum sales.csv into total.txt and then write report.md. Upload it to Drive.",
     ["Sum sales.csv into total.txt", "write report.md.", "Upload it to Drive."]),
    ("Resize banner.png to 800 pixels wide and add it to deck.pptx", ["Resize banner.png to 800 pixels wide", "add it to deck.pptx"]),
    ("Count the north and south rows", ["Count the north and south rows"]),
    ("Open it, then go", ["Open it and go"]),  # a one-word part is glued back
])
def test_split_clauses(text, parts) -> None:  # type: ignore[no-untyped-def]
    assert split_clauses(text) == parts


def test_merge_steps_joins_consecutive_same_agent() -> None:
    steps = [PlanStep("A", "x"), PlanStep("A", "y"), PlanStep("B", "z"), PlanStep("A", "w")]
    assert merge_steps(steps) == [PlanStep("A", "x; y"), PlanStep("B", "z"), PlanStep("A", "w")]


def test_clause_manager_routes_each_part_and_the_plan_runs(tmp_path, pool, router, scripted) -> None:
    task = two_step_task(plan=None, instruction="Sum the amounts in sales.csv into total.txt, then write a short report in "
                                               "the Word document report.md.")
    planner = router_planner(router, scripted([]), ManagerOptions(kind="clauses"))
    decided = planner(task)
    assert [s.subtask for s in decided.plan] == ["Sum the amounts in sales.csv into total.txt",
                                                 "write a short report in the Word document report.md."]
    assert decided.plan[0].agent == "SheetAgent" and decided.plan[1].agent == "WordAgent", decided.raw
    llm = scripted([py(TOTAL, "DONE"), py(REPORT, "DONE")])
    row = run_task(task, pool=pool, llm=llm, out_dir=tmp_path, options=ExecOptions(mode="manager", router="embedding", max_steps=2),
                   planner=planner)
    assert row["success"] and row["agents"] == ["SheetAgent", "WordAgent"] and row["plan_source"] == "manager"


def test_clause_routing_manager_plans_over_the_parts_agents(pool, router, scripted) -> None:
    """``--clauses``: the candidates are the agents the task's parts were routed to, not the whole
    task's top-K (here k=1: the top-K alone could not name two agents)."""
    task = two_step_task(plan=None, instruction="Sum the amounts in sales.csv into total.txt, then write a short report in "
                                               "the Word document report.md.")
    llm = scripted(["###SheetAgent: sum the amounts###\n###WordAgent: write the report###"])
    planner = router_planner(router, llm, ManagerOptions(k=1, constrained=False, clauses=True))
    decided = planner(task)
    assert [s.agent for s in decided.plan] == ["SheetAgent", "WordAgent"], decided.error
    prompt = llm.prompts[0][-1].content
    assert "SheetAgent" in prompt and "WordAgent" in prompt and "GimpAgent" not in prompt
    with pytest.raises(ConfigError):
        make_manager(llm, ManagerOptions(clauses=True))  # no router to route the parts with


def test_loopback_endpoint_plays_a_correct_planner_end_to_end(tmp_path, pool, router, chat_server) -> None:
    plan = "###SheetAgent: Sum the amounts in sales.csv into total.txt###\n###WordAgent: Write report.md saying 'Total: <sum>'###\n"
    replies = [plan, py(TOTAL, "DONE"), py(REPORT, "DONE")]
    url = chat_server(lambda body, k: replies[k])
    llm = OpenAICompatBackend(LLMConfig(kind="openai", base_url=url, model="planner", guided_regex=True))
    planner = router_planner(router, llm, ManagerOptions(k=2, max_steps=2))
    row = run_task(two_step_task(plan=None), pool=pool, llm=llm, out_dir=tmp_path,
                   options=ExecOptions(mode="manager", router="embedding", max_steps=2,
                                       runner_options={"mode": "code"}),  # the specialists write programs here
                   planner=planner)
    assert (row["status"], row["success"], row["error"]) == ("done", True, None)
    assert row["plan"] == [{"agent": "SheetAgent", "subtask": "Sum the amounts in sales.csv into total.txt"},
                           {"agent": "WordAgent", "subtask": "Write report.md saying 'Total: <sum>'"}]
    first = chat_server.requests[0]
    assert "###(SheetAgent|WordAgent):" in first["guided_regex"] or "###(WordAgent|SheetAgent):" in first["guided_regex"]
    assert "guided_regex" not in chat_server.requests[1]  # the agents' programs are not constrained
    assert "1. SheetAgent (done): wrote total.txt" in chat_server.requests[2]["messages"][1]["content"]


def test_unusable_manager_answer_is_a_no_plan_row(tmp_path, pool, router, chat_server) -> None:
    url = chat_server(lambda body, k: "I would ask the spreadsheet agent.")
    llm = OpenAICompatBackend(LLMConfig(kind="openai", base_url=url, model="planner"))
    planner = router_planner(router, llm, ManagerOptions(k=2, constrained=False))
    row = run_task(two_step_task(plan=None), pool=pool, llm=llm, out_dir=tmp_path,
                   options=ExecOptions(mode="manager", router="embedding"), planner=planner)
    assert (row["status"], row["error"]) == ("no_plan", None) and "no line of the form" in row["plan_error"]
    assert len(chat_server.requests) == 2  # the answer and its one corrective retry


def test_exec_cli_runs_a_gold_plan_through_an_endpoint_and_refuses_bad_modes(tmp_path, chat_server) -> None:
    import json

    from agentlab.errors import ConfigError
    from agentlab.fileio import read_jsonl

    from .test_episode import _cli

    task_file = tmp_path / "multi-sales-report.json"
    task_file.write_text(json.dumps(two_step_task().model_dump(mode="json", exclude_none=True)))
    replies = [py(TOTAL, "DONE"), py(REPORT, "DONE")]
    url = chat_server(lambda body, k: replies[k] if k < len(replies) else "FAIL")
    cfg = tmp_path / "llm.yaml"
    cfg.write_text(f"llm:\n  kind: openai\n  base_url: {url}\n  model: coder\n")
    res = _cli(["exec", "--tasks", str(task_file), "--out", str(tmp_path / "run"), "--llm-config", str(cfg), "--router", "gt"])
    assert res.exit_code == 0, res.output
    (row,) = read_jsonl(tmp_path / "run" / "results.jsonl")
    assert row["success"] and row["agents"] == ["SheetAgent", "WordAgent"] and len(row["step_outcomes"]) == 2
    for bad, match in ((["--mode", "boss"], "--mode must be single or manager"), (["--manager", "oracle"], "--manager must be one of")):
        res = _cli(["exec", "--tasks", str(task_file), "--out", str(tmp_path / "bad"), *bad])
        assert res.exit_code != 0 and isinstance(res.exception, ConfigError) and match in str(res.exception)
