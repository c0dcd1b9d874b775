"""The store sends a task only to an agent that can act on its environment (issue #38): for every
router (the restriction sits in ``Router.route``), for manager plans and for clause plans."""

from __future__ import annotations

from agentlab.agents.base import acting_agents
from agentlab.run.episode import RouterRoute
from agentlab.metaagent.router import Router
from agentlab.pool import AgentPool
from agentlab.tasks.decisions import RouteResult
from agentlab.tasks.spec import load_task, tasks_dir
from agentlab.teams.clauses import clause_plan


class Fixed(Router):
    """A router whose ranking is given: the GUI agents first, as a request about a browser profile
    made the hybrid router decide (ChromeAgent, MailAgent, AgentS2 got workspace tasks)."""

    name = "fixed"

    def __init__(self, pool: AgentPool, order: list[str]) -> None:
        super().__init__(pool)
        self.order = order

    def fit(self, train):  # type: ignore[no-untyped-def]
        return {"seconds": 0.0}

    def rank(self, tasks, states=None):  # type: ignore[no-untyped-def]
        n = len(self.order)
        return [[(a, (n - i) / (n * (n + 1) / 2)) for i, a in enumerate(self.order)] for _ in tasks]


def test_acting_agents_follow_the_runners_env_kinds(pool: AgentPool) -> None:
    workspace, desktop, phone = (acting_agents(pool, env) for env in ("workspace", "desktop", "phone"))
    assert {"FileAgent", "SheetAgent", "Friday"} <= workspace
    assert not {"ChromeAgent", "AgentS2", "PCAgent", "ClockAgent"} & workspace  # GUI runners: screens only
    assert {"ChromeAgent", "AgentS2", "SheetAgent"} <= desktop  # a code agent edits a desktop task's files
    assert "ClockAgent" in phone and not {"SheetAgent", "ChromeAgent"} & phone


def test_a_workspace_task_is_never_routed_to_a_gui_agent(pool: AgentPool) -> None:
    task = next(t for t in map(load_task, sorted(tasks_dir().glob("chrome-*.json"))) if t.env == "workspace")
    route = RouterRoute(Fixed(pool, ["ChromeAgent", "AgentS2", "FileAgent", "ClockAgent"]), "fixed")
    chosen = route(task)
    assert chosen == "FileAgent"  # the best-ranked agent that can act on a workspace
    decided = route.router.route([task], acting=acting_agents(pool, "workspace"), policy=route.policy)[0]
    assert all(n in acting_agents(pool, "workspace") for n, _ in decided.ranking)


def test_plans_name_only_agents_that_can_act(pool: AgentPool) -> None:
    class Manager:
        seen: list[str] = []

        def candidates(self, docs, k):  # type: ignore[no-untyped-def]
            return docs[:k]

        def plan(self, task, docs, state=None):  # type: ignore[no-untyped-def]
            Manager.seen = [d.name for d in docs]
            return RouteResult(docs[0].name, [])

    router = Fixed(pool, ["ChromeAgent", "MailAgent", "SheetAgent", "FileAgent"])
    router.plan(["put the totals in a sheet"], Manager(), k=3, acting=acting_agents(pool, "workspace"))  # type: ignore[arg-type]
    assert Manager.seen and not {"ChromeAgent", "MailAgent"} & set(Manager.seen)
    res = clause_plan("open the bookmarks file and then add a total to the sheet", router,
                      acting=acting_agents(pool, "workspace"))
    assert res.plan and all(s.agent in acting_agents(pool, "workspace") for s in res.plan)
    unrestricted = clause_plan("open the bookmarks file and then add a total to the sheet", router)
    assert unrestricted.plan and unrestricted.plan[0].agent == "ChromeAgent"  # without it, the GUI agent took it
