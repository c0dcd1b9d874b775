"""``agentlab exec --budget`` (issue #43): a token, dollar or wall-clock limit stops a run from
starting episodes, keeps every row, records the stop in the manifest, and ``--resume`` continues
under a new budget; rows carry ``usd`` from the price table.

Real pieces: ``agentlab exec`` in-process through its command line, a loopback OpenAI-compatible
endpoint reporting known token counts per answer, real task files solved by real programs.
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentlab.record.budget import Budget, BudgetMeter
from agentlab.errors import ConfigError
from agentlab.fileio import read_jsonl
from agentlab.llm.prices import PriceTable
from agentlab.llm.testing import LoopbackChatServer
from agentlab.tasks.spec import ExecTask, load_task, tasks_dir

#: four workspace tasks with reference solutions, in the order a run takes them (sorted ids)
IDS = ["general-csv-to-markdown", "general-iso-dates", "general-json-to-csv", "os-error-lines"]
#: every answer reports this many prompt and completion tokens: one model call per episode below
USAGE = (100, 10)


def _solve(task: ExecTask) -> str:
    sol = task.reference_solution
    assert sol is not None
    return f"Solving it.\n```{sol.language}\n{sol.code.rstrip()}\n```\nDONE"


class Model:
    """The loopback model: it solves the tasks in ``solves`` and answers the rest without a program
    (a failed episode: with --max-steps 1 every episode makes exactly one call)."""

    def __init__(self, ids: list[str], solves: set[str], *, delay_s: float = 0.0) -> None:
        self.tasks = [load_task(tasks_dir() / f"{i}.json") for i in ids]
        self.solves = solves
        self.server = LoopbackChatServer(self.reply, usage=USAGE, delay_s=delay_s)

    def reply(self, body: dict, k: int) -> str:
        text = "\n".join(str(m.get("content")) for m in body["messages"])
        task = next((t for t in self.tasks if t.instruction in text), None)
        return _solve(task) if task is not None and task.id in self.solves else "I cannot tell which task this is."

    def asked(self) -> list[str]:
        """The task of every request, in order."""
        out = []
        for req in self.server.requests:
            text = "\n".join(str(m.get("content")) for m in req["messages"])
            out.append(next(t.id for t in self.tasks if t.instruction in text))
        return out


def loopback_models():  # type: ignore[no-untyped-def]
    """The ``model`` fixture's body: ``model(ids, solves, delay_s)`` starts a :class:`Model`; all are closed after."""
    made: list[Model] = []

    def make(ids: list[str] = IDS, solves: set[str] | None = None, delay_s: float = 0.0) -> Model:
        m = Model(ids, set(ids) if solves is None else solves, delay_s=delay_s)
        made.append(m)
        return m

    yield make
    for m in made:
        m.server.close()


@pytest.fixture(name="model")
def _model():  # type: ignore[no-untyped-def]
    yield from loopback_models()


def task_folder(tmp_path: Path, ids: list[str] = IDS) -> Path:
    folder = tmp_path / "tasks"
    folder.mkdir(exist_ok=True)
    for i in ids:
        (folder / f"{i}.json").write_text((tasks_dir() / f"{i}.json").read_text())
    return folder


def run_exec(capsys, tmp_path: Path, model: Model, out: Path, *extra: str, ids: list[str] = IDS) -> tuple[int, list[str], str]:  # type: ignore[no-untyped-def]
    """``agentlab exec`` as a shell runs it: (exit status, stdout lines, stderr)."""
    from agentlab.cli import exit_status

    cfg = tmp_path / "llm.yaml"
    cfg.write_text(f"llm:\n  kind: openai\n  base_url: {model.server.url}\n  model: loopback\n  api_key_env: PATH\n")
    capsys.readouterr()
    code = exit_status(["exec", "--tasks", str(task_folder(tmp_path, ids)), "--out", str(out), "--llm-config", str(cfg),
                        "--agent", "CoderAgent", "--sandbox", "none", "--max-steps", "1", *extra])
    got = capsys.readouterr()
    return code, got.out.strip().splitlines(), got.err


def budget_line(lines: list[str]) -> str:
    (line,) = [ln for ln in lines if ln.startswith("budget: ")]
    return line


def manifest(out: Path) -> dict:
    return json.loads((out / "manifest.json").read_text())


