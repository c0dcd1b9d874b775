"""Open a desktop task: the task's applications started on its files, on an X display.

A desktop GUI agent (runner ``gui``) gets a :class:`~agentlab.envs.desktop.DesktopEnv` with
the task's application already open on the task's file. :func:`open_desktop_task` writes the
start files into ``<episode>/files/`` (the folder the evaluator later reads), starts a private
Xvfb (or uses the screen given as ``--display``), launches the application named by the task's
``apps`` through :data:`LAUNCHERS` (LibreOffice Calc, Writer and Impress, each with a fresh
profile inside the episode folder, so no first-run or recovery dialog and no other running
LibreOffice is joined) and waits for its window. :meth:`DesktopTaskEnv.collect` lets pending
saves settle and stops the application, so the files are flushed and no process outlives the
episode; :meth:`DesktopTaskEnv.close` stops whatever is left, the private display included.

A task whose ``apps`` name several applications with a launcher (the cross-application
``multi_apps`` tasks: read a total in Calc, write it into a Writer letter) gets every one of
them, in the order listed, each on its own file: the first start file (outputs, then setup
paths) of a type it opens (:attr:`AppLauncher.extensions`) that no earlier application took.
LibreOffice modules given the same profile share one process: the second ``soffice`` hands its
file to the running instance and exits, so only the first launch carries the UNO pipe, and the
window of a later launch is waited for while watching the first process. On a private display
the windows are then tiled side by side, in the listed order (:func:`tile_windows`): with no
window manager they would stack, and the accessibility tree lists the elements of a covered
window as showing, so an agent would click through the front window at the covered one's
elements. A task with one application behaves as it always did (its first output or setup
file, whatever its type).

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
import signal
import subprocess
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from agentlab.envs.a11y import pyatspi_available
from agentlab.envs.desktop import DesktopEnv
from agentlab.envs.launchers import LAUNCHERS, AppLauncher, environ_for, installed, uno_url
from agentlab.envs.task_env import TaskEnv, TaskEnvOptions
from agentlab.envs.xdisplay import VirtualDisplay
from agentlab.errors import EnvironmentUnavailableError
from agentlab.safepath import SafeFolder
from agentlab.tasks.spec import ExecTask

log = logging.getLogger(__name__)

FILES_DIR = "files"
APP_LOG = "app.log"
__all__ = ["LAUNCHERS", "AppLauncher", "AppStart", "DesktopTaskEnv", "app_starts", "open_desktop_task", "task_file",
           "uno_url", "wait_settled"]


@dataclass(frozen=True)
class AppStart:
    """One application a task opens, and the file it opens (None: its empty document)."""

    name: str  #: the task's ``apps`` entry
    launcher: AppLauncher
    file: Path | None


def task_apps(task: ExecTask) -> list[tuple[str, AppLauncher]]:
    """Every distinct one of the task's ``apps`` with a launcher here, in the task's order (a
    harness error when none has)."""
    found = list(dict.fromkeys(name for name in task.apps if name in LAUNCHERS))
    if found:
        return [(name, LAUNCHERS[name]) for name in found]
    named = ", ".join(task.apps) or "none"
    raise EnvironmentUnavailableError(
        f"task {task.id} needs a desktop application this harness cannot open here (apps: {named}); "
        f"launchers exist for {', '.join(LAUNCHERS)}", where=task.source or task.id)


def _start_paths(task: ExecTask, root: Path) -> list[Path]:
    """The task's outputs, then its setup paths, that exist in ``root`` (each once, in that order)."""
    paths = [*task.outputs, *(str(s.get("path")) for s in task.setup if s.get("path"))]
    folder = SafeFolder(root)  # a link left there is not a start file (the application would follow it)
    return list(dict.fromkeys(root / rel for rel in paths if folder.is_file(rel)))


def task_file(task: ExecTask, root: Path, launcher: AppLauncher | None = None) -> Path | None:
    """The file the application opens: the task's first output, else its first setup path, that
    exists. An application with a state folder (a browser profile, a mail profile) opens only a
    file outside it of a type it opens, or none; one that opens the folder itself opens no file."""
    paths = _start_paths(task, root)
    if launcher is not None and launcher.opens_folder:
        return None
    if launcher is not None and launcher.state_dir:
        state = root / launcher.state_dir
        return next((p for p in paths if state not in p.parents and p.suffix.lower() in launcher.extensions), None)
    return paths[0] if paths else None


