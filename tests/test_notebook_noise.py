"""What an executed notebook must not carry: progress bars, library deprecation warnings, and our own
warnings about things the notebook does on purpose (issue #29). The end-to-end check over every
executed notebook is in tests/notebooks/test_workbench.py; these pin each cause."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import warnings

import pytest

from agentlab.notebooks import kernel_env


def _child_disables_tqdm() -> str:
    code = "from tqdm import tqdm; print(tqdm(range(1)).disable)"
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60).stdout.strip()


def test_kernels_start_without_tqdm_bars_and_the_runner_keeps_its_own(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.delenv("TQDM_DISABLE", raising=False)
    with kernel_env():
        from tqdm import tqdm

        assert _child_disables_tqdm() == "True"  # what a kernel started now sees
        assert tqdm(range(1)).disable is False  # papermill's cell bar in the runner still shows
    assert "TQDM_DISABLE" not in os.environ


def test_a_tqdm_setting_the_user_made_wins(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("TQDM_DISABLE", "0")
    with kernel_env():
        assert os.environ["TQDM_DISABLE"] == "0"
    assert os.environ["TQDM_DISABLE"] == "0"


def test_enrolment_hides_only_the_note_about_the_agents_it_is_enrolling() -> None:
    from agentlab.experiments.enrolment import _KnownMissingTokens

    note = _KnownMissingTokens(["AgentS2", "PCAgent"])
    fmt = "%s: %d pool agent(s) have no token and cannot be chosen: %s (add them with `agentlab train --add NAME`)"

    def record(n: int, names: str) -> logging.LogRecord:
        return logging.LogRecord("agentlab.metaagent.agenttoken", logging.WARNING, __file__, 1, fmt, ("base30", n, names), None)

    assert note.filter(record(2, "AgentS2, PCAgent")) is False
    assert note.filter(record(3, "AgentS2, PCAgent, NewAgent")) is True  # another agent without a token is still news
    other = logging.LogRecord("x", logging.WARNING, __file__, 1, "something else", None, None)
    assert note.filter(other) is True


def test_a_notebook_question_without_a_scripted_answer_is_not_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    from agentlab.dialogue.person import Question, ScriptedAnswers
    from agentlab.viz.ask import NotebookAsk

    def nobody(prompt: str) -> str:
        raise EOFError

    ask = NotebookAsk([], read=nobody, show=False)
    question = Question(kind="failed", step=2, agent="SheetAgent", subtask="sum the sales", text="Step 2 failed again. What now?")
    caplog.set_level(logging.INFO)
    assert ask(question).choice == "yes"
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]  # the card says it; nothing on stderr
    assert any("no scripted answer left" in r.getMessage() for r in caplog.records)
    caplog.clear()
    ScriptedAnswers.of([])(question)  # the CLI's --answers FILE that ran out still warns
    assert [r for r in caplog.records if r.levelno == logging.WARNING]


def test_lora_adapters_are_built_without_transformers_deprecation_warnings(backend) -> None:  # type: ignore[no-untyped-def]
    from agentlab.metaagent.baselines.lora import LoRARouter
    from agentlab.pool import AgentPool

    router = LoRARouter(AgentPool.from_dir(None).subset(["SheetAgent", "CalcAgent"]), progress=False, use_cache=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        router._build(fresh=True)
    assert router.peft_model is not None


@pytest.mark.parametrize("name", ["default", "full", "tiny"])
def test_the_main_job_never_rewrites_the_readme_pictures(name: str) -> None:
    """`make run` must not change tracked files: the README pictures come from `make figures`."""
    from agentlab.notebooks import PARAMS_DIR, RunParams

    assert RunParams.from_yaml(PARAMS_DIR / f"{name}.yaml").docs_img is None


def test_the_suite_shows_its_bar_only_on_a_terminal(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    """``execute(progress=True)`` (what notebooks call) writes no bar where stderr is not a terminal:
    a kernel's stderr, a log file, this captured stream."""
    from agentlab.llm.roles import Backends
    from agentlab.pool import AgentPool
    from agentlab.run import RunSpec, execute
    from agentlab.run.episode import ExecOptions
    from agentlab.run.worker import EpisodeRecipe, Worker

    execute(RunSpec(EpisodeRecipe(tmp_path, ExecOptions())), [], worker=Worker(AgentPool.from_dir(None), Backends(None)),  # type: ignore[arg-type]
            progress=True)
    assert "exec" not in capsys.readouterr().err
