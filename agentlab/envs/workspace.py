"""A sandboxed working directory per episode, for agents that act by writing code.

A CLI agent's "action" is a Python or bash program; the workspace runs it with the folder as
its current directory, a minimal environment (``HOME`` = the workspace, nothing inherited that
could hold a secret), resource limits, a wall-clock timeout that kills the whole process tree,
and captured stdout/stderr. Where bubblewrap (``bwrap``) works, the program runs in its own
namespaces on a new root that holds only the system and the interpreter (read-only), an empty
``/tmp`` and the workspace: the project's task files, the run folder, other episodes and the
home folder do not exist there, and the network is cut; run by root, the program is ``nobody``
there (:data:`SANDBOX_UID`), not root. Without it a supervisor
(:mod:`agentlab.envs.reaper`) still ends every process the program starts, and a program run
by root loses its capabilities; ``sandbox="bwrap"`` refuses to run without bubblewrap (see
``docs/failures.md`` for exactly what holds in each case).

Whatever a program leaves in the folder (links out, FIFOs, hard links) is never followed by
this process: the workspace's own reads, writes and listings go through
:class:`~agentlab.safepath.SafeFolder` (:attr:`Workspace.safe`).
"""

from __future__ import annotations

import codecs
import json
import logging
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import IO, Literal

from pydantic import BaseModel, Field

from agentlab.envs.adoption import Adoption, process_state
from agentlab.errors import ConfigError, DataError, EnvironmentUnavailableError
from agentlab.safepath import Entry, SafeFolder

log = logging.getLogger(__name__)

#: the workspace's own scratch folder (the programs run, their temporary files); not the task's state
SCRATCH = ".agentlab"


def _is_scratch(rel: str) -> bool:
    return rel.split("/", 1)[0].startswith(SCRATCH)


#: Variables copied from the parent environment: locale only. Everything else (tokens, keys,
#: proxies, DISPLAY, ssh agent sockets) stays out.
_PASSTHROUGH = ("LANG", "LC_ALL", "LC_CTYPE", "TZ")


class WorkspaceConfig(BaseModel):
    """Limits for programs run in a workspace (one object per run; papermill can fill it)."""

    timeout_s: float = Field(30.0, gt=0, description="Wall-clock limit per program; the process tree is killed.")
    memory_mb: int | None = Field(2048, description="Address-space limit (RLIMIT_AS) per process; None = unlimited.")
    cpu_s: int | None = Field(60, description="CPU-seconds limit (RLIMIT_CPU); None = unlimited.")
    file_mb: int | None = Field(256, description="Largest file a program may write (RLIMIT_FSIZE).")
    max_output_chars: int = Field(100_000, description="stdout/stderr kept per stream: its start and its end, with "
                                  "the true number of bytes cut between them.")
    sandbox: Literal["auto", "bwrap", "none"] = Field(
        "auto", description="'bwrap' requires bubblewrap; 'auto' uses it when it works here; 'none' never."
    )
    network: bool = Field(False, description="Allow network access inside the bwrap sandbox.")
    allow_write: list[Path] = Field(default_factory=list, description="Extra folders programs may write to.")
    python: str = Field(default_factory=lambda: sys.executable, description="Interpreter for run_python.")
    extra_env: dict[str, str] = Field(default_factory=dict, description="Variables added to the minimal environment.")


@dataclass(frozen=True)
class RunResult:
    """What one program did: exit status, output, and whether the timeout killed it."""

    returncode: int
    stdout: str
    stderr: str
    timed_out: bool
    duration_s: float
    sandboxed: bool
    language: str
    #: the time limit that applied (seconds)
    limit_s: float | None = None
    #: bytes the program wrote to stdout / stderr in all (``stdout``/``stderr`` may hold only
    #: their start and end); None: the length of the text
    stdout_bytes: int | None = None
    stderr_bytes: int | None = None

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out

    def summary(self, max_chars: int = 2000) -> str:
        """Terminal-like text for an observation: status line, then stdout and stderr."""
        status = f"timed out (limit {self.limit_s:g}s)" if self.timed_out and self.limit_s else (
            "timed out" if self.timed_out else f"exit {self.returncode}")
        parts = [f"[{self.language} {status} in {self.duration_s:.2f}s]"]
        if self.stdout:
            parts.append(clip_middle(self.stdout, "", max_chars, _size(self.stdout, self.stdout_bytes)))
        if self.stderr:
            parts.append("[stderr]\n" + clip_middle(self.stderr, "", max_chars, _size(self.stderr, self.stderr_bytes)))
        return "\n".join(parts)


