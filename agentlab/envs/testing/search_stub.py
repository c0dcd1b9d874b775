"""A loopback stand-in for a web search API, for Searcher-style agents (tests and offline demos).

No machine here reaches the internet, so an agent whose job is web search is tested against
this: real HTTP on 127.0.0.1, ``GET /?q=<words>`` answering JSON ``{"results": [{"title",
"url", "snippet"}]}`` -- the protocol the code agent's system prompt describes -- over a small
fixed corpus given by the test (a result matches when every query word occurs in its title or
snippet, case-insensitively). Every query is kept in :attr:`SearchStub.queries`.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse


class SearchStub:
    """``with SearchStub(corpus) as stub: stub.url`` -- a search endpoint over ``corpus``."""

    def __init__(self, corpus: list[dict[str, str]]) -> None:
        self.corpus = list(corpus)
        self.queries: list[str] = []
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # the name http.server calls
                q = parse_qs(urlparse(self.path).query).get("q", [""])[0]
                stub.queries.append(q)
                words = q.lower().split()
                hits = [d for d in stub.corpus if words and all(w in (d["title"] + " " + d["snippet"]).lower() for w in words)]
                body = json.dumps({"results": hits}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:  # quiet
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/"

    def __enter__(self) -> SearchStub:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
