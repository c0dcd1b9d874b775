"""Open a desktop task: the task's application started on its files, on an X display.

A desktop GUI agent (runner ``gui``) gets a :class:`~agentlab.envs.desktop.DesktopEnv` with
the task's application already open on the task's file. :func:`open_desktop_task` writes the
start files into ``<episode>/files/`` (the folder the evaluator later reads), starts a private
Xvfb (or uses the screen given as ``--display``), launches the application named by the task's
``apps`` through :data:`LAUNCHERS` (LibreOffice Calc, Writer and Impress, each with a fresh
profile inside the episode folder, so no first-run or recovery dialog and no other running
LibreOffice is joined) and waits for its window. :meth:`DesktopTaskEnv.collect` lets pending
saves settle and stops the application, so the files are flushed and no process outlives the
episode; :meth:`DesktopTaskEnv.close` stops whatever is left, the private display included.

Whatever keeps the application from running here (a task naming no application with a
launcher, the program not installed, no Xvfb, a window that never appears) raises
:class:`~agentlab.errors.EnvironmentUnavailableError` naming the application and the task:
the episode runner records a harness error, not a task failure.

On a person's own screen (``TaskEnvOptions.display``, e.g. ``":0"``) the env asks before every
action (``DesktopEnv(confirm=True)``: on the terminal) and only the application it launched is
stopped afterwards.
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from agentlab.envs.desktop import DesktopEnv
from agentlab.envs.task_env import TaskEnv, TaskEnvOptions
from agentlab.envs.xdisplay import VirtualDisplay
from agentlab.errors import EnvironmentUnavailableError
from agentlab.eval.exec_tasks import ExecTask

log = logging.getLogger(__name__)

FILES_DIR = "files"
APP_LOG = "app.log"


@dataclass(frozen=True)
class AppLauncher:
    """How one desktop application is started on a file."""

    program: str  #: looked up on PATH
    args: tuple[str, ...]  #: before the profile argument and the file
    a11y_app: str  #: the accessibility tree's name of the application (``DesktopEnv(app=...)``)
    install_hint: str  #: what to install when ``program`` is missing
    file_args: tuple[str, ...] = ()  #: added (after ``args``) only when a file is opened
    #: a fresh user profile in the episode folder ("{uri}" is replaced by the folder's file: URI)
    profile_arg: str = ""
    env: Mapping[str, str] = field(default_factory=dict)
    lock_glob: str = ""  #: lock files the application leaves next to a file it opened
    blank_title: str = ""  #: the window title to wait for when there is no file to open
    #: an argument that makes the application listen for UNO ("{pipe}" is replaced by a name
    #: unique to the episode); empty for applications without UNO
    uno_arg: str = ""

    def argv(self, file: Path | None, profile: Path, uno_pipe: str = "") -> list[str]:
        out = [self.program, *self.args, *(self.file_args if file is not None else ())]
        if self.uno_arg and uno_pipe:
            out.append(self.uno_arg.format(pipe=uno_pipe))
        if self.profile_arg:
            out.append(self.profile_arg.format(uri=profile.resolve().as_uri()))
        if file is not None:
            out.append(str(file))
        return out


def _libreoffice(module: str) -> AppLauncher:
    return AppLauncher(
        program="soffice",
        args=(f"--{module}", "--norestore", "--nologo", "--nolockcheck"),
        file_args=("--nodefault",),  # without a file, --nodefault would show no window at all
        a11y_app="soffice",
        install_hint=f"Debian: apt-get install libreoffice-{module} libreoffice-gtk3",
        profile_arg="-env:UserInstallation={uri}",
        env={"SAL_USE_VCLPLUGIN": "gtk3"},  # the GTK3 plugin exposes the accessibility tree
        lock_glob=".~lock.*#",
        blank_title="LibreOffice",
        uno_arg="--accept=pipe,name={pipe};urp;",
    )


def uno_url(pipe: str) -> str:
    """The UNO connection string for a LibreOffice started with ``uno_arg`` and ``pipe``."""
    return f"uno:pipe,name={pipe};urp;StarOffice.ComponentContext"


#: a task's ``apps`` entry -> how to start it on this machine
LAUNCHERS: dict[str, AppLauncher] = {
    "libreoffice-calc": _libreoffice("calc"),
    "libreoffice-writer": _libreoffice("writer"),
    "libreoffice-impress": _libreoffice("impress"),
}


def task_app(task: ExecTask) -> tuple[str, AppLauncher]:
    """The first of the task's ``apps`` with a launcher here (a harness error when none has)."""
    for name in task.apps:
        if name in LAUNCHERS:
            return name, LAUNCHERS[name]
    named = ", ".join(task.apps) or "none"
    raise EnvironmentUnavailableError(
        f"task {task.id} needs a desktop application this harness cannot open here (apps: {named}); "
        f"launchers exist for {', '.join(LAUNCHERS)}", where=task.source or task.id)


