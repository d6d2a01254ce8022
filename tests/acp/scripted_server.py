"""What the ACP tests' scripted model servers share: a threaded HTTP server on
127.0.0.1, the script of turns, the requests kept, and a hold a test releases.

Each request that offers tools (the agent's own loop) gets the next scripted turn;
any other request (a title, a quota check) gets a short text. A turn is a list of
blocks whose meaning each wire format's server gives (`{"text": ...}`,
`{"tool": NAME, "input": {...}}`, ...); `{"wait": True}` holds the response open
until `release()`. Every request body is kept in `requests`, the tool-offering ones
in `main_requests` too.
"""

from __future__ import annotations

import itertools
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Block = dict[str, Any]


class ScriptedServer:
    """A base: subclasses give `_handler` (the wire format) and `PATH` (the base URL's)."""

    PATH = ""

    def __init__(self, turns: list[list[Block]]) -> None:
        self.turns = list(turns)
        self.requests: list[dict[str, Any]] = []
        self.main_requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._release = threading.Event()
        self._ids = itertools.count(1)
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}{self.PATH}"

    def __enter__(self) -> Any:
        self.thread.start()
        return self

    def __exit__(self, *_exc: Any) -> None:
        self._release.set()
        self.server.shutdown()
        self.server.server_close()

    def release(self) -> None:
        self._release.set()

    def _next(self, body: dict[str, Any]) -> list[Block]:
        with self._lock:
            self.requests.append(body)
            if not body.get("tools"):
                return [{"text": "ok"}]
            self.main_requests.append(body)
            return self.turns.pop(0) if self.turns else [{"text": "(the script has ended)"}]

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        raise NotImplementedError
