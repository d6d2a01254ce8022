"""A scriptable streaming chat-completions server on 127.0.0.1, for tests and demos.

It speaks HTTP/1.1 and the OpenAI streaming protocol (server-sent events over a
chunked body), so the real `openai` SDK and the real provider talk to it exactly as
they talk to OpenAI, Ollama or vLLM. Each test scripts the replies, byte for byte
if it wants to, and reads back the requests the server received.

    with ChatServer() as srv:
        srv.script(stream_reply(text_chunks("Hello, world", pieces=3) + [finish("stop")]))
        settings = OpenAISettings(base_url=srv.url, model="test-model", max_retries=0)
        ...                                   # run the agent
        assert srv.requests[0].json["messages"][-1] == {"role": "user", "content": "hi"}

Replies are consumed in order, one per request (a callable reply is called with the
request and returns the `Reply`). With none left the server answers 500, so a test
that makes an unexpected request fails loudly.

A reply's body is a list of pieces: `bytes` (written and flushed as one HTTP chunk),
`Pause(seconds)` (during which the server watches for the client hanging up), and
`Drop()` (close the connection abruptly, mid-body). Helpers below build chunk dicts
(`text_chunks`, `tool_call_chunks`, `finish`, `usage_chunk`, ...) and turn them into
SSE bytes cut at arbitrary byte offsets (`stream_reply(..., cuts=...)`), including
inside multi-byte UTF-8 characters.
"""

from __future__ import annotations

import itertools
import json
import select
import socket
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODEL = "test-model"
DONE = b"data: [DONE]\n\n"

# -- what the server sends -----------------------------------------------------------


@dataclass(frozen=True)
class Pause:
    """Wait this long before the next piece (ends early if the client hangs up)."""

    seconds: float


@dataclass(frozen=True)
class Drop:
    """Close the connection now, without finishing the chunked body."""


Piece = bytes | Pause | Drop


@dataclass
class Reply:
    """One scripted HTTP response."""

    status: int = 200
    pieces: list[Piece] = field(default_factory=list)
    """The streamed body (chunked transfer encoding), used when `body` is None."""
    body: bytes | None = None
    """A whole body sent with Content-Length (errors, non-streamed JSON)."""
    content_type: str = "text/event-stream"
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    """Seconds to wait before the status line (a slow server)."""

    @classmethod
    def error(cls, status: int, body: Any, *, headers: dict[str, str] | None = None) -> Reply:
        """An error response; a dict body is sent as JSON, a str as text/plain."""
        if isinstance(body, (dict, list)):
            return cls(
                status,
                body=json.dumps(body).encode(),
                content_type="application/json",
                headers=headers or {},
            )
        return cls(
            status, body=str(body).encode(), content_type="text/plain", headers=headers or {}
        )

    @classmethod
    def json(cls, obj: Any, status: int = 200) -> Reply:
        return cls(status, body=json.dumps(obj).encode(), content_type="application/json")


ReplySource = Reply | Callable[["ReceivedRequest"], Reply]

# -- what the server received ------------------------------------------------------


@dataclass
class ReceivedRequest:
    method: str
    path: str
    headers: dict[str, str]
    """Header names lowercased."""
    raw: bytes
    received_at: float = field(default_factory=time.monotonic)
    disconnected_at: float | None = None
    """When the server noticed the client hang up before the body was complete."""
    completed: bool = False
    """The whole scripted body was sent."""
    _disconnected: threading.Event = field(default_factory=threading.Event, repr=False)

    @property
    def json(self) -> Any:
        return json.loads(self.raw) if self.raw else None

    def wait_disconnected(self, timeout: float = 2.0) -> bool:
        """Block until the client hung up mid-body (True) or `timeout` passed (False)."""
        return self._disconnected.wait(timeout)

    def _mark_disconnected(self) -> None:
        if self.disconnected_at is None:
            self.disconnected_at = time.monotonic()
        self._disconnected.set()


# -- the server ----------------------------------------------------------------------