def test_a_token_budget_stops_after_the_right_task_and_resume_finishes_under_a_new_one(tmp_path, capsys, model) -> None:
    m, out = model(), tmp_path / "run"
    code, lines, err = run_exec(capsys, tmp_path, m, out, "--budget", "tokens=250")
    # 110 tokens an episode: after two (220) a third would pass 250, so it never starts
    assert code == 0, err
    rows = read_jsonl(out / "results.jsonl")
    assert [r["id"] for r in rows] == IDS[:2] and all(r["success"] and r["tokens_in"] + r["tokens_out"] == 110 for r in rows)
    assert m.asked() == IDS[:2]
    assert budget_line(lines) == ("budget: stopped by tokens (220 of 250 tokens spent on 2 episode(s)); 2 episode(s) not "
                                  "run: continue with --resume --budget LIMITS (a new budget for the rest)")
    assert lines[-1] == "execution_acc=1.0000 n=2 harness_errors=0"  # the last line keeps its contract
    block = manifest(out)["budget"]
    assert (block["limits"], block["spent"]["tokens"], block["stopped_by"], block["episodes"], block["left"]) == (
        {"tokens": 250.0}, 220, "tokens", 2, 2)
    assert not (out / "episodes" / IDS[2]).exists()

    # the new budget counts only what the resumed part spends (220 earlier tokens do not count)
    code, lines, err = run_exec(capsys, tmp_path, m, out, "--resume", "--budget", "tokens=300")
    assert code == 0, err
    assert [r["id"] for r in read_jsonl(out / "results.jsonl")] == IDS and m.asked() == IDS
    assert budget_line(lines) == "budget: within limits (220 of 300 tokens spent on 2 episode(s))"
    assert "(2 run, 2 kept from before)" in "\n".join(lines)
    now = manifest(out)
    assert now["budget"]["stopped_by"] is None and now["budget"]["spent"]["tokens"] == 220
    assert [b["stopped_by"] for b in now["budget_history"]] == ["tokens"] and len(now["resumes"]) == 1


def test_a_dollar_budget_with_a_price_table_and_usd_in_every_row(tmp_path, capsys, model) -> None:
    prices = tmp_path / "prices.yaml"
    prices.write_text("prices:\n  loopback:\n    input: 1000   # USD per million tokens\n    output: 2000\n")
    m, out = model(), tmp_path / "run"
    code, lines, err = run_exec(capsys, tmp_path, m, out, "--budget", "usd=0.3", "--prices", str(prices))
    # 100 x 1000/1e6 + 10 x 2000/1e6 = 0.12 USD an episode: two (0.24), a third would pass 0.3
    assert code == 0, err
    rows = read_jsonl(out / "results.jsonl")
    assert [r["usd"] for r in rows] == [0.12, 0.12]
    assert budget_line(lines).startswith("budget: stopped by usd (0.24 of 0.3 usd spent on 2 episode(s)); 2 episode(s)")
    assert manifest(out)["budget"]["spent"]["usd"] == pytest.approx(0.24)
    # without a price for the model a row costs 0 USD, but still says so
    code, _, err = run_exec(capsys, tmp_path, m, tmp_path / "free")
    assert code == 0, err
    assert [r["usd"] for r in read_jsonl(tmp_path / "free" / "results.jsonl")] == [0.0] * 4


def test_a_seconds_budget_cuts_the_episode_in_flight_and_resume_carries_it_out(tmp_path, capsys, model) -> None:
    m, out = model(IDS[:1], delay_s=4.0), tmp_path / "run"
    t0 = time.monotonic()
    code, lines, err = run_exec(capsys, tmp_path, m, out, "--budget", "seconds=1", ids=IDS[:1])
    assert code == 0, err
    assert time.monotonic() - t0 < 3.5, "the episode in flight was not cut at the limit"
    assert not (out / "results.jsonl").exists() or read_jsonl(out / "results.jsonl") == []  # cut: no row, no failure
    assert budget_line(lines).startswith("budget: stopped by seconds (") and "1 episode(s) not run" in budget_line(lines)
    assert manifest(out)["budget"]["stopped_by"] == "seconds"
    m.server.delay_s = 0.0
    code, lines, err = run_exec(capsys, tmp_path, m, out, "--resume", ids=IDS[:1])
    assert code == 0, err
    (row,) = read_jsonl(out / "results.jsonl")
    assert row["success"] and lines[-1] == "execution_acc=1.0000 n=1 harness_errors=0"
    assert manifest(out)["budget"] is None and manifest(out)["budget_history"][0]["stopped_by"] == "seconds"


def test_a_seconds_budget_starts_no_episode_that_would_outlast_it(tmp_path, capsys, model) -> None:
    # each episode waits 1 s for its answer: after the first (> 1 s) a second would end past 2 s
    m, out = model(IDS[:3], delay_s=1.0), tmp_path / "run"
    code, lines, err = run_exec(capsys, tmp_path, m, out, "--budget", "seconds=2", ids=IDS[:3])
    assert code == 0, err
    assert [r["id"] for r in read_jsonl(out / "results.jsonl")] == IDS[:1] and m.asked() == IDS[:1]
    assert budget_line(lines).startswith("budget: stopped by seconds (") and "2 episode(s) not run" in budget_line(lines)


