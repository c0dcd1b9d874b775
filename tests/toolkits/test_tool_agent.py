"""The tool agent end to end: a shipped task routed to its specialist, replies as calls (scripted,
over a loopback OpenAI-compatible server with function calling, and from the embedded model under
the grammar), the calls run in the sandboxed workspace, the task's own evaluator judges."""

from __future__ import annotations

import dataclasses
import json
import math
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from agentlab.agents.base import build_agent
from agentlab.errors import ConfigError
from agentlab.run.episode import run_task
from agentlab.llm.base import Capabilities
from agentlab.llm.testing import ScriptedChat as Scripted
from agentlab.pool import AgentPool
from agentlab.tasks.spec import load_task, tasks_dir
from agentlab.teams.base import ExecOptions
from agentlab.envs.trajectory import load_trajectory
from agentlab.viz.trajectory import tool_calls_frame


@pytest.fixture(scope="module")
def pool() -> AgentPool:
    return AgentPool.from_dir(None)


def test_gt_sends_a_sheet_task_to_the_sheet_specialist_and_its_calls_solve_it(tmp_path, pool) -> None:
    task = load_task(tasks_dir() / "calc-rename-sheet.json")
    llm = Scripted(["rename_sheet('sales.xlsx', 'Sheet1', 'Q1-2024')\nadd_sheet('sales.xlsx', 'Q2-2024')",
                    "done()"])
    row = run_task(task, pool=pool, llm=llm, out_dir=tmp_path, options=ExecOptions(max_steps=3))
    assert (row["agents"], row["success"], row["steps"], row["error"]) == (["SheetAgent"], True, 2, None), row
    traj = load_trajectory(tmp_path / row["trajectory"])
    first = traj.steps[0].info
    assert [c["name"] for c in first["calls"]] == ["rename_sheet", "add_sheet"]
    assert "-> renamed" in first["results"] or "Q1-2024" in first["results"]
    assert traj.meta.extra["runner"] == "tools"


def test_a_failed_call_is_shown_and_the_agent_tries_again(tmp_path, pool) -> None:
    task = load_task(tasks_dir() / "impress-delete-draft-slide.json")
    llm = Scripted(["delete_slide('roadmap.pptx', 'Summary of 2019')", "delete_slide('roadmap.pptx', 'Draft notes')\ndone()"])
    row = run_task(task, pool=pool, llm=llm, out_dir=tmp_path, options=ExecOptions(max_steps=3))
    assert (row["agents"], row["success"], row["steps"]) == (["SlideAgent"], True, 2), row
    traj = load_trajectory(tmp_path / row["trajectory"])
    assert "ERROR" in traj.steps[0].info["results"]
    frame = tool_calls_frame(traj)  # what notebook 05 shows of a specialist's episode
    assert frame["call"].tolist() == ["delete_slide('roadmap.pptx', 'Summary of 2019')",
                                      "delete_slide('roadmap.pptx', 'Draft notes')", "done()"]
    assert frame["result"].iloc[0].startswith("ERROR") and "Draft notes" in frame["result"].iloc[0]  # the titles it has
    assert frame["result"].iloc[1] == "deleted slide 2; 3 left"


def test_the_same_failing_calls_twice_end_the_episode_with_a_row_that_says_so(tmp_path, pool) -> None:
    task = load_task(tasks_dir() / "impress-delete-draft-slide.json")
    wrong = "delete_slide('roadmap.pptx', 'Summary of 2019')"
    llm = Scripted([wrong, wrong, "delete_slide('roadmap.pptx', 'Draft notes')\ndone()"])
    # (with no_failed_repeats on, the default, the second reply is refused instead: the test below)
    row = run_task(task, pool=pool, llm=llm, out_dir=tmp_path,
                   options=ExecOptions(max_steps=4, runner_options={"no_failed_repeats": False}))
    assert (row["success"], row["steps"], row["status"]) == (False, 2, "failed"), row
    assert row["error"] is None and "same failing calls" in row["agent_error"]  # the agent's end, not a harness error