def _size(text: str, total: int | None) -> int:
    return total if total is not None else len(text.encode("utf-8", "replace"))


#: Environment variable marking every process of one run (see ``Workspace._kill_tree``).
_RUN_MARK = "AGENTLAB_WORKSPACE_RUN"


def _marked_pids(needle: bytes) -> list[int]:
    """Live processes whose environment holds ``needle`` (``NAME=value``); Linux ``/proc``."""
    me = os.getpid()
    out: list[int] = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return out
    for name in entries:
        if not name.isdigit() or int(name) == me:
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as fh:
                env = fh.read()
        except OSError:  # gone, or another user's process
            continue
        if needle + b"\0" in env or env.endswith(needle):
            out.append(int(name))
    return out


#: the supervisor script of unsandboxed programs (run by path: it imports nothing of agentlab)
REAPER = Path(__file__).resolve().with_name("reaper.py")
#: system folders every sandbox sees, read-only (a symbolic link such as Debian's /bin -> usr/bin is
#: recreated as the same link); the fontconfig cache spares each program a font scan. /etc is not
#: among them: only :data:`ETC_ENTRIES` of it are.
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/var/cache/fontconfig")
#: the pieces of /etc an interpreter and its libraries read (the dynamic loader's cache, the
#: /usr/bin -> /etc/alternatives links, users and groups by name, time zone, name service and
#: certificates for ``network=True``, fonts, MIME types, locale aliases). Never /etc/shadow,
#: /etc/gshadow, ssh keys, /etc/machine-id or a tool's credentials (pip.conf, npmrc, gitconfig).
ETC_ENTRIES = ("alternatives", "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime", "timezone", "passwd",
               "group", "nsswitch.conf", "host.conf", "hosts", "gai.conf", "resolv.conf", "services", "protocols",
               "ssl", "ca-certificates", "ca-certificates.conf", "pki", "fonts", "mime.types", "magic", "magic.mime",
               "locale.alias", "os-release", "lsb-release", "debian_version", "terminfo", "xml",
               "python3", f"python3.{sys.version_info.minor}", "matplotlibrc", "papersize")
#: who a program runs as in the sandbox when this process is root (``nobody``): it must not be
#: root outside the sandbox's namespaces, or every root-owned file bound in is its own
SANDBOX_UID = SANDBOX_GID = 65534


def running_package() -> str:
    """The folder of the ``agentlab`` package this process runs (a checkout on ``PYTHONPATH``,
    a git worktree being measured, or the installed one)."""
    return str(Path(__file__).resolve().parents[1])


@lru_cache(maxsize=8)
def _probe(python: str) -> tuple[list[str], str | None]:
    """What ``python -I`` reports once: its prefixes and ``sys.path`` folders, and the folder it
    would import ``agentlab`` from (``None``: none, or it could not be asked)."""
    probe = ("import sys, json, importlib.util as u\n"
             "s = u.find_spec('agentlab')\n"
             "pkg = list(s.submodule_search_locations or []) if s else []\n"
             "print(json.dumps([[sys.prefix, sys.base_prefix, sys.exec_prefix, *sys.path], pkg]))")
    try:
        proc = subprocess.run([python, "-I", "-c", probe], capture_output=True, text=True, timeout=30)
        paths, pkg = json.loads(proc.stdout)
    except (OSError, ValueError, TypeError, subprocess.TimeoutExpired):
        log.warning("could not ask %s for its library folders; the sandbox may lack some", python)
        return [], None
    return [p for p in paths if p], (str(Path(pkg[0]).resolve()) if pkg else None)


def interpreter_package(python: str) -> str | None:
    """The folder ``python -I`` would import ``agentlab`` from (its installed or editable copy),
    or ``None`` when it has none."""
    return _probe(python)[1]