@pytest.mark.parametrize(("arg", "says"), [
    ("tokens=lots", "--budget: tokens='lots' is not a whole number of tokens"),
    ("tokens=1.5", "--budget: tokens='1.5' is not a whole number of tokens"),
    ("dollars=3", "--budget: unknown limit 'dollars'; known: tokens, usd, seconds"),
    ("usd=-1", "--budget: usd='-1' must be a positive number"),
    ("usd=nan", "--budget: usd='nan' must be a positive number"),
    ("seconds", "--budget: 'seconds' is not LIMIT=VALUE"),
    ("tokens=5,tokens=6", "--budget: tokens is given twice"),
    ("", "--budget '': give LIMIT=VALUE items"),
])
def test_a_malformed_budget_is_one_line_naming_it(tmp_path, capsys, model, arg, says) -> None:
    code, _, err = run_exec(capsys, tmp_path, model(), tmp_path / "run", "--budget", arg)
    assert code == 1 and len(err.strip().splitlines()) == 1 and err.startswith(f"error: {says}"), err
    assert not (tmp_path / "run").exists()  # refused before anything was touched


@pytest.mark.parametrize(("text", "says"), [
    ("prices:\n  loopback:\n    inputs: 1\n", "prices.yaml:3: prices.loopback.inputs: unknown key"),
    ("prices:\n  loopback:\n    input: -1\n", "prices.yaml:3: prices.loopback.input: Input should be greater than or equal to 0"),
    ("prices:\n  loopback:\n    input: cheap\n", "prices.yaml:3: prices.loopback.input: Input should be a valid number"),
    ("price:\n  loopback: {}\n", "prices.yaml:1: price: unknown key"),
    ("", "prices.yaml: price file is empty"),
])
def test_a_malformed_price_file_is_one_line(tmp_path, capsys, model, text, says) -> None:
    prices = tmp_path / "prices.yaml"
    prices.write_text(text)
    code, _, err = run_exec(capsys, tmp_path, model(), tmp_path / "run", "--prices", str(prices))
    assert code == 1 and len(err.strip().splitlines()) == 1 and f"{prices.parent}/{says}" in err, err


def test_price_files_layer_env_then_option_and_roles_are_priced_by_their_own_model(tmp_path) -> None:
    a, b = tmp_path / "a.yaml", tmp_path / "b.yaml"
    a.write_text("prices:\n  m1: {input: 1, output: 2}\n  m2: {input: 5}\n")
    b.write_text("prices:\n  m1: {input: 10, output: 20}\n")
    table = PriceTable.load(b, env={"AGENTLAB_PRICES": str(a)})
    assert table.usd("m1", 1_000_000, 0) == 10 and table.usd("m2", 1_000_000, 1_000_000) == 5  # b wins for m1
    assert table.usd("local-model", 10**9, 10**9) == 0.0  # not listed: free (the embedded models)
    row = {"model_id": "m1", "tokens_in": 3, "tokens_out": 3, "usage_by_role": {
        "default": {"model_id": "m1", "tokens_in": 1_000, "tokens_out": 1_000},
        "grounder": {"model_id": "m2", "tokens_in": 2_000, "tokens_out": 0},
        "reviewer": {"model_id": "free-local", "tokens_in": 5, "tokens_out": 5}}}
    assert table.row_usd(row) == pytest.approx(0.01 + 0.02 + 0.01)
    assert table.unpriced(row) == {"free-local"}
    assert PriceTable.load(env={}).prices == {}  # the shipped table lists no model
    with pytest.raises(ConfigError, match="price file not found"):
        PriceTable.load(env={"AGENTLAB_PRICES": str(tmp_path / "missing.yaml")})


def test_the_budget_rule_counts_episodes_in_flight_and_uses_earlier_rows_until_one_finishes() -> None:
    meter = BudgetMeter(Budget(tokens=1000), earlier=[{"tokens_in": 300, "tokens_out": 0}])
    assert meter.over() is None and meter.over(in_flight=3) == "tokens"  # 4 x 300 > 1000
    meter.add({"tokens_in": 100, "tokens_out": 0})  # now its own mean (100) counts, not the earlier 300
    assert meter.over(in_flight=8) is None and meter.over(in_flight=9) == "tokens"
    meter.add({"tokens_in": 900, "tokens_out": 0})
    assert meter.admit() is False and meter.stopped_by == "tokens" and meter.admit() is False
    assert BudgetMeter(Budget(seconds=5.0)).deadline < math.inf and BudgetMeter(Budget(tokens=1)).deadline == math.inf


@given(tokens=st.none() | st.integers(1, 10**12), usd=st.none() | st.floats(1e-4, 1e6), seconds=st.none() | st.floats(0.1, 1e7),
       flip=st.booleans())
def test_a_budget_reads_back_any_subset_in_any_order(tokens, usd, seconds, flip) -> None:
    items = [f"{k}={v!r}" for k, v in (("tokens", tokens), ("usd", usd), ("seconds", seconds)) if v is not None]
    if not items:
        return
    budget = Budget.parse(" , ".join(reversed(items) if flip else items))
    assert budget == Budget(tokens, usd, seconds) and Budget.parse(str(budget)).limits().keys() == budget.limits().keys()