def test_an_unusable_reply_is_corrected_and_a_program_is_never_run(tmp_path, pool) -> None:
    task = load_task(tasks_dir() / "os-proxy-off.json")
    llm = Scripted(["import os\nos.system('rm -rf /')", "set_ini_value('app.ini', 'proxy', 'enabled', 'false')\ndone()"])
    row = run_task(task, pool=pool, llm=llm, out_dir=tmp_path, options=ExecOptions(max_steps=2))
    assert (row["agents"], row["success"]) == (["FileAgent"], True), row


def test_the_local_model_decodes_under_the_grammar_and_names_what_exists(tmp_path, pool) -> None:
    """With a backend that constrains decoding, every reply is asked for under a call grammar whose
    arguments exist; with constrained=false (the ablation) none is."""
    task = load_task(tasks_dir() / "calc-rename-sheet.json")
    caps = Capabilities(plan_grammar=True)
    llm = Scripted(["rename_sheet('sales.xlsx', 'Sheet1', 'Q1-2024')", "fail('stop')"], caps)
    run_task(task, pool=pool, llm=llm, out_dir=tmp_path / "a", options=ExecOptions(max_steps=2))
    first, second = (p.grammar for p in llm.params)
    assert first is not None and second is not None
    assert (first.done_first, second.done_first) == (False, True)  # nothing is done before the first call
    assert (first.fail_first, second.fail_first) == (False, True)  # nor given up before trying anything
    assert first.tools["rename_sheet"][0] == ("'sales.xlsx'",) and "'Sheet1'" in first.tools["rename_sheet"][1]
    llm = Scripted(["fail('no')"], caps)
    run_task(task, pool=pool, llm=llm, out_dir=tmp_path / "b",
             options=ExecOptions(max_steps=1, runner_options={"constrained": False}))
    assert llm.params[0].grammar is None


def test_code_mode_runs_the_code_agent_with_the_toolkit_importable(tmp_path, pool) -> None:
    task = load_task(tasks_dir() / "calc-rename-sheet.json")
    program = ("from agentlab.toolkits.sheets import rename_sheet, add_sheet\n"
               "rename_sheet('sales.xlsx', 'Sheet1', 'Q1-2024')\nadd_sheet('sales.xlsx', 'Q2-2024')\n")
    llm = Scripted([f"```python\n{program}```\nDONE"])
    row = run_task(task, pool=pool, llm=llm, out_dir=tmp_path, options=ExecOptions(runner_options={"mode": "code"}))
    assert (row["success"], row["error"]) == (True, None), row


def test_bad_runner_options_are_one_line(pool) -> None:
    doc = pool.get("SheetAgent")
    with pytest.raises(ConfigError, match="runner_options.toolkit"):
        build_agent(dataclasses.replace(doc, runner_options={"toolkit": 3}), {})
    with pytest.raises(ConfigError, match="unknown toolkit 'nope'"):
        build_agent(dataclasses.replace(doc, runner_options={"toolkit": "nope"}), {})


