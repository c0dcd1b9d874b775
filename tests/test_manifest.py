"""Run manifests: what is recorded, how two manifests are compared, and what a resume does."""

from __future__ import annotations

import subprocess

import pytest

from agentlab.errors import DataError
from agentlab.llm.config import LLMConfig
from agentlab.record.manifest import (
    Manifest,
    ManifestMismatchError,
    config_identity,
    differences,
    folder_sha256,
    git_state,
    mismatch_line,
    open_run,
    read_manifest,
)
from agentlab.llm.identity import weights_fingerprint


def manifest(**fields) -> Manifest:  # type: ignore[no-untyped-def]
    base = dict(command="exec", git={"commit": "a" * 40, "dirty": False}, packages={"torch": "2.13.0"},
                models={"agents": {"model_id": "m", "fingerprint": "f1"}}, prompts={"code/system": "1" * 64},
                documents={"SheetAgent": "2" * 64}, seeds=[0], options={"max_steps": 10}, tasks={"t1": "3" * 64})
    return Manifest(**{**base, **fields})


def test_git_state_of_a_checkout_and_outside_one(tmp_path) -> None:
    assert git_state(tmp_path) == {"commit": None, "dirty": None}
    repo = tmp_path / "repo"
    repo.mkdir()
    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args], check=True, capture_output=True)
    git("init", "-q")
    (repo / "a.txt").write_text("one\n")
    git("add", "a.txt")
    git("commit", "-qm", "one")
    state = git_state(repo)
    assert len(state["commit"]) == 40 and state["dirty"] is False
    (repo / "untracked.txt").write_text("runs are not code\n")
    assert git_state(repo)["dirty"] is False
    (repo / "a.txt").write_text("two\n")
    assert git_state(repo) == {"commit": state["commit"], "dirty": True}


def test_folder_hashes_follow_names_and_bytes(tmp_path) -> None:
    assert folder_sha256(tmp_path) is None and weights_fingerprint(tmp_path) is None
    (tmp_path / "config.json").write_text("{}")
    (tmp_path / "w.safetensors").write_bytes(b"\0" * 10)
    (tmp_path / ".hidden").write_text("ignored")
    h, w = folder_sha256(tmp_path), weights_fingerprint(tmp_path)
    (tmp_path / ".hidden").write_text("still ignored")
    assert folder_sha256(tmp_path) == h
    (tmp_path / "w.safetensors").write_bytes(b"\1" * 10)
    assert folder_sha256(tmp_path) != h and weights_fingerprint(tmp_path) != w
    (tmp_path / "notes.txt").write_text("not weights")
    assert weights_fingerprint(tmp_path) == weights_fingerprint(tmp_path)


def test_endpoint_and_embedded_identities() -> None:
    assert config_identity(LLMConfig(kind="openai", base_url="http://h:8000/v1", model="qwen")) == {
        "model_id": "qwen", "base_url": "http://h:8000/v1", "backend": "openai"}
    embedded = config_identity(LLMConfig())
    assert embedded["model_id"] == "embedded:smollm2-135m-instruct" and len(embedded["fingerprint"]) == 16
    missing = config_identity(LLMConfig(model="/no/such/model"))
    assert missing["fingerprint"] is None


def test_results_fields_refuse_code_and_packages_only_warn() -> None:
    old = manifest()
    assert differences(old, manifest()) == ([], [])
    refusing, warning = differences(old, manifest(git={"commit": "b" * 40, "dirty": True}, packages={"torch": "2.14.0"}))
    assert refusing == [] and warning == ["code changed (aaaaaaaa… -> bbbbbbbb… (dirty))", "package torch changed (2.13.0 -> 2.14.0)"]
    moved = manifest(models={"agents": {"model_id": "m", "fingerprint": "f1", "source": "/elsewhere"}})
    assert differences(old, moved) == ([], [])  # where a model lies is not what it is
    refusing, _ = differences(old, manifest(models={"agents": {"model_id": "m", "fingerprint": "f2"}},
                                            tasks={"t2": "3" * 64, "t3": "4" * 64, "t4": "5" * 64},
                                            seeds=[0, 1], documents={}))
    assert refusing == ["model agents changed (m f1 -> m f2)", "agent document SheetAgent removed",
                        "seeds changed ([0] -> [0, 1])", "3 task(s) added (t2, t3 and 1 more)", "1 task(s) removed (t1)"]
    line = mismatch_line(refusing, hint="do X")
    assert line == ("manifest differs: model agents changed (m f1 -> m f2); agent document SheetAgent removed; "
                    "seeds changed ([0] -> [0, 1]) (and 2 more difference(s)); do X")


def test_open_run_writes_checks_and_records_resumes(tmp_path, caplog) -> None:
    out = tmp_path / "run"
    open_run(tmp_path / "new", manifest(), resume=True)  # --resume on a new folder: nothing to warn about
    assert "no manifest" not in caplog.text
    out.mkdir()
    (out / "results.jsonl").write_text('{"id": "t1", "seed": 0}\n')
    open_run(out, manifest(), resume=True)  # a folder from before manifests: recorded now
    assert "no manifest" in caplog.text and read_manifest(out / "manifest.json").resumes == []
    open_run(out, manifest(git={"commit": "c" * 40, "dirty": False}), resume=True)
    assert "code changed (aaaaaaaa… -> cccccccc…) since the run began" in caplog.text
    (resume,) = read_manifest(out / "manifest.json").resumes
    assert resume["git"]["commit"] == "c" * 40 and resume["forced"] == []
    before = (out / "manifest.json").read_bytes()
    with pytest.raises(ManifestMismatchError, match=r"option max_steps changed \(10 -> 3\)"):
        open_run(out, manifest(options={"max_steps": 3}), resume=True)
    assert (out / "manifest.json").read_bytes() == before
    open_run(out, manifest(options={"max_steps": 3}), resume=False)  # a fresh run replaces it
    assert read_manifest(out / "manifest.json").options == {"max_steps": 3}
    (out / "manifest.json").write_text("{not json")
    with pytest.raises(DataError, match="manifest is not valid"):
        open_run(out, manifest(), resume=True)
