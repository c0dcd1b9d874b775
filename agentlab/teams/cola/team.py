"""The COLA team carrying one task out: plan, schedule, act, review, recover -- in one open env.

:func:`agentlab.teams.cola.run.run_cola` opens the task's env once and runs :class:`ColaTeam`:

1. **memory** recalls similar past tasks (long-term) for the planner;
2. the **planner** splits the task into coarse subtasks;
3. the **scheduler** ranks the pool's agents able to act on the task's env for each subtask;
4. a **decision agent** (the ranking's choice) refines its subtask with any guidance and acts
   through its runner (:func:`agentlab.teams.step.run_step`: the hub tells it what earlier
   steps left behind);
5. the **reviewer** judges the step from the change it made (a before/after snapshot of the
   task's files) and its output;
6. on a rejection the team **retries** (the same agent, told why), **reassigns** (the next
   agent of the ranking), or -- in passive mode, once its own budget is spent -- **asks** a
   person; in active mode a person confirms every step; a person may **backtrack** to step k:
   the files are restored byte for byte from the snapshot taken before step k (a desktop's
   applications are relaunched on them), the hub and the team's dialogue forget steps k and
   later, and the run continues from step k without restarting the task.

Every decision is a record of the team's own trajectory (``<episode>/team/``) with the
speaking roles in ``info["roles"]`` (planner, memory, scheduler, reviewer, person, manager;
a backtrack's manager message carries ``backtrack_to``); each agent's attempt at a step has its
own ``step-<k>-<agent>/`` folder (an attempt that was rolled back is kept as ``...-try<n>``).
After the task is judged, its summary goes into long-term memory.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from agentlab.agents.base import build_agent
from agentlab.agents.roles import DEFAULT_ROLE
from agentlab.tasks.env_kinds import CAN_ACT
from agentlab.dialogue.ask import RetrySampling
from agentlab.dialogue.templates import load_template, template_hashes
from agentlab.envs.snapshot import FolderStore, Snapshot
from agentlab.envs.base import Env
from agentlab.envs.task_env import TaskEnv
from agentlab.errors import ConfigError, EnvironmentUnavailableError
from agentlab.safepath import SafeFolder

from agentlab.metaagent.router import RouterShelf
from agentlab.tasks.decisions import PlanStep
from agentlab.pool.document import AgentDocument
from agentlab.teams.base import Job
from agentlab.dialogue.person import Answer, Question, QuestionKind
from agentlab.teams.cola.chooser import PROMPTS as CHOOSER_PROMPTS
from agentlab.teams.cola.refiner import PROMPTS as REFINER_PROMPTS
from agentlab.teams.cola.refiner import Refiner
from agentlab.teams.cola.chooser import ModelChooser
from agentlab.teams.cola.memory import LongTermMemory, MemoryEntry, ShortTermMemory
from agentlab.teams.cola.options import ColaOptions
from agentlab.teams.cola.policy import Decision, Slot, decide
from agentlab.teams.cola.planner import PROMPTS as PLANNER_PROMPTS
from agentlab.teams.cola.planner import Planner
from agentlab.teams.cola.reviewer import PROMPTS as REVIEWER_PROMPTS
from agentlab.teams.cola.reviewer import Review, Reviewer, StepView
from agentlab.teams.cola.action_review import ReviewedEnv
from agentlab.teams.cola.scheduler import Scheduler
from agentlab.teams.hub import Hub, StepOutcome
from agentlab.teams.step import run_step, step_folder
from agentlab.envs.trajectory import TrajectoryRecorder, load_trajectory

log = logging.getLogger(__name__)

TEAM_DIR = "team"  # the viewer looks for it by this name (agentlab.viz.trajectory.TEAM_DIR)
SNAPSHOT_DIR = "snapshots"
MEMORY_FILE = "cola_memory.jsonl"
PROMPTS = (*PLANNER_PROMPTS, *REVIEWER_PROMPTS, *CHOOSER_PROMPTS, *REFINER_PROMPTS, "cola/decision")
#: how a team's run ended: every step accepted or given up on, a person stopped it, or the time ran out
TeamStatus = Literal["done", "stopped", "time_limit"]


@dataclass
class Counters:
    """How often the team reviewed, retried, reassigned, backtracked and asked (row fields)."""

    reviews: int = 0
    action_reviews: int = 0  #: actions the per-action reviewer judged (review_actions=true)
    actions_rejected: int = 0
    retries: int = 0
    reassignments: int = 0
    backtracks: int = 0
    questions: int = 0

    def as_row(self) -> dict[str, int]:
        return {"reviews": self.reviews, "action_reviews": self.action_reviews, "actions_rejected": self.actions_rejected,
                "retries": self.retries, "reassignments": self.reassignments,
                "backtracks": self.backtracks, "questions": self.questions}


class ColaTeam:
    """One task's team; :meth:`run` carries ``job``'s task out in ``opened`` (already open).

    Its own roles ask their own models (``planner``, ``reviewer``: the episode's meters count
    them apart from the decision agents'); the decision agents act through
    :func:`~agentlab.teams.step.run_step` as every plan step does.
    """

    def __init__(self, job: Job, opened: TaskEnv, hub: Hub, *, memory: LongTermMemory | None = None) -> None:
        task, pool, options = job.task, job.pool, job.options
        self.job, self.task, self.pool, self.opened, self.hub = job, task, pool, opened, hub
        self.episode_dir, self.run_dir, self.options, self.deadline = job.folder, job.run_dir, options, job.deadline
        self.cola = options.settings(ColaOptions)
        if self.cola.asks_person and job.ask is None:
            raise ConfigError(f"interaction mode {self.cola.interaction!r} needs someone to ask (an answers file, a terminal)",
                              where=task.source or task.id)
        self.ask = job.ask
        self.plan_sampling = RetrySampling(max_new_tokens=self.cola.max_new_tokens, seed=options.seed)
        self.review_sampling = RetrySampling(max_new_tokens=self.cola.review_max_new_tokens, seed=options.seed + 1000)
        self.planner = Planner(job.models.get("planner"), max_subtasks=self.cola.max_subtasks,
                               max_attempts=self.cola.max_attempts, sampling=self.plan_sampling)
        self.reviewer = Reviewer(job.models.get("reviewer"), mode=self.cola.review, max_attempts=self.cola.max_attempts,
                                 sampling=self.review_sampling)
        router = (job.routers or RouterShelf(pool)).get(self.cola.scheduler_router, self.cola.scheduler_tokens)
        chooser = (ModelChooser(job.models.get("scheduler"), pool, max_attempts=self.cola.max_attempts,
                                sampling=RetrySampling(max_new_tokens=16, seed=options.seed + 2000))
                   if self.cola.scheduler == "model" else None)
        self.scheduler = Scheduler(pool, lambda text: router.rank([text])[0], task_env=task.env, can_act=CAN_ACT,
                                   runnable=self._runnable, chooser=chooser, shown=self.cola.scheduler_candidates)
        self.memory = memory or LongTermMemory(self.cola.memory_path or self.run_dir / MEMORY_FILE, top_n=self.cola.memory_top_n)
        self.dialogue = ShortTermMemory(self.cola.short_term)
        self.store = FolderStore(self.episode_dir / SNAPSHOT_DIR)
        self.decision_template = load_template("cola/decision")
        self.refiner = (Refiner(job.models.get(DEFAULT_ROLE), max_attempts=self.cola.max_attempts,
                                sampling=RetrySampling(max_new_tokens=self.cola.max_new_tokens, seed=options.seed + 3000))
                        if self.cola.refine else None)
        self.counters = Counters()
        self.attempts: list[StepOutcome] = []
        self.subtasks: list[str] = []
        self.plan_fallback = False
        self.recorder = TrajectoryRecorder(
            self.episode_dir / TEAM_DIR, task=task.instruction, env=task.env, agent="COLA", model_id=job.models.default.model_id,
            extra={"task_id": task.id, "team": "cola", "prompts": template_hashes(PROMPTS), "cola": self.cola.model_dump(mode="json")})

    @property
    def roles(self) -> tuple[str, ...]:
        """The team's own model roles this run asks (the scheduler only when it is a model)."""
        return ("planner", "reviewer", *(("scheduler",) if self.scheduler.chooser is not None else ()))

    def _runnable(self, doc: AgentDocument) -> bool:
        """Can this agent's runner be built here (a resource it needs, such as a search endpoint, is configured)?"""
        try:
            build_agent(doc, self.options.runner_options, seed=self.options.seed)
        except EnvironmentUnavailableError as exc:
            log.info("scheduler: %s left out: %s", doc.name, exc.message)
            return False
        return True

    # -- bookkeeping ------------------------------------------------------------------
    def _say(self, role: str, text: str, at: int, **extras: Any) -> dict[str, Any]:
        """A role message for the trajectory, also remembered in the short-term dialogue (as said at step ``at``)."""
        self.dialogue.add(role, text, at)
        return {"role": role, "text": text, **{k: v for k, v in extras.items() if v is not None}}

    def _record(self, roles: list[dict[str, Any]], *, step: int | None, error: str | None = None, done: bool = False,
                action_text: str = "", **info: Any) -> None:
        self.recorder.record(None, None, action_text=action_text, thought=roles[-1]["text"] if roles else "", error=error, done=done,
                             info={"roles": roles, **({"plan_step": step + 1} if step is not None else {}), **info})

    # -- the run ----------------------------------------------------------------------
    def run(self) -> TeamStatus:
        slots = self._plan()
        status: TeamStatus = "done"
        i = 0
        while i < len(slots):
            if time.monotonic() > self.deadline:
                status = "time_limit"
                self._record([self._say("manager", f"the task's time limit ran out before step {i + 1}", i)], step=i,
                             error="time_limit")
                break
            slot = slots[i]
            if slot.snapshot is None:
                slot.snapshot = self.store.take(self.opened.root, f"before-step-{i + 1}-{len(self.attempts)}")
            outcome, review = self._attempt(i, slot)
            if outcome.status == "time_limit":
                status = "time_limit"
                break
            decision = self._decide(i, slot, outcome, review)
            if decision.action in ("accept", "give_up"):
                outcome.success = decision.success if decision.action == "accept" else False
                self._record([self._say("manager", f"step {i + 1} {'accepted' if decision.action == 'accept' else 'given up'}: "
                                        f"{decision.why}", i)], step=i)
                i += 1
                if i < len(slots):
                    slots[i].snapshot = None  # the state before the next step is taken when it starts
            elif decision.action == "stop":
                status = "stopped"
                outcome.success = False
                self._record([self._say("manager", f"stopped at step {i + 1}: {decision.why}", i)], step=i, done=True,
                             error="stopped")
                break
            elif decision.action == "backtrack":
                assert decision.step is not None
                i = self._backtrack(i, decision, slots)
            else:
                self._redo(i, slot, decision)
        self.hub.plan = [o.step for o in self.hub.outcomes]  # what was executed (reassignments included)
        if status == "done":
            self._record([self._say("manager", f"all {len(slots)} step(s) ran; the task is judged now", len(slots))],
                         step=None, done=True)
        self.recorder.finish(status, counters=self.counters.as_row())
        return status

    def _plan(self) -> list[Slot]:
        recalled = self.memory.recall(self.task.instruction, exclude=[self.task.id])
        memory_text = "\n".join(f"- ({'succeeded' if r.entry.success else 'failed'}) {r.entry.text()}" for r in recalled) or "(none)"
        seen = [m.as_dict() for m in self.dialogue.recent()]  # the short-term memory the planner is shown
        plan = self.planner.plan(self.task.instruction, observation=_listing(self.opened.root),
                                 memory=memory_text, dialogue=self.dialogue.render())
        self.subtasks, self.plan_fallback = plan.subtasks, plan.fallback
        recalled_text = "".join(f"\n- {r.entry.task_id} ({r.score:.2f}): {r.entry.summary}" for r in recalled)
        roles = [self._say("memory", f"{len(recalled)} similar past task(s){recalled_text}", -1,
                           recalled=[r.as_dict() for r in recalled], short_term=self.cola.short_term),
                 self._say("planner", "" if not plan.fallback else "the planner's replies were unusable; the whole task is one subtask",
                           -1, plan=plan.subtasks, replanned=True)]
        slots = []
        for k, subtask in enumerate(plan.subtasks):
            assignment = self.scheduler.assign(subtask)
            slots.append(Slot(assignment))
            top = ", ".join(f"{n} {p:.2f}" for n, p in assignment.candidates[:3])
            by = "" if assignment.chosen_by == "router" else f"; chosen by {assignment.chosen_by}"
            roles.append(self._say("scheduler", f"step {k + 1} -> {assignment.agent(0)} (ranking: {top}{by})", k,
                                   agent=assignment.agent(0), chosen_by=assignment.chosen_by,
                                   **({"reply": assignment.reply} if assignment.reply else {})))
        self.hub.plan = [PlanStep(s.agent or "", s.assignment.subtask) for s in slots]
        self._record(roles, step=None, action_text=plan.reply, planner_attempts=len(plan.attempts), short_term=seen)
        return slots

    def _attempt(self, i: int, slot: Slot) -> tuple[StepOutcome, Review]:
        agent = slot.agent
        assert agent is not None
        subtask = slot.assignment.subtask
        guidance = "\n".join(slot.guidance)
        if self.refiner is not None:  # the decision agent restates its subtask, reading the team's messages
            said = self.refiner.refine(task=self.task.instruction, subtask=subtask, guidance=guidance,
                                       dialogue=self.dialogue.render())
            refined = said.text
            self._record([self._say("refiner", refined if said.by_model else f"kept as given: {said.reply[:120]!r} did not read",
                                    i, agent=agent, by_model=said.by_model)], step=i, action_text=said.reply)
        else:
            refined = self.decision_template.render(subtask=subtask, guidance=guidance).strip()
        if self.cola.share_memory and self.dialogue.recent():
            refined += f"\n\nTeam messages so far:\n{self.dialogue.render()}"
        folder = step_folder(self.episode_dir, i, agent)
        if folder.exists():  # an earlier attempt of this step by this agent, rolled back: kept aside
            n = 1
            while folder.with_name(f"{folder.name}-try{n}").exists():
                n += 1
            folder.rename(folder.with_name(f"{folder.name}-try{n}"))
            for old in self.attempts:
                if old.trajectory and Path(old.trajectory).name == folder.name:
                    old.trajectory = str(Path(old.trajectory).with_name(f"{folder.name}-try{n}").as_posix())
        watched: list[ReviewedEnv] = []

        def watch(env: Env) -> Env:  # the reviewer judges each action as it is taken (review_actions)
            watched.append(ReviewedEnv(env, self.reviewer.review_action, subtask=subtask, agent=agent, root=self.opened.root))
            return watched[-1]

        try:
            outcome = run_step(PlanStep(agent, refined), index=i, job=self.job, opened=self.opened, hub=self.hub,
                               recorder_extra={"team": "cola", "attempt": len(self.attempts) + 1},
                               wrap_env=watch if self.cola.review_actions and self.cola.review == "model" else None)
        except EnvironmentUnavailableError as exc:  # this agent cannot run here (a resource it needs): an error step
            outcome = StepOutcome(index=i, agent=agent, subtask=subtask, status="error", error=" ".join(exc.message.split()),
                                  summary=f"could not run: {' '.join(exc.message.split())}")
            self.hub.record(outcome)
        outcome.subtask = subtask  # the plan's subtask; the refined text is in the step's trajectory
        self.attempts.append(outcome)
        action_reviews = [r for w in watched for r in w.reviews]
        self.counters.action_reviews += len(action_reviews)
        self.counters.actions_rejected += sum(r.verdict == "no" for r in action_reviews)
        assert slot.snapshot is not None
        after = self.store.take(self.opened.root, f"after-step-{i + 1}-{len(self.attempts)}")
        changes = slot.snapshot.changes(after)
        view = StepView(task=self.task.instruction, subtask=subtask, agent=agent, status=outcome.status, changes=changes,
                        output=self._output(outcome), error=outcome.error)
        seen = [m.as_dict() for m in self.dialogue.recent()]  # the short-term memory the reviewer is shown
        review = self.reviewer.review(view, root=self.opened.root, dialogue=self.dialogue.render())
        self.counters.reviews += 1
        reviewer_reply = review.attempts[-1].reply if review.attempts else ""
        # each action's verdict as a reviewer message the viewer shows (not in the team's short-term memory)
        per_action = [{"role": "reviewer", "text": f"action {r.index} ({r.action[:80]}): {r.reason}", "verdict": r.verdict,
                       "by": r.by, "action": r.index, "action_text": r.action} for r in action_reviews]
        self._record([*per_action, self._say("decision", f"{agent} ({outcome.status}): {outcome.summary}", i, agent=agent),
                      self._say("reviewer", review.reason, i, verdict=review.verdict, by=review.by)],
                     step=i, action_text=reviewer_reply, changes=changes.paths(), attempt=len(self.attempts), short_term=seen)
        return outcome, review

    def _output(self, outcome: StepOutcome) -> str:
        """What the step's agent answered: a code agent's last program output ('' when its programs
        printed nothing: its prose is not an answer), else the hub's final output (a GUI agent's thought)."""
        folder = self.run_dir / outcome.trajectory if outcome.trajectory else None
        if folder is None or not (folder / "traj.jsonl").exists():
            return outcome.output
        ran = [rec.info["program"] for rec in load_trajectory(folder).steps
               if isinstance(rec.info, dict) and isinstance(rec.info.get("program"), dict) and rec.info["program"]]
        if not ran:
            return outcome.output
        printed = [str(p.get("stdout") or "").strip() for p in ran]
        return next((p for p in reversed(printed) if p), "")

    # -- deciding what comes next ------------------------------------------------------
    def _decide(self, i: int, slot: Slot, outcome: StepOutcome, review: Review) -> Decision:
        return decide(i, slot, outcome, review, options=self.cola, ask=lambda kind, text: self._ask(kind, i, slot, text),
                      able=self.scheduler.able, backtracks=self.counters.backtracks)

    def _ask(self, kind: QuestionKind, i: int, slot: Slot, text: str) -> Answer | None:
        """Ask the person (None when the question budget is spent: the team decides alone)."""
        if self.ask is None or self.counters.questions >= self.cola.max_questions:
            return None
        question = Question(kind=kind, step=i + 1, agent=slot.agent or "", subtask=slot.assignment.subtask, text=text)
        self.counters.questions += 1
        answer = self.ask(question)
        self._record([self._say("manager", text, i, kind=kind),
                      self._say("person", answer.text or answer.choice, i, **answer.as_dict())], step=i, question=kind)
        return answer

    # -- acting on a decision ----------------------------------------------------------
    def _rollback_files(self, snapshot: Snapshot) -> None:
        self.opened.collect()  # a desktop's applications stop (files flushed) before their files change
        self.store.restore(snapshot, self.opened.root)
        self.opened.reopen()

    def _redo(self, i: int, slot: Slot, decision: Decision) -> None:
        """Retry or reassign step ``i`` on the files as they were before it."""
        assert slot.snapshot is not None
        self._rollback_files(slot.snapshot)
        self.hub.rollback(i)
        if decision.action == "retry":
            slot.retries += 1
            self.counters.retries += 1
        else:
            slot.reassignments += 1
            self.counters.reassignments += 1
            if decision.agent is not None:
                slot.agent_override = decision.agent
            else:
                slot.agent_override = None
                slot.choice += 1
        if decision.guidance:
            slot.guidance.append(decision.guidance)
        text = f"{decision.action} step {i + 1}" + (f" with {slot.agent}" if decision.action == "reassign" else "") + f": {decision.why}"
        self._record([self._say("manager", text, i, agent=slot.agent)], step=i)

    def _backtrack(self, i: int, decision: Decision, slots: list[Slot]) -> int:
        """Roll the files, the hub and the dialogue back to step ``decision.step``; the step to run next."""
        k = decision.step
        assert k is not None and k <= i
        target = slots[k]
        assert target.snapshot is not None or k == i
        snapshot = target.snapshot if target.snapshot is not None else slots[i].snapshot
        assert snapshot is not None
        self._rollback_files(snapshot)
        self.hub.rollback(k)
        dropped = self.dialogue.rollback(k)
        self.counters.backtracks += 1
        for later in slots[k + 1:]:
            later.snapshot = None
        if decision.guidance:
            target.guidance.append(decision.guidance)
        self._record([{"role": "manager", "text": f"backtrack to step {k + 1} ({decision.why}); {dropped} team message(s) "
                       f"of steps {k + 1}-{i + 1} forgotten, files restored from snapshot {snapshot.label}",
                       "backtrack_to": k + 1}], step=i, backtrack_to=k + 1)
        self.dialogue.add("manager", f"backtracked to step {k + 1}" + (f": {decision.guidance}" if decision.guidance else ""), k)
        return k

    # -- after the task -----------------------------------------------------------------
    def remember(self, success: bool) -> MemoryEntry:
        """Write this task's summary to long-term memory (after it was judged)."""
        steps = "; ".join(f"{o.index + 1}. {o.agent}: {o.subtask} ({o.status})" for o in self.hub.outcomes)
        entry = MemoryEntry(task_id=self.task.id, instruction=self.task.instruction, success=success,
                            summary=f"plan: {steps or 'no step ran'}; {'succeeded' if success else 'failed'}",
                            plan=[o.step.as_dict() for o in self.hub.outcomes])
        self.memory.add(entry)
        return entry


def _listing(root: Path, limit: int = 40) -> str:
    """The task's files, as the planner sees them (regular files only; a link is never followed)."""
    files = [e.rel for e in SafeFolder(root).walk(lambda rel: rel.split("/", 1)[0].startswith(".agentlab"))
             if e.kind == "file"]
    more = [f"... and {len(files) - limit} more"] if len(files) > limit else []
    return "\n".join([f"- {f}" for f in files[:limit]] + more) or "(no files)"