def app_starts(task: ExecTask, root: Path) -> list[AppStart]:
    """What to launch for ``task`` on the start files in ``root``: its one application on
    :func:`task_file`; with several, each on the first start file of a type it opens that no
    earlier one took (the first may open its empty document; a later one without a file is a
    harness error, since its window could not be told apart)."""
    apps = task_apps(task)
    if len(apps) == 1:
        name, launcher = apps[0]
        return [AppStart(name, launcher, task_file(task, root, launcher))]
    candidates = _start_paths(task, root)
    out: list[AppStart] = []
    for i, (name, launcher) in enumerate(apps):
        file = next((p for p in candidates if p.suffix.lower() in launcher.extensions), None)
        if file is not None:
            candidates.remove(file)
        elif i > 0:
            raise EnvironmentUnavailableError(
                f"task {task.id} opens {', '.join(n for n, _ in apps)} but no start file is left for {name} "
                f"(it opens {', '.join(launcher.extensions) or 'no file type'})", where=task.source or task.id)
        out.append(AppStart(name, launcher, file))
    return out


def folder_state(root: Path) -> frozenset[tuple[str, int, int]]:
    """(path, size, mtime) of every file under ``root``: equal twice in a row = nothing is being
    written. As ``lstat`` sees them: a link is never followed."""
    if not root.is_dir():
        return frozenset()
    return frozenset((e.rel, e.size, e.mtime_ns) for e in SafeFolder(root).walk() if e.kind == "file")


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


def exit_text(returncode: int) -> str:
    """How a process ended, for a person: ``exited with status 3``, or, for a negative status (a
    signal), ``was killed by SIGKILL (status -9)``."""
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        return f"was killed by {name} (status {returncode})"
    return f"exited with status {returncode}"


class DesktopTaskEnv(TaskEnv):
    """A desktop with a task's applications open on ``root``'s files."""

    def __init__(self, env: DesktopEnv, root: Path, display: VirtualDisplay, apps: list[subprocess.Popen[bytes]],
                 launchers: list[AppLauncher], *, settle_timeout_s: float = 15.0,
                 relaunch: Callable[[], tuple[list[subprocess.Popen[bytes]], list[str]]] | None = None,
                 windows: list[str] | None = None, names: list[str] | None = None) -> None:
        super().__init__(env, root)
        self.display = display
        #: the processes launched, in launch order (a LibreOffice launch that joined the first has exited)
        self.apps: list[subprocess.Popen[bytes]] = list(apps)
        self.launchers = launchers
        self.settle_timeout_s = settle_timeout_s
        self._relaunch = relaunch
        #: each launch's window (X id), for its quit shortcut
        self.windows: list[str] = list(windows or [])
        #: each launch's name (the task's ``apps`` entry), for the line that says which one died
        self.names: list[str] = list(names or [la.a11y_app for la in launchers])
        if isinstance(env, DesktopEnv):
            env.liveness = self.dead_app
            env.task_files, env.release_files = root, self.release

    def dead_app(self) -> str | None:
        """Which of the task's applications is no longer running (None: all run). A launch that
        joined an earlier one (a second LibreOffice module on one profile) exits by design and is
        not watched; every other launched process is the application itself."""
        for i, proc in enumerate(self.apps):
            if i < len(self.launchers) and any(_joins(self.launchers[i], earlier) for earlier in self.launchers[:i]):
                continue
            status = proc.poll()
            if status is not None:
                name = self.names[i] if i < len(self.names) else str(proc.args)
                return f"the application {name} (pid {proc.pid}) {exit_text(status)}"
        return None

    def release(self) -> None:
        """Stop the applications as :meth:`collect` does (a profile written as on a normal exit,
        a pending save let finish), so a specialist can change :attr:`root`'s files with nothing
        left to overwrite them (a browser rewrites its preferences when it quits)."""
        self.collect()

    def reopen(self) -> None:
        """Stop the applications (if still running) and open them again on :attr:`root`'s files,
        as at the start (same UNO pipe, windows tiled): a backtrack's restored files on screen."""
        self._stop_apps()
        if self._relaunch is None:
            raise EnvironmentUnavailableError("this desktop cannot relaunch its applications", where=self.root)
        self.apps, self.windows = self._relaunch()
        if isinstance(self.env, DesktopEnv):
            self.env.observe_stable(timeout_s=30.0)

    def _stop_apps(self, graceful: bool = False) -> None:
        if self.apps:
            how = {id(p): (la, w) for p, la, w in zip(self.apps, self.launchers, self.windows or [""] * len(self.apps))}
            for proc in reversed(self.apps):
                launcher, window = how.get(id(proc), (None, ""))
                if graceful and launcher is not None and launcher.quit_s > 0:  # it writes its profile, then exits
                    self.display.quit_app(proc, launcher.quit_s, window=window, keys=launcher.quit_keys)
                else:
                    self.display.stop_app(proc)  # the whole process group (LibreOffice: oosplash + soffice.bin)
            self.apps = []
            for launcher in self.launchers:
                _remove_locks(self.root, launcher)

    def collect(self) -> None:
        """Bring the applications' state to disk, then stop them: a save still being written is
        let finish (files a document application writes), and an application that keeps its
        state in a profile (a browser's bookmarks and preferences, a mail client's folders,
        a player's settings) is asked to quit (SIGTERM, :attr:`AppLauncher.quit_s`) so that it
        writes that state as it does on a normal exit."""
        if self.apps and any(la.quit_s <= 0 for la in self.launchers):
            wait_settled(self.root, timeout_s=self.settle_timeout_s)
        self._stop_apps(graceful=True)

    def close(self) -> None:
        try:
            self._stop_apps()
            self.env.close()
        finally:
            self.display.stop()  # a private Xvfb and its bus; on an attached screen, only our apps


