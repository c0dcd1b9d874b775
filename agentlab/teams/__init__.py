"""Teams: several pool agents carrying one task out together, on one shared state.

A plan is a list of ``(agent, subtask)`` steps (:class:`~agentlab.tasks.decisions.PlanStep`):
a task's gold plan, a manager's plan, or one a team (COLA) builds as it goes. The step runner
(:mod:`.step`) runs one agent on one subtask in the task's already-open env; the communication
hub (:mod:`.hub`) carries each finished step's result into the next step's instruction; the
plan runner (:mod:`.executed`) opens the env once, runs the steps in order and judges the task
once at the end. Managers that write plans: :mod:`.planning` (router + manager prompt, or the
clause baseline of :mod:`.clauses`).
"""
