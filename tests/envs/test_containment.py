"""Nothing a program plants in a workspace is followed by agentlab's own process (issue #37).

Hypothesis builds hostile layouts in a real workspace -- symbolic links to files and folders
outside, to ``/proc/self/environ``, relative ``../`` chains, links inside a sub-folder, a folder
renamed and replaced by a link, hard links to an outside file, FIFOs -- and then runs what the
runner does outside the sandbox: the listing (every runner's observation), the tool agent's
descriptions and grammar values, COLA's snapshot + restore (its rollback), its planner listing
and reviewer previews, the hub's file stamps, and every file getter. Nothing outside may be read
(the outside files hold a marker that must appear in no returned text) or written (the outside
folder's contents, modes, owners and mtimes stay as they were). Also case 3: a sandboxed program
run by root is not root and cannot read /etc/shadow.
"""

from __future__ import annotations

import json
import os
import stat
import tempfile
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentlab.agents.tools import ToolAgent
from agentlab.envs.snapshot import FolderChanges, FolderStore
from agentlab.envs.workspace import Workspace, WorkspaceConfig, bwrap_available
from agentlab.envs.workspace_env import WorkspaceEnv
from agentlab.judge.getters import FinalState, GetterError, run_getter
from agentlab.llm.base import Capabilities, ChatMessage, LLMBackend, SamplingParams
from agentlab.pool import AgentPool
from agentlab.safepath import SafeFolder
from agentlab.teams.cola.reviewer import previews
from agentlab.teams.cola.team import _listing
from agentlab.teams.hub import snapshot as hub_snapshot

MARKER = "zq-outside-marker-5e1d"
#: the longest entry of this process's own environment (what /proc/self/environ would leak)
ENV_ENTRY = max(open("/proc/self/environ", "rb").read().split(b"\0"), key=len).decode(errors="replace")

#: the workspace's start state (a task's setup): nested folders, the kinds the getters read
START = {"a.txt": "hello\n", "d/b.json": '{"k": 1}\n', "d/e/c.ini": "[s]\nk = v\n",
         "mail/Inbox": "From a@b Mon Jan 1 00:00:00 2024\nSubject: hi\n\nbody\n", "settings.json": '{"editor.tabSize": 2}\n'}
#: outside the workspace: every file holds the marker
OUTSIDE = {"secret.txt": MARKER, "sub/note.txt": MARKER, "sub/deeper/x.json": json.dumps({"k": MARKER}),
           "sub/Inbox": f"From a@b Mon Jan 1 00:00:00 2024\nSubject: {MARKER}\n\n{MARKER}\n"}
#: where a program plants things: existing files and folders (replaced), new names, nested names
NAMES = ["a.txt", "d", "d/b.json", "d/e", "d/e/c.ini", "mail", "mail/Inbox", "settings.json", "new.txt",
         "d/new.json", "d/e/deep.txt", "report.xlsx", ".agentlab", ".agentlab/tmp"]
TARGETS = ["abs-file", "abs-dir", "abs-subdir", "rel-file", "rel-dir", "environ", "inside", "dangling", "self"]

op = st.one_of(
    st.tuples(st.just("link"), st.sampled_from(NAMES), st.sampled_from(TARGETS)),
    st.tuples(st.just("hardlink"), st.sampled_from(NAMES), st.just("")),
    st.tuples(st.just("fifo"), st.sampled_from(NAMES), st.just("")),
    st.tuples(st.just("file"), st.sampled_from(NAMES), st.just("")),
)


def _tree(root: Path) -> dict[str, tuple[Any, ...]]:
    """Everything under ``root`` as lstat sees it (contents of regular files; never following)."""
    out: dict[str, tuple[Any, ...]] = {}
    for folder, dirs, files in os.walk(root):
        for name in [*dirs, *files]:
            p = Path(folder) / name
            st_ = os.lstat(p)
            data = p.read_bytes() if stat.S_ISREG(st_.st_mode) else os.readlink(p) if stat.S_ISLNK(st_.st_mode) else None
            out[p.relative_to(root).as_posix()] = (stat.S_IFMT(st_.st_mode), stat.S_IMODE(st_.st_mode), st_.st_uid,
                                                   st_.st_gid, st_.st_mtime_ns, data)
    return out


def _regular(root: Path) -> dict[str, bytes]:
    """The regular files under ``root`` (no link followed), scratch folder left out."""
    return {rel: v[5] for rel, v in _tree(root).items() if v[0] == stat.S_IFREG and not rel.startswith(".agentlab")}


def _make(tmp: Path) -> tuple[Path, Path]:
    ws, out = tmp / "run" / "episode" / "workspace", tmp / "outside"
    for rel, text in OUTSIDE.items():
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).write_text(text)
    for rel, text in START.items():
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(text)
    return ws, out


