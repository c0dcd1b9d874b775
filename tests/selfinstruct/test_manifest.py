"""A self-instruct run folder records its manifest; a resumed run appends what changed, never refuses."""

from __future__ import annotations

from agentlab.record.manifest import read_manifest
from agentlab.selfinstruct.config import SelfInstructConfig, Thresholds

from .conftest import ScriptedBackend
from .test_store_pipeline import GOOD, run_selfinstruct_quiet


def test_selfinstruct_writes_a_manifest_and_records_each_resume(tmp_path, pool, fast) -> None:  # type: ignore[no-untyped-def]
    th = Thresholds(scorer=fast.describe()["scorer"], num_layers=6, tau1=0.0, tau2=0.95, leakage_tau=0.99)
    th.save(tmp_path / "th.json")
    common = dict(per_agent=13, max_rounds=1, prompts_per_round=1, sequences_per_prompt=1, seed=3,
                  thresholds=tmp_path / "th.json", leakage=False, out_dir=tmp_path / "out")
    run_selfinstruct_quiet(SelfInstructConfig(agents=["ClockAgent"], **common), pool, ScriptedBackend([GOOD]), fast)
    m = read_manifest(tmp_path / "out" / "manifest.json")
    assert m.command == "selfinstruct" and m.seeds == [3] and m.resumes == []
    assert m.models["generator"] == {"model_id": "scripted", "backend": "ScriptedBackend"}
    assert m.models["sentence_encoder"]["fingerprint"] and "selfinstruct/completion" in m.prompts
    assert m.options["agents"] == ["ClockAgent"] and "out_dir" not in m.options and "ClockAgent" in m.documents
    # another agent joins the same folder: the journal allows it; the manifest records the change
    run_selfinstruct_quiet(SelfInstructConfig(agents=["SpotifyAgent"], **common), pool, ScriptedBackend([GOOD]), fast)
    again = read_manifest(tmp_path / "out" / "manifest.json")
    assert again.options["agents"] == ["ClockAgent"]  # what the folder began with
    (resume,) = again.resumes
    assert resume["changed"] == ["option agents changed (['ClockAgent'] -> ['SpotifyAgent'])"]
    assert resume["git"]["commit"] == m.git["commit"]