class ChatServer:
    """A real HTTP server on 127.0.0.1 (ephemeral port) in a background thread.

    Args:
        default: the reply when the script is used up (None: HTTP 500).
    """

    def __init__(self, default: ReplySource | None = None) -> None:
        self.default = default
        self.requests: list[ReceivedRequest] = []
        self._script: deque[ReplySource] = deque()
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ---------------------------------------------------------------

    def start(self) -> ChatServer:
        handler = type("Handler", (_Handler,), {"chat_server": self})
        httpd = _QuietServer(("127.0.0.1", 0), handler)
        httpd.daemon_threads = True
        httpd.block_on_close = False
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever,
            kwargs={"poll_interval": 0.02},
            name="chat-server",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._closing.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> ChatServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- scripting and inspection ------------------------------------------------

    @property
    def port(self) -> int:
        assert self._httpd is not None, "the server is not running"
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        """The base URL to give the client (`/chat/completions` is appended by it)."""
        return f"http://127.0.0.1:{self.port}/v1"

    def accepts(self, path: str) -> bool:
        """Whether a POST to `path` takes a scripted reply (others get 404)."""
        return path.split("?")[0].rstrip("/").endswith("/chat/completions")

    def script(self, *replies: ReplySource) -> None:
        """Queue replies, one per coming request, in order."""
        with self._lock:
            self._script.extend(replies)

    @property
    def bodies(self) -> list[Any]:
        """The JSON bodies received so far."""
        return [r.json for r in self.requests]

    @property
    def pending(self) -> int:
        """Scripted replies not yet used."""
        return len(self._script)

    def _next_reply(self, request: ReceivedRequest) -> Reply:
        with self._lock:
            self.requests.append(request)
            source = self._script.popleft() if self._script else self.default
        if source is None:
            return Reply.error(500, {"error": {"message": "ChatServer: no scripted reply left"}})
        return source(request) if callable(source) else source


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        """Clients hanging up (aborts, SDK closing error responses unread) are expected."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    chat_server: ChatServer

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        pass

    def do_GET(self) -> None:  # noqa: N802 - stdlib naming
        self._send_whole(Reply.error(404, {"error": {"message": f"no route GET {self.path}"}}))

    def do_POST(self) -> None:  # noqa: N802 - stdlib naming
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        headers = {k.lower(): v for k, v in self.headers.items()}
        request = ReceivedRequest("POST", self.path, headers, raw)
        if not self.chat_server.accepts(self.path):
            self.chat_server.requests.append(request)
            self._send_whole(Reply.error(404, {"error": {"message": f"no route POST {self.path}"}}))
            return
        reply = self.chat_server._next_reply(request)
        if reply.delay and self._wait(reply.delay):
            request._mark_disconnected()
            self.close_connection = True
            return
        if reply.body is not None:
            self._send_whole(reply)
            request.completed = True
        else:
            self._send_stream(reply, request)

    def _send_whole(self, reply: Reply) -> None:
        assert reply.body is not None
        self.send_response(reply.status)
        self.send_header("Content-Type", reply.content_type)
        self.send_header("Content-Length", str(len(reply.body)))
        for name, value in reply.headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(reply.body)
        self.wfile.flush()

    def _send_stream(self, reply: Reply, request: ReceivedRequest) -> None:
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.send_response(reply.status)
        self.send_header("Content-Type", reply.content_type)
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Cache-Control", "no-cache")
        for name, value in reply.headers.items():
            self.send_header(name, value)
        self.end_headers()
        try:
            for piece in reply.pieces:
                if isinstance(piece, Drop):
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                if isinstance(piece, Pause):
                    if self._wait(piece.seconds):
                        request._mark_disconnected()
                        self.close_connection = True
                        return
                    continue
                if piece:
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                    self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
            request.completed = True
        except (BrokenPipeError, ConnectionResetError):
            request._mark_disconnected()
            self.close_connection = True

    def _wait(self, seconds: float) -> bool:
        """Sleep up to `seconds`; True as soon as the client hangs up."""
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0 and not self.chat_server._closing.is_set():
            readable, _, _ = select.select([self.connection], [], [], min(left, 0.05))
            if readable:
                try:
                    if self.connection.recv(1, socket.MSG_PEEK) == b"":
                        return True
                except (ConnectionResetError, OSError):
                    return True
                time.sleep(min(left, 0.01))  # data from the client: not a hang-up
        return False


# -- chunk builders ------------------------------------------------------------------


def chunk(
    delta: dict[str, Any] | None = None,
    *,
    finish_reason: str | None = None,
    usage: dict[str, Any] | None = None,
    model: str = MODEL,
    **extra: Any,
) -> dict[str, Any]:
    """One `chat.completion.chunk` with a single choice (or none, for `delta=None` + usage)."""
    out: dict[str, Any] = {
        "id": "chatcmpl-test",
        "object": "chat.completion.chunk",
        "created": 1700000000,
        "model": model,
        "choices": []
        if delta is None and finish_reason is None
        else [{"index": 0, "delta": delta or {}, "finish_reason": finish_reason}],
    }
    if usage is not None:
        out["usage"] = usage
    out.update(extra)
    return out


def role_chunk() -> dict[str, Any]:
    """The first chunk OpenAI sends: the role and empty content."""
    return chunk({"role": "assistant", "content": ""})


def pieces_of(text: str, pieces: int | Sequence[int]) -> list[str]:
    """`text` cut into `pieces` near-equal parts, or at the given character offsets."""
    if isinstance(pieces, int):
        size = max(1, -(-len(text) // max(1, pieces)))
        cuts: list[int] = list(range(size, len(text), size))
    else:
        cuts = sorted(c for c in pieces if 0 < c < len(text))
    bounds = [0, *cuts, len(text)]
    return [text[a:b] for a, b in itertools.pairwise(bounds) if b > a]


def text_chunks(text: str, pieces: int | Sequence[int] = 3) -> list[dict[str, Any]]:
    return [chunk({"content": p}) for p in pieces_of(text, pieces)]


def reasoning_chunks(
    text: str, pieces: int | Sequence[int] = 2, field_name: str = "reasoning_content"
) -> list[dict[str, Any]]:
    """Thinking deltas: DeepSeek/llama.cpp send `reasoning_content`, Ollama `reasoning`."""
    return [chunk({field_name: p}) for p in pieces_of(text, pieces)]


def tool_call_chunks(
    index: int,
    call_id: str,
    name: str,
    arguments: str,
    pieces: int | Sequence[int] = 3,
) -> list[dict[str, Any]]:
    """A call as OpenAI streams it: id and name with empty arguments, then argument pieces."""
    first = {
        "index": index,
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": ""},
    }
    out = [chunk({"tool_calls": [first]})]
    for piece in pieces_of(arguments, pieces):
        out.append(chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}))
    return out


def interleave(*sequences: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Round-robin several chunk sequences (interleaved tool calls)."""
    out: list[dict[str, Any]] = []
    for group in itertools.zip_longest(*sequences):
        out.extend(c for c in group if c is not None)
    return out


