"""Several workers get the tasks expected to take longest first; a serial or budgeted run keeps its order."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from agentlab.run.worker import longest_first
from agentlab.tasks.spec import load_task, tasks_dir


def _tasks():  # type: ignore[no-untyped-def]
    return [load_task(p) for p in sorted(tasks_dir().glob("*.json"))]


def test_a_task_over_more_agents_or_applications_is_expected_longer() -> None:
    tasks = _tasks()
    planned = [t for t in tasks if t.plan and len(t.plan) > 1]
    single = [t for t in tasks if not t.plan and len(set(t.apps)) <= 1]
    assert planned and single
    assert all(t.expected_length() >= len(t.plan or ()) for t in planned)
    assert all(t.expected_length() == 1 for t in single)


def test_longest_first_puts_the_multi_agent_tasks_first_and_keeps_the_rest_in_order() -> None:
    items = [(t, 0) for t in _tasks()]
    ordered = longest_first(items)
    assert sorted(id(i) for i in ordered) == sorted(id(i) for i in items)  # same items, none lost
    costs = [t.expected_length() for t, _ in ordered]
    assert costs == sorted(costs, reverse=True)
    for cost in set(costs):  # stable: equal costs keep the given (id) order
        same = [t.id for t, _ in ordered if t.expected_length() == cost]
        assert same == [t.id for t, _ in items if t.expected_length() == cost]


@given(st.lists(st.integers(min_value=0, max_value=10), max_size=30))
def test_the_order_is_a_permutation_whatever_the_seeds(seeds: list[int]) -> None:
    task = _TASKS[0]
    items = [(task, s) for s in seeds]
    assert longest_first(items) == items  # one task, many seeds: nothing to reorder


_TASKS = _tasks()
