"""A loopback fake of the Ollama HTTP API, for tests that go through the official client.

It speaks enough of Ollama's API for evotui: ``GET /api/tags``, ``GET /api/version``,
``POST /api/chat`` (NDJSON stream or one JSON object), ``POST /api/embed`` and
``POST /api/show``. Unknown models get Ollama's 404 ``{"error": "model 'x' not found"}``.

Behaviour is scriptable::

    fake.script("first answer", Reply("second", fault="error_midstream"))
    fake.default = lambda request_json: "answer when the script is empty"

Every request is recorded (``fake.requests``: method, path, parsed JSON body).

Use it through the ``fake_ollama`` pytest fixture (register it in ``tests/conftest.py`` with
``from tests.fake_ollama import fake_ollama  # noqa: F401``), or start one by hand with
``with FakeOllama() as fake: ...``.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

FAULTS = ("error_midstream", "http_500", "hang", "slow")
DEFAULT_MODELS = ("qwen2.5-coder:7b", "nomic-embed-text:latest")


@dataclass
class Reply:
    """One scripted answer to one ``/api/chat`` request.

    fault: None, or one of ``FAULTS``:
      - ``error_midstream``: stream part of the text, then a bare ``{"error": ...}`` line
        (HTTP status stays 200, as real Ollama does);
      - ``http_500``: answer 500 ``{"error": ...}`` before any body;
      - ``hang``: send nothing for ``hang_seconds`` (longer than the client's timeout);
      - ``slow``: sleep ``delay`` seconds between chunks.
    """

    text: str
    fault: str | None = None
    thinking: str = ""
    error: str = "llama runner process has terminated: exit status 2"
    delay: float = 0.05
    hang_seconds: float = 30.0
    done_reason: str = "stop"
    prompt_eval_count: int | None = None
    eval_count: int | None = None
    seed: int = 0

    def __post_init__(self) -> None:
        if self.fault is not None and self.fault not in FAULTS:
            raise ValueError(f"unknown fault {self.fault!r}; expected one of {FAULTS}")


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    body: dict[str, Any] | None


def split_irregular(text: str, seed: int = 0) -> list[str]:
    """Split text into chunks of 1..12 characters, reproducibly (like tokens, roughly)."""
    rng = random.Random(seed)
    out, i = [], 0
    while i < len(text):
        n = rng.randint(1, 12)
        out.append(text[i : i + n])
        i += n
    return out


def fake_embedding(text: str, dim: int = 16) -> list[float]:
    """A deterministic unit vector derived from a hash of the text."""
    digest = hashlib.sha256(text.encode()).digest()
    rng = random.Random(digest)
    v = [rng.uniform(-1.0, 1.0) for _ in range(dim)]
    norm = math.sqrt(sum(x * x for x in v)) or 1.0
    return [x / norm for x in v]


def _same_model(a: str, b: str) -> bool:
    def norm(name: str) -> str:
        return name if ":" in name.rsplit("/", 1)[-1] else name + ":latest"

    return norm(a) == norm(b)


def closed_port_url() -> str:
    """A loopback URL on which nothing listens (the port was just bound, then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that went away mid-response is normal here (timeouts, retries)


class FakeOllama:
    def __init__(
        self,
        models: tuple[str, ...] | list[str] = DEFAULT_MODELS,
        default: Callable[[dict[str, Any]], str] | None = None,
        embed_dim: int = 16,
        version: str = "0.12.3",
    ) -> None:
        self.models = list(models)
        self.default: Callable[[dict[str, Any]], str] = default or (
            lambda req: "Hello from the fake Ollama."
        )
        self.embed_dim = embed_dim
        self.version = version
        self.requests: list[Request] = []
        self._queue: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    # -- scripting and inspection -----------------------------------------------------------
    def script(self, *replies: str | Reply) -> None:
        """Queue answers for the next ``/api/chat`` requests, in order."""
        with self._lock:
            for r in replies:
                self._queue.append(r if isinstance(r, Reply) else Reply(r))

    def pending(self) -> int:
        with self._lock:
            return len(self._queue)

    def requests_to(self, path: str) -> list[Request]:
        with self._lock:
            return [r for r in self.requests if r.path == path]

    @property
    def port(self) -> int:
        assert self._server is not None, "server not started"
        return self._server.server_address[1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def host(self) -> str:
        """The form OLLAMA_HOST usually takes: host:port."""
        return f"127.0.0.1:{self.port}"

    # -- lifecycle --------------------------------------------------------------------------
    def start(self) -> FakeOllama:
        handler = type("Handler", (_Handler,), {"fake": self})
        server = _Server(("127.0.0.1", 0), handler)
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, args=(0.02,), name="fake-ollama", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()  # releases handlers that "hang"
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> FakeOllama:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- internals used by the handler ------------------------------------------------------
    def _record(self, method: str, path: str, body: dict[str, Any] | None) -> None:
        with self._lock:
            self.requests.append(Request(method, path, body))

    def _next_reply(self, request_json: dict[str, Any]) -> Reply:
        with self._lock:
            if self._queue:
                return self._queue.popleft()
        return Reply(self.default(request_json))

    def _has_model(self, name: str) -> bool:
        return any(_same_model(name, m) for m in self.models)

    def _sleep(self, seconds: float) -> bool:
        """Sleep, waking early when the server stops. True when stopped."""
        return self._stopping.wait(seconds)


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S.000000000Z", time.gmtime())


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    fake: FakeOllama  # set on the subclass built in FakeOllama.start

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        pass

    # -- plumbing ---------------------------------------------------------------------------
    def _body(self) -> dict[str, Any] | None:
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b""
        if not raw:
            return None
        try:
            return json.loads(raw)
        except json.JSONDecodeError:
            return {"_raw": raw.decode(errors="replace")}

    def _send_json(self, status: int, obj: Any) -> None:
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _send_text(self, status: int, text: str) -> None:
        data = text.encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _start_stream(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/x-ndjson")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

    def _stream_line(self, obj: Any) -> None:
        data = json.dumps(obj).encode() + b"\n"
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def _end_stream(self) -> None:
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _guard(self, fn: Callable[[], None]) -> None:
        try:
            fn()
        except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError):
            self.close_connection = True  # the client went away (e.g. it timed out)

    # -- routes -----------------------------------------------------------------------------
    def do_GET(self) -> None:  # noqa: N802 - stdlib name
        self.fake._record("GET", self.path, None)
        if self.path == "/api/tags":
            self._guard(
                lambda: self._send_json(
                    200, {"models": [_model_entry(m) for m in self.fake.models]}
                )
            )
        elif self.path == "/api/version":
            self._guard(lambda: self._send_json(200, {"version": self.fake.version}))
        elif self.path == "/":
            self._guard(lambda: self._send_text(200, "Ollama is running"))
        else:
            self._guard(lambda: self._send_text(404, "404 page not found"))

    def do_HEAD(self) -> None:  # noqa: N802 - stdlib name
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self) -> None:  # noqa: N802 - stdlib name
        body = self._body()
        self.fake._record("POST", self.path, body)
        routes = {"/api/chat": self._chat, "/api/embed": self._embed, "/api/show": self._show}
        route = routes.get(self.path)
        if route is None:
            self._guard(lambda: self._send_text(404, "404 page not found"))
            return
        body = body or {}
        name = str(body.get("model") or "")
        if not name:
            self._guard(lambda: self._send_json(400, {"error": "model is required"}))
            return
        if not self.fake._has_model(name):
            self._guard(lambda: self._send_json(404, {"error": f"model '{name}' not found"}))
            return
        self._guard(lambda: route(body))

    def _chat(self, req: dict[str, Any]) -> None:
        reply = self.fake._next_reply(req)
        model = req["model"]
        if reply.fault == "hang":
            if self.fake._sleep(reply.hang_seconds):
                return
        if reply.fault == "http_500":
            self._send_json(500, {"error": reply.error})
            return
        chunks = split_irregular(reply.text, reply.seed)
        think_chunks = split_irregular(reply.thinking, reply.seed + 1) if reply.thinking else []
        prompt_chars = sum(len(str(m.get("content") or "")) for m in req.get("messages") or [])
        final = {
            "model": model,
            "created_at": _now(),
            "message": {"role": "assistant", "content": ""},
            "done": True,
            "done_reason": reply.done_reason,
            "total_duration": 1_234_567_890,
            "load_duration": 12_345_678,
            "prompt_eval_count": (
                reply.prompt_eval_count
                if reply.prompt_eval_count is not None
                else max(1, prompt_chars // 4)
            ),
            "prompt_eval_duration": 23_456_789,
            "eval_count": (
                reply.eval_count
                if reply.eval_count is not None
                else len(chunks) + len(think_chunks)
            ),
            "eval_duration": 987_654_321,
        }
        if req.get("stream", True) is False:
            if reply.fault == "error_midstream":
                self._send_json(500, {"error": reply.error})
                return
            message = {"role": "assistant", "content": reply.text}
            if reply.thinking:
                message["thinking"] = reply.thinking
            self._send_json(200, {**final, "message": message})
            return

        self._start_stream()
        parts: list[dict[str, Any]] = [
            {"role": "assistant", "content": "", "thinking": c} for c in think_chunks
        ] + [{"role": "assistant", "content": c} for c in chunks]
        cut = len(parts) // 2 if reply.fault == "error_midstream" else len(parts)
        for message in parts[:cut]:
            self._stream_line(
                {"model": model, "created_at": _now(), "message": message, "done": False}
            )
            if reply.fault == "slow" and self.fake._sleep(reply.delay):
                return
        if reply.fault == "error_midstream":
            self._stream_line({"error": reply.error})
        else:
            self._stream_line(final)
        self._end_stream()

    def _embed(self, req: dict[str, Any]) -> None:
        inputs = req.get("input", "")
        texts = [inputs] if isinstance(inputs, str) else list(inputs)
        self._send_json(
            200,
            {
                "model": req["model"],
                "embeddings": [fake_embedding(t, self.fake.embed_dim) for t in texts],
                "total_duration": 14_143_917,
                "load_duration": 1_019_500,
                "prompt_eval_count": sum(max(1, len(t) // 4) for t in texts),
            },
        )

    def _show(self, req: dict[str, Any]) -> None:
        name = req["model"]
        embedding = "embed" in name
        self._send_json(
            200,
            {
                "modelfile": f"FROM {name}\n",
                "parameters": "temperature 0.7",
                "template": "{{ .Prompt }}",
                "details": _details(),
                "model_info": {"general.architecture": "qwen2", "qwen2.context_length": 32768},
                "capabilities": ["embedding"] if embedding else ["completion", "tools"],
                "modified_at": "2026-11-01T10:00:00.000000000Z",
            },
        )


def _details() -> dict[str, Any]:
    return {
        "parent_model": "",
        "format": "gguf",
        "family": "qwen2",
        "families": ["qwen2"],
        "parameter_size": "7.6B",
        "quantization_level": "Q4_K_M",
    }


def _model_entry(name: str) -> dict[str, Any]:
    return {
        "name": name,
        "model": name,
        "modified_at": "2026-11-01T10:00:00.000000000Z",
        "size": 4_683_087_332,
        "digest": hashlib.sha256(name.encode()).hexdigest(),
        "details": _details(),
    }


@pytest.fixture
def fake_ollama() -> Iterator[FakeOllama]:
    """A running FakeOllama on a free loopback port; stopped after the test."""
    fake = FakeOllama().start()
    try:
        yield fake
    finally:
        fake.stop()


__all__ = [
    "FAULTS",
    "DEFAULT_MODELS",
    "FakeOllama",
    "Reply",
    "Request",
    "closed_port_url",
    "fake_embedding",
    "fake_ollama",
    "split_irregular",
]
