"""The ``single`` team: one agent carries the whole task out (the routed one, or ``--agent``).

The agent is chosen before anything opens (routing may fail: a ``no_agent`` row), its env is the
one *it* acts in (a CLI agent gets a workspace over a desktop task's files, as the paper's CLI
agents edit files directly), and its trajectory is the episode folder itself. An agent that
cannot act on the task's env (a GUI agent given a workspace task) is the router's mistake: a
``wrong_env`` row, nothing opened.
"""

from __future__ import annotations

import logging

from agentlab.agents.base import Agent, build_agent, run_agent
from agentlab.tasks.env_kinds import CAN_ACT
from agentlab.envs.task_env import TaskEnv
from agentlab.metaagent.ground_truth import gt_agent
from agentlab.judge.evaluators import EvalResult
from agentlab.record.row import EpisodeRow
from agentlab.teams.base import Job, NoAgentChosen, Opening
from agentlab.envs.trajectory import TrajectoryRecorder

log = logging.getLogger(__name__)

class SingleAgent:
    """One agent on the whole task; the episode folder is its trajectory."""


    def __init__(self) -> None:
        self.agent: Agent | None = None
        self.recorder: TrajectoryRecorder | None = None
        self.error: str | None = None

    def prepare(self, job: Job, row: EpisodeRow) -> Opening | None:
        task = job.task
        try:
            name = job.agent or (job.route(task) if job.route is not None else gt_agent(task, job.pool))
        except NoAgentChosen as exc:
            row.status, row.agent_error = "no_agent", " ".join(exc.message.split())
            return None
        doc = job.pool.get(name)
        self.agent = build_agent(doc, job.options.runner_options, seed=job.options.seed)
        row.agents = [name]
        self.recorder = TrajectoryRecorder(job.folder, task=task.instruction, env=self.agent.env_kind, agent=name,
                                           model_id=row.model_id or "", extra={"task_id": task.id, "runner": doc.runner})
        if task.env not in CAN_ACT.get(self.agent.env_kind, frozenset()):
            row.status, row.agent_error = "wrong_env", f"{name} acts on a {self.agent.env_kind}; this task needs a {task.env}"
            self.recorder.finish("wrong_env", error=row.agent_error, score=0.0, success=False)
            self.recorder = None
            return None
        # a runner may need more of its env than the run gives (a search endpoint, a Drive folder)
        env_options = getattr(self.agent, "env_options", None)
        return Opening(self.agent.env_kind, env_options(job.options.envs) if env_options else job.options.envs)

    def run(self, job: Job, opened: TaskEnv, row: EpisodeRow) -> None:
        assert self.agent is not None and self.recorder is not None
        res = run_agent(self.agent, opened.env, job.task.instruction, job.context(self.recorder))
        row.status, row.steps, row.agent_error = res.status, res.steps, res.error
        row.route = res.route
        if res.subtasks is not None:  # hierarchical runners (Agent S2, PC-Agent) report their subtasks
            row.subtasks, row.subtasks_done = res.subtasks, res.subtasks_done

    def judged(self, job: Job, verdict: EvalResult) -> None:
        """Nothing to learn from the verdict."""

    def close(self, job: Job, row: EpisodeRow) -> None:
        if self.recorder is None:
            return
        if row.error:
            self.recorder.finish("error", error=row.error)
        else:
            self.recorder.finish(row.status or "error", error=row.agent_error, score=row.score, success=row.success)