def task_file(task: ExecTask, root: Path) -> Path | None:
    """The file the application opens: the task's first output, else its first setup path, that exists."""
    paths = [*task.outputs, *(str(s.get("path")) for s in task.setup if s.get("path"))]
    for rel in paths:
        path = root / rel
        if path.is_file():
            return path
    return None


def folder_state(root: Path) -> frozenset[tuple[str, int, int]]:
    """(path, size, mtime) of every file under ``root``: equal twice in a row = nothing is being written."""
    out = set()
    for p in root.rglob("*"):
        try:
            st = p.stat()
        except FileNotFoundError:  # a temporary file that went away meanwhile
            continue
        if p.is_file():
            out.add((p.relative_to(root).as_posix(), st.st_size, st.st_mtime_ns))
    return frozenset(out)


def wait_settled(root: Path, quiet_s: float = 1.0, timeout_s: float = 15.0, interval_s: float = 0.2) -> bool:
    """Wait until no file under ``root`` changed for ``quiet_s`` (a save that was still being
    written); False when ``timeout_s`` ran out first."""
    deadline = time.monotonic() + timeout_s
    last = folder_state(root)
    quiet_since = time.monotonic()
    while time.monotonic() < deadline:
        time.sleep(interval_s)
        now = folder_state(root)
        if now != last:
            last, quiet_since = now, time.monotonic()
        elif time.monotonic() - quiet_since >= quiet_s:
            return True
    log.warning("files under %s were still changing after %.0fs", root, timeout_s)
    return False


def _remove_locks(root: Path, launcher: AppLauncher) -> None:
    if launcher.lock_glob:
        for lock in root.rglob(launcher.lock_glob):
            lock.unlink(missing_ok=True)  # a stale lock would open a modal "Document in Use" dialog


def _screen_seen(display: VirtualDisplay, folder: Path) -> str:
    """What was on the screen when the window did not come (for the error line): the visible
    windows' titles, and a screenshot saved next to the episode (best effort: diagnostics only)."""
    try:
        names = display.window_names()
    except (OSError, subprocess.SubprocessError, EnvironmentUnavailableError):
        names = []
    shot = ""
    try:
        DesktopEnv(display=display, a11y="off").screenshot().save(folder / "app_timeout.png")
        shot = f"; screen saved to {folder / 'app_timeout.png'}"
    except Exception:  # a failed diagnostic must not hide the real error
        pass
    return f" (visible windows: {names or 'none'}{shot})"


def _log_tail(path: Path, chars: int = 300) -> str:
    try:
        text = " ".join(path.read_text(errors="replace").split())
    except FileNotFoundError:
        return ""
    return f" (application log: ...{text[-chars:]})" if text else ""


def _window_pattern(title: str) -> str:
    """``title`` as a literal in xdotool's (POSIX extended) window-name regex."""
    return "".join(f"\\{c}" if c in ".^$*+?()[]{}|\\" else c for c in title)


