"""A loopback OpenAI-compatible chat endpoint with scripted replies, for tests and benchmarks.

A real HTTP server on 127.0.0.1 speaking ``POST /v1/chat/completions`` (the route vLLM and
``transformers serve`` offer), so the client side is the real one: ``LLMConfig(kind="openai",
base_url=server.url)`` and the official ``openai`` client. The replies come from a function of the
request (``reply(body, k)``, ``k`` counting requests from 0); ``delay_s`` holds every answer back
that long, which mimics a remote model's latency (requests are served on threads, concurrently,
as a real server would). Used where replies must be controlled: the tests' ``chat_server`` fixture
and ``benchmarks/scale.py`` (episodes per hour when the model is remote). :class:`RawReplyServer`
sends exact bytes instead (a broken or trickling endpoint, issue #37).
"""

from __future__ import annotations

import json
import random
import re
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from agentlab.llm.base import Capabilities, ChatMessage, LLMBackend, SamplingParams

#: the assistant text for one request: ``reply(request_json, k)`` (k: the request's number, from 0)
ReplyFn = Callable[[dict[str, Any], int], str]


_ITEM = re.compile(r"^\s*\d{1,3}[.)]\s*(.+?)\s*$", re.M)


def list_continuation(body: dict[str, Any], k: int) -> str:
    """A generator's reply to a numbered-list prompt (self-instruct's completion style): three new
    lines spliced from the listed ones. It depends only on the request (its last message and
    ``seed``), never on ``k``, so any worker sending the same request gets the same reply."""
    messages = body.get("messages") or [{}]
    text = str(messages[-1].get("content", ""))
    items = _ITEM.findall(text)
    if len(items) < 2:
        return " Nothing to add.\n"
    rng = random.Random(f"{body.get('seed')}|{text}")
    lines = []
    for _ in range(3):
        a, b = rng.sample(items, 2)
        wa, wb = a.rstrip(".").split(), b.split()
        lines.append(" ".join(wa[: max(2, len(wa) // 2)] + wb[len(wb) // 2 :]))
    return " " + "\n".join(f"{i}. {line}" if i else line for i, line in enumerate(lines)) + "\n"


class _QuietServer(ThreadingHTTPServer):
    """A client that gave up before its answer (a timeout under test) is no error of the server's:
    no traceback on stderr, where it would land in a later test's captured output."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        import sys

        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class LoopbackChatServer:
    """``with LoopbackChatServer(reply) as srv: LLMConfig(kind="openai", base_url=srv.url, ...)``."""

    def __init__(self, reply: ReplyFn, *, delay_s: float = 0.0, usage: tuple[int, int] = (1, 1)) -> None:
        self.reply, self.delay_s = reply, delay_s
        #: the (prompt, completion) token counts every answer reports (what a run's budget counts)
        self.usage = usage
        #: every request received (its JSON body plus ``path``), in arrival order
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._server = _QuietServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        """The base URL an OpenAI client takes (``http://127.0.0.1:<port>/v1``)."""
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def _answer(self, path: str, body: dict[str, Any]) -> bytes:
        with self._lock:
            k = len(self.requests)
            self.requests.append({"path": path, **body})
        text = self.reply(body, k)
        if self.delay_s:
            time.sleep(self.delay_s)
        return json.dumps({
            "id": f"c{k}", "object": "chat.completion", "created": 0, "model": body.get("model"),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": self.usage[0], "completion_tokens": self.usage[1],
                      "total_tokens": sum(self.usage)},
        }).encode()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                out = server._answer(self.path, body)
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

            def log_message(self, *args: Any) -> None:
                pass

        return Handler

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> LoopbackChatServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass(frozen=True)
class Trickled:
    """A body to send (status line and headers included) one byte every ``every_s`` seconds."""

    body: bytes
    every_s: float


#: one reply's body: ``body(request_json, k)`` (k: the request's number, from 0), sent at once or trickled
BodyFn = Callable[[dict[str, Any], int], "bytes | Trickled"]


def completion_body(text: str) -> bytes:
    """A well-formed chat-completion body holding ``text``."""
    return json.dumps({"id": "c", "object": "chat.completion", "created": 0, "model": "m",
                       "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                                    "finish_reason": "stop"}],
                       "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}).encode()


class RawReplyServer:
    """A loopback HTTP endpoint that answers every POST with exactly the body bytes it is given,
    as a broken or hostile server would: cut short, ``null``, empty, not UTF-8, or (``trickle_s``,
    or a :class:`Trickled` body) the whole response, status line included, one byte at a time.

    Why not :class:`LoopbackChatServer`: that one always sends well-formed JSON at once; the
    backend's handling of everything else must be tested against real bytes on a real socket.
    """

    def __init__(self, body: BodyFn, *, trickle_s: float = 0.0) -> None:
        self.body, self.trickle_s = body, trickle_s
        #: every request received (its JSON body, or ``{}`` when it was not JSON), in arrival order
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._closed = threading.Event()
        self._sock = socket.create_server(("127.0.0.1", 0))
        self._sock.settimeout(0.2)
        self._port = self._sock.getsockname()[1]
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._port}/v1"

    def _serve(self) -> None:
        while not self._closed.is_set():
            try:
                conn, _ = self._sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _read_request(self, conn: socket.socket) -> dict[str, Any] | None:
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = conn.recv(65536)
            if not chunk:
                return None
            data += chunk
        head, _, rest = data.partition(b"\r\n\r\n")
        length = next((int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                       if line.lower().startswith(b"content-length:")), 0)
        while len(rest) < length:
            chunk = conn.recv(65536)
            if not chunk:
                break
            rest += chunk
        try:
            req = json.loads(rest or b"{}")
        except ValueError:
            req = {}
        return req if isinstance(req, dict) else {}

    def _answer(self, conn: socket.socket) -> None:
        with conn:
            conn.settimeout(30)
            try:
                req = self._read_request(conn)
                if req is None:
                    return
                with self._lock:
                    k = len(self.requests)
                    self.requests.append(req)
                body = self.body(req, k)
                every = body.every_s if isinstance(body, Trickled) else self.trickle_s
                data = body.body if isinstance(body, Trickled) else body
                out = (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n"
                       b"Connection: close\r\n\r\n" % len(data)) + data
                if not every:
                    conn.sendall(out)
                    return
                for i in range(len(out)):
                    if self._closed.wait(every if i else 0):
                        return
                    conn.sendall(out[i : i + 1])
            except OSError:  # the client gave up (its deadline): what a trickle test wants
                return

    def close(self) -> None:
        self._closed.set()
        self._sock.close()

    def __enter__(self) -> RawReplyServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class ScriptedChat(LLMBackend):
    """An in-process backend answering from a list, in order, and keeping every call's sampling
    parameters (``params``) and messages (``prompts``): for tests of an agent's loop where the
    replies are the input."""

    model_id = "scripted"

    def __init__(self, replies: list[str], caps: Capabilities | None = None) -> None:
        self.replies = list(replies)
        self.params: list[SamplingParams] = []
        self.prompts: list[list[ChatMessage]] = []
        self.caps = caps or Capabilities()

    @property
    def capabilities(self) -> Capabilities:
        return self.caps

    def chat(self, messages: list[ChatMessage], params: SamplingParams | None = None) -> list[str]:
        self.params.append(params or SamplingParams())
        self.prompts.append(list(messages))
        if not self.replies:
            raise AssertionError("scripted backend ran out of replies")
        return [self.replies.pop(0)]

    def complete(self, prompt: str, params: SamplingParams | None = None) -> list[str]:
        raise AssertionError("chat only")
