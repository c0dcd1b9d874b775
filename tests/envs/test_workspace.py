"""The CLI workspace runs agent-written programs confined to their folder, with limits."""

from __future__ import annotations

import os
import subprocess
import time
import uuid
from pathlib import Path

import pytest

from agentlab.envs.workspace import Workspace, WorkspaceConfig, bwrap_available
from agentlab.errors import DataError

needs_bwrap = pytest.mark.skipif(not bwrap_available(), reason="bubblewrap missing or cannot create namespaces here")


def _alive(marker: str) -> bool:
    out = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True).stdout
    return bool(out.strip())


@pytest.fixture(params=["bwrap", "none"])
def ws(request, tmp_path):
    if request.param == "bwrap" and not bwrap_available():
        pytest.skip("bubblewrap missing or cannot create namespaces here")
    with Workspace(tmp_path / "ws", WorkspaceConfig(sandbox=request.param, timeout_s=5)) as w:
        yield w


def test_python_runs_in_workspace_with_minimal_env(ws, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-should-not-leak")
    r = ws.run_python(
        "import os, json\n"
        "open('out.txt', 'w').write('hello')\n"
        "print(json.dumps({'cwd': os.getcwd(), 'home': os.environ['HOME'], 'keys': sorted(os.environ)}))\n"
    )
    assert r.ok, r.stderr
    import json

    info = json.loads(r.stdout)
    assert info["cwd"] == str(ws.root) and info["home"] == str(ws.root)
    assert "OPENAI_API_KEY" not in info["keys"] and "DISPLAY" not in info["keys"]
    assert ws.read_text("out.txt") == "hello"
    assert "out.txt" in ws.files()


def test_bash_captures_stdout_stderr_and_exit_code(ws):
    r = ws.run_bash("echo to-out; echo to-err >&2; exit 3")
    assert r.returncode == 3 and not r.ok
    assert r.stdout.strip() == "to-out" and r.stderr.strip() == "to-err"
    assert "exit 3" in r.summary()


def test_timeout_kills_the_whole_process_tree(ws):
    marker = f"{uuid.uuid4().int % 10**6}.{os.getpid()}"  # a sleep argument nobody else uses
    t0 = time.monotonic()
    r = ws.run_bash(f"sleep {marker} &\nwhile true; do :; done", timeout_s=1.0)
    assert r.timed_out and not r.ok
    assert time.monotonic() - t0 < 4
    time.sleep(0.2)
    assert not _alive(f"sleep {marker}"), "background child survived the timeout"


def test_background_child_does_not_hold_a_finished_program(ws):
    marker = f"{uuid.uuid4().int % 10**6}.{os.getpid()}"
    r = ws.run_bash(f"sleep {marker} &\necho done")
    assert not r.timed_out and r.stdout.strip() == "done" and r.duration_s < 3
    time.sleep(0.2)
    assert not _alive(f"sleep {marker}")


def test_memory_limit_applies(tmp_path):
    with Workspace(tmp_path, WorkspaceConfig(memory_mb=300, sandbox="none")) as w:
        r = w.run_python("x = bytearray(600 * 1024 * 1024)\nprint('allocated')")
    assert r.returncode != 0 and "MemoryError" in r.stderr


def test_output_is_capped(tmp_path):
    with Workspace(tmp_path, WorkspaceConfig(max_output_chars=1000, sandbox="none")) as w:
        r = w.run_python("print('x' * 50000)")
    assert r.ok and len(r.stdout) < 1200 and "cut" in r.stdout


def test_declared_outputs_must_stay_inside(tmp_path):
    outside = tmp_path / "outside.txt"
    outside.write_text("x")
    with Workspace(tmp_path / "ws", WorkspaceConfig(sandbox="none")) as w:
        w.write_text("sub/ok.txt", "fine")
        (w.root / "link.txt").symlink_to(outside)
        assert w.check_outputs(["sub/ok.txt"]) == [w.root / "sub" / "ok.txt"]
        for bad in ["../outside.txt", str(outside), "link.txt"]:
            with pytest.raises(DataError, match="outside the workspace"):
                w.check_outputs([bad])
        with pytest.raises(DataError, match="does not exist"):
            w.check_outputs(["missing.txt"])


@needs_bwrap
def test_sandbox_refuses_writes_outside_and_hides_home(tmp_path):
    repo_target = Path(__file__).resolve().parent / f"pwned-{uuid.uuid4().hex}.txt"  # outside /tmp
    tmp_target = tmp_path / "victim.txt"  # /tmp is a private tmpfs in the sandbox
    try:
        with Workspace(tmp_path / "ws", WorkspaceConfig(sandbox="bwrap")) as w:
            r = w.run_bash(
                f"echo pwned > {repo_target}; echo rc=$?\n"
                f"echo pwned > {tmp_target}; echo rc=$?\n"
                "ls -A \"$(getent passwd $(id -u) | cut -d: -f6)\" | grep -v pyenv | wc -l\n"
                "echo inside > inside.txt"
            )
            assert r.ok, r.stderr
            assert (w.root / "inside.txt").read_text().strip() == "inside"
    finally:
        leaked = repo_target.exists()
        repo_target.unlink(missing_ok=True)
    assert not leaked and not tmp_target.exists()
    # The repository does not exist inside the sandbox (only the interpreter's folders and the
    # agentlab package are bound in): the write is refused because the folder is not there.
    assert r.stdout.startswith("rc=1")
    assert "No such file or directory" in r.stderr
    home = Path.home()
    if home != Path("/") and not str(w.root).startswith(str(home)):
        assert r.stdout.split()[-1] == "0", "home folder contents visible in the sandbox"


@needs_bwrap
def test_the_system_is_there_but_read_only(tmp_path):
    with Workspace(tmp_path / "ws", WorkspaceConfig(sandbox="bwrap")) as w:
        r = w.run_bash("echo x > /usr/pwned; echo rc=$?; ls /usr/bin/env && python3 -c 'import json, agentlab; print(1)'")
    assert r.stdout.startswith("rc=1") and "Read-only file system" in r.stderr
    assert "/usr/bin/env" in r.stdout and r.stdout.strip().endswith("1"), r.stderr


@needs_bwrap
def test_a_program_cannot_find_the_task_files_the_run_folder_or_the_home_folder(tmp_path, monkeypatch):
    """The probe looks where a curious agent would: the project's task files (evaluators and reference
    solutions), the run folder's rows and other episodes, the home folder, the runner's environment."""
    from agentlab.paths import data_dir

    monkeypatch.setenv("AGENTLAB_PROBE_SECRET", "sk-do-not-leak")
    run = tmp_path / "run"
    (run / "episodes" / "other").mkdir(parents=True)
    (run / "results.jsonl").write_text('{"id": "other"}\n')
    (run / "episodes" / "other" / "answer.txt").write_text("42")
    probe = f"""
import glob, os, pathlib
seen = []
for p in [{str(data_dir() / "tasks")!r}, {str(data_dir())!r}, {str(run / "results.jsonl")!r},
          {str(run / "episodes" / "other")!r}, {str(Path.home())!r}]:
    # (a home folder may show the one folder the interpreter lives in, pyenv's, read-only)
    if os.path.exists(p) and (not os.path.isdir(p) or [f for f in os.listdir(p) if f != ".pyenv"]):
        seen.append(p)
for top in os.listdir("/"):  # every folder the sandbox shows, but the kernel's and the system's
    if top in ("proc", "sys", "dev", "usr", "etc"):
        continue
    for folder, dirs, files in os.walk("/" + top):
        seen += [os.path.join(folder, f) for f in files if f == "csv-sales-summary.json"]
for env in glob.glob("/proc/*/environ"):
    try:
        if b"sk-do-not-leak" in open(env, "rb").read():
            seen.append(env)
    except OSError:
        pass
print("SEEN", seen)
"""
    with Workspace(run / "episodes" / "mine" / "workspace", WorkspaceConfig(sandbox="bwrap", timeout_s=120)) as w:
        r = w.run_python(probe)
    assert r.ok, r.stderr
    assert r.stdout.strip() == "SEEN []", r.stdout


def test_without_bwrap_a_program_cannot_read_the_runner_environment(tmp_path, monkeypatch):
    """No bubblewrap: the runner is made non-dumpable and a root program loses its capabilities,
    so ``/proc/<runner>/environ`` (where an API key may be) is not readable."""
    import os

    monkeypatch.setenv("AGENTLAB_PROBE_SECRET", "sk-do-not-leak")
    probe = f"""
try:
    data = open("/proc/{os.getpid()}/environ", "rb").read()
    print("READ", b"sk-do-not-leak" in data)
except OSError as e:
    print("DENIED", e.errno)
"""
    with Workspace(tmp_path / "ws", WorkspaceConfig(sandbox="none")) as w:
        r = w.run_python(probe)
    assert r.stdout.startswith("DENIED"), r.stdout + r.stderr
    assert "sk-do-not-leak" not in r.stdout


@needs_bwrap
def test_sandbox_cannot_remount_itself_writable(tmp_path):
    # Regression: as root, bwrap keeps all capabilities unless told to drop them, and
    # `mount -o remount,bind,rw` then turned a read-only path writable.
    target = Path(__file__).resolve().parent
    marker = target / f"remount-{uuid.uuid4().hex}.txt"
    try:
        with Workspace(tmp_path / "ws", WorkspaceConfig(sandbox="bwrap")) as w:
            r = w.run_bash(f"mount -o remount,bind,rw /; echo mount=$?; touch {marker}; echo touch=$?")
    finally:
        leaked = marker.exists()
        marker.unlink(missing_ok=True)
    assert not leaked, "the sandbox remounted a read-only path writable"
    assert "mount=0" not in r.stdout and "touch=1" in r.stdout


@needs_bwrap
def test_sandbox_allow_write_and_network_off(tmp_path):
    import socket

    shared = tmp_path / "shared"
    shared.mkdir()
    server = socket.create_server(("127.0.0.1", 0))  # reachable from this process's network
    port = server.getsockname()[1]
    code = (
        f"open({str(shared / 'ok.txt')!r}, 'w').write('y')\n"
        "import socket\n"
        f"try:\n    socket.create_connection(('127.0.0.1', {port}), timeout=2); print('net open')\n"
        "except OSError as e:\n    print('net closed', e.errno)\n"
    )
    try:
        with Workspace(tmp_path / "ws", WorkspaceConfig(sandbox="bwrap", allow_write=[shared])) as w:
            r = w.run_python(code)
        with Workspace(tmp_path / "ws2", WorkspaceConfig(sandbox="bwrap", network=True)) as w:
            r_net = w.run_python(code.split("\n", 1)[1])
    finally:
        server.close()
    assert r.ok, r.stderr
    assert (shared / "ok.txt").read_text() == "y"
    assert r.stdout.startswith("net closed"), r.stdout
    assert r_net.stdout.startswith("net open"), r_net.stdout


def test_temporary_workspace_is_removed(tmp_path):
    w = Workspace(config=WorkspaceConfig(sandbox="none"))
    root = w.root
    assert root.is_dir()
    w.close()
    assert not root.exists()
    keep = Workspace(tmp_path / "mine")
    keep.close()
    assert (tmp_path / "mine").is_dir(), "a caller's folder is never deleted"


def test_an_output_flood_keeps_its_start_and_end_and_tells_the_true_count(tmp_path):
    """Issue #37, case 10: 200 MB of output was reported as "300026 characters cut" and its end
    (the traceback) never reached the agent. The count is now true, the start and the end are
    both kept, and the runner holds only a bounded head and tail while reading."""
    import tracemalloc

    from agentlab.envs.actions.workspace import RunProgram
    from agentlab.envs.workspace_env import WorkspaceEnv

    code = ("import sys\nout = sys.stdout.buffer\nout.write(b'first line\\n')\nline = b'x' * 1023 + b'\\n'\n"
            "for _ in range(200 * 1024):\n    out.write(line)\nout.write(b'last line: 42\\n')\nout.flush()\n"
            "sys.stderr.write('warning\\n' * 200000)\nraise ValueError('the real cause')\n")
    total = len(b"first line\n") + 200 * 1024 * 1024 + len(b"last line: 42\n")
    with Workspace(tmp_path, WorkspaceConfig(sandbox="none")) as w:
        env = WorkspaceEnv(w)
        tracemalloc.start()
        try:
            res = env.step(RunProgram("python", code))
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        r = env.last
    assert r is not None and r.stdout_bytes == total and r.returncode == 1
    assert peak < 20 * 1024 * 1024, f"the runner held {peak} bytes reading a 200 MB output"
    assert r.stdout.startswith("first line\n") and r.stdout.endswith("last line: 42\n")
    assert len(r.stdout) < 101_000
    shown = len(r.stdout.split("\n[... ")[0].encode()) + len(r.stdout.split(" ...]\n")[-1].encode())
    assert f"[... {total - shown} bytes cut (the output was {total} bytes;" in r.stdout
    # what the agent sees (2000 characters per stream): both ends, the traceback, the true count
    text = res.observation.text
    assert "first line" in text and "last line: 42" in text and "ValueError: the real cause" in text
    assert f"(the output was {total} bytes;" in text
    assert res.info["stderr"].rstrip().endswith("ValueError: the real cause")


def test_capture_keeps_head_and_tail_of_any_split(tmp_path):
    from agentlab.envs.workspace import Captured, clip_middle

    assert clip_middle("short", "", 10, 5) == "short"
    assert Captured(b"abc", b"", 3).text(10) == "abc"
    # a character split at either cut is dropped, not shown as a replacement mark
    cap = Captured("héllo".encode()[:2], "wörld".encode()[2:], 1000)
    text = cap.text(30)
    assert text.startswith("h\n[... ") and text.endswith("\nrld") and "\ufffd" not in text
    assert "[... 996 bytes cut (the output was 1000 bytes" in text


@needs_bwrap
def test_the_sandbox_imports_the_running_package_not_the_installed_one(tmp_path: Path) -> None:
    """A worktree measured with ``PYTHONPATH=<worktree>`` runs its own toolkits in the sandbox: the
    running ``agentlab`` folder is bound over the one ``python -I`` would import, and nothing else
    of its checkout comes along."""
    import shutil as sh
    from unittest import mock

    import agentlab.envs.workspace as wsmod

    checkout = tmp_path / "worktree"
    pkg = checkout / "agentlab"
    sh.copytree(wsmod.running_package(), pkg, ignore=sh.ignore_patterns("__pycache__"))
    (pkg / "which_checkout.py").write_text("NAME = 'the worktree'\n")
    (checkout / "secret.txt").write_text("reference solution")
    with mock.patch.object(wsmod, "running_package", lambda: str(pkg)):
        assert wsmod.package_swap(WorkspaceConfig().python) == (str(pkg), wsmod.interpreter_package(WorkspaceConfig().python))
        with Workspace(tmp_path / "ws", WorkspaceConfig(sandbox="bwrap")) as w:
            r = w.run_python(
                "import os, agentlab.which_checkout as m\n"
                f"print(m.NAME, os.path.exists({str(checkout / 'secret.txt')!r}))\n")
    assert r.stdout.strip() == "the worktree False", r.stdout + r.stderr
    with Workspace(tmp_path / "ws2", WorkspaceConfig(sandbox="bwrap")) as w:  # no swap: the installed one
        r = w.run_python("import importlib.util as u\nprint(u.find_spec('agentlab.which_checkout') is None)\n")
    assert r.stdout.strip() == "True", r.stdout + r.stderr


def test_no_swap_when_the_running_package_is_the_installed_one() -> None:
    import agentlab.envs.workspace as wsmod

    python = WorkspaceConfig().python
    if wsmod.interpreter_package(python) == wsmod.running_package():
        assert wsmod.package_swap(python) is None
    else:  # this very test runs from a worktree: the swap names both folders
        assert wsmod.package_swap(python) == (wsmod.running_package(), wsmod.interpreter_package(python))
