"""Open a phone env for an execution task: start state onto the device, end state back off it.

The device is chosen by :attr:`TaskEnvOptions.device`:

* ``"fake"`` (the default): a :class:`~agentlab.envs.testing.fake_adb.FakeAdbServer` is started
  in-process on an ephemeral loopback port, running the scripted Clock app; the env talks to it
  through the real adbutils client and the real adb wire protocol;
* ``"<serial>"``: that device on the local adb server (127.0.0.1:5037), or
  ``"<serial>@<host>:<port>"`` on another adb server. Untested on a real phone here.

The task's ``setup`` files are written into ``<episode>/device/`` (a folder that mirrors the
device: ``sdcard/...`` there is ``/sdcard/...`` on the phone), pushed over adb sync, and the
task's ``apps`` are restarted so they load that data. After the agent stops,
:meth:`PhoneTaskEnv.collect` pulls the task's ``outputs`` (device paths) back into that folder,
where the usual file getters judge them, as they would a real app's data. A device that
cannot be reached is an :class:`~agentlab.errors.EnvironmentUnavailableError` (a harness error).

A phone task's reference solution is a list of actions (:func:`replay_actions`), which
``agentlab tasks check`` replays on the device: proof that the task can be done through the UI.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from agentlab.envs.android import AndroidEnv
from agentlab.envs.task_env import TaskEnv, TaskEnvOptions
from agentlab.errors import ActionParseError, AgentlabError, ConfigError, DataError, InvalidActionError
from agentlab.tasks.spec import ExecTask

log = logging.getLogger(__name__)

DEVICE_DIR = "device"
FAKE = "fake"
DEFAULT_ADB = ("127.0.0.1", 5037)


class PhoneTaskEnv(TaskEnv):
    """An :class:`AndroidEnv` on the task's device; ``root`` mirrors the device's files."""

    def __init__(self, env: AndroidEnv, root: Path, outputs: list[str], server: Any = None) -> None:
        super().__init__(env, root)
        self.android = env
        self.outputs = list(outputs)
        self.server = server  #: the in-process fake adb server, stopped by close()

    @property
    def eval_env(self) -> Any:
        return self.android

    def collect(self) -> None:
        """Pull each output from the device; one the device lacks is left absent (its check scores 0)."""
        for remote in self.outputs:
            local = local_path(self.root, remote)
            local.unlink(missing_ok=True)  # never judge the pushed start state as the end state
            if not self.android.pull_file(remote, local):
                log.info("output %s is not on the device", remote)

    def close(self) -> None:
        try:
            self.env.close()
        finally:
            if self.server is not None:
                self.server.stop()
                self.server = None


def local_path(root: Path, remote: str) -> Path:
    """Where device path ``remote`` lives in the mirror folder ``root``."""
    return root / remote.lstrip("/")


def parse_device(device: str) -> tuple[str, str, int]:
    """``"serial"`` or ``"serial@host:port"`` -> (serial, adb host, adb port)."""
    serial, _, server = device.partition("@")
    if not serial:
        raise ConfigError(f"--device {device!r}: give 'fake', an adb serial, or serial@host:port")
    if not server:
        return serial, *DEFAULT_ADB
    host, _, port = server.rpartition(":")
    if not host or not port.isdigit():
        raise ConfigError(f"--device {device!r}: the adb server must be host:port, e.g. emulator-5554@127.0.0.1:5037")
    return serial, host, int(port)


def open_phone_task(task: ExecTask, folder: Path, options: TaskEnvOptions) -> PhoneTaskEnv:
    """The task's device with its start state pushed and its apps restarted."""
    root = folder / DEVICE_DIR
    root.mkdir(parents=True, exist_ok=True)
    task.prepare(root)
    if options.device == FAKE:
        from agentlab.envs.testing.fake_adb import FakeAdbServer

        server = FakeAdbServer().start()
        try:
            env = AndroidEnv(serial=server.device.serial, adb_port=server.port, settle=0.0, retry_delay=0.05)
        except BaseException:  # never leave the in-process server running
            server.stop()
            raise
    else:
        serial, host, port = parse_device(options.device)
        server, env = None, AndroidEnv(serial=serial, adb_host=host, adb_port=port)
    opened = PhoneTaskEnv(env, root, task.outputs, server)
    try:
        for local in sorted(p for p in root.rglob("*") if p.is_file()):
            remote = "/" + local.relative_to(root).as_posix()
            env.push_file(local, remote)
            log.debug("task %s: pushed %s", task.id, remote)
        for package in task.apps:
            env.launch_app(package)
    except AgentlabError:
        opened.close()
        raise
    return opened


def replay_actions(env: AndroidEnv, code: str) -> int:
    """Carry out ``code`` (one phone action call per line, ``#`` comments allowed) from a fresh
    observation; returns the number of actions taken. A line that does not parse, or names an
    element not on the screen, is a :class:`DataError` naming the line."""
    env.reset()
    lines = [(i, ln.strip()) for i, ln in enumerate(code.splitlines(), 1) if ln.strip() and not ln.strip().startswith("#")]
    for i, line in lines:
        try:
            action = env.actions.parse(line)
            result = env.step(action)
        except (ActionParseError, InvalidActionError, DataError) as exc:
            raise DataError(f"reference action line {i} ({line!r}): {exc.message}") from None
        if result.done:
            break
    return len(lines)