class _ToolServer(BaseHTTPRequestHandler):
    """An OpenAI-compatible chat endpoint that answers with function calls and records requests."""

    seen: list[dict[str, Any]] = []
    answers: list[list[dict[str, Any]]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).seen.append(body)
        calls = type(self).answers.pop(0)
        msg = {"role": "assistant", "content": None,
               "tool_calls": [{"id": f"c{i}", "type": "function",
                               "function": {"name": c["name"], "arguments": json.dumps(c["args"])}}
                              for i, c in enumerate(calls)]}
        data = json.dumps({"id": "x", "object": "chat.completion", "model": body["model"],
                           "choices": [{"index": 0, "message": msg, "finish_reason": "tool_calls"}],
                           "usage": {"prompt_tokens": 50, "completion_tokens": 10, "total_tokens": 60}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *a: Any) -> None:
        pass


def test_an_endpoint_with_function_calling_gets_the_toolkit_as_tools(tmp_path, pool) -> None:
    from agentlab.llm.config import LLMConfig
    from agentlab.llm.openai_compat import OpenAICompatBackend

    _ToolServer.seen, _ToolServer.answers = [], [
        [{"name": "rename_sheet", "args": {"file": "sales.xlsx", "sheet": "Sheet1", "new_name": "Q1-2024"}},
         {"name": "add_sheet", "args": {"file": "sales.xlsx", "name": "Q2-2024"}}],
        [{"name": "done", "args": {}}]]
    server = ThreadingHTTPServer(("127.0.0.1", 0), _ToolServer)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        cfg = LLMConfig(kind="openai", model="tool-model", base_url=f"http://127.0.0.1:{server.server_port}/v1",
                        tool_calls=True)
        llm = OpenAICompatBackend(cfg)
        task = load_task(tasks_dir() / "calc-rename-sheet.json")
        row = run_task(task, pool=pool, llm=llm, out_dir=tmp_path, options=ExecOptions(max_steps=3))
    finally:
        server.shutdown()
    assert (row["success"], row["steps"]) == (True, 2), row
    tools = {t["function"]["name"] for t in _ToolServer.seen[0]["tools"]}
    assert {"rename_sheet", "add_sheet"} <= tools and len(tools) <= 5  # the retrieved few
    assert row["llm_calls"] == 2 and row["tokens_in"] == 100


def test_the_shipped_tool_prior_reaches_the_grammar_and_can_be_switched_off(tmp_path, pool) -> None:
    """A local model (``plan_grammar``) gets the specialist's prior on the first call's name from
    ``data/tool_priors``, recorded in the trajectory; ``-O tool_prior=none`` sends none, and an
    explicit folder that cannot be read is refused in one line."""
    task = load_task(tasks_dir() / "calc-rename-sheet.json")
    seen = {}
    for option in ("auto", "none"):
        llm = Scripted(["rename_sheet('sales.xlsx', 'Sheet1', 'Q1-2024')\nadd_sheet('sales.xlsx', 'Q2-2024')", "done()"],
                       Capabilities(plan_grammar=True))
        row = run_task(task, pool=pool, llm=llm, out_dir=tmp_path / option,
                       options=ExecOptions(max_steps=3, runner_options={"tool_prior": option}))
        assert row["success"], row
        seen[option] = dict(llm.params[0].grammar.name_prior)
    assert set(seen["auto"]) >= {"rename_sheet", "fail"} and seen["none"] == {}
    meta = json.loads((tmp_path / "auto" / "episodes" / task.id / "meta.json").read_text())
    top3 = list(meta["extra"]["tool_prior"])  # the prior's three most likely tools for this request
    assert top3[0] in seen["auto"] and max(seen["auto"], key=seen["auto"].get) == top3[0]  # shown, and favoured
    from agentlab.agents.tools import ToolAgentOptions

    weight = ToolAgentOptions.model_fields["prior_weight"].default  # the bias is weight * log p, p summing to 1
    assert sum(math.exp(v / weight) for v in seen["auto"].values()) == pytest.approx(1.0)
    doc = pool.get("SheetAgent")
    bad = tmp_path / "broken"
    bad.mkdir()
    (bad / "prior.json").write_text("{")
    agent = build_agent(dataclasses.replace(doc, runner_options={**doc.runner_options, "tool_prior": str(bad)}), {})
    with pytest.raises(ConfigError, match="runner_options.tool_prior: .*tool prior unreadable"):
        agent.tool_prior()
    import shutil

    from agentlab.paths import data_dir

    shutil.copytree(data_dir() / "tool_priors" / "SheetAgent", tmp_path / "priors" / "SheetAgent")  # one per agent
    agent = build_agent(dataclasses.replace(doc, runner_options={**doc.runner_options, "tool_prior": str(tmp_path / "priors")}), {})
    prior = agent.tool_prior()
    assert prior is not None and "rename_sheet" in prior.names


def test_each_ask_of_a_two_part_request_gets_its_nearest_tool_shown(pool) -> None:
    """Tool retrieval per ask: with three tools shown, a request asking to rename a sheet and then
    delete a row shows both tools, in the toolkit's order; a one-ask request is ranked as a whole."""
    from agentlab.agents.tools import ToolAgent

    doc = pool.get("SheetAgent")
    agent = ToolAgent(doc, {**doc.runner_options, "tools_shown": 3})
    two = agent.shown_tools("Rename the Data tab of budget.xlsx to Results, and then delete the row of Oslo")
    assert {"rename_sheet", "delete_row"} <= set(two) and len(two) == 3
    assert two == [n for n in agent.kit.tools if n in two]
    one = agent.shown_tools("Rename the Data tab of budget.xlsx to Results")
    assert "rename_sheet" in one and len(one) == 3


def test_a_done_before_the_second_ask_is_reflected_gets_that_ask_its_own_step(tmp_path, pool) -> None:
    """Issue #38: a small specialist writes the first ask's call, then ``done()``. With
    ``check_done`` (default) the workspace is read against the request alone: the quoted value
    of the second ask is not in ``todo.txt`` yet, so the done is refused, the next prompt names
    that ask, and its grammar does not let the reply start with ``done()``. ``check_done=false``
    (the ablation) ends the episode on the first done."""
    from agentlab.tasks.spec import load_task as load
    from agentlab.paths import data_dir

    task = load(data_dir() / "tasks_dev2" / "os-d2-todo-plumber.json")
    first = "replace_in_file('todo.txt', 'call the plumber\\n', '')\ndone()"
    second = "append_line('todo.txt', 'renew passport')\ndone()"
    llm = Scripted([first, second], Capabilities(plan_grammar=True))
    row = run_task(task, pool=pool, llm=llm, out_dir=tmp_path / "on", options=ExecOptions(max_steps=4))
    traj = load_trajectory(tmp_path / "on" / row["trajectory"])
    s0, s1 = traj.steps[0].info, traj.steps[1].info
    assert s0["done_refused"] and len(s0["unmet"]) == 1 and "renew passport" in s0["unmet"][0], s0
    assert s1["ask"] == s0["unmet"][0] and "unmet" not in s1 and row["steps"] == 2, s1
    # the ask's step is a fresh conversation: the system prompt, then the ask alone (the file the
    # request names rides along), never the reply before it (which a small model copies)
    assert [m["role"] for m in s1["messages"]] == ["system", "user", "assistant"]
    sent = s1["messages"][1]["content"]
    assert sent.startswith("Request: add 'renew passport' at the bottom. (todo.txt)") and "plumber" not in sent.split("\n")[0]
    assert (llm.params[1].grammar.done_first, llm.params[1].grammar.fail_first) == (False, False)  # it starts with a call
    off = Scripted([first, second], Capabilities(plan_grammar=True))
    row_off = run_task(task, pool=pool, llm=off, out_dir=tmp_path / "off",
                       options=ExecOptions(max_steps=4, runner_options={"check_done": False}))
    assert (row_off["steps"], row_off["success"]) == (1, False), row_off


def test_an_ask_naming_settings_without_a_value_is_unmet_until_one_of_them_changes(tmp_path) -> None:
    """A settings toolkit's ask may name no value ("I always want it fullscreen"): it is unmet
    while no line naming a catalogue setting it names changed; met once one did; an ask naming no
    setting of the catalogue stays unchecked."""
    import shutil

    from agentlab.toolkits import load_toolkit
    from agentlab.toolkits.check import unmet_asks

    kit = load_toolkit("media")
    before, after = tmp_path / "before", tmp_path / "after"
    (before / ".config" / "vlc").mkdir(parents=True)
    rc = ".config/vlc/vlcrc"
    (before / rc).write_text("[core]\n#fullscreen=0\n#repeat=0\n#loop=0\n[qt]\n#qt-max-volume=125\n")
    shutil.copytree(before, after)
    ask = "When I open a video I always want it fullscreen, and I'd like it to repeat the current item."
    assert unmet_asks(ask, before, after, kit) == ["When I open a video I always want it fullscreen",
                                                   "I'd like it to repeat the current item."]
    (after / rc).write_text("[core]\n#fullscreen=0\nrepeat=1\n#loop=0\n[qt]\n#qt-max-volume=125\n")
    assert unmet_asks(ask, before, after, kit) == ["When I open a video I always want it fullscreen"]
    (after / rc).write_text("[core]\nfullscreen=1\nrepeat=1\n#loop=0\n[qt]\n#qt-max-volume=125\n")
    assert unmet_asks(ask, before, after, kit) == []
    assert unmet_asks("Make the player nicer.", before, before, kit) == []  # names no setting: unchecked
    assert unmet_asks("Tidy up the music folder.", before, before, load_toolkit("files")) == []  # no catalogue


def test_unmet_asks_reads_the_request_and_the_files_only(tmp_path) -> None:
    """An ask is unmet when none of the exact values it names (quoted, numbers, cells, new
    files) appeared, went away or changed; an ask naming only where to act is never reported."""
    import shutil

    from agentlab.toolkits import load_toolkit
    from agentlab.toolkits.check import unmet_asks

    kit = load_toolkit("files")
    before, after = tmp_path / "before", tmp_path / "after"
    before.mkdir()
    (before / "notes").mkdir()
    (before / "todo.txt").write_text("buy stamps\ncall the plumber\n")
    shutil.copytree(before, after)
    ask = "Please remove 'buy stamps' from todo.txt. Then add 'renew passport' at the end. My notes are in notes."
    # 'buy stamps' is held at the start (removing it and naming it are alike): only the new value is checked
    assert unmet_asks(ask, before, after, kit) == ["add 'renew passport' at the end."]
    (after / "todo.txt").write_text("call the plumber\n")
    assert unmet_asks(ask, before, after, kit) == ["add 'renew passport' at the end."]
    (after / "todo.txt").write_text("call the plumber\nrenew passport\n")
    assert unmet_asks(ask, before, after, kit) == []
    (after / "report.txt").write_text("x")
    assert unmet_asks("Save the list as report.txt and set the count to 14.", before, after, kit) == [
        "set the count to 14."]  # the new file is there; 14 is nowhere yet
    (after / "count.txt").write_text("14\n")
    assert unmet_asks("Save the list as report.txt and set the count to 14.", before, after, kit) == []
    (after / "count.txt").unlink()
    # an amount of turning says nothing a file states: never reported
    assert unmet_asks("Save todo.txt keeping the .txt format.", before, after, kit) == []  # an extension is a kind
    assert unmet_asks("Turn todo.txt around 90 degrees.", before, after, kit) == []
    assert unmet_asks("Save the list as summary.txt. Set the count to 14.", before, after, kit) == [
        "Save the list as summary.txt.", "Set the count to 14."]


@pytest.mark.parametrize("agent_name,rel,text", [
    ("FileAgent", "notes/todo.txt", "milk\neggs\n"),
    ("DataAgent", "spending.csv", "date,category,amount\n2026-11-01,food,4.50\n"),
    ("VSAgent", ".vscode/settings.json", '{"editor.tabSize": 4}'),
])
def test_the_observation_names_files_relative_to_the_workspace_wherever_the_run_folder_is(
        tmp_path, pool, agent_name, rel, text) -> None:
    """The same files in two run folders give the same prompt (an absolute path made the greedy
    reply depend on the run folder's name), and the file is named as the request names it."""
    from agentlab.envs.workspace import Workspace, WorkspaceConfig
    from agentlab.envs.workspace_env import WorkspaceEnv

    agent = build_agent(pool.get(agent_name))
    seen = []
    for name in ("run-a", "a-much-longer-run-folder"):
        root = tmp_path / name / "workspace"
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
        seen.append(agent.observation(WorkspaceEnv(Workspace(root=root, config=WorkspaceConfig(sandbox="none")))))
    assert seen[0] == seen[1], seen
    assert str(tmp_path) not in seen[0] and f"{rel}" in seen[0], seen[0]


def test_a_confident_ask_the_check_cannot_test_gets_its_own_step_when_its_tool_has_not_run(tmp_path, pool) -> None:
    """``confident_asks``: "Please turn it 90 degrees clockwise" names no value a file would show,
    so the check cannot test it; the tool prior read from that piece alone leans to
    ``rotate_clockwise`` (about 0.5 with the shipped prior, ``rotate`` most of the rest: MiniLM
    hardly tells clockwise from counter-clockwise), above the threshold of 0.45 used here, and no
    such call has run, so the episode's done is refused and the piece is asked alone. The piece whose tool already ran ("make it greyscale") and the context piece
    ("came out of the scanner sideways") are not. Off (0, the default), the first done ends it
    (``check_asks``, which also finds this ask, is off in both runs: test_asks.py covers it)."""
    from agentlab.tasks.spec import load_task as load
    from agentlab.paths import data_dir

    task = load(data_dir() / "tasks_dev2" / "gimp-d2-scan-rotate-grey.json")
    first = "grayscale('scan.png', 'scan_fixed.png')\ndone()"
    second = "rotate_clockwise('scan_fixed.png', 90, 'scan_fixed.png')\ndone()"
    llm = Scripted([first, second], Capabilities(plan_grammar=True))
    row = run_task(task, pool=pool, llm=llm, out_dir=tmp_path / "on",
                   options=ExecOptions(max_steps=4, runner_options={"confident_asks": 0.45, "check_asks": "off"}))
    traj = load_trajectory(tmp_path / "on" / row["trajectory"])
    s0, s1 = traj.steps[0].info, traj.steps[1].info
    assert s0["done_refused"] and s0["unmet"] == ["Please turn it 90 degrees clockwise"], s0
    assert s1["ask"] == "Please turn it 90 degrees clockwise" and "unmet" not in s1, s1
    assert (row["steps"], row["success"]) == (2, True), row
    off = Scripted([first, second], Capabilities(plan_grammar=True))
    row_off = run_task(task, pool=pool, llm=off, out_dir=tmp_path / "off",
                       options=ExecOptions(max_steps=4, runner_options={"check_asks": "off"}))
    assert (row_off["steps"], row_off["success"]) == (1, False), row_off


def test_a_reply_repeating_calls_that_already_ran_is_refused_and_asked_again(tmp_path, pool) -> None:
    """The small model's habit: the same successful call again. It is not run again (a second
    ``add_...`` would add twice); the reply is asked again with the reason, in the same step."""
    task = load_task(tasks_dir() / "calc-rename-sheet.json")
    rename = "rename_sheet('sales.xlsx', 'Sheet1', 'Q1-2024')"
    replies = [rename, rename, "add_sheet('sales.xlsx', 'Q2-2024')\ndone()"]
    row = run_task(task, pool=pool, llm=Scripted(list(replies)), out_dir=tmp_path / "on", options=ExecOptions(max_steps=4))
    assert (row["success"], row["steps"]) == (True, 2), row
    traj = load_trajectory(tmp_path / "on" / row["trajectory"])
    refused = [s for s in traj.steps if s.error and "already ran" in s.error]
    assert len(refused) == 1 and [c["name"] for c in traj.steps[-1].info["calls"]] == ["add_sheet", "done"]
    off = run_task(task, pool=pool, llm=Scripted(list(replies)), out_dir=tmp_path / "off",
                   options=ExecOptions(max_steps=4, runner_options={"no_repeats": False}))
    assert (off["success"], off["steps"]) == (True, 3), off  # the repeat ran (and failed: Sheet1 is gone)


def test_a_reply_repeating_a_call_that_failed_is_refused_with_its_error(tmp_path, pool) -> None:
    """The other habit: shown its failing call and the error, the model writes it again word for
    word. The repeat is not run (it could only fail again); the reply is asked again quoting the
    error. Off (``no_failed_repeats=false``), the repeat runs and the episode stops as a repeat."""
    task = load_task(tasks_dir() / "calc-rename-sheet.json")
    wrong = "rename_sheet('sales.xlsx', 'Sales', 'Q1-2024')"  # there is no sheet 'Sales'
    replies = [wrong, wrong, "rename_sheet('sales.xlsx', 'Sheet1', 'Q1-2024')\nadd_sheet('sales.xlsx', 'Q2-2024')\ndone()"]
    row = run_task(task, pool=pool, llm=Scripted(list(replies)), out_dir=tmp_path / "on", options=ExecOptions(max_steps=4))
    assert (row["success"], row["steps"]) == (True, 2), row
    traj = load_trajectory(tmp_path / "on" / row["trajectory"])
    refused = [s for s in traj.steps if s.error and "already failed" in s.error]
    assert len(refused) == 1 and "Sales" in refused[0].error  # the error it got is quoted
    off = run_task(task, pool=pool, llm=Scripted(list(replies)), out_dir=tmp_path / "off",
                   options=ExecOptions(max_steps=4, runner_options={"no_failed_repeats": False}))
    assert not off["success"] and "the same failing calls" in (off["agent_error"] or off["error"] or ""), off


def _mean_task():  # type: ignore[no-untyped-def]
    """A DataAgent task on shop.csv (product, price) that names no column: both columns are candidates."""
    from agentlab.tasks.spec import ExecTask

    raw = json.loads((tasks_dir() / "general-csv-to-markdown.json").read_text())
    raw.update(id="mean-price", instruction="What is the mean of the numbers in shop.csv? Put it in mean.txt.",
               outputs=["mean.txt"], agent="DataAgent")
    raw["setup"][0]["path"] = "shop.csv"
    return ExecTask.model_validate(raw)


def test_a_value_an_error_named_is_left_out_of_that_argument_in_later_steps(tmp_path, pool) -> None:
    """Refused and asked again, sampled replies wrote the failing call again in every episode that
    met the refusal. The value the error names (``column 'product' holds 'tea', not a number``) is
    now out of that tool's argument in the next step's grammar, while the argument has others;
    ``avoid_failed_values=false`` (the ablation) keeps it."""
    task = _mean_task()
    caps = Capabilities(plan_grammar=True)
    seen = {}
    for option in (True, False):
        llm = Scripted(["column_stat('shop.csv', 'product', 'mean', 'mean.txt')", "fail('stop')"], caps)
        run_task(task, pool=pool, llm=llm, out_dir=tmp_path / str(option),
                 options=ExecOptions(max_steps=2, runner_options={"avoid_failed_values": option}))
        first, second = (p.grammar.tools["column_stat"][1] for p in llm.params)
        assert "'product'" in first and "'price'" in first, first
        seen[option] = second
    assert "'product'" not in seen[True] and "'price'" in seen[True], seen
    assert "'product'" in seen[False]


def test_the_value_an_error_names_is_the_first_of_the_calls_values_it_quotes() -> None:
    from agentlab.toolkits.base import Call, value_the_error_names

    call = Call("lookup", {"file": "a.xlsx", "sheet": "Sheet1", "key": "Zed"})
    assert value_the_error_names(call, "no row holds 'Zed' in sheet 'Sheet1'") == (2, "'Zed'")
    assert value_the_error_names(call, "no sheet 'Sheet1'; the sheets are 'Q1'") == (1, "'Sheet1'")
    assert value_the_error_names(call, "a.xlsx would be larger than 10 MB; it was not written") is None
    assert value_the_error_names(Call("resize", {"file": "a.png", "width": 5}), "5 is too small") is None


def test_a_call_that_failed_is_banned_from_later_steps_grammar_but_one_that_succeeded_is_not(tmp_path, pool) -> None:
    """A call that failed is written into the next steps' grammar as banned, word for word; one
    that succeeded is not (a model writing it again has nothing left to do: the refusal ends the
    episode, where a ban made it undo the work); ``exclude_failed_calls=false`` bans none."""
    task = _mean_task()
    caps = Capabilities(plan_grammar=True)
    banned = {}
    ok, bad = "column_stat('shop.csv', 'price', 'mean', 'mean.txt')", "column_stat('shop.csv', 'product', 'mean', 'mean.txt')"
    for option in (True, False):
        llm = Scripted([f"{ok}\n{bad}", "fail('stop')"], caps)
        row = run_task(task, pool=pool, llm=llm, out_dir=tmp_path / str(option),
                       options=ExecOptions(max_steps=2, runner_options={"exclude_failed_calls": option, "check_done": False,
                                                                        "avoid_failed_values": False}))
        traj = load_trajectory(tmp_path / str(option) / row["trajectory"])
        results = traj.steps[0].info["results"].split("\n")
        assert "ERROR" not in results[0] and "ERROR" in results[1], results
        first, second = (p.grammar for p in llm.params)
        assert first.banned == ()
        banned[option] = second.banned
    assert banned[True] == (("column_stat", ("'shop.csv'", "'product'", "'mean'", "'mean.txt'")),), banned
    assert banned[False] == ()
