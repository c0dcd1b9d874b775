"""Shared fixtures: the real embedded models (cheap here), offline, loaded once per session."""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# On xdist workers (`make test`: two workers on two cores) every worker computes with one thread:
# torch's OpenMP threads spin, and two workers with two threads each on two cores slow the
# model down many times over. Set before torch is imported; subprocesses inherit it.
if os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ["OMP_NUM_THREADS"] = "1"
    os.environ["MKL_NUM_THREADS"] = "1"
# adbutils must never start a real adb daemon in tests.
os.environ.setdefault("ADBUTILS_ADB_PATH", "/bin/false")

# A test run started in the background of a shell (`make test &`, nohup) inherits SIGINT ignored,
# and so would every `agentlab` subprocess a test starts: the CLI keeps an ignored SIGINT ignored,
# as a shell's `cmd &` asks, so the Ctrl-C tests would wait for a stop that never comes. The tests
# send SIGINT on purpose: give it back its default here (a handler is reset to default across exec).
import signal as _signal

if _signal.getsignal(_signal.SIGINT) == _signal.SIG_IGN:
    _signal.signal(_signal.SIGINT, _signal.default_int_handler)

import pytest

from agentlab.envs.testing.system import missing_system


@pytest.fixture(scope="session")
def backend():
    """The embedded SmolLM2-135M-Instruct (frozen, CPU)."""
    from agentlab.llm import load_local

    return load_local()


@pytest.fixture(scope="session")
def scorer():
    """BERTScore on the embedded all-MiniLM-L6-v2."""
    from agentlab.llm.similarity import default_scorer

    return default_scorer()


@pytest.fixture
def fake_adb():
    """A running protocol-level fake adb server (loopback, ephemeral port) with one device
    running the scripted clock app: the deepest real level Android can be tested at here."""
    from agentlab.envs.testing.fake_adb import FakeAdbServer, FakeDevice

    with FakeAdbServer(FakeDevice()) as server:
        yield server


@pytest.fixture(scope="session")
def pool():
    """The project's 30-agent pool from data/agents."""
    from agentlab.pool import AgentPool

    return AgentPool.from_dir()


@pytest.fixture()
def chat_server():
    """Start a real OpenAI-compatible chat endpoint on loopback: ``chat_server(reply)`` -> base URL.

    ``reply(request_json, k)`` gives the assistant text for the k-th request (from 0); the
    requests received are kept in ``chat_server.requests``. A stand-in for vLLM / ``transformers
    serve`` where a test needs controlled replies; the client side (``openai``) is the real one
    (:class:`agentlab.llm.testing.LoopbackChatServer`).
    """
    from agentlab.llm.testing import LoopbackChatServer

    servers: list[LoopbackChatServer] = []
    requests: list[dict] = []

    def start(reply, delay_s: float = 0.0):  # type: ignore[no-untyped-def]
        srv = LoopbackChatServer(reply, delay_s=delay_s)
        srv.requests = requests  # one list across the servers a test starts, as before
        servers.append(srv)
        return srv.url

    start.requests = requests  # type: ignore[attr-defined]
    yield start
    for srv in servers:
        srv.close()


# -- a real desktop: one Xvfb + session bus per module, the GTK demo app per test ---------------
# (shared by tests/envs/desktop, tests/agents/s2 and tests/agents/pcagent)
@pytest.fixture(scope="module")
def xdisplay():  # type: ignore[no-untyped-def]
    from agentlab.envs.xdisplay import VirtualDisplay, xvfb_available

    reason = xvfb_available()
    if reason:
        missing_system(f"no X server for desktop tests: {reason}")
    with VirtualDisplay(width=1280, height=800) as disp:
        yield disp


@pytest.fixture
def needs_a11y() -> None:
    from agentlab.envs.a11y import pyatspi_available

    reason = pyatspi_available()
    if reason:
        missing_system(f"no accessibility tree: {reason}")


class DemoApp:
    """The shipped GTK demo app and its state file (the ground truth of what the clicks did)."""

    def __init__(self, disp, state) -> None:  # type: ignore[no-untyped-def]
        self.state_path = state
        self.proc = disp.launch_demo_app(state)

    def state(self) -> dict:
        import json

        return json.loads(self.state_path.read_text())

    def wait_for(self, key: str, value: object, timeout_s: float = 5.0) -> dict:
        import time

        deadline = time.monotonic() + timeout_s
        st = self.state()
        while st.get(key) != value and time.monotonic() < deadline:
            time.sleep(0.05)
            st = self.state()
        return st


@pytest.fixture
def demo_app(xdisplay, tmp_path):  # type: ignore[no-untyped-def]
    app = DemoApp(xdisplay, tmp_path / "demo_state.json")
    yield app
    xdisplay.stop_app(app.proc)


# -- the suite on two xdist workers (`make test` runs `-n 2 --dist loadgroup`) ------------------
#: test folders whose tests share one expensive thing that must not run twice or side by side:
#: the notebooks' one papermill run (a session fixture: one worker runs it for all its tests)
#: and Ray clusters (two local clusters on two cores starve each other)
SERIAL_GROUPS = {"notebooks": "notebooks", "parallel": "ray"}


def pytest_itemcollected(item):  # type: ignore[no-untyped-def]
    """Marks each item as it is collected, before xdist turns the groups into node ids in its
    ``pytest_collection_modifyitems``. (xdist 3.8 rewrites ``item._nodeid``, which pytest 9.2 no
    longer reads: the groups silently stop working there, hence ``pytest<9.2`` in pyproject.)"""
    parts = item.path.parts
    for folder, group in SERIAL_GROUPS.items():
        if "tests" in parts and folder in parts[parts.index("tests"):]:
            item.add_marker(pytest.mark.xdist_group(group))