def package_swap(python: str) -> tuple[str, str] | None:
    """``(running, installed)`` when the sandbox's interpreter would import another ``agentlab``
    than the one this process runs, else ``None``.

    Why: a program in the sandbox (a toolkit's calls, ``from agentlab.toolkits... import``) must
    run the same toolkits as the agent that wrote it. Measuring a commit from a git worktree
    (``PYTHONPATH=<worktree> agentlab exec``) otherwise ran the agent from the worktree and its
    calls from the main checkout, whose toolkits may have changed meanwhile. ``python -I``
    ignores ``PYTHONPATH``, so the sandbox binds the running package read-only over the
    installed one's folder instead: only the package folder, never the rest of its checkout
    (task files and reference solutions stay outside)."""
    installed = interpreter_package(python)
    running = running_package()
    if installed is None or installed == running or not Path(running, "__init__.py").is_file():
        return None
    return running, installed


@lru_cache(maxsize=8)
def interpreter_paths(python: str) -> tuple[str, ...]:
    """Folders ``python`` needs to run and import what it has installed: its prefixes, the
    folders of its ``sys.path`` and the folder of an editable ``agentlab`` (so the package, and
    nothing else of the checkout, can be imported inside the sandbox)."""
    paths, pkg = _probe(python)
    out: set[str] = {str(Path(python).resolve().parent.parent), *paths, *([pkg] if pkg else [])}
    paths = sorted({str(Path(p).resolve()) for p in out if Path(p).exists()})
    # a folder inside another one already listed adds nothing
    return tuple(p for p in paths if not any(p != q and p.startswith(q.rstrip("/") + "/") for q in paths))


def sandbox_mounts(python: str) -> list[tuple[str, str, str]]:
    """``(kind, source, target)`` of every read-only mount of the sandbox: the system folders
    (``ro-bind``, or ``symlink`` for a link), the allowed pieces of /etc (``ro-bind``), the
    interpreter's folders (``ro-bind``) and, when it differs from the interpreter's, the running
    ``agentlab`` package over the interpreter's (:func:`package_swap`)."""
    mounts: list[tuple[str, str, str]] = []
    for d in SYSTEM_DIRS:
        if os.path.islink(d):
            mounts.append(("symlink", os.readlink(d), d))
        elif os.path.isdir(d):
            mounts.append(("ro-bind", d, d))
    for name in ETC_ENTRIES:
        path = f"/etc/{name}"
        if os.path.exists(path):  # a link is bound as what it points to (its target may not be inside)
            mounts.append(("ro-bind", path, path))
    system = tuple(d for d in SYSTEM_DIRS if os.path.isdir(d) and not os.path.islink(d))
    for p in interpreter_paths(python):
        if not any(p == d or p.startswith(d + "/") for d in system):
            mounts.append(("ro-bind", p, p))
    swap = package_swap(python)
    if swap is not None:  # last: bound over the installed package, wherever its folder was bound from
        running, installed = swap
        mounts = [m for m in mounts if m[2] != installed] + [("ro-bind", running, installed)]
    return mounts


def _parent_dirs(targets: list[str], inside: list[str]) -> list[str]:
    """The folders the sandbox must make so that ``targets`` can be mounted, shallowest first:
    every ancestor that is not ``/``, not a target and not inside a folder of ``inside`` (those
    exist already, from an earlier mount). Made explicitly with mode 0755: the folders bwrap
    makes on its own are 0700 root's, which a program run as :data:`SANDBOX_UID` cannot enter."""
    out: set[str] = set()
    for t in targets:
        for parent in Path(t).parents:
            p = str(parent)
            if p in ("/", "/tmp", "/dev", "/proc") or p in targets or any(p == d or p.startswith(d.rstrip("/") + "/") for d in inside):
                continue
            out.add(p)
    return sorted(out, key=lambda p: (p.count("/"), p))


_protected = False


def _protect_runner() -> None:
    """Make this process non-dumpable (once): another process of the same user, such as an
    unsandboxed program, can then no longer read ``/proc/<this pid>/environ`` or its memory
    (where an API key may be) without CAP_SYS_PTRACE."""
    global _protected
    if _protected:
        return
    _protected = True
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE = 4
    except (OSError, AttributeError):
        log.warning("could not make this process non-dumpable; unsandboxed programs may read its environment")


@lru_cache(maxsize=1)
def _drop_caps_argv() -> tuple[str, ...]:
    """``setpriv`` dropping every capability, when this process runs as root (a root program
    with CAP_SYS_PTRACE could still read a non-dumpable process); empty otherwise."""
    if os.geteuid() != 0:
        return ()
    exe = shutil.which("setpriv")
    if exe is None:
        log.warning("running as root without setpriv: unsandboxed programs keep root's capabilities")
        return ()
    return (exe, "--inh-caps=-all", "--ambient-caps=-all", "--bounding-set=-all", "--no-new-privs", "--")


