"""The episode runner and ``agentlab exec``: rows, resume, harness errors, the CLI contract."""

from __future__ import annotations

import dataclasses
import json
import time

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from agentlab.run.episode import ExecOptions, HarnessError, gt_agent, run_task
from agentlab.errors import BackendError, ConfigError, DataError
from agentlab.tasks.spec import load_task, tasks_dir
from agentlab.fileio import append_jsonl, read_jsonl
from agentlab.llm.base import LLMBackend

from .conftest import py, suite


class Down(LLMBackend):
    """TEST DOUBLE: a model server that cannot be reached."""

    model_id = "down"

    def chat(self, messages, params=None):  # type: ignore[no-untyped-def]
        raise BackendError("cannot reach the OpenAI-compatible server at http://127.0.0.1:9/v1; is it running?")

    def complete(self, prompt, params=None):  # type: ignore[no-untyped-def]
        raise AssertionError

ROW_FIELDS = {"id", "domain", "router", "agents", "success", "score", "steps", "llm_calls", "tokens_in",
              "tokens_out", "seconds", "error", "trajectory", "max_steps", "time_limit_s", "seed"}


def solve(task_id: str) -> str:
    sol = load_task(tasks_dir() / f"{task_id}.json").reference_solution
    assert sol is not None
    return f"Solving it.\n```{sol.language}\n{sol.code.rstrip()}\n```\nDONE"


def test_gt_routing_follows_domain_env_and_gold_agent(pool) -> None:
    calc = load_task(tasks_dir() / "csv-sales-summary.json")
    assert gt_agent(calc, pool) == "SheetAgent"
    assert gt_agent(load_task(tasks_dir() / "calc-enter-total.json"), pool) == "CalcAgent"  # env desktop -> GUI
    assert gt_agent(calc.model_copy(update={"agent": "CoderAgent"}), pool) == "CoderAgent"
    # the browser, mail and media-player domains have their profile specialists (issue #38)
    assert gt_agent(calc.model_copy(update={"domain": "chrome"}), pool) == "BrowserAgent"
    assert gt_agent(calc.model_copy(update={"domain": "thunderbird"}), pool) == "MailboxAgent"
    assert gt_agent(calc.model_copy(update={"domain": "vlc"}), pool) == "MediaAgent"
    # the general domain's specialist (DataAgent, a toolkit) comes before its program writers (issue #38)
    assert gt_agent(calc.model_copy(update={"domain": "general"}), pool) == "DataAgent"
    assert gt_agent(calc.model_copy(update={"domain": "os"}), pool) == "FileAgent"
    # a desktop task of a domain without a GUI agent goes to the general GUI agents (AgentS2, PCAgent)
    assert gt_agent(calc.model_copy(update={"domain": "multi_apps", "env": "desktop"}), pool) == "AgentS2"
    without = pool.subset([n for n in pool.names if n not in ("AgentS2", "PCAgent")])
    with pytest.raises(HarnessError, match="no GUI agent of domain 'general'"):
        gt_agent(calc.model_copy(update={"domain": "general", "env": "desktop"}), without)


def test_one_task_end_to_end(tmp_path, pool, scripted, task) -> None:
    llm = scripted(["```bash\nls\n```", solve(task.id)])
    row = run_task(task, pool=pool, llm=llm, out_dir=tmp_path, options=ExecOptions(max_steps=4, seed=7, runner_options=CODE))
    assert [p.seed for p in llm.params] == [7, 7]  # the run's seed reaches the agent's sampling
    assert ROW_FIELDS <= set(row)
    assert (row["success"], row["score"], row["steps"], row["llm_calls"], row["error"]) == (True, 1.0, 2, 2, None)
    assert (row["agents"], row["router"], row["status"], row["max_steps"], row["seed"]) == (["SheetAgent"], "gt", "done", 4, 7)
    episode = tmp_path / row["trajectory"]
    assert (episode / "traj.jsonl").exists() and (episode / "workspace" / "report.xlsx").exists()
    assert json.loads((episode / "meta.json").read_text())["status"] == "done"


