"""An OpenAI-compatible embeddings endpoint served on 127.0.0.1 by the tests themselves.

It computes its vectors with HashingEmbedder, records every request it gets, and can be
told to answer slowly, drip its answer, stall, fail, or answer malformed.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from engram import HashingEmbedder, RemoteEmbedder

MODEL = "test-embed"
Reply = tuple[int, bytes]


@dataclass
class Seen:
    """One request as the endpoint received it."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]


class Endpoint:
    """An OpenAI-compatible /v1/embeddings server in a thread, with knobs."""

    def __init__(self) -> None:
        self.width = 16
        self.delay = 0.0  # seconds before answering at all
        self.drip = 0.0  # seconds between body bytes (0: the body at once)
        self.stall = 0.0  # seconds of silence after the first body byte
        self.reply: Callable[[dict[str, Any]], Reply] = self.vectors
        self.requests: list[Seen] = []
        self.stop = threading.Event()
        self._embedders: list[RemoteEmbedder] = []
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1/embeddings"
        self._thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()

    def vectors(self, body: dict[str, Any]) -> Reply:
        """Hashing vectors for the inputs, rows listed in reverse with their index."""
        vectors = HashingEmbedder(self.width).embed(body["input"], "passage")
        rows = [
            {"object": "embedding", "index": i, "embedding": v.tolist()}
            for i, v in enumerate(vectors)
        ]
        return 200, json.dumps({"object": "list", "data": rows[::-1], "model": MODEL}).encode()

    def embedder(self, **settings: Any) -> RemoteEmbedder:
        made = RemoteEmbedder(self.url, MODEL, **settings)
        self._embedders.append(made)
        return made

    def inputs(self) -> list[list[str]]:
        return [seen.body["input"] for seen in self.requests]

    def close(self) -> None:
        self.stop.set()
        for made in self._embedders:
            made.close()
        self.server.shutdown()
        self.server.server_close()


def _handler(endpoint: Endpoint) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            body = json.loads(raw)
            endpoint.requests.append(
                Seen(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
            )
            if endpoint.delay and endpoint.stop.wait(endpoint.delay):
                return
            status, answer = endpoint.reply(body)
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self._send(answer)
            except OSError:
                pass  # the client gave up; that is what some tests want

        def _send(self, answer: bytes) -> None:
            if endpoint.stall:
                self.wfile.write(answer[:1])
                self.wfile.flush()
                if endpoint.stop.wait(endpoint.stall):
                    return
            if not endpoint.drip:
                self.wfile.write(answer)
                return
            for i in range(len(answer)):
                if endpoint.stop.wait(endpoint.drip):
                    return
                self.wfile.write(answer[i : i + 1])

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler
