"""Trajectories: atomic per-step records with images, resume after a crash, replay into an env."""

from __future__ import annotations

import json

import pytest

from agentlab.envs import AndroidEnv
from agentlab.envs.actions.phone import Back, Finish, Tap
from agentlab.errors import DataError, InvalidActionError
from agentlab.envs.trajectory import TrajectoryRecorder, list_episodes, load_trajectory, replay


def _find(obs, text):  # type: ignore[no-untyped-def]
    return next(e.id for e in obs.elements if e.text == text)


def _record_episode(server, ep_dir):  # type: ignore[no-untyped-def]
    env = AndroidEnv(adb_port=server.port, settle=0)
    rec = TrajectoryRecorder(ep_dir, task="turn vibration off", env="android", agent="script")
    obs = env.reset(rec.meta.task)
    for action in (Tap(_find(obs, "Settings")), None):
        if action is None:
            vib = next(e.id for e in obs.elements if (e.resource_id or "").endswith("vibrate_switch"))
            action = Tap(vib)
        r = env.step(action)
        rec.record(obs, action, thought="scripted", action_text=action.to_call(), info={"pil": obs.screenshot, "n": 1})
        obs = r.observation
    rec.record(obs, Finish(), done=True)
    rec.finish("done")
    return rec


def test_record_and_load_round_trip(fake_adb, tmp_path) -> None:
    ep = tmp_path / "run1" / "ep0"
    _record_episode(fake_adb, ep)
    t = load_trajectory(ep)
    assert t.meta.task == "turn vibration off" and t.meta.status == "done"
    assert [s.step for s in t.steps] == [0, 1, 2]
    assert [a.call_name for a in t.actions()] == ["tap", "tap", "exit"]
    first = t.steps[0]
    assert (ep / first.screenshot).exists() and (ep / first.som).exists() and (ep / first.xml).exists()
    assert first.info == {"n": 1}  # the PIL image in info was not JSON: dropped, not crashed
    assert first.elements[0].text == "Alarms" and "[1] Button" in first.observation
    assert t.image(0).size == (540, 960) and t.image(0, som=True).size == (540, 960)
    assert [e.episode for e in list_episodes(tmp_path / "run1")] == ["ep0"]


def test_torn_last_line_is_dropped_and_recording_resumes(fake_adb, tmp_path) -> None:
    ep = tmp_path / "run" / "ep"
    _record_episode(fake_adb, ep)
    with open(ep / "traj.jsonl", "a", encoding="utf-8") as fh:
        fh.write('{"step": 3, "timesta')  # a crash in the middle of an append
    assert len(load_trajectory(ep).steps) == 3
    rec = TrajectoryRecorder(ep, task="turn vibration off")
    assert rec.next_step == 3 and rec.meta.status == "running"
    rec.record(None, Back(), error="resumed")
    t = load_trajectory(ep)
    assert [s.step for s in t.steps] == [0, 1, 2, 3] and t.final_error == "resumed"


def test_replay_reapplies_actions_with_element_remapping(fake_adb, tmp_path) -> None:
    ep = tmp_path / "run" / "ep"
    _record_episode(fake_adb, ep)
    assert fake_adb.device.app.vibrate is False
    fake_adb.device.app.vibrate = True
    fake_adb.device.app.stack = ["home"]
    t = load_trajectory(ep)
    # Shuffle the recorded numbering: replay must find the widgets by uid, not by number.
    for s in t.steps:
        for i, e in enumerate(s.elements):
            s.elements[i] = type(e)(**{**e.__dict__, "id": e.id + 100})
        if s.action and "element" in s.action:
            s.action["element"] += 100
    out = TrajectoryRecorder(tmp_path / "run" / "replay", task=t.meta.task)
    results = replay(t, AndroidEnv(adb_port=fake_adb.port, settle=0), recorder=out)
    assert results[-1].done and fake_adb.device.app.vibrate is False
    assert len(load_trajectory(tmp_path / "run" / "replay").steps) == 4


def test_replay_reports_a_missing_widget(fake_adb, tmp_path) -> None:
    ep = tmp_path / "run" / "ep"
    _record_episode(fake_adb, ep)
    fake_adb.device.app.stack = ["home", "alarms"]  # Settings button is not on this screen
    t = load_trajectory(ep)
    with pytest.raises(InvalidActionError, match="replay of step 0.*not on the replayed screen"):
        replay(t, AndroidEnv(adb_port=fake_adb.port, settle=0))


def test_bad_inputs_are_clear(tmp_path) -> None:
    with pytest.raises(DataError, match="no traj.jsonl"):
        load_trajectory(tmp_path)
    (tmp_path / "e").mkdir()
    (tmp_path / "e" / "traj.jsonl").write_text('{"step": 0}\nnot json\n{"step": 2, "timestamp": 1, "observation": ""}\n')
    with pytest.raises(DataError, match="traj.jsonl:2"):
        load_trajectory(tmp_path / "e")
    (tmp_path / "f").mkdir()
    (tmp_path / "f" / "traj.jsonl").write_text(json.dumps({"step": 0}) + "\n")
    with pytest.raises(DataError, match="not a step record"):
        load_trajectory(tmp_path / "f")
