"""The OpenAI-compatible backend against a real server on loopback (`transformers serve`
serving the embedded model), never only a mock."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from agentlab.errors import BackendError
from agentlab.llm import ChatMessage, LLMConfig, SamplingParams, load_backend


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory):
    from agentlab.llm.embedded import converted_smollm2_dir

    folder = converted_smollm2_dir()
    port = _free_port()
    exe = Path(sys.executable).parent / "transformers"
    log = tmp_path_factory.mktemp("serve") / "serve.log"
    env = dict(os.environ, HF_HUB_OFFLINE="1")
    with open(log, "w") as fh:
        proc = subprocess.Popen(
            [str(exe), "serve", str(folder), "--host", "127.0.0.1", "--port", str(port)],
            stdout=fh, stderr=subprocess.STDOUT, env=env, start_new_session=True,
        )
    base = f"http://127.0.0.1:{port}"
    deadline = time.time() + 120
    while time.time() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"transformers serve exited early: {log.read_text()[-2000:]}")
        try:
            if httpx.get(f"{base}/health", timeout=1).status_code == 200:
                break
        except httpx.HTTPError:
            time.sleep(0.5)
    else:
        proc.kill()
        pytest.fail("transformers serve did not become healthy in 120 s")
    yield base, str(folder)
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()


@pytest.mark.slow
def test_chat_and_completion_against_real_server(server) -> None:
    base, model = server
    backend = load_backend(LLMConfig(kind="openai", base_url=f"{base}/v1", model=model))
    out = backend.chat(
        [ChatMessage("user", "What is the capital of France? Answer in one word.")],
        SamplingParams(max_new_tokens=12, n=2),
    )
    assert len(out) == 2 and all(isinstance(o, str) and o.strip() for o in out)
    assert "Paris" in out[0]
    cont = backend.complete("List three colours:\n1.", SamplingParams(max_new_tokens=12, stop=("\n",)))
    assert len(cont) == 1 and "\n" not in cont[0]


@pytest.mark.slow
def test_server_errors_are_one_line(server) -> None:
    base, _ = server
    dead = load_backend(LLMConfig(kind="openai", base_url=f"http://127.0.0.1:{_free_port()}/v1", model="m", timeout_s=3))
    with pytest.raises(BackendError, match="cannot reach the OpenAI-compatible server"):
        dead.chat([ChatMessage("user", "hi")])


def test_a_server_that_never_answers_costs_one_read_timeout_and_says_so(chat_server) -> None:
    """Accepting the connection and sending nothing is not "cannot reach the server" (issue #23)."""
    import time

    from agentlab.errors import BackendError
    from agentlab.llm import LLMConfig, load_backend
    from agentlab.llm.base import ChatMessage

    url = chat_server(lambda body, k: "late", delay_s=10)
    llm = load_backend(LLMConfig(kind="openai", base_url=url, model="m", timeout_s=1.0))
    t0 = time.monotonic()
    with pytest.raises(BackendError) as err:
        llm.chat([ChatMessage("user", "hi")])
    took = time.monotonic() - t0
    assert "accepted the connection but sent no reply within 1 s (llm.timeout_s)" in str(err.value)
    assert took < 2.5  # one read timeout, no retry


def test_a_refused_connection_is_named_as_such() -> None:
    import socket

    from agentlab.errors import BackendError
    from agentlab.llm import LLMConfig, load_backend
    from agentlab.llm.base import ChatMessage

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    llm = load_backend(LLMConfig(kind="openai", base_url=f"http://127.0.0.1:{port}/v1", model="m"))
    with pytest.raises(BackendError, match="connection refused or reset"):
        llm.chat([ChatMessage("user", "hi")])
