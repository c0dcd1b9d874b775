"""A two-node Ray cluster on this machine that agentlab did not start: ``ray start --head`` and ``ray
start --address`` as a worker node, both on loopback addresses with ports of their own and a
temp folder of their own, the recipe of docs/scaling.md ("A cluster agentlab did not start").

The head is 127.0.0.2 and the worker node 127.0.0.3 (the whole of 127/8 is loopback): Ray replaces
``127.0.0.1`` given as a node's address by the machine's network address. The cluster requires a
token (Ray's token authentication, ``RAY_AUTH_MODE=token``) kept in its temp folder; every process
that connects -- ``agentlab exec --ray-address`` too -- gets :attr:`LocalCluster.env`.

Each node's ``ray start --block`` runs in a session of its own; stopping sends it SIGTERM (it then
stops its node's processes), then SIGKILLs what is left of that session and every process whose
command line names this cluster's temp folder -- only this cluster's processes, never ``ray stop``
(which would stop every Ray of this user on the machine, other people's test sessions included).
"""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

RAY = str(Path(sys.executable).with_name("ray"))
HEAD_IP, WORKER_IP = "127.0.0.2", "127.0.0.3"


def free_ports(n: int) -> list[int]:
    """``n`` distinct ports free on 127.0.0.1 right now (held open together, so never the same twice)."""
    socks = [socket.socket() for _ in range(n)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def node_ports(*taken: int) -> list[str]:
    """The flags that give a node ports of its own (none of Ray's defaults, which another Ray here
    may hold), its worker port range clear of its other ports and of ``taken`` (the head's own)."""
    lo = free_ports(1)[0]
    while any(lo < t <= lo + 40 for t in taken):
        lo = free_ports(1)[0]
    workers = range(lo + 1, lo + 41)
    # Ray refuses a node whose component ports fall inside its worker port range ("worker_ports is
    # trying to use a port number ... used by other components"): ephemeral ports are handed out
    # close together, so draw again until none does (a CI run failed three cluster tests on it)
    p = free_ports(7)
    while any(x in workers for x in p):
        p = free_ports(7)
    return ["--node-manager-port", str(p[0]), "--object-manager-port", str(p[1]), "--metrics-export-port", str(p[2]),
            "--dashboard-agent-listen-port", str(p[3]), "--dashboard-agent-grpc-port", str(p[4]),
            "--runtime-env-agent-port", str(p[5]), "--min-worker-port", str(lo + 1), "--max-worker-port", str(lo + 40)]


class LocalCluster:
    """``with LocalCluster(cpus_per_node=1) as c: ... c.address ...``: a head and one worker node."""

    def __init__(self, cpus_per_node: int = 1, timeout_s: float = 180.0) -> None:
        self.cpus, self.timeout_s = cpus_per_node, timeout_s
        # short: Ray's socket paths must fit 107 characters
        self.temp = Path(tempfile.mkdtemp(prefix="rc-", dir="/tmp"))
        self.procs: list[subprocess.Popen[bytes]] = []
        self.port = free_ports(1)[0]
        self.address = f"{HEAD_IP}:{self.port}"
        token = self.temp / "auth_token"
        token.write_text(secrets.token_hex(32))
        token.chmod(0o600)
        #: the environment of every process that starts a node or connects to the cluster
        self.env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"} | {
            "RAY_USAGE_STATS_ENABLED": "0", "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN_PATH": str(token)}

    def _start(self, ip: str, *args: str) -> None:
        log = open(self.temp / f"node-{len(self.procs)}.log", "wb")  # kept open: the node writes to it
        self.procs.append(subprocess.Popen([RAY, "start", "--block", "--node-ip-address", ip, "--num-cpus",
                                            str(self.cpus), "--disable-usage-stats", *args,
                                            *node_ports(*(int(a) for a in args if a.isdigit()))],
                                           stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                           env=self.env, start_new_session=True))

    def alive_nodes(self) -> int:
        probe = (f"import ray; ray.init(address={self.address!r}, logging_level='ERROR'); "
                 "print(sum(n['Alive'] for n in ray.nodes())); ray.shutdown()")
        try:
            out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=self.env, timeout=45)
        except subprocess.TimeoutExpired:  # the head is not up yet
            return 0
        return int(out.stdout.strip().splitlines()[-1]) if out.returncode == 0 and out.stdout.strip() else 0

    def start(self, attempts: int = 2) -> LocalCluster:
        """Start the head, then the worker. Ray gives a node's raylet a fixed 30 s to register
        (``ray/_private/node.py``, not configurable); on a loaded CI machine it once took longer
        ("The current node timed out during startup"), so such a start is tried once more on
        fresh ports. Any other failure is raised at once."""
        for attempt in range(1, attempts + 1):
            try:
                return self._start_nodes()
            except RuntimeError as exc:
                if attempt == attempts or "timed out during startup" not in str(exc):
                    raise
                self._kill_nodes()
                for old in self.temp.glob("node-*.log"):
                    old.unlink()
                self.procs = []
                self.port = free_ports(1)[0]
                self.address = f"{HEAD_IP}:{self.port}"
        raise AssertionError("unreachable")

    def _start_nodes(self) -> LocalCluster:
        # (no Ray client server: it needs ray[client]; the driver connects to the GCS address)
        self._start(HEAD_IP, "--head", "--port", str(self.port), "--temp-dir", str(self.temp), "--include-dashboard", "false",
                    "--dashboard-port", str(free_ports(1)[0]))
        self._wait(1)
        self._start(WORKER_IP, "--address", self.address)
        self._wait(2)
        return self

    def _wait(self, nodes: int) -> None:
        deadline = time.monotonic() + self.timeout_s
        while time.monotonic() < deadline:
            if any(p.poll() is not None for p in self.procs):
                raise RuntimeError(f"a Ray node exited: {self.logs()}")
            if self.alive_nodes() >= nodes:
                return
            time.sleep(1)
        raise RuntimeError(f"the cluster never had {nodes} node(s) alive: {self.logs()}")

    def logs(self) -> str:
        return "\n".join(p.read_text(errors="replace")[-1500:] for p in sorted(self.temp.glob("node-*.log")))

    def ours(self) -> list[psutil.Process]:
        """Processes of this cluster: in a node's session, or naming its temp folder."""
        found = []
        sessions = {p.pid for p in self.procs}
        for proc in psutil.process_iter(["pid", "cmdline"]):
            try:
                if proc.pid == os.getpid():
                    continue
                if os.getsid(proc.pid) in sessions or str(self.temp) in " ".join(proc.info["cmdline"] or []):
                    found.append(proc)
            except (psutil.Error, ProcessLookupError, PermissionError):
                continue
        return found

    def stop(self) -> None:
        self._kill_nodes()
        shutil.rmtree(self.temp, ignore_errors=True)

    def _kill_nodes(self) -> None:
        for p in reversed(self.procs):  # the worker node first, then the head
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
                try:
                    p.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    p.kill()
        left = self.ours()
        for proc in left:
            try:
                proc.kill()
            except psutil.Error:
                pass
        psutil.wait_procs(left, timeout=10)

    def __enter__(self) -> LocalCluster:
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *exc: object) -> None:
        self.stop()
