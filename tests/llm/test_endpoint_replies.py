"""A broken endpoint is bounded and never fatal (issue #37, case 6): every malformed, empty or
non-UTF-8 reply is asked again a bounded number of times, then one BackendError naming the
endpoint and its model; a reply trickled a byte at a time is cut at ``llm.timeout_s`` for the
whole reply, and at the task's deadline. Real bytes on a real loopback socket
(:class:`agentlab.llm.testing.RawReplyServer`), the real ``openai`` client."""

from __future__ import annotations

import time

import pytest

from agentlab.errors import BackendError, TimeLimitExceeded
from agentlab.llm import ChatMessage, LLMConfig, SamplingParams, load_backend
from agentlab.llm.deadline import task_deadline
from agentlab.llm.testing import RawReplyServer, completion_body

#: bodies no OpenAI-compatible server should send, and what the message says of each
MALFORMED = {
    "truncated JSON": (b'{"id": "c1", "choices": [{"index": 0, "message": {"role": "assis', "cut short?"),
    "no message": (b'{"choices":[{}]}', "choices[0] without a message"),
    "null": (b"null", "null where a completion object belongs"),
    "empty 200": (b"", "an empty body"),
    "not UTF-8": (b'{"choices":[{"message":{"role":"assistant","content":"caf\xe9 \xff"}}]}', "not UTF-8 (byte 0xe9"),
    "a list": (b"[1, 2]", "a JSON list where"),
    "no choices, an error": (b'{"error": {"message": "model not loaded"}}', "the server said: model not loaded"),
}


def _backend(url: str, **fields: object):  # type: ignore[no-untyped-def]
    return load_backend(LLMConfig(kind="openai", base_url=url, model="m-7b", **{"retry_backoff_s": 0.01, **fields}))


@pytest.mark.parametrize("name", list(MALFORMED))
def test_a_malformed_reply_is_asked_again_then_one_line_naming_the_endpoint(name: str) -> None:
    body, said = MALFORMED[name]
    with RawReplyServer(lambda req, k: body) as srv:
        llm = _backend(srv.url, retries=2)
        with pytest.raises(BackendError) as err:
            llm.chat([ChatMessage("user", "hi")])
        assert len(srv.requests) == 3  # the call and two retries, no more
    msg = str(err.value)
    assert "\n" not in msg and said in msg
    assert f"{srv.url} (model 'm-7b')" in msg and "malformed reply 3 time(s)" in msg


def test_a_retry_that_gets_a_good_reply_is_the_answer_and_counts_its_tokens() -> None:
    bodies = [b"null", b'{"choices": [', completion_body("hello")]
    with RawReplyServer(lambda req, k: bodies[min(k, 2)]) as srv:
        llm = _backend(srv.url, retries=2)
        assert llm.chat([ChatMessage("user", "hi")]) == ["hello"]
        assert len(srv.requests) == 3 and (llm.tokens_in, llm.tokens_out) == (1, 1)


def test_retries_back_off_and_zero_retries_ask_once() -> None:
    with RawReplyServer(lambda req, k: b"") as srv:
        llm = _backend(srv.url, retries=2, retry_backoff_s=0.3)
        t0 = time.monotonic()
        with pytest.raises(BackendError):
            llm.chat([ChatMessage("user", "hi")])
        assert time.monotonic() - t0 >= 0.9  # 0.3 s, then 0.6 s
    with RawReplyServer(lambda req, k: b"") as srv:
        with pytest.raises(BackendError, match=r"1 time\(s\)"):
            _backend(srv.url, retries=0).chat([ChatMessage("user", "hi")])
        assert len(srv.requests) == 1


def test_completions_endpoint_replies_are_checked_too() -> None:
    with RawReplyServer(lambda req, k: b'{"choices": [{"text": null}]}') as srv:
        llm = _backend(srv.url, retries=1, use_completions_endpoint=True)
        with pytest.raises(BackendError, match="choices\\[0\\] without text"):
            llm.complete("1.", SamplingParams(max_new_tokens=4))
        assert len(srv.requests) == 2