def test_harness_errors_are_rows_not_crashes(tmp_path, pool, scripted, task, monkeypatch) -> None:
    from agentlab.envs.desktop_task import LAUNCHERS

    # the task's application is not installed (whether or not LibreOffice is, here)
    monkeypatch.setitem(LAUNCHERS, "libreoffice-calc",
                        dataclasses.replace(LAUNCHERS["libreoffice-calc"], program="soffice-not-installed-here"))
    desktop = load_task(tasks_dir() / "calc-enter-total.json")
    row = run_task(desktop, pool=pool, llm=scripted([]), out_dir=tmp_path, options=ExecOptions())
    assert row["success"] is False and row["agents"] == ["CalcAgent"]
    assert "libreoffice-calc is not installed here" in row["error"]

    row = run_task(task, pool=pool, llm=Down(), out_dir=tmp_path, options=ExecOptions())
    assert row["success"] is False and "cannot reach" in row["error"] and "\n" not in row["error"]
    failed = run_task(task, pool=pool, llm=scripted(["FAIL"]), out_dir=tmp_path, options=ExecOptions())
    assert failed["error"] is None and failed["success"] is False and failed["status"] == "failed"


def test_time_limit_is_a_task_failure(tmp_path, pool, scripted, task) -> None:
    llm = scripted(["```python\nimport time; time.sleep(1.2)\n```", "```bash\nls\n```", "DONE"])
    row = run_task(task, pool=pool, llm=llm, out_dir=tmp_path, options=ExecOptions(time_limit_s=1.0, runner_options=CODE))
    assert row["status"] == "time_limit" and row["error"] is None and row["success"] is False
    assert row["time_limit_s"] == 1.0
    # the interrupted episode keeps its cost: one program ran, the second reply was asked for
    assert (row["steps"], row["llm_calls"]) == (1, 2)


def test_killed_suite_resumes_without_loss_or_duplicates(tmp_path, pool, scripted) -> None:
    ids = ["csv-sales-summary", "os-error-lines", "docx-bold-title"]
    tasks = [load_task(tasks_dir() / f"{i}.json") for i in ids]
    # the first run "is killed" after one task; a half-done episode of the second is left behind
    first = suite(tasks, pool=pool, llm=scripted([solve(ids[0])]), out_dir=tmp_path, options=ExecOptions(),
                  limit=1)
    assert (first.ran, len(read_jsonl(tmp_path / "results.jsonl"))) == (1, 1)
    (tmp_path / "episodes" / ids[1]).mkdir(parents=True)
    (tmp_path / "episodes" / ids[1] / "traj.jsonl").write_text('{"step": 0, "torn')
    with pytest.raises(DataError, match="pass --resume"):
        suite(tasks, pool=pool, llm=scripted([]), out_dir=tmp_path, options=ExecOptions())
    second = suite(tasks, pool=pool, llm=scripted([solve(ids[1]), "FAIL"]), out_dir=tmp_path,
                   options=ExecOptions(), resume=True)
    rows = read_jsonl(tmp_path / "results.jsonl")
    assert [r["id"] for r in rows] == ids and (second.ran, second.skipped) == (2, 1)
    assert [r["success"] for r in rows] == [True, True, False] and second.harness_errors == 0
    assert second.execution_acc == pytest.approx(2 / 3)
    assert second.by_domain() == {"calc": (1.0, 1), "os": (1.0, 1), "writer": (0.0, 1)}
    again = suite(tasks, pool=pool, llm=scripted([]), out_dir=tmp_path, options=ExecOptions(), resume=True)
    assert again.ran == 0 and len(read_jsonl(tmp_path / "results.jsonl")) == 3