def _joins(later: AppLauncher, earlier: AppLauncher) -> bool:
    """A launch of ``later`` hands its file to the running ``earlier`` (LibreOffice modules on
    one profile share one process) instead of starting a process of its own."""
    return bool(later.profile_arg) and (later.program, later.profile_arg) == (earlier.program, earlier.profile_arg)


def tile_windows(display: VirtualDisplay, windows: list[str]) -> None:
    """Lay ``windows`` (X ids) side by side over the whole screen, left to right (best effort:
    a window that cannot be moved is logged and left where it is)."""
    width = display.width // len(windows)
    for i, wid in enumerate(windows):
        for cmd in (["windowsize", wid, str(width), str(display.height)], ["windowmove", wid, str(i * width), "0"]):
            r = subprocess.run(["xdotool", *cmd], env=display.env, capture_output=True, text=True, timeout=10)
            if r.returncode != 0:
                log.warning("could not %s window %s: %s", cmd[0], wid, r.stderr.strip())


def profile_dir(launcher: AppLauncher, folder: Path, root: Path) -> Path:
    """Where ``launcher``'s profile lives: its state folder inside the files (``root``), or
    ``<episode>/profile`` (LibreOffice's user installation, terminals' and file managers' home)."""
    return root / launcher.state_dir if launcher.state_dir else folder / "profile"


def _launch_window(task: ExecTask, start: AppStart, display: VirtualDisplay, folder: Path, root: Path,
                   options: TaskEnvOptions, pipe: str,
                   host: subprocess.Popen[bytes] | None) -> tuple[subprocess.Popen[bytes], str]:
    """Launch ``start`` and wait for its window, watching ``host`` (the running instance it
    joins; else the new process) so that an application that died is reported at once; the
    process and the window's X id."""
    app_log = folder / APP_LOG
    launcher = start.launcher
    title = start.file.name if start.file is not None else launcher.blank_title
    pattern = launcher.window or _window_pattern(title)
    title = launcher.window and f"a window matching {launcher.window!r}" or title
    state = profile_dir(launcher, folder, root)
    t0 = time.monotonic()
    try:
        proc = display.launch(launcher.argv(start.file, state, pipe, root), cwd=root, log_path=app_log,
                              env=environ_for(launcher, state, root, folder))
        window = display.wait_for_window(pattern, timeout_s=options.app_start_timeout_s, proc=host or proc)
    except EnvironmentUnavailableError as exc:
        raise EnvironmentUnavailableError(f"{start.name} did not open {title} for task {task.id} on "
                                          f"{display.display}: {exc.message}{_screen_seen(display, folder)}"
                                          f"{_log_tail(app_log)}", where=task.source or task.id) from None
    log.info("task %s: %s showed %s after %.1fs", task.id, start.name, title, time.monotonic() - t0)
    return proc, window


