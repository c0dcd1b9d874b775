"""A run folder that may grow (``grow``): new tasks join its manifest; nothing else is let through."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentlab.record.manifest import ManifestMismatchError, build_manifest, manifest_path, open_run, read_manifest


def _tasks(tmp_path: Path, **texts: str) -> dict[str, Path]:
    out = {}
    for name, text in texts.items():
        path = tmp_path / f"{name}.json"
        path.write_text(text)
        out[name] = path
    return out


def test_added_tasks_join_only_when_the_folder_may_grow(tmp_path: Path) -> None:
    files = _tasks(tmp_path, a="{1}", b="{2}")
    out = tmp_path / "run"
    open_run(out, build_manifest("exec", models={}, seeds=[0], options={}, tasks={"a": files["a"]}), resume=False)
    bigger = build_manifest("exec", models={}, seeds=[0], options={}, tasks=files)
    with pytest.raises(ManifestMismatchError, match="1 task\\(s\\) added \\(b\\)"):
        open_run(out, bigger, resume=True)
    open_run(out, bigger, resume=True, grow=True)
    assert set(read_manifest(manifest_path(out)).tasks) == {"a", "b"}
    open_run(out, bigger, resume=True)  # now recorded: a plain resume with both is fine


def test_a_growing_folder_still_refuses_a_changed_task_or_option(tmp_path: Path) -> None:
    files = _tasks(tmp_path, a="{1}")
    out = tmp_path / "run"
    open_run(out, build_manifest("exec", models={}, seeds=[0], options={"max_steps": 3}, tasks=files), resume=False)
    files["a"].write_text("{changed}")
    with pytest.raises(ManifestMismatchError, match="task a changed"):
        open_run(out, build_manifest("exec", models={}, seeds=[0], options={"max_steps": 3}, tasks=files),
                 resume=True, grow=True)
    files["a"].write_text("{1}")
    with pytest.raises(ManifestMismatchError, match="max_steps"):
        open_run(out, build_manifest("exec", models={}, seeds=[0], options={"max_steps": 4}, tasks=files),
                 resume=True, grow=True)


def test_a_growing_folder_keeps_recorded_tasks_an_invocation_does_not_ask_for(tmp_path: Path) -> None:
    """Fewer arms chose this agent this time: its other episodes stay; a plain resume still refuses."""
    files = _tasks(tmp_path, a="{1}", b="{2}")
    out = tmp_path / "run"
    open_run(out, build_manifest("exec", models={}, seeds=[0], options={}, tasks=files), resume=False)
    fewer = build_manifest("exec", models={}, seeds=[0], options={}, tasks={"b": files["b"]})
    with pytest.raises(ManifestMismatchError, match="1 task\\(s\\) removed \\(a\\)"):
        open_run(out, fewer, resume=True)
    open_run(out, fewer, resume=True, grow=True)
    assert set(read_manifest(manifest_path(out)).tasks) == {"a", "b"}
    files["b"].write_text("{changed}")
    with pytest.raises(ManifestMismatchError, match="task b changed"):
        open_run(out, build_manifest("exec", models={}, seeds=[0], options={}, tasks={"b": files["b"]}),
                 resume=True, grow=True)