def _cli(args: list[str]):  # type: ignore[no-untyped-def]
    from typer.testing import CliRunner

    from agentlab.cli import _mount, app

    _mount()
    return CliRunner().invoke(app, args)


def test_exec_refuses_existing_results_without_resume(tmp_path, task_file) -> None:
    out = tmp_path / "run"
    out.mkdir()
    (out / "results.jsonl").write_text('{"id": "x"}\n')
    res = _cli(["exec", "--tasks", str(task_file), "--out", str(out)])
    assert res.exit_code != 0 and isinstance(res.exception, DataError) and "pass --resume" in str(res.exception)
    assert (out / "results.jsonl").read_text() == '{"id": "x"}\n' and sorted(p.name for p in out.iterdir()) == ["results.jsonl"]


def test_exec_cli_through_an_openai_compatible_endpoint(tmp_path, chat_server, task_file) -> None:
    replies = ["First I look at the data.\n```bash\nhead -3 sales.csv\n```", solve("csv-sales-summary")]
    url = chat_server(lambda body, k: replies[k] if k < len(replies) else "FAIL")
    cfg = tmp_path / "llm.yaml"
    cfg.write_text(f"llm:\n  kind: openai\n  base_url: {url}\n  model: strong-coder\n")
    out = tmp_path / "run"
    res = _cli(["exec", "--tasks", str(task_file), "--out", str(out), "--llm-config", str(cfg), "--max-steps", "5",
                "-O", "mode=code"])  # the sheet specialist writing programs (its toolkit importable)
    assert res.exit_code == 0, res.output
    lines = res.output.strip().splitlines()
    assert lines[-1] == "execution_acc=1.0000 n=1 harness_errors=0"
    assert any("calc: ExecutionAcc=1.000 (n=1)" in line for line in lines), lines  # stderr (tqdm) is mixed in here
    (row,) = read_jsonl(out / "results.jsonl")
    assert (row["success"], row["agents"], row["model_id"], row["llm_calls"]) == (True, ["SheetAgent"], "strong-coder", 2)
    assert (row["tokens_in"], row["tokens_out"]) == (2, 2)  # the loopback server reports 1 + 1 per call
    sent = chat_server.requests[1]["messages"]
    assert sent[0]["role"] == "system" and "exit code 0" in sent[-1]["content"] and "region,amount" in sent[-1]["content"]
    # the same configuration (a resume with another --max-steps is refused: tests/episode/test_manifest.py)
    again = _cli(["exec", "--tasks", str(task_file), "--out", str(out), "--llm-config", str(cfg), "--max-steps", "5", "--resume",
                  "-O", "mode=code"])
    assert again.exit_code == 0 and again.output.strip().splitlines()[-1] == "execution_acc=1.0000 n=1 harness_errors=0"
    assert len(chat_server.requests) == 2


def test_exec_runner_options_reach_the_runner_and_bad_ones_are_one_line(tmp_path, chat_server, task_file) -> None:
    from agentlab.cli.execute import parse_runner_options

    assert parse_runner_options(["replan=false", "experts=[visual, textual]", "note="]) == {
        "replan": False, "experts": ["visual", "textual"], "note": ""}
    with pytest.raises(ConfigError, match="KEY=VALUE"):
        parse_runner_options(["replan"])
    url = chat_server(lambda body, k: solve("csv-sales-summary"))
    cfg = tmp_path / "llm.yaml"
    cfg.write_text(f"llm:\n  kind: openai\n  base_url: {url}\n  model: m\n")
    res = _cli(["exec", "--tasks", str(task_file), "--out", str(tmp_path / "run"), "--llm-config", str(cfg),
                "-O", "max_attempts=2"])
    assert res.exit_code == 0, res.output
    (row,) = read_jsonl(tmp_path / "run" / "results.jsonl")
    assert row["runner_options"] == {"max_attempts": 2} and row["success"]
    bad = _cli(["exec", "--tasks", str(task_file), "--out", str(tmp_path / "run2"), "--llm-config", str(cfg),
                "-O", "no_such_option=1"])
    assert bad.exit_code == 0, bad.output  # the run completes; the row says what was wrong
    (row,) = read_jsonl(tmp_path / "run2" / "results.jsonl")
    assert row["status"] == "error" and "runner_options.no_such_option" in row["error"]


