"""Run folders for the viewer and report tests, made by the real episode runner on real task files.

The model is the scripted test double of tests/episode (``ScriptedBackend``: canned replies in
order); everything else is real: the sandboxed workspace running the code agent's programs, the
protocol-level fake adb device with the Clock app (screenshots, taps), the hub running a gold plan,
the COLA team, the evaluators and the manifest.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agentlab.run.episode import ExecOptions
from agentlab.tasks.spec import ExecTask, load_task, tasks_dir
from agentlab.pool import AgentPool

from ..episode.conftest import ScriptedBackend, py, suite
from ..episode.test_executed_plans import REPORT, TOTAL, two_step_task
from ..episode.test_phone_tasks import SOLVE_VIBRATE

CODE, PHONE, FAILED = "csv-sales-summary", "clock-vibrate-off", "os-error-lines"
PLAN = "multi-sales-report"


def solve(task_id: str) -> str:
    sol = load_task(tasks_dir() / f"{task_id}.json").reference_solution
    assert sol is not None
    return f"Solving it.\n```{sol.language}\n{sol.code.rstrip()}\n```\nDONE"


def exec_tasks() -> list[ExecTask]:
    """A code task, a phone task, a task the agent gives up on, and a two-agent gold plan."""
    return [load_task(tasks_dir() / f"{CODE}.json"), load_task(tasks_dir() / f"{PHONE}.json"),
            load_task(tasks_dir() / f"{FAILED}.json"), two_step_task()]


def replies(seeds: int = 1) -> list[str]:
    """The scripted replies for :func:`exec_tasks`, in the order the runner asks (seed by seed)."""
    one = ["```bash\nls\n```", solve(CODE), *SOLVE_VIBRATE, "I cannot do this.\nFAIL", py(TOTAL, "DONE"), py(REPORT, "DONE")]
    return one * seeds


def make_run(out: Path, pool: AgentPool, *, seed: int = 0, seeds: int = 1, max_steps: int = 4) -> Path:
    tasks = exec_tasks()
    llm = ScriptedBackend(replies(seeds))
    options = ExecOptions(max_steps=max_steps, seed=seed, seeds=seeds)
    suite(tasks, pool=pool, llm=llm, out_dir=out, options=options)
    return out


@pytest.fixture(scope="session")
def viz_pool() -> AgentPool:
    return AgentPool.from_dir(None)


@pytest.fixture(scope="session")
def exec_run(tmp_path_factory: pytest.TempPathFactory, viz_pool: AgentPool) -> Path:
    """One run folder: code, phone, failed and plan episodes (seed 0), with its manifest."""
    return make_run(tmp_path_factory.mktemp("viz-run") / "run", viz_pool)


@pytest.fixture(scope="session")
def cola_run(tmp_path_factory: pytest.TempPathFactory, viz_pool: AgentPool) -> Path:
    """A COLA team episode: the reviewer rejects the first attempt, the retry passes (team/ and -try1 folders)."""
    from agentlab.teams.cola.options import ColaOptions

    from ..teams.conftest import TeamScript
    from ..teams.test_cola_team import NO, ONE_STEP, SOLVE, TASK, WRONG, YES

    out = tmp_path_factory.mktemp("viz-cola") / "run"
    llm = TeamScript(planner=[ONE_STEP], agent=[WRONG, SOLVE], reviewer=[NO, YES])
    suite([TASK], pool=viz_pool, llm=llm, out_dir=out, options=ExecOptions(team="cola", max_steps=3, team_settings=ColaOptions()))
    return out
