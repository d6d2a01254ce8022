"""The proxy's HTTP plumbing: the listening socket, uvicorn without its signal handlers,
TLS settings made once, refusals every format's SDK reads, and noticing a client that
hangs up before its answer starts."""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import socket
import ssl
from collections.abc import Iterator

import anyio
import uvicorn
from starlette.requests import Request
from starlette.responses import Response

from workbench.proxy.exchange import Exchange, UpstreamCut
from workbench.proxy.guard import Refusal


class _QuietCuts(logging.Filter):
    """uvicorn reports a response body that raised; a cut (`UpstreamCut`) is meant."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
            exc = exc.exceptions[0]
        return not isinstance(exc, UpstreamCut)


logging.getLogger("uvicorn.error").addFilter(_QuietCuts())


async def watch_hang_up(request: Request, exchange: Exchange, scope: anyio.CancelScope) -> None:
    """Before the answer starts: a client that hangs up is gone (its body was read, so
    the next message it can send is the disconnect)."""
    message = await request.receive()
    if message.get("type") == "http.disconnect":
        exchange.gone = True
        if exchange.on_gone is not None:
            exchange.on_gone(exchange)
        scope.cancel()


class QuietServer(uvicorn.Server):
    """uvicorn, minus its signal handlers: Ctrl-C belongs to whoever runs the proxy
    (the headless loop stops it cleanly; in the app it is a key)."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


async def serve(server: uvicorn.Server, sock: socket.socket) -> None:
    await server.serve(sockets=[sock])


@functools.cache
def tls_context() -> ssl.SSLContext:
    """The upstream's TLS settings (httpx's defaults), made once: loading the system's
    certificates takes a noticeable part of a second."""
    return ssl.create_default_context()


def refuse(refusal: Refusal) -> Response:
    """An error every format's SDK reads: `error.message` (and `error.type`)."""
    body = {"error": {"message": refusal.message, "type": "workbench_proxy_error"}}
    return Response(json.dumps(body), refusal.status, media_type="application/json")


def bind(host: str, port: int) -> socket.socket:
    """The listening socket (an `OSError` says why it cannot be had, e.g. port in use)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    sock.setblocking(False)
    return sock