def test_task_files_may_name_their_gold_agent(tmp_path, pool, scripted, task_file) -> None:
    raw = json.loads(task_file.read_text())
    path = tmp_path / f"{raw['id']}.json"
    path.write_text(json.dumps({**raw, "agent": "CoderAgent"}))
    gold = load_task(path)
    assert gold.agent == "CoderAgent" and gt_agent(gold, pool) == "CoderAgent"
    path.write_text(json.dumps({**raw, "agent": "Nobody"}))
    row = run_task(load_task(path), pool=pool, llm=scripted([]), out_dir=tmp_path / "run", options=ExecOptions())
    assert row["success"] is False and "unknown agent 'Nobody'" in row["error"] and row["agents"] == []


@pytest.mark.slow
def test_exec_smoke_with_the_embedded_model(tmp_path, task_file) -> None:
    """The real 135M model: it will rarely solve the task, but the run must complete by the contract."""
    out = tmp_path / "run"
    res = _cli(["exec", "--tasks", str(task_file), "--out", str(out), "--max-steps", "2"])
    assert res.exit_code == 0, res.output
    last = res.output.strip().splitlines()[-1]
    assert last.startswith("execution_acc=") and last.endswith("n=1 harness_errors=0")
    (row,) = read_jsonl(out / "results.jsonl")
    assert row["model_id"].startswith("SmolLM2") and row["llm_calls"] >= 1 and row["status"] in {"done", "failed", "max_steps"}


#: the sheet specialist (the tasks here are spreadsheets) in its code mode: these tests are about the code agent
CODE = {"mode": "code"}

WORKSPACE_TASKS = [t for t in (load_task(p) for p in sorted(tasks_dir().glob("*.json")))
                   if t.env == "workspace" and t.reference_solution is not None and t.plan is None]
#: the synthesized multi-agent tasks and the single-agent tasks they were made of (data/tasks/multi/manifest.json)
MULTI_PARTS = {t["id"]: t["parts"] for t in json.loads((tasks_dir() / "multi" / "manifest.json").read_text())["tasks"]}


@pytest.mark.parametrize("task_", WORKSPACE_TASKS, ids=lambda t: t.id)
def test_every_workspace_task_runs_through_its_gt_agent(tmp_path, pool, scripted, task_) -> None:
    """Each shipped workspace task routes (gt) to a code or tools specialist, which solves it with
    the reference program (a tools specialist in its code mode, with its toolkit importable)."""
    runner = pool.get(gt_agent(task_, pool)).runner
    assert runner in ("code", "tools")
    options = ExecOptions(runner_options={"mode": "code"} if runner == "tools" else {})
    row = run_task(task_, pool=pool, llm=scripted([solve(task_.id)]), out_dir=tmp_path, options=options)
    assert (row["error"], row["success"], row["steps"]) == (None, True, 1), row


