"""PC-Agent's own two figures, read from its trajectories: the recovery rate and the manager's success.

The PC-Agent paper (appendix A.1, its Table 4) reports two metrics beside success and subtask
success, and issue 41 asks for both:

* **Recovery rate**: the share of instructions on which a *recovery* happened -- the agent noticed
  through reflection that an action went wrong and corrected it, whether or not the instruction was
  finished in the end. Read here from the reflection agent's verdicts
  (:mod:`agentlab.agents.pcagent.reflection`): within one subtask, a verdict that found a problem
  ("unexpected change" or "no effect") followed later by one that found the action "as intended".
  An episode with no reflection at all (the ``reflection=False`` ablation, or no action taken) has
  no recovery figure: it could not recover, so it is left out of the rate rather than counted 0.
* **Manager SR**: the share of instructions the manager agent decomposed correctly. The paper's
  authors judged that by hand; here the judgement is automatic and narrower, and says so: a plan is
  correct when the applications its subtasks name, in order (consecutive repeats merged, a subtask
  naming none continuing the one before), are exactly the task's applications in order (its
  ``apps``, as :func:`~agentlab.eval.benchmarks.domain_map` maps them to domains). Application
  names are read with the store's own lexicon (:class:`~agentlab.metaagent.mentions.ApplicationLexicon`:
  product names and file kinds from the agent documents), so "Open attendees.docx and read the
  names" names the word processor. Only tasks of two or more applications are judged: for one
  application every plan names the right one or none, which says nothing about decomposition.

Both read the trajectory and the task's ``apps`` only -- never the evaluator or a reference solution.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from agentlab.envs.trajectory import Trajectory, load_trajectory
from agentlab.errors import DataError
from agentlab.eval.benchmarks import domain_map
from agentlab.metaagent.mentions import ApplicationLexicon

#: the reflection verdicts that found something wrong with the action
PROBLEM_VERDICTS = frozenset({"unexpected change", "no effect"})
GOOD_VERDICT = "as intended"


@dataclass(frozen=True)
class PCAgentReading:
    """What one PC-Agent episode says about recovery and about its manager's plan."""

    #: a recovery happened (None: no reflection verdict in the episode)
    recovered: bool | None
    #: verdicts that found a problem
    problems: int
    #: the manager's subtasks (None: no manager plan was recorded)
    plan: list[str] | None


def recovered(verdicts: Iterable[tuple[int | None, str | None]]) -> bool | None:
    """Whether ``verdicts`` -- (subtask, verdict) in the order they were given -- hold a recovery:
    a problem verdict, then an "as intended" one within the same subtask (None: no verdict at all).
    An unknown verdict (the model gave none) neither finds a problem nor clears one."""
    seen = False
    troubled: set[int | None] = set()
    for subtask, verdict in verdicts:
        if verdict is None:
            continue
        seen = True
        if verdict in PROBLEM_VERDICTS:
            troubled.add(subtask)
        elif verdict == GOOD_VERDICT and subtask in troubled:
            return True
    return False if seen else None


def read_episode(traj: Trajectory) -> PCAgentReading:
    """The reflection verdicts and the manager's plan of one recorded episode
    (:mod:`agentlab.agents.pcagent.runner` writes them into each step's ``info["roles"]``)."""
    verdicts: list[tuple[int | None, str | None]] = []
    plan: list[str] | None = None
    for step in traj.steps:
        subtask = step.info.get("subtask")
        for role in step.info.get("roles") or []:
            if not isinstance(role, dict):
                continue
            if role.get("role") == "reflection":
                verdicts.append((subtask if isinstance(subtask, int) else None, role.get("verdict")))
            elif role.get("role") == "manager" and isinstance(role.get("plan"), list) and plan is None:
                # the runner's fallback when the manager gave no usable plan is the instruction as
                # one subtask: no decomposition was made, so it is an empty plan here
                fell_back = str(role.get("text", "")).startswith("no usable plan")
                plan = [] if fell_back else [str(s) for s in role["plan"]]
    return PCAgentReading(recovered(verdicts), sum(1 for _, v in verdicts if v in PROBLEM_VERDICTS), plan)


def task_domains(apps: Sequence[str]) -> list[str]:
    """A task's applications as domains, in order, consecutive repeats merged (an app the domain
    map does not know is kept under its own name, so it can never be matched by accident)."""
    known = domain_map().get("osworld_apps", {})
    out: list[str] = []
    for app in apps:
        dom = known.get(app.replace("-", "_")) or known.get(app.split("-")[-1]) or app
        if not out or out[-1] != dom:
            out.append(dom)
    return out


def plan_domains(plan: Sequence[str], lexicon: ApplicationLexicon, platform: str = "desktop") -> list[str]:
    """The applications ``plan``'s subtasks name, in order, consecutive repeats merged; a subtask
    naming none continues the one before and adds nothing."""
    out: list[str] = []
    for subtask in plan:
        for dom in lexicon.domains(subtask, platform):
            if not out or out[-1] != dom:
                out.append(dom)
    return out


def manager_correct(plan: Sequence[str] | None, apps: Sequence[str], lexicon: ApplicationLexicon,
                    platform: str = "desktop") -> bool | None:
    """The manager-success judgement of one plan (module docstring): None when the task has fewer
    than two applications (not judged); False when there is no plan or it has fewer subtasks than
    the task has applications (nothing was split per application)."""
    want = task_domains(apps)
    if len(want) < 2:
        return None
    if len(plan or []) < len(want):  # no plan, or fewer subtasks than applications: not split per application
        return False
    return plan_domains(plan or [], lexicon, platform) == want


def episode_metrics(episode: Path, apps: Sequence[str], lexicon: ApplicationLexicon) -> dict[str, bool | int | None]:
    """The row fields of one episode folder: ``recovered``, ``reflection_problems``, ``manager_ok``
    (each None where it does not apply). A folder whose trajectory cannot be read gives Nones, not
    an error: the figure is then missing for that row, and the rest of the table still stands."""
    try:
        reading = read_episode(load_trajectory(episode))
    except (DataError, OSError):
        return {"recovered": None, "reflection_problems": None, "manager_ok": None}
    return {"recovered": reading.recovered, "reflection_problems": reading.problems,
            "manager_ok": manager_correct(reading.plan, apps, lexicon) if reading.plan is not None else None}


def rate(values: Iterable[bool | None]) -> tuple[int, int]:
    """(true, judged) over ``values``, Nones left out."""
    judged = [v for v in values if v is not None]
    return sum(1 for v in judged if v), len(judged)


__all__ = ["GOOD_VERDICT", "PCAgentReading", "PROBLEM_VERDICTS", "episode_metrics", "manager_correct",
           "plan_domains", "rate", "read_episode", "recovered", "task_domains"]