@lru_cache(maxsize=1)
def _setpriv() -> str:
    """``setpriv`` (util-linux): how a root runner's sandbox drops to :data:`SANDBOX_UID`."""
    exe = shutil.which("setpriv")
    if exe is None:
        raise EnvironmentUnavailableError(
            "running as root, the sandbox needs setpriv (util-linux) to run programs as an unprivileged "
            "user; install util-linux, run agentlab as another user, or use --sandbox none")
    return exe


@lru_cache(maxsize=1)
def bwrap_available() -> bool:
    """Whether bubblewrap exists *and* can create namespaces here (containers often forbid it)."""
    exe = shutil.which("bwrap")
    if not exe:
        return False
    try:
        proc = subprocess.run(
            [exe, "--ro-bind", "/", "/", "--dev", "/dev", "--unshare-all", "--die-with-parent", "true"],
            capture_output=True,
            timeout=10,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    if proc.returncode != 0:
        log.info("bwrap present but unusable: %s", proc.stderr.decode(errors="replace").strip())
    return proc.returncode == 0


def isolation_in_force(mode: str) -> str:
    """What a workspace of sandbox ``mode`` does here: ``bwrap`` or ``none`` (``auto`` decided)."""
    return "none" if mode == "none" else "bwrap" if bwrap_available() else "none"


def _limits(cfg: WorkspaceConfig):  # -> Callable[[], None]
    """A ``preexec_fn`` applying rlimits in the child before exec (inherited by its children)."""

    def apply() -> None:
        def setlim(kind: int, value: int | None) -> None:
            if value is None:
                return
            try:
                resource.setrlimit(kind, (value, value))
            except (ValueError, OSError):
                pass  # a hard limit lower than ours already applies

        setlim(resource.RLIMIT_AS, cfg.memory_mb * 1024 * 1024 if cfg.memory_mb else None)
        setlim(resource.RLIMIT_CPU, cfg.cpu_s)
        setlim(resource.RLIMIT_FSIZE, cfg.file_mb * 1024 * 1024 if cfg.file_mb else None)
        setlim(resource.RLIMIT_CORE, 0)

    return apply


def clip_middle(head: str, tail: str, limit: int, total_bytes: int) -> str:
    """At most ``limit`` characters of an output of ``total_bytes`` bytes: its start and its end
    (where a traceback is), with one note between them giving the true number of bytes cut.

    ``head`` and ``tail`` are what was kept from the start and from the end of the output; an
    empty ``tail`` means ``head`` is all of it (returned whole when it fits). A third of the room
    goes to the start, the rest to the end.
    """
    keep_head = limit // 3
    keep_tail = limit - keep_head
    if not tail:
        if len(head) <= limit:
            return head
        tail = head[keep_head:]
    a = head[:keep_head]
    b = tail[len(tail) - keep_tail:] if len(tail) > keep_tail else tail
    shown = len(a.encode("utf-8", "replace")) + len(b.encode("utf-8", "replace"))
    cut = max(total_bytes - shown, 0)
    return f"{a}\n[... {cut} bytes cut (the output was {total_bytes} bytes; its start and end are shown) ...]\n{b}"


@dataclass(frozen=True)
class Captured:
    """What was kept of one output stream: its first bytes, its last bytes and how many bytes it
    had in all (``tail`` is empty when ``head`` holds all of it)."""

    head: bytes
    tail: bytes
    total: int

    def text(self, limit: int) -> str:
        """At most ``limit`` characters: :func:`clip_middle` of the decoded head and tail (a
        character split at either cut is dropped, not shown as a replacement mark)."""
        if not self.tail:
            return clip_middle(self.head.decode("utf-8", errors="replace"), "", limit, self.total)
        head = codecs.getincrementaldecoder("utf-8")("replace").decode(self.head, final=False)
        tail = self.tail
        for _ in range(3):  # continuation bytes of a character whose start was dropped
            if tail and 0x80 <= tail[0] < 0xC0:
                tail = tail[1:]
        return clip_middle(head, tail.decode("utf-8", errors="replace"), limit, self.total)


class _Drain:
    """Read a pipe on a thread, keeping its first ``head`` bytes and its last ``tail`` bytes (a
    ring) and counting all of them: a program printing 200 MB costs this process at most
    ``head + 2 * tail`` bytes, and the end of its output (a traceback) is kept."""

    def __init__(self, pipe: IO[bytes] | None, head: int, tail: int) -> None:
        self._head = bytearray()
        self._tail = bytearray()
        self._total = 0
        self._pipe = pipe
        self._head_limit, self._tail_limit = head, tail
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        pipe = self._pipe
        if pipe is None:
            return
        with pipe:
            for chunk in iter(lambda: pipe.read(65536), b""):
                self._total += len(chunk)
                room = self._head_limit - len(self._head)
                if room > 0:
                    self._head += chunk[:room]
                    chunk = chunk[room:]
                if chunk:
                    self._tail += chunk
                    if len(self._tail) > 2 * self._tail_limit:  # amortised: trimmed now and then
                        del self._tail[: len(self._tail) - self._tail_limit]

    def result(self) -> Captured:
        self._thread.join(timeout=5)
        tail = bytes(self._tail[-self._tail_limit:]) if self._tail_limit else b""
        if self._total <= len(self._head) + len(tail):  # nothing was dropped between them
            return Captured(bytes(self._head) + tail, b"", self._total)
        return Captured(bytes(self._head), tail, self._total)


@dataclass
class Workspace:
    """One episode's folder. Use as a context manager; a temporary folder is removed at exit.

    ``root=None`` makes a fresh temporary folder (removed by :meth:`close` unless ``keep``);
    an existing ``root`` is used as is and never deleted.
    """

    root: Path | None = None
    config: WorkspaceConfig = field(default_factory=WorkspaceConfig)
    keep: bool = False
    _owned: bool = field(default=False, init=False, repr=False)
    _sandbox: bool = field(default=False, init=False, repr=False)

    @property
    def folder(self) -> Path:
        """The workspace folder: ``root`` once the workspace exists (it is made in ``__post_init__``)."""
        assert self.root is not None
        return self.root

    def __post_init__(self) -> None:
        if self.root is None:
            self.root = Path(tempfile.mkdtemp(prefix="agentlab-ws-"))
            self._owned = True
        self.root = Path(self.root).resolve()
        self.root.mkdir(parents=True, exist_ok=True)
        if self.config.sandbox == "bwrap" and not bwrap_available():
            raise EnvironmentUnavailableError(
                "bubblewrap (bwrap) is missing or cannot create namespaces here; "
                "install it (apt-get install bubblewrap) or use sandbox='auto'/'none'"
            )
        self._sandbox = self.config.sandbox != "none" and bwrap_available()
        if self._sandbox and os.geteuid() == 0:
            _setpriv()  # run by root, the sandbox cannot go without it: say so before the first program
        if self.config.sandbox == "auto" and not self._sandbox:
            log.warning("workspace %s: bwrap unavailable; programs can write wherever the user can", self.root)

    # -- lifecycle -------------------------------------------------------------------
    def __enter__(self) -> Workspace:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._owned and not self.keep and self.root is not None and self.root.exists():
            shutil.rmtree(self.root, ignore_errors=True)

    @property
    def sandboxed(self) -> bool:
        """True when programs run inside bubblewrap (writes outside the workspace are refused)."""
        return self._sandbox

    # -- files -----------------------------------------------------------------------
    def path(self, rel: str | Path, *, must_exist: bool = False) -> Path:
        """Resolve ``rel`` inside the workspace; anything escaping it (``..``, absolute paths,
        symlinks pointing out) raises :class:`DataError`. ``must_exist``: a regular file or a
        folder of the workspace must be there, reached without a symbolic link (see :meth:`safe`).

        A name for a program or a message, not for this process to open: read and write the
        workspace's files through :meth:`safe` (the program may have planted links)."""
        assert self.root is not None
        p = Path(rel)
        full = (p if p.is_absolute() else self.root / p).resolve()
        if full != self.root and self.root not in full.parents:
            raise DataError(f"path {str(rel)!r} resolves to {full}, outside the workspace {self.root}")
        if must_exist:
            what = self.safe.kind(self._rel(rel))
            if what is None:
                raise DataError(f"declared output {str(rel)!r} does not exist in the workspace {self.root}")
            if what not in ("file", "dir"):  # a folder the task makes is an output too (downloads/docs)
                raise DataError(f"declared output {str(rel)!r} is not a regular file or folder of the workspace "
                                f"({'a symbolic link, not followed' if what == 'link' else 'a ' + what})")
        return full

    def _rel(self, rel: str | Path) -> str:
        """``rel`` relative to the root (an absolute path inside the workspace is accepted)."""
        assert self.root is not None
        p = Path(rel)
        if p.is_absolute():
            try:
                p = p.relative_to(self.root)
            except ValueError:
                raise DataError(f"path {str(rel)!r} is outside the workspace {self.root}") from None
        return p.as_posix()

    @property
    def safe(self) -> SafeFolder:
        """The workspace as this process may touch it: nothing a program planted is followed."""
        assert self.root is not None
        return SafeFolder(self.root)

    def check_outputs(self, declared: list[str | Path]) -> list[Path]:
        """Validate an agent's declared output paths: each must lie inside the workspace and be
        a regular file or a folder there (never a link). Returns their resolved paths; the first bad one
        raises :class:`DataError`."""
        return [self.path(d, must_exist=True) for d in declared]

    def write_text(self, rel: str | Path, text: str) -> Path:
        """Write ``rel`` as a new file (a link or folder standing there is replaced, never written through)."""
        p = self.path(rel)
        self.safe.write_bytes(self._rel(rel), text.encode("utf-8"))
        return p

    def read_text(self, rel: str | Path) -> str:
        """The text of the regular file ``rel``; a link or a FIFO there raises
        :class:`~agentlab.safepath.UnsafePathError` (never followed)."""
        self.path(rel, must_exist=True)
        return self.safe.read_text(self._rel(rel))

    def entries(self) -> list[Entry]:
        """Every name in the workspace (hidden scratch folders excluded), as ``lstat`` sees it:
        a symbolic link is listed as a link, never followed."""
        return self.safe.walk(_is_scratch)

    def files(self) -> list[str]:
        """Every regular file in the workspace, relative, sorted (hidden scratch folders, links
        and what is only reached through a link excluded)."""
        return [e.rel for e in self.entries() if e.kind == "file"]

    # -- running programs ------------------------------------------------------------
    def run_python(self, code: str, *, timeout_s: float | None = None, stdin: str | None = None) -> RunResult:
        """Run Python source written by an agent (saved as ``.agentlab/step_N.py``)."""
        script = self._save_program(code, ".py")
        return self._run([self.config.python, "-I", str(script)], "python", timeout_s, stdin)

    def run_bash(self, script_text: str, *, timeout_s: float | None = None, stdin: str | None = None) -> RunResult:
        """Run a bash script written by an agent (saved as ``.agentlab/step_N.sh``)."""
        bash = shutil.which("bash") or "/bin/bash"
        script = self._save_program(script_text, ".sh")
        return self._run([bash, "--noprofile", "--norc", str(script)], "bash", timeout_s, stdin)

    def _save_program(self, text: str, suffix: str) -> Path:
        """Keep the program as ``.agentlab/step_N<suffix>`` (a link planted as ``.agentlab`` or
        as that name is replaced, never written through)."""
        assert self.root is not None
        self.safe.make_dirs(SCRATCH)
        n = len([e for e in self.safe.listdir(SCRATCH) if e.rel.split("/")[-1].startswith("step_")]) + 1
        rel = f"{SCRATCH}/step_{n:03d}{suffix}"
        self.safe.write_bytes(rel, text.encode("utf-8"))
        return self.root / rel

    def _env(self) -> dict[str, str]:
        assert self.root is not None
        tmp = self.root / SCRATCH / "tmp"
        self.safe.make_dirs(f"{SCRATCH}/tmp")
        env = {k: os.environ[k] for k in _PASSTHROUGH if k in os.environ}
        env.update(
            HOME=str(self.root),
            PWD=str(self.root),
            TMPDIR=str(tmp),
            PATH=f"{Path(self.config.python).parent}:/usr/local/bin:/usr/bin:/bin",
            PYTHONDONTWRITEBYTECODE="1",
            MPLCONFIGDIR=str(tmp),
        )
        env.setdefault("LANG", "C.UTF-8")
        env.update(self.config.extra_env)
        return env

    def _bwrap_argv(self, argv: list[str]) -> list[str]:
        """The sandbox: a new root holding only the system and the pieces of /etc an interpreter
        needs (read-only), the interpreter and the libraries it imports (read-only), an empty
        ``/tmp`` and the workspace (writable). The project's data (task files, reference
        solutions), the run folder, other episodes, the home folder and /etc/shadow do not exist
        inside; see :func:`sandbox_mounts`. When this process is root, the program runs as
        :data:`SANDBOX_UID` (see :meth:`_unprivileged`)."""
        assert self.root is not None
        root_user = os.geteuid() == 0
        mounts = sandbox_mounts(self.config.python)
        writable: list[str] = []
        for extra in self.config.allow_write:
            extra = Path(extra).resolve()
            if not extra.exists():
                raise ConfigError(f"allow_write folder {extra} does not exist")
            writable.append(str(extra))
        writable.append(str(self.root))
        targets = [dst for _, _, dst in mounts] + writable
        # /tmp first: an interpreter or a workspace under /tmp is bound back over the empty tmpfs
        cmd = [shutil.which("bwrap") or "bwrap", "--perms", "1777", "--tmpfs", "/tmp", "--dev", "/dev", "--proc", "/proc"]
        inside = [dst for kind, _, dst in mounts if kind == "ro-bind"]
        for folder in _parent_dirs(targets, inside):
            cmd += ["--perms", "0755", "--dir", folder]
        for kind, src, dst in mounts:
            cmd += ["--symlink", src, dst] if kind == "symlink" else [f"--{kind}", src, dst]
        for folder in writable:
            cmd += ["--bind", folder, folder]
        cmd += ["--chdir", str(self.root)]
        if root_user:
            # no user namespace: in one, only uid 0 could be mapped, and the program would still be
            # root outside it (the owner of every root-owned file bound in, /etc/shadow's too)
            cmd += ["--unshare-ipc", "--unshare-pid", "--unshare-uts", "--unshare-cgroup-try"]
            cmd += [] if self.config.network else ["--unshare-net"]
        else:
            cmd += ["--unshare-all"] + (["--share-net"] if self.config.network else [])
        # --cap-drop ALL matters when run as root: bwrap then keeps every capability, and a
        # program could simply remount a read-only path writable. As root, bwrap keeps what it
        # needs to enter the workspace (SANDBOX_UID's, maybe 0700) and setpriv what it needs to
        # become SANDBOX_UID; setpriv then drops them with everything else.
        cmd += ["--cap-drop", "ALL"]
        if root_user:
            for cap in ("CAP_DAC_READ_SEARCH", "CAP_SETUID", "CAP_SETGID", "CAP_SETPCAP"):
                cmd += ["--cap-add", cap]
        cmd += ["--die-with-parent", "--new-session", "--"]
        return cmd + list(self._unprivileged()) + argv

    def _unprivileged(self) -> tuple[str, ...]:
        """As root: ``setpriv`` making the program :data:`SANDBOX_UID`/:data:`SANDBOX_GID` with no
        supplementary group, no capability and no way to gain one (``no_new_privs``); empty
        otherwise (bwrap's user namespace already maps the program to this process's user)."""
        if os.geteuid() != 0:
            return ()
        return (_setpriv(), f"--reuid={SANDBOX_UID}", f"--regid={SANDBOX_GID}", "--clear-groups",
                "--inh-caps=-all", "--ambient-caps=-all", "--bounding-set=-all", "--no-new-privs", "--")

    def _hand_over(self) -> None:
        """As root, before a sandboxed program runs: give the workspace (and the ``allow_write``
        folders) to :data:`SANDBOX_UID`, so the program can write them as that user. Links are
        re-owned themselves, never their targets; a file with a hard link elsewhere is left
        alone. This process, root, still reads and writes everything."""
        if not self._sandbox or os.geteuid() != 0:
            return
        assert self.root is not None
        for folder in [self.root, *(Path(p).resolve() for p in self.config.allow_write)]:
            SafeFolder(folder).chown_all(SANDBOX_UID, SANDBOX_GID)

    def _supervised_argv(self, argv: list[str]) -> list[str]:
        """Without bubblewrap: the program runs under :mod:`agentlab.envs.reaper` (a subreaper
        that ends every descendant, also when this process dies) and, when this process runs as
        root, with every capability dropped (``setpriv``), so it cannot read this process's
        memory or environment (made non-dumpable here)."""
        _protect_runner()
        drop = _drop_caps_argv()
        return [sys.executable, "-I", "-S", str(REAPER), "--", *drop, *argv]

    def _run(self, argv: list[str], language: str, timeout_s: float | None, stdin: str | None) -> RunResult:
        assert self.root is not None
        timeout = timeout_s if timeout_s is not None else self.config.timeout_s
        env = self._env()  # before bwrap: creates the scratch folder inside the workspace
        # Every process of this run inherits the mark, also one that leaves the process group
        # (setsid, double fork): the timeout finds and ends them by it (see _kill_tree).
        mark = f"{os.getpid()}-{time.monotonic_ns()}"
        env[_RUN_MARK] = mark
        full = self._bwrap_argv(argv) if self._sandbox else self._supervised_argv(argv)
        self._hand_over()
        t0 = time.monotonic()
        chars = self.config.max_output_chars
        head, tail = 4 * (chars // 3), 4 * (chars - chars // 3)
        adoption = Adoption()  # orphans of the program's tree come to this process, whoever killed their parent
        with adoption:
            try:
                proc = subprocess.Popen(
                    full,
                    cwd=self.root,
                    env=env,
                    stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    start_new_session=True,  # own process group, so a timeout kills the whole tree
                    preexec_fn=_limits(self.config),
                )
            except OSError as exc:
                raise EnvironmentUnavailableError(f"cannot start {full[0]}: {exc}") from None
            adoption.track(proc.pid)
            try:
                if stdin is not None and proc.stdin is not None:
                    try:
                        proc.stdin.write(stdin.encode())
                        proc.stdin.close()
                    except BrokenPipeError:
                        pass
                # bytes kept per stream from its start and its end (up to 4 per character); the rest is counted
                readers = [_Drain(proc.stdout, head, tail), _Drain(proc.stderr, head, tail)]
                timed_out = self._wait(proc, timeout)
            finally:
                # Whether it finished, timed out or this process is stopping (SIGTERM, Ctrl-C), what it
                # left running belongs to the episode: end the whole tree, the processes that escaped
                # its supervisor included (they would otherwise also hold the output pipes open).
                self._kill_tree(proc.pid, mark, adoption)
                duration = time.monotonic() - t0
                proc.wait()
        out, err = (r.result() for r in readers)
        res = RunResult(
            returncode=proc.returncode if not timed_out else -signal.SIGKILL,
            stdout=out.text(chars),
            stderr=err.text(chars),
            timed_out=timed_out,
            duration_s=min(duration, timeout) if timed_out else duration,
            sandboxed=self._sandbox,
            language=language,
            limit_s=timeout,
            stdout_bytes=out.total,
            stderr_bytes=err.total,
        )
        log.info("workspace %s: %s %s", self.root, language, "timed out" if timed_out else f"exit {res.returncode}")
        return res

    def _wait(self, proc: subprocess.Popen[bytes], timeout: float) -> bool:
        """Wait for the program; True when its time ran out. A supervisor found stopped (the program
        ran ``kill -STOP $PPID``) is continued, so the run ends when the program does, or at its limit."""
        deadline, told = time.monotonic() + timeout, False
        while True:
            try:
                proc.wait(timeout=max(0.0, min(0.25, deadline - time.monotonic())))
                return False
            except subprocess.TimeoutExpired:
                if time.monotonic() >= deadline:
                    break
                if not self._sandbox and process_state(proc.pid) in ("T", "t"):
                    if not told:
                        log.warning("workspace %s: the program stopped its supervisor; continuing it", self.root)
                    told = True
                    proc.send_signal(signal.SIGCONT)
        if not self._sandbox:  # the supervisor ends its tree on SIGTERM; the kills after it back it up
            try:
                proc.terminate()
                proc.send_signal(signal.SIGCONT)  # a stopped supervisor takes its SIGTERM only once continued
                proc.wait(timeout=2)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                pass
        return True

    @staticmethod
    def _kill_tree(pgid: int, mark: str, adoption: Adoption) -> None:
        """End the run's process group, every process of its tree (:class:`Adoption`: also one
        whose supervisor was killed or stopped), then every process still carrying the run's mark
        in its environment (a last look, should this process not be a subreaper)."""
        try:
            os.killpg(pgid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        adoption.end_all()
        needle = f"{_RUN_MARK}={mark}".encode()
        for _ in range(3):  # a process may fork while we look; look again until none is left
            found = 0
            for pid in _marked_pids(needle):
                found += 1
                try:
                    os.kill(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
            if not found:
                break
            time.sleep(0.05)
