"""Every task in data/tasks is well-formed, fails on its start state and passes when a correct
program (its reference solution, run in the sandboxed workspace) has done the work."""

from __future__ import annotations

import json

import pytest

from agentlab.envs.workspace import Workspace, WorkspaceConfig
from agentlab.errors import DataError
from agentlab.tasks.spec import MULTI_APP_DOMAIN, load_task, load_tasks, tasks_dir
from agentlab.pool import DOMAINS

TASKS = load_tasks()
#: tasks judged on files a program writes (phone tasks run on a device: tests/episode/test_phone_tasks.py)
FILE_TASKS = [t for t in TASKS if t.env != "phone"]


def test_there_are_tasks_for_several_apps():
    assert len(TASKS) >= 6
    assert {t.domain for t in TASKS} >= {"calc", "writer", "impress", "gimp", "vscode", "os"}
    assert all(t.reference_solution is not None for t in TASKS)


def test_the_suite_covers_every_desktop_domain_in_both_envs():
    workspace = [t for t in TASKS if t.env == "workspace"]
    desktop = [t for t in TASKS if t.env == "desktop"]
    assert len(TASKS) >= 60 and len(workspace) >= 40 and len(desktop) >= 10
    # all ten, code agents; the multi_apps workspace tasks join several of them (data/tasks/multi-*.json)
    assert {t.domain for t in workspace if t.domain != MULTI_APP_DOMAIN} == set(DOMAINS["desktop"])
    # GUI tasks are for the applications sysdeps installs (LibreOffice's three, Chromium,
    # Thunderbird, VLC, GIMP); the multi_apps ones open two of them (tests/episode/test_pceval_tasks.py)
    single = [t for t in desktop if t.domain != MULTI_APP_DOMAIN]
    office = {"calc", "writer", "impress"}
    assert office <= {t.domain for t in single} <= office | {"chrome", "thunderbird", "vlc", "gimp", "os"}
    assert all(t.apps == [f"libreoffice-{t.domain}"] for t in single if t.domain in office)


@pytest.mark.parametrize("task", FILE_TASKS, ids=[t.id for t in FILE_TASKS])
def test_instruction_names_every_output_and_setup_is_small(task):
    for out in task.outputs:
        assert out in task.instruction, f"{task.id}: the instruction never names the output {out}"
    assert len(json.dumps(task.setup)) < 4000, f"{task.id}: keep start files small (use setup writers)"


@pytest.mark.parametrize("task", FILE_TASKS, ids=[t.id for t in FILE_TASKS])
def test_start_state_fails_and_reference_solution_passes(task, tmp_path):
    with Workspace(tmp_path / "ws", WorkspaceConfig(timeout_s=30)) as ws:
        task.prepare(ws.root)
        before = task.evaluate(ws.root)
        assert before.score == 0.0, before.explain()
        sol = task.reference_solution
        run = ws.run_python(sol.code) if sol.language == "python" else ws.run_bash(sol.code)
        assert run.ok, run.summary()
        ws.check_outputs(task.outputs)
        after = task.evaluate(ws.root)
        assert after.success, after.explain()


def test_a_partial_solution_scores_zero(tmp_path):
    task = next(t for t in TASKS if t.id == "vscode-dark-theme")
    task.prepare(tmp_path)
    settings = tmp_path / ".config/editor/settings.json"
    data = json.loads(settings.read_text())
    data["workbench"]["colorTheme"] = "dark"  # font size left at 12
    settings.write_text(json.dumps(data))
    res = task.evaluate(tmp_path)
    assert res.score == 0.0 and [c.score for c in res.checks] == [1.0, 0.0, 1.0, 1.0]