@pytest.mark.parametrize("task_id", sorted(MULTI_PARTS))
def test_every_multi_agent_task_succeeds_when_each_step_runs_its_part(tmp_path, pool, scripted, task_id) -> None:
    """Each synthesized task's gold plan runs one agent per part on the shared workspace; when every
    step's agent writes its part's reference program, the conjunction of the parts' checks holds."""
    task_ = load_task(tasks_dir() / f"{task_id}.json")
    parts = MULTI_PARTS[task_id]
    row = run_task(task_, pool=pool, llm=scripted([solve(p) for p in parts]), out_dir=tmp_path, options=ExecOptions())
    assert (row["error"], row["success"], row["plan_source"]) == (None, True, "gold"), row
    assert [s["agent"] for s in row["step_outcomes"]] == [s.agent for s in task_.plan]


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cut=st.floats(min_value=0.0, max_value=1.0))
@example(cut=0.0)
@example(cut=0.5)
@example(cut=0.999)
@example(cut=1.0)
def test_results_cut_anywhere_resume_keeps_every_finished_row_once(tmp_path_factory, pool, scripted, cut) -> None:
    """A crash can leave results.jsonl cut at any byte: resuming keeps each complete row exactly
    once and re-runs only what was lost; later appends are never glued to a kept row."""
    out = tmp_path_factory.mktemp("cut")
    ids = ["os-error-lines", "csv-sales-summary"]
    tasks = [load_task(tasks_dir() / f"{i}.json") for i in ids]
    suite(tasks, pool=pool, llm=scripted([solve(i) for i in ids]), out_dir=out, options=ExecOptions())
    results = out / "results.jsonl"
    data = results.read_bytes()
    results.write_bytes(data[: int(len(data) * cut)])
    complete = [r["id"] for r in read_jsonl(results)]
    lost = [i for i in ids if i not in complete]
    again = suite(tasks, pool=pool, llm=scripted([solve(i) for i in lost]), out_dir=out, options=ExecOptions(),
                  resume=True)
    rows = read_jsonl(results, tolerate_torn_tail=False)
    assert sorted(r["id"] for r in rows) == sorted(ids) and again.ran == len(lost)
    assert all(r["success"] for r in rows)
    append_jsonl(results, {"id": "later"})  # the next append is never glued to a kept last row
    assert [r["id"] for r in read_jsonl(results, tolerate_torn_tail=False)][-1] == "later"


def test_steps_record_model_program_and_step_time(tmp_path, pool, scripted, task) -> None:
    class Slow(scripted):  # type: ignore[misc,valid-type]
        def chat(self, messages, params=None):  # type: ignore[no-untyped-def]
            time.sleep(0.15)
            return super().chat(messages, params)

    llm = Slow(["```python\nimport time; time.sleep(0.25)\n```", solve(task.id)])
    row = run_task(task, pool=pool, llm=llm, out_dir=tmp_path, options=ExecOptions(max_steps=4, runner_options=CODE))
    acted = [s for s in read_jsonl(tmp_path / row["trajectory"] / "traj.jsonl") if s["action"] is not None]
    timing = [s["info"]["timing"] for s in acted]
    assert len(timing) == 2 and row["success"] is True
    assert all(t["model_s"] >= 0.15 for t in timing)  # the model's time, not the harness's
    assert timing[0]["program_s"] >= 0.25 and timing[0]["program_s"] < timing[0]["step_s"]
    assert all(t["step_s"] >= t["model_s"] + t["program_s"] for t in timing)
    assert 0 <= row["evaluate_s"] < row["seconds"] and 0 < row["setup_s"] < row["seconds"]
    assert sum(t["step_s"] for t in timing) + row["setup_s"] + row["evaluate_s"] < row["seconds"]


def test_max_new_tokens_caps_every_reply_and_is_recorded(tmp_path, pool, scripted, task, solution) -> None:
    llm = scripted([py(solution, "DONE")])
    row = run_task(task, pool=pool, llm=llm, out_dir=tmp_path, options=ExecOptions(max_new_tokens=64, runner_options=CODE))
    assert row["success"] is True and row["max_new_tokens"] == 64
    assert [p.max_new_tokens for p in llm.params] == [64]  # the code agent asked for 1024
    uncapped = scripted([py(solution, "DONE")])
    run_task(task, pool=pool, llm=uncapped, out_dir=tmp_path / "b", options=ExecOptions(runner_options=CODE))
    assert [p.max_new_tokens for p in uncapped.params] == [1024]