def finish(reason: str = "stop") -> dict[str, Any]:
    return chunk({}, finish_reason=reason)


def usage_chunk(prompt: int, completion: int, cached: int = 0) -> dict[str, Any]:
    """The extra last chunk sent with `stream_options.include_usage` (no choices)."""
    usage: dict[str, Any] = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }
    if cached:
        usage["prompt_tokens_details"] = {"cached_tokens": cached}
    return chunk(None, usage=usage)


def sse(item: dict[str, Any] | str) -> bytes:
    """One SSE event: a chunk dict as raw UTF-8 JSON (as vLLM and Ollama send it), or raw text."""
    data = item if isinstance(item, str) else json.dumps(item, ensure_ascii=False)
    return f"data: {data}\n\n".encode()


def split_bytes(data: bytes, cuts: int | Sequence[int]) -> list[bytes]:
    """`data` cut every `cuts` bytes, or at the given byte offsets (anywhere, mid-character too)."""
    offsets = list(range(cuts, len(data), cuts)) if isinstance(cuts, int) else sorted(cuts)
    bounds = [0, *(o for o in offsets if 0 < o < len(data)), len(data)]
    return [data[a:b] for a, b in itertools.pairwise(bounds) if b > a]


def stream_reply(
    chunks: Sequence[dict[str, Any] | str | bytes],
    *,
    done: bool = True,
    cuts: int | Sequence[int] | None = None,
    gap: float = 0.0,
    then: Sequence[Piece] = (),
    headers: dict[str, str] | None = None,
) -> Reply:
    """A streamed reply: the chunks as SSE, optionally `[DONE]`, then `then` pieces.

    Args:
        chunks: chunk dicts, raw data strings, or raw bytes (sent as they are).
        done: end with `data: [DONE]`.
        cuts: cut the whole byte stream every N bytes or at these offsets; None sends
            one piece per event.
        gap: a pause between pieces (so they reach the client as separate reads).
        then: pieces appended at the end (e.g. `[Drop()]` or `[Pause(5)]`).
    """
    events = [c if isinstance(c, bytes) else sse(c) for c in chunks]
    if done:
        events.append(DONE)
    pieces: list[bytes] = events if cuts is None else split_bytes(b"".join(events), cuts)
    body: list[Piece] = []
    for i, piece in enumerate(pieces):
        if gap and i:
            body.append(Pause(gap))
        body.append(piece)
    return Reply(pieces=[*body, *then], headers=headers or {})


def completion(
    content: str | None = None,
    *,
    tool_calls: list[dict[str, Any]] | None = None,
    finish_reason: str = "stop",
    model: str = MODEL,
) -> dict[str, Any]:
    """A whole non-streamed `chat.completion` (for servers that ignore `stream: true`)."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = tool_calls
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 1700000000,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
    }