def open_desktop_task(task: ExecTask, folder: Path, options: TaskEnvOptions) -> TaskEnv:
    """The task's applications open on its files in ``folder/files``, on a private Xvfb
    (``options.display`` None) or on the given screen, where every action is confirmed."""
    apps = task_apps(task)
    where = task.source or task.id
    # absolute: the app starts in the files folder, so a relative run folder (``--out runs/x``)
    # would name a file that does not exist from there and no window would ever open
    folder = folder.resolve()
    for name, launcher in apps:
        if not installed(launcher):
            raise EnvironmentUnavailableError(
                f"{name} is not installed here ({launcher.needs} is not on PATH; {launcher.install_hint}); "
                f"task {task.id} cannot be opened", where=where)
    root = folder / FILES_DIR
    root.mkdir(parents=True, exist_ok=True)
    task.prepare(root)
    for _, launcher in apps:
        _remove_locks(root, launcher)
        if launcher.seed is not None:
            launcher.seed(profile_dir(launcher, folder, root), root)
    starts = app_starts(task, root)
    first = starts[0]
    if first.file is None and not (first.launcher.blank_title or first.launcher.window):
        raise EnvironmentUnavailableError(f"task {task.id} has no start file for {first.name} to open "
                                          "(its outputs and setup paths name no existing file)", where=where)
    own_screen = options.display is not None
    try:
        display = VirtualDisplay.attach(options.display) if options.display is not None else VirtualDisplay().start()
    except EnvironmentUnavailableError as exc:
        raise EnvironmentUnavailableError(f"no X display for {' + '.join(s.name for s in starts)} "
                                          f"(task {task.id}): {exc.message}", where=where) from None
    try:
        uno_pipe = f"agentlab-{os.getpid()}-{uuid.uuid4().hex[:8]}"

        def launch_all() -> tuple[list[subprocess.Popen[bytes]], list[str], str]:
            """Launch every application on its file (at the start, and again on a team's backtrack)."""
            procs: list[subprocess.Popen[bytes]] = []
            windows: list[str] = []
            pipe = ""
            for i, start in enumerate(starts):
                host = next((procs[j] for j in range(i) if _joins(start.launcher, starts[j].launcher)), None)
                own = ""  # the UNO pipe: on the first launch that starts a process listening for UNO
                if host is None and not pipe and start.launcher.uno_arg:
                    own = uno_pipe
                proc, window = _launch_window(task, start, display, folder, root, options, own, host)
                procs.append(proc)
                windows.append(window)
                pipe = pipe or own
            fill = any(s.launcher.fill_screen for s in starts)
            if (len(windows) > 1 or fill) and not own_screen:  # a person's screen has a window manager to arrange them
                tile_windows(display, windows)
            return procs, windows, pipe

        procs, windows, pipe = launch_all()
        a11y_apps = {s.launcher.a11y_app for s in starts}
        env = DesktopEnv(display=display, app=a11y_apps.pop() if len(a11y_apps) == 1 else "", confirm=own_screen,
                         uno_url=uno_url(pipe) if pipe else None)
        # an application registers its accessibility tree a moment after its window maps (VLC's
        # Qt bridge: seconds), and the window is mapped before its toolbars settle: the agent's
        # first screen should be the tree, and a stable one
        wait = min(30.0, options.app_start_timeout_s)
        if pyatspi_available() is None:
            env.observe_until(lambda o: o.info.get("source") == "a11y", timeout_s=wait)
        env.observe_stable(timeout_s=wait)
        return DesktopTaskEnv(env, root, display, procs, [s.launcher for s in starts],
                              relaunch=lambda: launch_all()[:2], windows=windows, names=[s.name for s in starts])
    except BaseException:
        display.stop()
        raise