def test_bad_task_files_name_file_and_problem(tmp_path):
    good = json.loads((tasks_dir() / "os-error-lines.json").read_text())
    cases = {
        "not-json": "{",
        "wrong-domain": json.dumps({**good, "id": "wrong-domain", "domain": "excel"}),
        "bad-getter": json.dumps({**good, "id": "bad-getter", "evaluator": {"func": "list_equal", "result": {"type": "lines"}}}),
        "bad-setup": json.dumps({**good, "id": "bad-setup", "setup": [{"type": "write_pdf", "path": "a.pdf"}]}),
        "extra-key": json.dumps({**good, "id": "extra-key", "hint": "x"}),
        "other-id": json.dumps(good),
        "empty-plan": json.dumps({**good, "id": "empty-plan", "plan": []}),
        "plan-and-agent": json.dumps({**good, "id": "plan-and-agent", "agent": "CoderAgent",
                                      "plan": [{"agent": "CoderAgent", "subtask": "x"}]}),
        "plan-step-keys": json.dumps({**good, "id": "plan-step-keys", "plan": [{"agent": "CoderAgent"}]}),
    }
    expect = {
        "not-json": "not valid JSON",
        "wrong-domain": "domain 'excel'",
        "bad-getter": "unknown getter type 'lines'",
        "bad-setup": "unknown type 'write_pdf'",
        "extra-key": "hint",
        "other-id": "differs from the file name",
        "empty-plan": "plan: an empty list",
        "plan-and-agent": "give one of them",
        "plan-step-keys": "subtask",
    }
    for name, text in cases.items():
        path = tmp_path / f"{name}.json"
        path.write_text(text)
        with pytest.raises(DataError, match=expect[name]) as info:
            load_task(path)
        assert str(path) in str(info.value)


def test_setup_cannot_write_outside_the_root(tmp_path):
    task = load_task(tasks_dir() / "os-error-lines.json")
    task.setup[0]["path"] = "../escape.txt"
    with pytest.raises(DataError, match="leaves the state folder"):
        task.prepare(tmp_path / "root")
    assert not (tmp_path / "escape.txt").exists()


WRONG = {
    # openpyxl writes formulas without a computed value: the evaluator reads what an app computed
    "calc-inventory-value": "import openpyxl\nwb = openpyxl.load_workbook('inventory.xlsx')\nws = wb['Stock']\n"
    "ws['D1'] = 'value'\nfor r in range(2, 5):\n    ws.cell(r, 4, f'=B{r}*C{r}')\nwb.save('inventory.xlsx')\n",
    # resizing in place destroys the original
    "gimp-resize-banner": "from PIL import Image\nim = Image.open('header.png').resize((600, 200))\nim.save('header.png')\n"
    "im.save('header_small.png')\n",
    # only the top level of the bookmarks bar cleaned, folders and 'Other bookmarks' forgotten
    "chrome-remove-ad-bookmarks": "import json\np = '.config/chromium/Default/Bookmarks'\nb = json.load(open(p))\n"
    "bar = b['roots']['bookmark_bar']\nbar['children'] = [c for c in bar['children'] if 'ads.' not in c.get('url', '')]\n"
    "json.dump(b, open(p, 'w'))\n",
    # the right words in the wrong case
    "os-unique-emails": "sort -u subscribers.txt > unique.txt\n",
}


@pytest.mark.parametrize("task_id", sorted(WRONG))
def test_a_plausible_wrong_solution_scores_zero(task_id, tmp_path):
    task = load_task(tasks_dir() / f"{task_id}.json")
    with Workspace(tmp_path / "ws", WorkspaceConfig(timeout_s=30)) as ws:
        task.prepare(ws.root)
        code = WRONG[task_id]
        run = ws.run_python(code) if code.startswith(("import", "from")) else ws.run_bash(code)
        assert run.ok, run.summary()
        result = task.evaluate(ws.root)
        assert result.score == 0.0, result.explain()


def test_a_gold_plan_is_read_in_order(tmp_path):
    good = json.loads((tasks_dir() / "os-error-lines.json").read_text())
    plan = [{"agent": "CoderAgent", "subtask": "find the lines"}, {"agent": "DocAgent", "subtask": "write them up"}]
    path = tmp_path / "two-step.json"
    path.write_text(json.dumps({**good, "id": "two-step", "domain": MULTI_APP_DOMAIN, "plan": plan}))
    task = load_task(path)
    assert [(s.agent, s.subtask) for s in task.plan] == [(p["agent"], p["subtask"]) for p in plan]
    assert load_task(tasks_dir() / "os-error-lines.json").plan is None