def _plant(ws: Path, out: Path, kind: str, name: str, target: str) -> None:
    """What a hostile program does at ``name`` (skipped when a parent is already a link: planting
    there would itself write outside)."""
    folder = SafeFolder(ws)
    parts = name.split("/")
    for i in range(1, len(parts)):
        if folder.kind("/".join(parts[:i])) not in ("dir", None):
            return
    folder.make_dirs("/".join(parts[:-1])) if len(parts) > 1 else None
    p = ws / name
    what = folder.kind(name)
    if what == "dir":  # a folder renamed, something planted in its place
        n = 0
        while os.path.lexists(f"{p}.old{n}"):
            n += 1
        os.rename(p, f"{p}.old{n}")
    elif what is not None:
        os.unlink(p)
    if kind == "link":
        dest = {"abs-file": str(out / "secret.txt"), "abs-dir": str(out), "abs-subdir": str(out / "sub"),
                "rel-file": os.path.relpath(out / "secret.txt", p.parent), "rel-dir": os.path.relpath(out / "sub", p.parent),
                "environ": "/proc/self/environ", "inside": os.path.relpath(ws / "a.txt", p.parent),
                "dangling": "nowhere", "self": p.name}[target]
        os.symlink(dest, p)
    elif kind == "hardlink":
        os.link(out / "secret.txt", p)
    elif kind == "fifo":
        os.mkfifo(p)
    else:
        p.write_text("plain text the program wrote\n")


class _Values(LLMBackend):
    """Not a model: declares grammar decoding so the tool agent builds its grammar values."""

    model_id = "values-probe"

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(plan_grammar=True)

    def chat(self, messages: list[ChatMessage], params: SamplingParams | None = None) -> list[str]:
        raise AssertionError("not asked")

    def complete(self, prompt: str, params: SamplingParams | None = None) -> list[str]:
        raise AssertionError("not asked")


@pytest.fixture(scope="module")
def tool_agents() -> list[ToolAgent]:
    pool = AgentPool.from_dir(None)
    return [ToolAgent(pool.get(n), pool.get(n).runner_options) for n in ("FileAgent", "VSAgent", "SheetAgent")]


GETTERS: list[dict[str, Any]] = [
    *({"type": t, "path": n} for n in NAMES for t in ("file_text", "file_exists", "xlsx_sheet_names", "image_properties",
                                                       "docx_paragraphs", "pptx_slide_count", "mbox_messages")),
    *({"type": "json_setting", "path": n, "key": "k", "default": None} for n in NAMES),
    *({"type": "ini_setting", "path": n, "section": "s", "key": "k", "default": None} for n in NAMES),
    *({"type": "prefs_js", "path": n, "key": "k", "default": None} for n in NAMES),
    *({"type": "folder_entries", "path": p, "kind": k, "hidden": True} for p in (".", "d", "d/e", "mail") for k in ("all", "files", "folders")),
    *({"type": "mail_folders", "path": p} for p in ("mail", "d", ".")),
]


def _getters(ws: Path) -> list[str]:
    """What every getter returns (or the error it gives the evaluator) on the planted workspace."""
    import agentlab.judge.app_getters  # noqa: F401  (registers the application getters)

    state, seen = FinalState(ws), []
    for cfg in GETTERS:
        try:
            seen.append(repr(run_getter(state, cfg)))
        except GetterError as exc:  # the agent's failure: what the evaluator records
            seen.append(exc.message)
    return seen


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(ops=st.lists(op, min_size=1, max_size=6))
def test_nothing_outside_is_read_or_written_whatever_the_program_planted(ops, tool_agents) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        ws, out = _make(Path(tmp))
        store = FolderStore(Path(tmp) / "snapshots")
        start = store.take(ws, "start")
        for kind, name, target in ops:
            _plant(ws, out, kind, name, target)
        outside = _tree(out)
        texts: list[str] = []

        workspace = Workspace(ws, WorkspaceConfig(sandbox="none"))
        env = WorkspaceEnv(workspace)
        texts += [env.listing(), env.observe().text, repr(env.observe().info), repr(workspace.files())]
        for agent in tool_agents:
            texts.append(agent.observation(env))
            spy: list[Any] = []
            real = __import__("agentlab.agents.tools", fromlist=["workspace_values"]).workspace_values
            with mock.patch("agentlab.agents.tools.workspace_values", lambda root, kit: spy.append(real(root, kit)) or spy[-1]):
                agent._constraint(_Values(), env, "Change a.txt", list(agent.kit.tools), first=True)
            texts.append(repr(spy))
        texts += _getters(ws)
        texts += [repr(hub_snapshot(ws)), _listing(ws),
                  previews(ws, FolderChanges(added=[*NAMES, "new.txt"], changed=[], removed=[]), files=len(NAMES) + 1)]

        hostile = store.take(ws, "hostile")  # COLA's "after" snapshot of the step
        texts.append(repr(hostile))
        blobs = b"".join(p.read_bytes() for p in (Path(tmp) / "snapshots" / "objects").rglob("*") if p.is_file())
        assert MARKER.encode() not in blobs and ENV_ENTRY.encode() not in blobs

        done = store.restore(start, ws)  # COLA's rollback: the start state, byte for byte
        texts.append(done.describe())
        assert _regular(ws) == {rel: text.encode() for rel, text in START.items()}
        assert all(e.kind in ("file", "dir") for e in workspace.entries())
        store.restore(hostile, ws)  # and forward again: the planted links come back as links
        store.restore(start, ws)
        assert _regular(ws) == {rel: text.encode() for rel, text in START.items()}
        if os.geteuid() == 0:  # a root runner hands the workspace to the sandbox user
            _plant(ws, out, "link", "d", "abs-dir")
            _plant(ws, out, "hardlink", "h.txt", "")
            SafeFolder(ws).chown_all(65534, 65534)

        blob = "\n".join(texts)
        assert MARKER not in blob, "a file outside the workspace reached what the runner returns"
        assert ENV_ENTRY not in blob and "\x00" not in blob, "the runner's environment reached what it returns"
        assert _tree(out) == outside, "something outside the workspace was written"


