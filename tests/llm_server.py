"""A scripted OpenAI-compatible HTTP server on 127.0.0.1, for tests of the LLM client.

Serves POST /v1/chat/completions (plain and `stream: true` SSE) and POST /v1/embeddings.
Each chat reply comes from the script queue (`server.script(Reply(...), ...)`), else from the
`responder` callable, else it echoes the last message. An embeddings request gets what
`embedding_reply(texts)` says (a status, a delay, a hang-up), else its vectors at once. Every
request is recorded.
"""

from __future__ import annotations

import base64
import hashlib
import json
import struct
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    """What the server does for one chat request."""

    content: str | None = None  # None: echo the last message ("echo: ...")
    status: int = 200  # non-200: an OpenAI-style error body with this status
    delay: float = 0.0  # seconds to wait before answering (cut short when the server stops)
    body: bytes | None = None  # sent verbatim with status 200 (e.g. malformed JSON)
    chunks: list[str] | None = None  # streamed pieces; default: the content split after spaces
    headers: dict[str, str] = field(default_factory=dict)
    hang_up: bool = False  # close the connection without a reply


@dataclass
class Recorded:
    """One request the server received."""

    path: str
    body: dict[str, Any]
    authorization: str = ""  # the Authorization header as sent


Responder = Callable[[dict[str, Any]], Reply]


def echo(body: dict[str, Any]) -> str:
    """The default reply text: 'echo: ' plus the last message's content."""
    return "echo: " + str(body.get("messages", [{}])[-1].get("content", ""))


def _words(text: str) -> int:
    return len(text.split())


class FakeLLMServer:
    """An OpenAI-compatible server on a free local port; use as a context manager."""

    def __init__(self, responder: Responder | None = None) -> None:
        self.responder = responder
        self.embedding_status = 200  # set to an error status to make /embeddings fail
        # what to do for an embeddings request of these texts; None: answer at once
        self.embedding_reply: Callable[[list[str]], Reply] | None = None
        self.requests: list[Recorded] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._queue: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd = _HTTPServer(("127.0.0.1", 0), _Handler)
        self._httpd.fake = self
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,),
                                        daemon=True)

    @property
    def url(self) -> str:
        """The base URL to give an OpenAI client."""
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    @property
    def chat_requests(self) -> list[Recorded]:
        """The chat completion requests received so far."""
        with self._lock:
            return [r for r in self.requests if r.path.endswith("/chat/completions")]

    @property
    def embedding_sizes(self) -> list[int]:
        """The number of texts of each embeddings request received so far, in order."""
        with self._lock:
            return [len(r.body["input"]) for r in self.requests
                    if r.path.endswith("/embeddings")]

    def script(self, *replies: Reply) -> None:
        """Queue replies for the next chat requests, in order."""
        with self._lock:
            self._queue.extend(replies)

    def start(self) -> FakeLLMServer:
        """Start serving in a background thread."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving; cuts short any reply still waiting out its delay."""
        self._stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> FakeLLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _begin(self, path: str, body: dict[str, Any], authorization: str = "") -> None:
        with self._lock:
            self.requests.append(Recorded(path, body, authorization))
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)

    def _end(self) -> None:
        with self._lock:
            self.in_flight -= 1

    def _next_reply(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            queued = self._queue.popleft() if self._queue else None
        if queued is not None:
            return queued
        return self.responder(body) if self.responder else Reply()


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    fake: FakeLLMServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that timed out and hung up is expected here, not an error


class _Handler(BaseHTTPRequestHandler):
    server: _HTTPServer

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        fake = self.server.fake
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b"{}"
        body = json.loads(raw or b"{}")
        fake._begin(self.path, body, self.headers.get("Authorization") or "")
        try:
            if self.path.endswith("/chat/completions"):
                self._chat(fake, body)
            elif self.path.endswith("/embeddings") and fake.embedding_status != 200:
                self._json(fake.embedding_status, {"error": {"message": "scripted failure"}})
            elif self.path.endswith("/embeddings"):
                self._embeddings(fake, body)
            else:
                self._json(404, {"error": {"message": f"no route {self.path}"}})
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (timeout) before we answered
        finally:
            fake._end()

    def _json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _chat(self, fake: FakeLLMServer, body: dict[str, Any]) -> None:
        reply = fake._next_reply(body)
        if reply.delay and fake._stopping.wait(reply.delay):
            return
        if reply.status != 200:
            error = {"message": f"scripted HTTP {reply.status}", "type": "fake", "code": None}
            self._json(reply.status, {"error": error}, reply.headers)
            return
        if reply.body is not None:
            self._json(200, reply.body, reply.headers)
            return
        text = echo(body) if reply.content is None else reply.content
        prompt = sum(_words(str(m.get("content", ""))) for m in body.get("messages", []))
        usage = {"prompt_tokens": prompt, "completion_tokens": _words(text),
                 "total_tokens": prompt + _words(text)}
        base = {"id": "chatcmpl-fake", "created": int(time.time()), "model": body.get("model")}
        if body.get("stream"):
            chunks = reply.chunks or [w + " " for w in text.split(" ")]
            if reply.chunks is None and chunks:
                chunks[-1] = chunks[-1][:-1]
            self._sse(base, chunks, usage if body.get("stream_options") else None)
            return
        choice = {"index": 0, "finish_reason": "stop",
                  "message": {"role": "assistant", "content": text}}
        self._json(200, {**base, "object": "chat.completion", "choices": [choice],
                         "usage": usage}, reply.headers)

    def _sse(self, base: dict[str, Any], chunks: list[str], usage: dict[str, int] | None
             ) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        events = [{"index": 0, "delta": {"role": "assistant", "content": piece},
                   "finish_reason": None} for piece in chunks]
        events.append({"index": 0, "delta": {}, "finish_reason": "stop"})
        for choice in events:
            self._event({**base, "object": "chat.completion.chunk", "choices": [choice]})
        if usage is not None:
            self._event({**base, "object": "chat.completion.chunk", "choices": [],
                         "usage": usage})
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()

    def _event(self, payload: dict[str, Any]) -> None:
        self.wfile.write(b"data: " + json.dumps(payload).encode() + b"\n\n")
        self.wfile.flush()

    def _embeddings(self, fake: FakeLLMServer, body: dict[str, Any]) -> None:
        texts = body.get("input", [])
        texts = [texts] if isinstance(texts, str) else texts
        reply = fake.embedding_reply(texts) if fake.embedding_reply else Reply()
        if reply.delay and fake._stopping.wait(reply.delay):
            return
        if reply.hang_up:
            self.close_connection = True
            return
        if reply.status != 200:
            error = {"message": f"scripted HTTP {reply.status}", "type": "fake", "code": None}
            self._json(reply.status, {"error": error}, reply.headers)
            return
        if reply.body is not None:
            self._json(200, reply.body, reply.headers)
            return
        data = []
        for i, text in enumerate(texts):
            vector = embedding_of(str(text))
            if body.get("encoding_format") == "base64":
                packed = struct.pack(f"<{len(vector)}f", *vector)
                value: Any = base64.b64encode(packed).decode()
            else:
                value = vector
            data.append({"object": "embedding", "index": i, "embedding": value})
        tokens = sum(_words(str(t)) for t in texts)
        self._json(200, {"object": "list", "data": data, "model": body.get("model"),
                         "usage": {"prompt_tokens": tokens, "total_tokens": tokens}})


def embedding_of(text: str, dim: int = 8) -> list[float]:
    """A deterministic small vector for `text` (from its sha256), values in [-1, 1]."""
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return [digest[i] / 127.5 - 1.0 for i in range(dim)]