def test_an_agent_that_cannot_act_on_the_tasks_env_fails_the_task(tmp_path, pool, scripted, task) -> None:
    """A workspace task routed to a GUI agent is the router's mistake: a failed row, no harness error,
    no model call; a code agent may still carry out a desktop task by editing its files."""
    llm = scripted([])
    row = run_task(task, pool=pool, llm=llm, out_dir=tmp_path, options=ExecOptions(), agent="CalcAgent")
    assert (row["success"], row["status"], row["error"], row["agents"]) == (False, "wrong_env", None, ["CalcAgent"])
    assert "CalcAgent acts on a desktop; this task needs a workspace" in row["agent_error"] and not llm.prompts
    assert json.loads((tmp_path / row["trajectory"] / "meta.json").read_text())["status"] == "wrong_env"
    desktop = load_task(tasks_dir() / "calc-enter-total.json")
    assert desktop.reference_solution is not None
    solved = run_task(desktop, pool=pool, llm=scripted([py(desktop.reference_solution.code, "DONE")]),
                      out_dir=tmp_path / "b", options=ExecOptions(), agent="SheetAgent")
    assert (solved["success"], solved["status"]) == (True, "done")


def test_retry_errors_runs_harness_error_rows_again(tmp_path, pool, scripted, task, solution) -> None:
    first = suite([task], pool=pool, llm=Down(), out_dir=tmp_path, options=ExecOptions())
    assert first.harness_errors == 1
    # the model that is reachable now differs from the one that was not: the resume is forced
    kept = suite([task], pool=pool, llm=scripted([]), out_dir=tmp_path, options=ExecOptions(), force_resume=True)
    assert (kept.ran, kept.harness_errors) == (0, 1)  # plain --resume keeps the error row
    again = suite([task], pool=pool, llm=scripted([py(solution, "DONE")]), out_dir=tmp_path, options=ExecOptions(),
                  force_resume=True, retry_errors=True)
    assert (again.ran, again.harness_errors, again.execution_acc) == (1, 0, 1.0)
    assert [r["id"] for r in read_jsonl(tmp_path / "results.jsonl")] == [task.id]  # replaced, not duplicated


def test_rejected_replies_carry_their_model_time_too(tmp_path, pool, scripted, task, solution) -> None:
    """Every model turn has timing, so the model's whole time is known (not only the usable replies')."""
    class Slow(scripted):  # type: ignore[misc,valid-type]
        def chat(self, messages, params=None):  # type: ignore[no-untyped-def]
            time.sleep(0.1)
            return super().chat(messages, params)

    llm = Slow(["no program here", py(solution, "DONE")])
    row = run_task(task, pool=pool, llm=llm, out_dir=tmp_path, options=ExecOptions(max_steps=2, runner_options=CODE))
    turns = [s for s in read_jsonl(tmp_path / row["trajectory"] / "traj.jsonl") if "timing" in s["info"]]
    assert row["success"] and [s["error"] is not None for s in turns] == [True, False]
    assert all(0.1 <= s["info"]["timing"]["model_s"] < 1.0 for s in turns)  # each turn once, not the sum
    model = sum(s["info"]["timing"]["model_s"] for s in turns)
    assert model + sum(s["info"]["timing"]["program_s"] for s in turns) < row["seconds"]


def test_a_router_that_chooses_no_agent_fails_the_task(tmp_path, pool, scripted, task) -> None:
    from agentlab.run.episode import NoAgentChosen

    def silent(t):  # type: ignore[no-untyped-def]
        raise NoAgentChosen("router 'icl' chose no agent: no ###Name### in the answer", where=t.id)

    llm = scripted([])
    row = run_task(task, pool=pool, llm=llm, out_dir=tmp_path, options=ExecOptions(router="icl"), route=silent)
    assert (row["success"], row["status"], row["error"], row["agents"]) == (False, "no_agent", None, [])
    assert "no ###Name### in the answer" in row["agent_error"] and not llm.prompts
