"""Run ONE agent on ONE subtask of a plan, in the task's already-open shared env.

:func:`run_step` is the unit every team is built from (executed plans, COLA): it builds the
step's agent from its pool document's runner, tells it the hub's context and its subtask
(prompt ``teams/step``, which also quotes the whole task for reference; an agent whose
``step_request`` is ``"subtask"``, a slot-filling specialist, gets ``teams/step_specialist``: the
context and its subtask, without the whole task), lets it act on the
shared state with the run's per-step budget (``options.max_steps``) and the task's one
deadline, and returns a :class:`~agentlab.teams.hub.StepOutcome` with the files the step
produced. Each step has its own trajectory folder ``<episode>/step-<k>-<agent>/`` (k from 1)
whose first record carries the hub's role message.

Which env the step's agent acts on: the opened env itself when the agent acts on the task's
kind of env; a code agent on a desktop task edits the task's files through a workspace over
the same folder (as it would alone); any other pairing (a GUI agent on a workspace task) is a
``wrong_env`` outcome, not a crash. A harness problem (a document without a runner, an
env that cannot be built) is raised as the :class:`~agentlab.errors.AgentlabError` it is,
after the step's trajectory is closed.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

from agentlab.agents.base import build_agent, run_agent
from agentlab.tasks.env_kinds import CAN_ACT, ENV_KINDS
from agentlab.dialogue.templates import PromptTemplate, load_template
from agentlab.envs.base import Env
from agentlab.envs.task_env import TaskEnv
from agentlab.envs.workspace import Workspace
from agentlab.envs.workspace_env import WorkspaceEnv
from agentlab.errors import AgentlabError
from agentlab.tasks.spec import ExecTask
from agentlab.tasks.decisions import PlanStep
from agentlab.teams.base import ExecOptions, Job
from agentlab.teams.hub import Hub, StepOutcome, changed_files, final_output, snapshot, summarize
from agentlab.envs.trajectory import StepRecord, TrajectoryRecorder

log = logging.getLogger(__name__)

STEP_PROMPT = "teams/step"
#: the step request of a slot-filling specialist: the hub's context and its subtask, not the whole task
SPECIALIST_STEP_PROMPT = "teams/step_specialist"


@cache
def _step_template(name: str = STEP_PROMPT) -> PromptTemplate:
    return load_template(name)


def step_instruction(task: ExecTask, step: PlanStep, hub: Hub, index: int, *, whole_task: bool = True) -> str:
    """What the step's agent is asked: the hub's context (earlier steps' files and output), its
    subtask, and the whole task for reference -- unless ``whole_task`` is false, for an agent whose
    ``step_request`` is ``"subtask"`` (:attr:`agentlab.agents.tools.ToolAgent.step_request`: a
    specialist fills its slots from its request, and the other parts' values would compete)."""
    context = hub.context_for(index)
    if not whole_task:
        return _step_template(SPECIALIST_STEP_PROMPT).render(context=f"{context}\n\n" if context else "",
                                                             subtask=step.subtask.strip()).strip()
    return _step_template().render(context=f"{context}\n\n" if context else "", subtask=step.subtask.strip(),
                                   task=task.instruction.strip()).strip()


def step_folder(episode_dir: Path, index: int, agent: str) -> Path:
    """``<episode>/step-<k>-<agent>`` with k counted from 1."""
    return episode_dir / f"step-{index + 1}-{agent}"


class _HubNotedRecorder(TrajectoryRecorder):
    """A step's recorder: the first record it writes carries the hub's role message."""

    def __init__(self, *args: Any, hub_role: dict[str, Any], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._hub_role: dict[str, Any] | None = hub_role

    def record(self, observation: Any, action: Any = None, **kwargs: Any) -> StepRecord:
        if self._hub_role is not None:
            info = dict(kwargs.get("info") or {})
            roles = info.get("roles")
            info["roles"] = [self._hub_role, *(roles if isinstance(roles, list) else [])]
            kwargs["info"] = info
            self._hub_role = None
        return super().record(observation, action, **kwargs)


def _env_for(agent_kind: str, task: ExecTask, opened: TaskEnv, options: ExecOptions) -> Env | None:
    """The env the step's agent acts on (None: it cannot act on this task's env)."""
    if task.env not in CAN_ACT.get(agent_kind, frozenset()):
        return None
    if agent_kind == task.env:
        return opened.env
    if ENV_KINDS[agent_kind].over_files:  # a code agent on a desktop task: the task's files, directly
        return WorkspaceEnv(Workspace(opened.root, options.envs.workspace))
    return None


def run_step(
    step: PlanStep,
    *,
    index: int,
    job: Job,
    opened: TaskEnv,
    hub: Hub,
    recorder_extra: dict[str, Any] | None = None,
    wrap_env: Callable[[Env], Env] | None = None,
) -> StepOutcome:
    """Run ``step`` (the ``index``-th of the plan, 0-based) of ``job``'s task and record its outcome in ``hub``.

    The step's trajectory goes in ``<episode>/step-<k>-<agent>/`` (its path in the outcome is
    relative to the run folder); the agent is built as every agent is (:func:`build_agent`), acts
    with the episode's models, step budget and deadline (:func:`run_agent`), and the step's cost
    is what the episode's meters counted while it ran. ``recorder_extra`` is merged into the step
    trajectory's ``meta.json`` extras (a team's own bookkeeping). ``wrap_env`` wraps the env the
    agent acts on (COLA's per-action reviewer: :mod:`agentlab.teams.cola.action_review`).
    """
    t0 = time.monotonic()
    task, options = job.task, job.options
    folder = step_folder(job.folder, index, step.agent)
    rel = folder.relative_to(job.run_dir).as_posix()
    doc = job.pool.get(step.agent)
    agent = build_agent(doc, options.runner_options, seed=options.seed)
    instruction = step_instruction(task, step, hub, index, whole_task=getattr(agent, "step_request", "full") != "subtask")
    extra = {"task_id": task.id, "runner": doc.runner, "plan_step": index + 1, "subtask": step.subtask,
             **(recorder_extra or {})}
    recorder = _HubNotedRecorder(folder, task=instruction, env=agent.env_kind, agent=step.agent,
                                 model_id=job.models.default.model_id, extra=extra, hub_role=hub.role(index))
    outcome = StepOutcome(index=index, agent=step.agent, subtask=step.subtask, status="error", trajectory=rel)
    env = _env_for(agent.env_kind, task, opened, options)
    if env is None:
        outcome.status = "wrong_env"
        outcome.error = f"{step.agent} acts on a {agent.env_kind}; this task needs a {task.env}"
        recorder.record(None, None, done=True, error=outcome.error)
        recorder.finish("wrong_env", error=outcome.error)
    else:
        if wrap_env is not None:
            env = wrap_env(env)
        before, spent = snapshot(opened.root), job.models.total()
        try:
            res = run_agent(agent, env, instruction, job.context(recorder))
        except AgentlabError as exc:
            recorder.finish("error", error=" ".join(str(exc).split()))
            raise
        used = job.models.total() - spent
        touched, removed = changed_files(before, snapshot(opened.root))
        outcome.status, outcome.steps = res.status, res.steps
        outcome.llm_calls, outcome.tokens_in, outcome.tokens_out = used.calls, used.tokens_in, used.tokens_out
        outcome.files, outcome.removed, outcome.error = touched, removed, res.error
        outcome.output = final_output(recorder.steps)
        recorder.finish(outcome.status, error=res.error, files=touched, removed=removed, **used.as_row())
    outcome.summary = summarize(outcome.status, outcome.files, outcome.removed, outcome.output, outcome.error)
    outcome.seconds = round(time.monotonic() - t0, 3)
    hub.record(outcome)
    return outcome
