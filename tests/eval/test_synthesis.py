"""Reverse synthesis of multi-agent tasks: joining tasks, the filters, the run, the shipped set."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from agentlab.errors import DataError
from agentlab.tasks.spec import MULTI_APP_DOMAIN, load_task, load_tasks, tasks_dir
from agentlab.synthesis.combine import (
    Part,
    collisions,
    combine,
    combined_id,
    missing_targets,
    targets,
    template_instruction,
)
from agentlab.synthesis.run import (
    Synthesizer,
    SynthesisConfig,
    Wording,
    calibrate,
    parse_reply,
    verify,
    write,
)
from agentlab.envs.workspace import Workspace, WorkspaceConfig
from agentlab.llm.base import ChatMessage, LLMBackend, SamplingParams
from agentlab.eval import public_lists

needs_lists = pytest.mark.skipif(not public_lists.available(), reason=public_lists.absent_reason())


def part(task_id: str, agent: str) -> Part:
    return Part(load_task(tasks_dir() / f"{task_id}.json"), agent)


ERRORS = part("os-error-lines", "Friday")
JPEG = part("gimp-png-to-jpeg", "ImageAgent")
SHEET = part("calc-sort-scores", "SheetAgent")


class FakeScorer:
    """TEST DOUBLE for BERTScore: a fixed score per reference text (default 0.9)."""

    def __init__(self, per_ref: dict[str, float] | None = None) -> None:
        self.per_ref = per_ref or {}

    def pairs(self, cands: list[str], refs: list[str]) -> np.ndarray:
        return np.array([self.per_ref.get(r, 0.9) for r in refs], dtype=np.float32)

    def matrix(self, cands: list[str], refs: list[str]) -> np.ndarray:
        return np.array([[self.per_ref.get(r, 0.9) for r in refs] for _ in cands], dtype=np.float32)

    def describe(self) -> dict[str, str]:
        return {"kind": "fake"}


class OneReply(LLMBackend):
    """TEST DOUBLE for the generator: answers every prompt with one fixed reply."""

    model_id = "one-reply-test-double"

    def __init__(self, reply: str) -> None:
        self.reply, self.prompts = reply, []

    def chat(self, messages: list[ChatMessage], params: SamplingParams | None = None) -> list[str]:
        self.prompts.append(messages[-1].content)
        return [self.reply]

    def complete(self, prompt: str, params: SamplingParams | None = None) -> list[str]:
        self.prompts.append(prompt)
        return [self.reply]


# -- joining tasks ----------------------------------------------------------------------------
def test_combine_takes_the_union_the_conjunction_and_the_plan():
    parts = [ERRORS, JPEG, SHEET]
    task = combine(parts, template_instruction(parts))
    assert task.id == "multi-os-error-lines-gimp-png-to-jpeg-calc-sort-scores"
    assert (task.domain, task.env, task.agent) == (MULTI_APP_DOMAIN, "workspace", None)
    assert [s["path"] for s in task.setup] == [s["path"] for p in parts for s in p.task.setup]
    assert task.outputs == ["errors.txt", "logo.jpg", "scores.xlsx"]
    assert task.apps == list(dict.fromkeys(a for p in parts for a in p.task.apps))
    assert task.evaluator.conj == "and"
    assert task.evaluator.funcs == [f for p in parts for f in p.task.evaluator.funcs]
    assert [(s.agent, s.subtask) for s in task.plan] == [(p.agent, p.task.instruction) for p in parts]
    assert task.problems() == []


def test_the_combined_task_fails_at_the_start_and_only_the_whole_reference_passes(tmp_path):
    task = combine([ERRORS, JPEG], template_instruction([ERRORS, JPEG]))
    assert verify(task) is None  # start 0, the parts' solutions in order score 1
    with Workspace(tmp_path / "ws", WorkspaceConfig(timeout_s=30)) as ws:
        task.prepare(ws.root)
        assert ws.run_bash(ERRORS.task.reference_solution.code).ok  # only the first part done
        half = task.evaluate(ws.root)
        assert half.score == 0.0 and any(c.score == 1.0 for c in half.checks)


def test_a_failing_part_stops_the_reference_solution():
    broken = Part(ERRORS.task.model_copy(update={"reference_solution": ERRORS.task.reference_solution.model_copy(
        update={"code": "exit 3"})}), "Friday")
    task = combine([broken, JPEG], template_instruction([broken, JPEG]))
    assert "python3 -I - <<'AGENTLAB_PART_2'" in task.reference_solution.code
    assert verify(task).startswith("reference solution failed")


def test_colliding_parts_are_found_and_refused():
    hide, indent = part("vscode-hide-pycache", "VSAgent"), part("vscode-indent-two-spaces", "CoderAgent")
    assert collisions([hide, indent]) == [
        "vscode-hide-pycache and vscode-indent-two-spaces share .vscode/settings.json"]
    assert collisions([ERRORS, JPEG]) == []
    with pytest.raises(DataError, match="collide"):
        combine([hide, indent], "x")
    with pytest.raises(DataError, match="distinct agents"):
        combine([ERRORS, Part(JPEG.task, "Friday")], "x")


def test_a_folder_collides_with_the_files_inside_it():
    moves = part("os-move-logs", "Friday")  # judged on logs/app.log
    fake = Part(JPEG.task.model_copy(update={"id": "fake", "setup": [{"type": "write_text", "path": "logs",
                                                                      "content": "x"}]}), "ImageAgent")
    assert collisions([moves, fake]) and collisions([fake, moves])


def test_targets_are_outputs_else_judged_paths_plus_spelled_out_literals():
    assert targets(ERRORS.task) == ["errors.txt"]
    assert targets(part("os-move-logs", "Friday").task) == ["config.yaml", "logs"]
    assert targets(part("os-delete-bak-files", "Friday").task) == ["project"]
    assert targets(part("chrome-add-bookmark", "CoderAgent").task) == [
        ".config/chromium/Default/Bookmarks", "Python docs", "https://docs.python.org/3/"]


def test_missing_targets_names_the_part_and_what_is_missing():
    parts = [ERRORS, JPEG]
    assert missing_targets(template_instruction(parts), parts) == []
    assert missing_targets("Copy the ERROR lines of server.log into errors.txt and convert the logo.", parts) == [
        "gimp-png-to-jpeg: logo.jpg"]


def test_template_wording_joins_the_parts_in_order():
    text = template_instruction([ERRORS, JPEG, SHEET])
    assert text.startswith("First, copy every line") and " Then, convert logo.png" in text
    assert " Finally, " in text and text.index("errors.txt") < text.index("logo.jpg") < text.index("scores.xlsx")
    with pytest.raises(DataError):
        template_instruction([ERRORS])


def test_ids_are_shortened_at_word_boundaries():
    long = Part(ERRORS.task.model_copy(update={"id": "thunderbird-senders-to-contacts-and-more"}), "CoderAgent")
    assert combined_id([long, JPEG]) == "multi-thunderbird-senders-to-gimp-png-to-jpeg"


# -- the filters and the run ------------------------------------------------------------------
def test_parse_reply_keeps_one_sentence_and_drops_list_items_and_fragments():
    assert parse_reply("Request: Please copy the lines into errors.txt and convert logo.png.\nmore") == \
        "Please copy the lines into errors.txt and convert logo.png."
    assert parse_reply("1. Convert grades.csv into Excel workbook grades.xlsx.") is None
    assert parse_reply("Create a new sheet with the name of") is None
    assert parse_reply("\n\n") is None


def test_calibration_picks_the_threshold_that_separates_own_from_unrelated():
    cal = calibrate([0.8, 0.9, 0.85, 0.6, 0.95], [0.1, 0.3, 0.75, 0.2])
    assert cal.threshold == 0.8 and cal.tpr == 0.8 and cal.fpr == 0.0
    assert calibrate([0.8, 0.7], [0.75, 0.1]).threshold == 0.7  # a tie goes to the lower threshold
    assert "Threshold **0.800**" in cal.describe()
    with pytest.raises(Exception, match="--threshold"):
        calibrate([], [0.1])


def _run(parts, scorer, backend=None, **cfg):  # type: ignore[no-untyped-def]
    config = SynthesisConfig(pairs=1, triples=0, threshold=0.5, **cfg)
    return Synthesizer(parts, scorer, Wording(backend, config), config, check=lambda t: None).run()


def test_bertscore_below_threshold_for_one_part_rejects_the_wording():
    low = FakeScorer({JPEG.task.instruction: 0.3})
    report = _run([ERRORS, JPEG], low)
    assert report.accepted == [] and report.candidates == 1
    assert report.rejected == {"template: BERTScore below threshold (part 2)": 1} or \
        report.rejected == {"template: BERTScore below threshold (part 1)": 1}
    ok = _run([ERRORS, JPEG], FakeScorer())
    assert [a.source for a in ok.accepted] == ["template"] and ok.accepted[0].scores == pytest.approx([0.9, 0.9])


def test_a_generated_wording_is_kept_when_it_names_every_target_and_scores_high_enough():
    good = "Please copy the ERROR lines of server.log into errors.txt, then save logo.png as logo.jpg."
    report = _run([ERRORS, JPEG], FakeScorer(), OneReply(good))
    assert [(a.source, a.task.instruction) for a in report.accepted] == [("generated", good)]
    vague = "Please copy the error lines into a file and then convert the logo to a JPEG."
    report = _run([ERRORS, JPEG], FakeScorer(), OneReply(vague))
    assert [a.source for a in report.accepted] == ["template"]
    assert report.rejected == {"generated: a target not named": 1}
    report = _run([ERRORS, JPEG], FakeScorer(), OneReply("1. Convert"))
    assert report.rejected == {"generator: reply unparseable": 1}
    assert "'1. Convert'" in report.examples["generator: reply unparseable"][0]


def test_collisions_and_interference_are_counted_not_accepted():
    hide, indent = part("vscode-hide-pycache", "VSAgent"), part("vscode-indent-two-spaces", "CoderAgent")
    assert _run([hide, indent], FakeScorer()).rejected == {"collision": 1}
    config = SynthesisConfig(pairs=1, triples=0, threshold=0.5)
    report = Synthesizer([ERRORS, JPEG], FakeScorer(), Wording(None, config), config,
                         check=lambda t: "reference solution scores 0.50").run()
    assert report.accepted == [] and sum(report.rejected.values()) == 1
    assert "reference solution scores 0.50" in report.examples["interference (start 0 / reference 1 failed)"][0]


def test_write_replaces_the_previous_run_and_records_provenance(tmp_path):
    report = _run([ERRORS, JPEG], FakeScorer())
    first = write(report, tmp_path, tmp_path / "multi", "agentlab tasks synthesize --pairs 1")
    task = load_task(first[0])
    assert task.plan is not None and task.domain == MULTI_APP_DOMAIN
    manifest = json.loads((tmp_path / "multi" / "manifest.json").read_text())
    assert manifest["tasks"][0] | {"scores": None} == {"id": task.id, "source": "template", "scores": None,
                                                      "parts": ["os-error-lines", "gimp-png-to-jpeg"],
                                                      "agents": ["Friday", "ImageAgent"]}
    assert "agentlab tasks synthesize --pairs 1" in (tmp_path / "multi" / "REPORT.md").read_text()
    empty = _run([ERRORS, JPEG], FakeScorer({ERRORS.task.instruction: 0.1}))
    write(empty, tmp_path, tmp_path / "multi", "again")
    assert not first[0].exists()


@needs_lists
def test_the_cli_synthesizes_into_a_folder_and_prints_the_report(tmp_path):
    for name in ("os-error-lines", "gimp-png-to-jpeg", "calc-sort-scores", "writer-docx-to-text"):
        (tmp_path / f"{name}.json").write_text((tasks_dir() / f"{name}.json").read_text())
    r = subprocess.run([sys.executable, "-m", "agentlab.cli", "tasks", "synthesize", "--out", str(tmp_path),
                        "--pairs", "2", "--triples", "1", "--no-generator"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "3 accepted" in r.stdout and "## BERTScore threshold" in r.stdout
    made = sorted(p.name for p in tmp_path.glob("multi-*.json"))
    assert len(made) == 3 and all(load_task(tmp_path / m).plan for m in made)


# -- the shipped set --------------------------------------------------------------------------
SHIPPED = [t for t in load_tasks() if t.id.startswith("multi-")]


def test_at_least_forty_synthesized_tasks_ship_with_gold_plans_and_provenance():
    assert len(SHIPPED) >= 40
    assert sum(len(t.plan) == 3 for t in SHIPPED) >= 10
    manifest = json.loads((tasks_dir() / "multi" / "manifest.json").read_text())
    listed = {e["id"]: e for e in manifest["tasks"]}
    assert set(listed) == {t.id for t in SHIPPED}
    for t in SHIPPED:
        agents = [s.agent for s in t.plan]
        assert t.domain == MULTI_APP_DOMAIN and len(set(agents)) == len(agents) >= 2, t.id
        assert listed[t.id]["agents"] == agents and listed[t.id]["source"] in ("generated", "template")
        assert missing_targets(t.instruction, [part(i, a) for i, a in zip(listed[t.id]["parts"], agents)]) == []
    assert (tasks_dir() / "multi" / "REPORT.md").is_file()


@needs_lists
def test_no_synthesized_instruction_leaks_from_the_public_benchmarks(scorer):
    from agentlab.eval.benchmarks import all_instructions
    from agentlab.paths import data_dir
    from agentlab.selfinstruct.config import Thresholds
    from agentlab.selfinstruct.fastscore import FastBertScore
    from agentlab.selfinstruct.leakage import LeakageFilter

    tau = Thresholds.load(data_dir() / "demos" / "thresholds.json").leakage_tau
    texts = [t.instruction for t in SHIPPED]
    check = LeakageFilter(FastBertScore(scorer), all_instructions(), tau).check(texts)
    leaked = [f"{texts[i]!r} ~ {check.nearest[i]!r}" for i in range(len(texts)) if check.leaked[i]]
    assert leaked == []


def test_calibration_skips_combinations_without_an_unrelated_one():
    """Four tasks: every triple shares a part with every other combination of any size but one
    pair; the run still calibrates on the pairs that have a disjoint partner."""
    config = SynthesisConfig(pairs=1, triples=1)
    four = [ERRORS, JPEG, SHEET, part("writer-docx-to-text", "WordAgent")]
    report = Synthesizer(four, FakeScorer(), Wording(None, config), config, check=lambda t: None).run()
    assert report.calibration is not None and report.calibration.own and len(report.accepted) == 2
    with pytest.raises(Exception, match="--threshold"):
        Synthesizer(four[:2], FakeScorer(), Wording(None, config), config, check=lambda t: None).run()