@pytest.mark.parametrize("headers_too", [False, True], ids=["body", "status-line"])
def test_a_trickled_reply_is_cut_at_the_whole_reply_deadline(headers_too: bool) -> None:
    """One byte every 0.25 s never trips a per-read timeout of 1 s; the whole reply must arrive in 1 s."""
    body = completion_body("x" * 50)
    with RawReplyServer(lambda req, k: body, trickle_s=0.25) as srv:
        llm = _backend(srv.url, timeout_s=1.0)
        t0 = time.monotonic()
        with pytest.raises(BackendError) as err:
            llm.chat([ChatMessage("user", "hi")])
        took = time.monotonic() - t0
        assert len(srv.requests) == 1  # a timeout is not asked again
    assert took < 2.0, took
    msg = str(err.value)
    assert "did not finish its reply within 1 s (llm.timeout_s" in msg and f"{srv.url} (model 'm-7b')" in msg


def test_a_model_call_is_cut_at_the_tasks_deadline() -> None:
    with RawReplyServer(lambda req, k: completion_body("late"), trickle_s=0.25) as srv:
        llm = _backend(srv.url, timeout_s=60)
        t0 = time.monotonic()
        with task_deadline(t0 + 1.0), pytest.raises(TimeLimitExceeded, match="during a model call to"):
            llm.chat([ChatMessage("user", "hi")])
        assert time.monotonic() - t0 < 2.0
        with task_deadline(time.monotonic() - 1), pytest.raises(TimeLimitExceeded, match="before a model call"):
            llm.chat([ChatMessage("user", "hi")])
        assert len(srv.requests) == 1  # a task out of time sends nothing


def test_a_reply_within_its_deadline_is_not_cut() -> None:
    with RawReplyServer(lambda req, k: completion_body("ok"), trickle_s=0.001) as srv:
        llm = _backend(srv.url, timeout_s=10)
        with task_deadline(time.monotonic() + 30):
            assert llm.chat([ChatMessage("user", "hi")]) == ["ok"]


def test_a_reply_cut_off_by_a_closed_connection_is_malformed_not_unreachable() -> None:
    """A body shorter than its Content-Length, then the connection closed: the server is there."""
    import socket
    import threading

    sock = socket.create_server(("127.0.0.1", 0))
    seen: list[int] = []

    def serve() -> None:
        while True:
            try:
                conn, _ = sock.accept()
            except OSError:
                return
            with conn:
                data = b""
                while b"\r\n\r\n" not in data:
                    data += conn.recv(65536)
                seen.append(1)
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n"
                             b'{"choices": [{"mess')

    threading.Thread(target=serve, daemon=True).start()
    try:
        llm = _backend(f"http://127.0.0.1:{sock.getsockname()[1]}/v1", retries=1)
        with pytest.raises(BackendError, match=r"malformed reply 2 time\(s\) \(last: a reply cut off after \d+ bytes"):
            llm.chat([ChatMessage("user", "hi")])
        assert len(seen) == 2
    finally:
        sock.close()


def test_a_local_generation_stops_at_the_tasks_deadline(backend) -> None:
    """The embedded model too: a long generation ends at the deadline and its cut reply is not used."""
    params = SamplingParams(max_new_tokens=2000, temperature=0.9, seed=1)
    t0 = time.monotonic()
    with task_deadline(t0 + 0.5), pytest.raises(TimeLimitExceeded, match="during a reply of"):
        backend.complete("Write a very long story about a lighthouse keeper.\n", params)
    assert time.monotonic() - t0 < 3.0
    with task_deadline(time.monotonic() + 60):  # well within its deadline: an ordinary reply
        assert backend.complete("1, 2, 3,", SamplingParams(max_new_tokens=4))[0]