class DesktopTaskEnv(TaskEnv):
    """A desktop with a task's application open on ``root``'s files."""

    def __init__(self, env: DesktopEnv, root: Path, display: VirtualDisplay, app: subprocess.Popen[bytes],
                 launcher: AppLauncher, *, settle_timeout_s: float = 15.0) -> None:
        super().__init__(env, root)
        self.display = display
        self.app: subprocess.Popen[bytes] | None = app
        self.launcher = launcher
        self.settle_timeout_s = settle_timeout_s

    def _stop_app(self) -> None:
        if self.app is not None:
            self.display.stop_app(self.app)  # the whole process group (LibreOffice: oosplash + soffice.bin)
            self.app = None
            _remove_locks(self.root, self.launcher)

    def collect(self) -> None:
        """Let a save still being written finish, then stop the application (files flushed)."""
        if self.app is not None:
            wait_settled(self.root, timeout_s=self.settle_timeout_s)
        self._stop_app()

    def close(self) -> None:
        try:
            self._stop_app()
            self.env.close()
        finally:
            self.display.stop()  # a private Xvfb and its bus; on an attached screen, only our apps


def open_desktop_task(task: ExecTask, folder: Path, options: TaskEnvOptions) -> TaskEnv:
    """The task's application open on its files in ``folder/files``, on a private Xvfb
    (``options.display`` None) or on the given screen, where every action is confirmed."""
    name, launcher = task_app(task)
    where = task.source or task.id
    # absolute: the app starts in the files folder, so a relative run folder (``--out runs/x``)
    # would name a file that does not exist from there and no window would ever open
    folder = folder.resolve()
    if shutil.which(launcher.program) is None:
        raise EnvironmentUnavailableError(
            f"{name} is not installed here ({launcher.program} is not on PATH; {launcher.install_hint}); "
            f"task {task.id} cannot be opened", where=where)
    root = folder / FILES_DIR
    root.mkdir(parents=True, exist_ok=True)
    task.prepare(root)
    _remove_locks(root, launcher)
    file = task_file(task, root)
    if file is None and not launcher.blank_title:
        raise EnvironmentUnavailableError(f"task {task.id} has no start file for {name} to open "
                                          "(its outputs and setup paths name no existing file)", where=where)
    own_screen = options.display is not None
    try:
        display = VirtualDisplay.attach(options.display) if options.display is not None else VirtualDisplay().start()
    except EnvironmentUnavailableError as exc:
        raise EnvironmentUnavailableError(f"no X display for {name} (task {task.id}): {exc.message}",
                                          where=where) from None
    try:
        app_log = folder / APP_LOG
        title = file.name if file is not None else launcher.blank_title
        t0 = time.monotonic()
        try:
            pipe = f"agentlab-{os.getpid()}-{uuid.uuid4().hex[:8]}" if launcher.uno_arg else ""
            proc = display.launch(launcher.argv(file, folder / "profile", pipe), env=dict(launcher.env), cwd=root,
                                  log_path=app_log)
            display.wait_for_window(_window_pattern(title), timeout_s=options.app_start_timeout_s, proc=proc)
        except EnvironmentUnavailableError as exc:
            raise EnvironmentUnavailableError(f"{name} did not open {title} for task {task.id} on "
                                              f"{display.display}: {exc.message}{_screen_seen(display, folder)}"
                                              f"{_log_tail(app_log)}", where=where) from None
        log.info("task %s: %s showed %s after %.1fs", task.id, name, title, time.monotonic() - t0)
        env = DesktopEnv(display=display, app=launcher.a11y_app, confirm=own_screen,
                         uno_url=uno_url(pipe) if pipe else None)
        # the window is mapped before its toolbars settle: the agent's first screen should be a stable one
        env.observe_stable(timeout_s=min(30.0, options.app_start_timeout_s))
        return DesktopTaskEnv(env, root, display, proc, launcher)
    except BaseException:
        display.stop()
        raise
