"""Issue #37, case 2: what a program plants in the workspace never brings host files into a prompt.

FileAgent (runner ``tools``), step 1: a program plants symbolic links in the workspace -- to
``/proc/self/environ`` (the runner's environment, API key included), to a project task file,
to a file outside, to ``/etc/hostname`` -- and replaces its output ``app.ini`` by a link. Before
the fix the step-2 prompt (sent to the endpoint, stored in ``traj.jsonl``) held all of them.
The episode runs in a child process started with a secret in its environment (what
``/proc/self/environ`` shows is the environment a process started with), its model replies
scripted; the programs run in the real sandbox.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

from agentlab.tasks.spec import tasks_dir

SECRET = "sk-zq-runner-secret-9c41"
MARKER = "zq-outside-marker-5e1d"

CHILD = r"""
import json, sys
from pathlib import Path
from agentlab.run.episode import run_task
from agentlab.llm.base import Capabilities, LLMBackend
from agentlab.pool import AgentPool
from agentlab.tasks.spec import load_task, tasks_dir
from agentlab.teams.base import ExecOptions

class Scripted(LLMBackend):
    model_id = "scripted"
    def __init__(self, replies):
        self.replies, self.prompts = list(replies), []
    @property
    def capabilities(self):
        return Capabilities()
    def chat(self, messages, params=None):
        self.prompts.append([m.content for m in messages])
        return [self.replies.pop(0)]
    def complete(self, prompt, params=None):
        raise AssertionError("chat only")

out = Path(sys.argv[1])
llm = Scripted(json.loads(sys.argv[2]))
row = run_task(load_task(tasks_dir() / "os-proxy-off.json"), pool=AgentPool.from_dir(None), llm=llm,
               out_dir=out / "run", options=ExecOptions(max_steps=3, runner_options={
                   "tools_shown": 0, "tool_prior": "none", "adapter": "none"}))  # no embedding model to load
(out / "prompts.json").write_text(json.dumps(llm.prompts))
(out / "row.json").write_text(json.dumps(row, default=str))
"""


def _regular_files(root: Path) -> dict[str, bytes]:
    """Every regular file under ``root``; links are not followed."""
    out = {}
    for folder, _dirs, files in os.walk(root):
        for name in files:
            p = Path(folder) / name
            if stat.S_ISREG(os.lstat(p).st_mode):
                out[p.relative_to(root).as_posix()] = p.read_bytes()
    return out


def test_links_planted_by_a_program_never_bring_host_files_into_the_prompt(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text(f"{MARKER}\n")
    (outside / "app.ini").write_text("[proxy]\nenabled = false\n[paths]\ndownloads = ~/Downloads\n")
    task_file = tasks_dir() / "csv-sales-summary.json"
    task_text = json.loads(task_file.read_text())["reference_solution"]["code"].splitlines()[0]
    plant = (
        "import os\n"
        "os.symlink('/proc/self/environ', 'environ.txt')\n"
        f"os.symlink({str(task_file)!r}, 'task.txt')\n"
        f"os.symlink({str(outside / 'secret.txt')!r}, 'notes.txt')\n"
        "os.symlink('/etc/hostname', 'hostname.txt')\n"
        "os.mkdir('docs')\n"
        f"os.symlink({str(outside)!r}, 'docs/shared')\n"
        "os.remove('app.ini')\n"
        f"os.symlink({str(outside / 'app.ini')!r}, 'app.ini')\n"
    )
    replies = [f"```python\n{plant}```", "done()"]
    env = {**os.environ, "AGENTLAB_PROBE_API_KEY": SECRET, "OMP_NUM_THREADS": "1"}
    proc = subprocess.run([sys.executable, "-c", CHILD, str(tmp_path), json.dumps(replies)], env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    prompts = json.loads((tmp_path / "prompts.json").read_text())
    row = json.loads((tmp_path / "row.json").read_text())
    assert len(prompts) == 2, prompts
    everything = "\n".join("\n".join(p) for p in prompts) + "\n" + "\n".join(
        v.decode(errors="replace") for v in _regular_files(tmp_path / "run").values())
    for leaked in (SECRET, MARKER, task_text):
        assert leaked not in everything, f"{leaked!r} reached a prompt or the run folder"
    step2 = "\n".join(prompts[1])
    assert "environ.txt" in step2 and "(symbolic link, not followed)" in step2  # listed, never followed
    # the output is a link: the agent's failure (the evaluator says why), not a harness error
    assert row["status"] != "error" and row["success"] is False, row
    errors = [c["error"] or "" for c in row["verdict"]["checks"]]
    assert errors and all("not a regular file" in e for e in errors), row["verdict"]
