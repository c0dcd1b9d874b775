"""Phone tasks end to end on the protocol-level fake device: start state pushed over adb sync,
the agent acting through AndroidEnv, the app's data pulled back and judged."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from agentlab.envs.phone_task import local_path, open_phone_task, parse_device, replay_actions
from agentlab.envs.task_env import TaskEnvOptions
from agentlab.envs.testing.fake_adb import FakeAdbServer, FakeDevice
from agentlab.envs.testing.fake_app import STATE_PATH
from agentlab.run.episode import ExecOptions, gt_agent, run_task
from agentlab.errors import ConfigError, DataError, EnvironmentUnavailableError
from agentlab.tasks.spec import load_task, load_tasks, tasks_dir
from agentlab.fileio import read_jsonl
from agentlab.envs.trajectory import load_trajectory

from .conftest import suite

PHONE_TASKS = [t for t in load_tasks() if t.env == "phone"]
VIBRATE = "clock-vibrate-off"
#: ClockAgent's replies for clock-vibrate-off: home -> Settings (2), the Vibrate switch (2), done
#: the phone specialists reply with typed GUI calls by default (the raw sectioned replies of
#: AppAgent are the ``actions: raw`` ablation): Settings, the Vibrate switch, done
SOLVE_VIBRATE = ["click(2)", "click(2)", "done()"]


def test_there_are_at_least_six_clock_tasks_on_the_device() -> None:
    assert len(PHONE_TASKS) >= 6
    assert {t.domain for t in PHONE_TASKS} == {"clock"} and all(t.id.startswith("clock-") for t in PHONE_TASKS)
    for t in PHONE_TASKS:
        assert t.apps == ["com.example.clock"] and t.outputs == [STATE_PATH]
        assert t.reference_solution is not None and t.reference_solution.language == "actions"


@pytest.mark.parametrize("task", PHONE_TASKS, ids=[t.id for t in PHONE_TASKS])
def test_start_state_scores_0_and_reference_actions_score_1(task, tmp_path) -> None:
    opened = open_phone_task(task, tmp_path, TaskEnvOptions())
    try:
        opened.collect()
        before = task.evaluate(opened.root, env=opened.eval_env)
        assert before.score == 0.0, before.explain()
        replay_actions(opened.android, task.reference_solution.code)
        opened.collect()
        after = task.evaluate(opened.root, env=opened.eval_env)
        assert after.success, after.explain()
    finally:
        opened.close()


def test_the_start_state_reaches_the_app_and_the_end_state_comes_from_the_device(tmp_path) -> None:
    task = load_task(tasks_dir() / "clock-enable-yoga-alarm.json")
    opened = open_phone_task(task, tmp_path, TaskEnvOptions())
    try:
        device = opened.server.device
        assert [a.label for a in device.app.alarms] == ["Yoga", "Wake up", "Standup", "Pick up kids"]  # loaded at launch
        obs = opened.android.reset()
        obs = opened.android.step(opened.android.actions.parse("tap(1)")).observation
        assert "06:00 Yoga" in [e.text for e in obs.elements]  # the screen shows the pushed data
        state = local_path(opened.root, STATE_PATH)
        state.write_text("{}")  # the local copy is never judged: collect() replaces it with the device's
        opened.collect()
        assert json.loads(state.read_text())["alarms"][0] == {"hour": 6, "label": "Yoga", "enabled": False}
        with device.lock:
            del device.files[STATE_PATH]  # the app's data is gone from the device
        opened.collect()
        assert not state.exists()
        res = task.evaluate(opened.root)
        assert res.score == 0.0 and "file not found" in (res.checks[0].error or "")
    finally:
        opened.close()
    assert opened.server is None  # the in-process fake adb server was stopped


def test_a_wrong_reference_action_is_reported_with_its_line(tmp_path) -> None:
    task = load_task(tasks_dir() / f"{VIBRATE}.json")
    opened = open_phone_task(task, tmp_path, TaskEnvOptions())
    try:
        with pytest.raises(DataError, match=r"line 2 \('tap\(9\)'\)"):
            replay_actions(opened.android, "tap(2)\ntap(9)\n")
        with pytest.raises(DataError, match="line 1"):
            replay_actions(opened.android, "press the button")
    finally:
        opened.close()


def test_gt_routes_phone_tasks_to_the_app_agent_or_appagent(pool) -> None:
    task = load_task(tasks_dir() / f"{VIBRATE}.json")
    assert gt_agent(task, pool) == "ClockAgent"
    assert gt_agent(task.model_copy(update={"domain": "maps"}), pool) == "MapsAgent"
    # no phone agent for a desktop domain: the general phone agent, not the desktop GUI agent
    assert gt_agent(task.model_copy(update={"domain": "calc"}), pool) == "AppAgent"
    assert gt_agent(task.model_copy(update={"domain": "mobile"}), pool) == "AppAgent"


def test_clock_agent_completes_a_phone_task(tmp_path, pool, scripted) -> None:
    task = load_task(tasks_dir() / f"{VIBRATE}.json")
    llm = scripted(list(SOLVE_VIBRATE))
    row = run_task(task, pool=pool, llm=llm, out_dir=tmp_path, options=ExecOptions(max_steps=5))
    assert (row["success"], row["score"], row["status"], row["error"]) == (True, 1.0, "done", None), row
    assert (row["agents"], row["steps"], row["llm_calls"]) == (["ClockAgent"], 2, 3)
    episode = tmp_path / row["trajectory"]
    traj = load_trajectory(episode)
    assert [s.action["type"] for s in traj.steps if s.action] == ["tap", "tap", "exit"]
    assert traj.image(0) is not None and (episode / "step_000.png").exists() and (episode / "step_000.xml").exists()
    pulled = json.loads(local_path(episode / "device", STATE_PATH).read_text())
    assert pulled["vibrate"] is False and pulled["dark_theme"] is False
    assert "Vibrate" in llm.prompts[1][-1].content or "vibrate_switch" in llm.prompts[1][-1].content


def test_an_agent_that_does_nothing_fails_the_task_without_a_harness_error(tmp_path, pool, scripted) -> None:
    task = load_task(tasks_dir() / f"{VIBRATE}.json")
    row = run_task(task, pool=pool, llm=scripted(["Action: FINISH\nSummary: nothing to do"]), out_dir=tmp_path,
                   options=ExecOptions(runner_options={"actions": "raw"}))  # AppAgent's raw space may FINISH at once
    assert (row["success"], row["score"], row["status"], row["error"]) == (False, 0.0, "done", None)


def test_a_device_that_disconnects_mid_episode_is_an_error_row_and_nothing_is_lost(tmp_path, pool, scripted) -> None:
    tasks = [load_task(tasks_dir() / f"{VIBRATE}.json"), load_task(tasks_dir() / "clock-dark-theme-on.json")]
    # shell commands: 2 to restart the app, 2 per observation, 1 + 2 per action: the second tap is cut off
    with FakeAdbServer(FakeDevice(disconnect_after=7)) as server:
        options = ExecOptions(envs=TaskEnvOptions(device=f"emulator-5554@127.0.0.1:{server.port}"))
        summary = suite(tasks, pool=pool, llm=scripted(list(SOLVE_VIBRATE)), out_dir=tmp_path, options=options)
    rows = read_jsonl(tmp_path / "results.jsonl")
    assert [r["id"] for r in rows] == [t.id for t in tasks] and summary.harness_errors == 2
    cut, after = rows
    assert "disconnected" in cut["error"] and cut["success"] is False and cut["agents"] == ["ClockAgent"]
    traj = load_trajectory(tmp_path / cut["trajectory"])
    assert traj.steps[0].action["type"] == "tap" and traj.steps[0].screenshot  # the step before the cut is kept
    assert "disconnected" in (traj.steps[-1].error or "") and traj.meta.status == "error"
    assert "not connected" in after["error"]  # the device is gone for the next task: a harness error too


def test_an_unreachable_device_is_a_harness_error(tmp_path, pool, scripted) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens here once the socket is closed
    task = load_task(tasks_dir() / f"{VIBRATE}.json")
    with pytest.raises(EnvironmentUnavailableError, match="no adb server answers"):
        open_phone_task(task, tmp_path / "a", TaskEnvOptions(device=f"emulator-5554@127.0.0.1:{port}"))
    with FakeAdbServer() as server:
        row = run_task(task, pool=pool, llm=scripted([]), out_dir=tmp_path / "b",
                       options=ExecOptions(envs=TaskEnvOptions(device=f"R58M123@127.0.0.1:{server.port}")))
    assert row["success"] is False and "device 'R58M123' is not connected" in row["error"]


def test_device_strings() -> None:
    assert parse_device("R58M123") == ("R58M123", "127.0.0.1", 5037)
    assert parse_device("emulator-5554@10.0.0.2:5038") == ("emulator-5554", "10.0.0.2", 5038)
    for bad in ("", "@host:1", "x@host", "x@host:port"):
        with pytest.raises(ConfigError):
            parse_device(bad)


def _cli(args: list[str]):  # type: ignore[no-untyped-def]
    from typer.testing import CliRunner

    from agentlab.cli import _mount, app

    _mount()
    return CliRunner().invoke(app, args)


def test_exec_cli_runs_a_phone_task_through_an_openai_compatible_endpoint(tmp_path, chat_server) -> None:
    url = chat_server(lambda body, k: SOLVE_VIBRATE[k] if k < len(SOLVE_VIBRATE) else "Action: FINISH")
    cfg = tmp_path / "llm.yaml"
    cfg.write_text(f"llm:\n  kind: openai\n  base_url: {url}\n  model: strong-phone-model\n")
    out = tmp_path / "run"
    res = _cli(["exec", "--tasks", str(tasks_dir() / f"{VIBRATE}.json"), "--out", str(out), "--llm-config", str(cfg),
                "--device", "fake"])
    assert res.exit_code == 0, res.output
    assert res.output.strip().splitlines()[-1] == "execution_acc=1.0000 n=1 harness_errors=0"
    (row,) = read_jsonl(out / "results.jsonl")
    assert (row["success"], row["agents"], row["model_id"], row["llm_calls"]) == (True, ["ClockAgent"], "strong-phone-model", 3)
    assert (row["tokens_in"], row["tokens_out"]) == (3, 3)  # the loopback server reports 1 + 1 per call


def test_tasks_check_replays_phone_tasks_and_catches_a_wrong_reference(tmp_path) -> None:
    good = json.loads((tasks_dir() / f"{VIBRATE}.json").read_text())
    (tmp_path / f"{VIBRATE}.json").write_text(json.dumps(good))
    wrong = {**good, "id": "clock-wrong", "reference_solution": {"language": "actions", "code": "tap(2)\ntap(3)\n"}}
    (tmp_path / "clock-wrong.json").write_text(json.dumps(wrong))
    res = _cli(["tasks", "check", "--dir", str(tmp_path)])
    assert res.exit_code != 0
    lines = res.output.strip().splitlines()
    assert f"ok   {VIBRATE}: start 0.00, solved 1.00 (actions replayed on the device)" in lines
    assert "FAIL clock-wrong: start 0.00, solved 0.00 (actions replayed on the device)" in lines  # dark theme, not vibrate


def test_phone_task_files_are_checked_for_device_paths_and_fitting_solutions(tmp_path) -> None:
    good = json.loads((tasks_dir() / f"{VIBRATE}.json").read_text())
    cases = {
        "rel-output": ({**good, "outputs": ["sdcard/state.json"]}, "not an absolute device path"),
        "no-apps": ({**good, "apps": []}, "names the app package"),
        "python-ref": ({**good, "reference_solution": {"language": "python", "code": "pass"}}, "does not fit env 'phone'"),
    }
    for name, (raw, msg) in cases.items():
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps({**raw, "id": name}))
        with pytest.raises(DataError, match=msg):
            load_task(path)
    ws = json.loads((tasks_dir() / "os-error-lines.json").read_text())
    path = tmp_path / "actions-ws.json"
    path.write_text(json.dumps({**ws, "id": "actions-ws", "reference_solution": {"language": "actions", "code": "tap(1)"}}))
    with pytest.raises(DataError, match="does not fit env 'workspace'"):
        load_task(path)


def test_tasks_setup_writes_the_device_mirror(tmp_path: Path) -> None:
    task = load_task(tasks_dir() / f"{VIBRATE}.json")
    task.prepare(tmp_path)
    assert json.loads(local_path(tmp_path, STATE_PATH).read_text())["vibrate"] is True


def test_a_phone_task_routed_to_a_code_agent_fails_without_touching_the_files(tmp_path, pool, scripted) -> None:
    task = load_task(tasks_dir() / f"{VIBRATE}.json")
    edit = ("```python\nimport json, pathlib\np = pathlib.Path('sdcard/Android/data/com.example.clock/files/state.json')\n"
            "s = json.loads(p.read_text()); s['vibrate'] = False; p.write_text(json.dumps(s))\n```\nDONE")
    llm = scripted([edit])
    row = run_task(task, pool=pool, llm=llm, out_dir=tmp_path, options=ExecOptions(), agent="CoderAgent")
    assert (row["success"], row["status"], row["error"], row["agents"]) == (False, "wrong_env", None, ["CoderAgent"])
    assert "CoderAgent acts on a workspace; this task needs a phone" in row["agent_error"] and llm.replies == [edit]  # never asked: no workspace to edit


def test_a_malformed_device_is_one_line_before_anything_runs(tmp_path) -> None:
    import subprocess
    import sys

    out = tmp_path / "run"
    proc = subprocess.run([sys.executable, "-m", "agentlab.cli", "exec", "--tasks", str(tasks_dir() / f"{VIBRATE}.json"),
                           "--out", str(out), "--device", "emulator-5554@host"], capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "--device 'emulator-5554@host'" in lines[0] and "host:port" in lines[0], proc.stderr
    assert not (out / "results.jsonl").exists()  # nothing was run or written