def test_a_symlinked_output_is_the_agents_failure_not_a_harness_error(tmp_path: Path) -> None:
    from agentlab.tasks.spec import load_task, tasks_dir

    task = load_task(tasks_dir() / "os-proxy-off.json")
    root = tmp_path / "ws"
    task.prepare(root)
    (tmp_path / "elsewhere.ini").write_text("[proxy]\nenabled = false\n[paths]\ndownloads = ~/Downloads\n")
    (root / "app.ini").unlink()
    (root / "app.ini").symlink_to(tmp_path / "elsewhere.ini")  # the right answer, but outside
    verdict = task.evaluate(root)
    assert verdict.score == 0.0
    assert all("not a regular file" in (c.error or "") for c in verdict.checks), verdict.checks


# -- case 3: the sandbox user ---------------------------------------------------------------
needs_root_bwrap = pytest.mark.skipif(not bwrap_available() or os.geteuid() != 0,
                                      reason="needs bubblewrap and a runner running as root")


@needs_root_bwrap
def test_a_sandboxed_program_run_by_root_is_not_root_and_cannot_read_etc_shadow(tmp_path: Path) -> None:
    assert Path("/etc/shadow").exists()
    with Workspace(tmp_path / "ws", WorkspaceConfig(sandbox="bwrap")) as w:
        w.write_text("mine.txt", "start\n")
        r = w.run_bash("id -u; id -g; cat /etc/shadow; echo shadow=$?; ls /etc/gshadow /etc/machine-id 2>&1 | wc -l\n"
                       "grep -c . /proc/self/status >/dev/null; grep CapEff /proc/self/status\n"
                       "echo more >> mine.txt; echo written=$?; python3 -c 'import json, agentlab; print(\"py ok\")'")
        assert w.read_text("mine.txt") == "start\nmore\n"
    out = r.stdout.split()
    assert out[0] != "0" and out[1] != "0", r.stdout
    assert "shadow=1" in r.stdout and "root:" not in r.stdout
    assert "CapEff:\t0000000000000000" in r.stdout and "written=0" in r.stdout and "py ok" in r.stdout, r.stdout + r.stderr


@needs_root_bwrap
def test_a_root_owned_file_bound_in_is_not_readable_by_the_program(tmp_path: Path) -> None:
    """The program is not the owner of root's files: a 0600 file of root in a folder bound in
    read-only (here: an interpreter folder) cannot be read."""
    import agentlab.envs.workspace as wsmod

    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "key.txt").write_text(MARKER)
    os.chmod(lib / "key.txt", 0o600)
    real = wsmod.interpreter_paths
    with mock.patch.object(wsmod, "interpreter_paths", lambda python: (*real(python), str(lib))):
        with Workspace(tmp_path / "ws", WorkspaceConfig(sandbox="bwrap")) as w:
            r = w.run_bash(f"ls {lib}; cat {lib}/key.txt; echo rc=$?")
    assert "key.txt" in r.stdout and "rc=1" in r.stdout and MARKER not in r.stdout, r.stdout + r.stderr


@needs_root_bwrap
def test_as_root_without_setpriv_the_sandbox_refuses_in_one_line(tmp_path: Path) -> None:
    import shutil

    import agentlab.envs.workspace as wsmod
    from agentlab.errors import EnvironmentUnavailableError

    real = shutil.which
    wsmod._setpriv.cache_clear()
    try:
        with mock.patch.object(wsmod.shutil, "which", lambda name: None if name == "setpriv" else real(name)):
            with pytest.raises(EnvironmentUnavailableError, match="setpriv"):
                Workspace(tmp_path / "ws", WorkspaceConfig(sandbox="bwrap"))
    finally:
        wsmod._setpriv.cache_clear()
