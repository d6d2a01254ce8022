"""The proxy: an OpenAI-compatible HTTP server in front of an upstream one.

Starlette and uvicorn serve it (both already installed with the `mcp` package),
and httpx (`httpx2`, the one the `openai` SDK uses) talks to the upstream.
`POST /v1/chat/completions` goes through a conversation (`workbench.proxy.conversation`);
every other path (`/v1/models`, embeddings, ...) is passed through as it is.
The upstream's key replaces whatever credentials the agent sent; no key is ever
recorded (request events carry the agent's headers with credentials removed).

Requests are grouped into conversations: a request belongs to the conversation
whose known messages (its last request's, then the reply the agent received) it
starts with, the longest such one, and among equals the one whose waiting calls
it answers. A request that extends none starts a new conversation.
"""

from __future__ import annotations

import contextlib
import json
import socket
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import anyio
import httpx2
import uvicorn
from starlette.applications import Starlette
from starlette.background import BackgroundTask
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from workbench.json_text import LINE_DEPTH, loads
from workbench.oversight import Oversight
from workbench.permissions import CallPattern, Rule, load_rules
from workbench.permissions.rules import RULES_FILE, display_path
from workbench.proxy.conversation import Conversation
from workbench.proxy.exchange import Exchange
from workbench.proxy.formats import format_for, tool_less
from workbench.proxy.guard import (
    Refusal,
    check_json_body,
    check_request,
    forwarded_headers,
    matches_any,
    normal_path,
    recorded_headers,
)
from workbench.proxy.listen import QuietServer, bind, refuse, serve, tls_context, watch_hang_up
from workbench.proxy.wire import HOP_HEADERS
from workbench.stepper import Breakpoint, Stepper

NO_RULE = "proxy default: no rule matched"
"""The source named when the proxy's own catch-all rule lets a call through."""
UNJUDGED_LOG = "proxy-unjudged.log"
"""Where requests forwarded without judging are noted (JSON lines, in the session folder)."""
METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "HEAD"]


@dataclass
class ProxyOptions(Oversight):
    """Everything `workbench proxy` can be configured with (its flags, as data); the
    gate's and the stepper's options (`approve`, `allow`, `step`, ...) are `Oversight`'s."""

    upstream: str
    """The upstream's base URL, e.g. https://api.openai.com/v1."""
    api_key: str | None = None
    """The upstream's key (sent as a bearer token; never recorded)."""
    host: str = "127.0.0.1"
    port: int = 8765
    """0: any free port (`Proxy.port` says which)."""
    record: bool = True
    session_dir: Path | None = None
    """Where each conversation's session file goes (default: the user's data directory)."""
    capture_chunks: bool = True
    """Keep every upstream chunk for the network view and the session."""
    workspace: Path | None = None
    """Named in the sessions, and where `.workbench/rules.toml` is read (default: cwd)."""
    token: str | None = None
    """When set, a client must send it as its API key (`--token`)."""
    keepalive: float = 10.0
    """Seconds between keep-alives while a response waits for a decision (0: none)."""
    retry_grace: float = 60.0
    """How long a conversation whose client hung up waits for the client's retry."""
    pass_through: list[str] = field(default_factory=list)
    """Globs of paths forwarded without judging (`--pass-through`), shown and recorded."""


class Proxy:
    def __init__(self, options: ProxyOptions) -> None:
        self.options = options
        self.upstream = options.upstream.rstrip("/")
        if not self.upstream.startswith(("http://", "https://")):
            raise ValueError(f"--upstream {options.upstream!r} is not an http(s) URL")
        if urlsplit(self.upstream).password is not None:
            raise ValueError(
                "--upstream holds a password: put the key in an environment variable "
                "(--api-key-env)"
            )
        self.workspace = (options.workspace or Path.cwd()).resolve()
        file = options.rules_file or self.workspace / RULES_FILE
        self.rules = load_rules(
            self.workspace,
            rules_file=file,
            allow=options.allow,
            ask=options.ask,
            deny=options.deny,
            defaults=False,
        )
        # Without a rule, a foreign call goes through: the proxy watches by default.
        # First and least specific, so every other rule that matches beats it.
        self.rules.rules.insert(0, Rule(CallPattern("*"), "allow", NO_RULE))
        self.rules_file = file
        self.rules_file_display = display_path(file, self.workspace)
        self.breakpoints: dict[str, Breakpoint] = {}
        """The breakpoints every conversation's stepper shares (the app edits them)."""
        for text in options.breakpoints:
            bp = Breakpoint.parse(text)  # a bad breakpoint fails now, not at the first request
            self.breakpoints[bp.text] = bp
        self.conversations: list[Conversation] = []
        self.unjudged: list[dict[str, Any]] = []
        """Requests forwarded without judging (`--pass-through`)."""
        self.on_unjudged: list[Callable[[dict[str, Any]], Any]] = []
        self.on_conversation: list[Callable[[Conversation], Any]] = []
        """Called with each new conversation before its first event (the app, the printer)."""
        self.client: httpx2.AsyncClient | None = None
        self.port: int | None = None
        self._tg: Any = None
        self._timers: Any = None
        self._socket: socket.socket | None = None

    # -- conversations -------------------------------------------------------------

    def route(self, exchange: Exchange) -> Conversation:
        """The conversation `exchange` continues (a new one if none), which then takes it."""
        for conv in self.conversations:
            if conv.retry_of(exchange):
                assert conv.inflight is not None
                exchange.on_gone = conv.client_gone
                conv.inflight.last.adopt(exchange)
                return conv
        best: Conversation | None = None
        best_score = (-1, -1)
        previous = exchange.format.continues_from(exchange.body)
        for conv in self.conversations if previous else ():
            if not conv.busy and conv.format is exchange.format and previous in conv.by_id:
                exchange.join_by_id(conv.known, conv.by_id[previous])
                conv.deliver(exchange)
                return conv
        answered = {
            m.get("tool_call_id")
            for m in exchange.messages
            if isinstance(m, dict) and m.get("role") == "tool"
        }
        for conv in self.conversations:
            n = len(conv.known)
            if conv.busy or not n or conv.format is not exchange.format:
                continue
            if exchange.keys[:n] != conv.known or (
                conv.after_failure and exchange.keys != conv.known
            ):
                continue
            score = (n, sum(1 for i in conv.unanswered if i in answered))
            if score >= best_score:
                best, best_score = conv, score
        if best is None:
            best = Conversation(self, len(self.conversations) + 1, exchange)
            self.conversations.append(best)
            for callback in self.on_conversation:
                callback(best)
        best.deliver(exchange)
        return best

    def must_hold(self, tool_name: str, stepper: Stepper | None) -> bool:
        """Whether a rule or a breakpoint could stop a call of `tool_name` (whatever its
        arguments): only then does a streamed response wait from that call on."""
        if not tool_name or (stepper is not None and stepper.enabled):
            return True
        for rule in self.rules:
            if rule.action != "allow" and CallPattern(rule.pattern.tool).matches(tool_name, {}):
                return True
        return any(
            bp.pattern is not None and CallPattern(bp.pattern.tool).matches(tool_name, {})
            for bp in (stepper.breakpoints if stepper is not None else ())
        )

    def start_recording(self, conv: Conversation) -> Any:
        if not self.options.record:
            return None
        from workbench.sessions.header import default_session_path
        from workbench.sessions.recorder import start_recording

        label = f"proxy-{conv.number}-{conv.agent.state.model.id}"
        path = default_session_path(label, self.options.session_dir)
        return start_recording(conv.agent, workspace=self.workspace, path=path)

    async def publish(self, conv: Conversation, event: Any) -> None:
        await conv.agent.publish(event)

    def start_soon(self, fn: Callable[..., Any], *args: Any) -> None:
        assert self._tg is not None, "the proxy is not running"
        self._tg.start_soon(fn, *args)

    def start_timer(self, fn: Callable[..., Any], *args: Any) -> None:
        """Run `fn` (a keep-alive, a grace period) until it ends or the proxy stops."""
        assert self._timers is not None, "the proxy is not running"
        self._timers.start_soon(fn, *args)

    def upstream_headers(
        self, agent_headers: dict[str, str], style: str = "bearer"
    ) -> dict[str, str]:
        """The agent's headers (its key already removed) plus the upstream's key, sent the
        way the format's clients send theirs (`style`: bearer, x-api-key, x-goog-api-key)."""
        headers = dict(agent_headers)
        headers["accept-encoding"] = "identity"  # chunks are copied as they are read
        if self.options.api_key:
            if style == "bearer":
                headers["authorization"] = f"Bearer {self.options.api_key}"
            else:
                headers[style] = self.options.api_key
        return headers

    # -- HTTP --------------------------------------------------------------------------

    def asgi(self) -> Starlette:
        return Starlette(routes=[Route("/{path:path}", self._handle, methods=METHODS)])

    async def _handle(self, request: Request) -> Response:
        headers = {k.lower(): v for k, v in request.headers.items()}
        refusal = check_request(
            headers, port=self.port, bound_host=self.options.host, token=self.options.token
        )
        if refusal is not None:
            return refuse(refusal)
        raw_path = request.scope.get("raw_path") or request.url.path.encode()
        path = normal_path(raw_path.decode("latin-1").split("?")[0])
        sub = path[3:] if path == "/v1" or path.startswith("/v1/") else path
        raw = await request.body()
        fmt = format_for(request.method, sub.rstrip("/"))
        if fmt is not None:
            refusal = check_json_body(headers.get("content-type"))
            if refusal is not None:
                return refuse(refusal)
            try:
                body = loads(raw, LINE_DEPTH)
            except ValueError:
                body = None
            if not fmt.is_request(body):
                return refuse(Refusal(400, f"Not a {fmt.title} request"))
            query = f"?{request.url.query}" if request.url.query else ""
            return await self._chat(
                request,
                Exchange(
                    body,
                    raw,
                    recorded_headers(request.headers.items(), HOP_HEADERS),
                    self.forwarded(request),
                    wire_format=fmt,
                    url=self.upstream + sub.rstrip("/") + query,
                    path=sub.rstrip("/"),
                ),
            )
        style = tool_less(request.method, sub.rstrip("/"))
        if style is not None:
            return await self._pass_through(request, sub, raw, style)
        if matches_any(path, self.options.pass_through):
            self.note_unjudged(request.method, path, headers)
            return await self._pass_through(request, sub, raw)
        return refuse(
            Refusal(
                404,
                f"The workbench proxy does not judge {request.method} {path}, so it does not "
                "forward it (pass --pass-through GLOB to forward such paths unjudged)",
            )
        )

    def forwarded(self, request: Request) -> dict[str, str]:
        """The client's headers as sent upstream: its own key only when the proxy has none
        to put in its place (and no --token took the key's place)."""
        keep = not self.options.api_key and self.options.token is None
        return forwarded_headers(request.headers.items(), HOP_HEADERS, keep_key=keep)

    def note_unjudged(self, method: str, path: str, headers: dict[str, str]) -> None:
        """Show and record a request forwarded without judging it (`--pass-through`)."""
        entry = {
            "time": time.time(),
            "method": method,
            "path": path,
            "headers": recorded_headers(headers.items(), HOP_HEADERS),
        }
        self.unjudged.append(entry)
        for callback in self.on_unjudged:
            callback(entry)
        if self.options.record:
            from workbench.sessions.header import default_session_dir

            directory = self.options.session_dir or default_session_dir()
            directory.mkdir(parents=True, exist_ok=True)
            with open(directory / UNJUDGED_LOG, "a", encoding="utf-8") as out:
                out.write(json.dumps(entry, ensure_ascii=False) + "\n")

    async def _chat(self, request: Request, exchange: Exchange) -> Response:
        self.route(exchange)
        if not exchange.ready.is_set():
            async with anyio.create_task_group() as tg:

                async def ready() -> None:
                    await exchange.ready.wait()
                    tg.cancel_scope.cancel()

                tg.start_soon(ready)
                tg.start_soon(watch_hang_up, request, exchange, tg.cancel_scope)
        if exchange.gone:
            return Response(status_code=499)  # nobody reads it
        if exchange.whole is not None:
            return Response(exchange.whole, exchange.status, media_type=exchange.media_type)
        return StreamingResponse(
            exchange.pieces(),
            exchange.status,
            media_type=exchange.media_type,
            headers={"cache-control": "no-cache"},
        )

    async def _pass_through(
        self, request: Request, sub: str, raw: bytes, style: str = "bearer"
    ) -> Response:
        assert self.client is not None
        url = self.upstream + sub + (f"?{request.url.query}" if request.url.query else "")
        upstream = self.client.build_request(
            request.method,
            url,
            content=raw,
            headers=self.upstream_headers(self.forwarded(request), style),
        )
        try:
            response = await self.client.send(upstream, stream=True)
        except httpx2.HTTPError as exc:
            message = f"The workbench proxy could not reach {self.upstream}: {exc}"
            return refuse(Refusal(502, message))
        return StreamingResponse(
            response.aiter_raw(),
            response.status_code,
            headers={
                k: v
                for k, v in response.headers.items()
                if k.lower() not in HOP_HEADERS and not k.lower().startswith("access-control-")
            },
            background=BackgroundTask(response.aclose),
        )

    # -- running -------------------------------------------------------------------------

    def bind(self) -> socket.socket:
        """Take the listening socket now (`running` does, if not done before).

        Raises:
            OSError: the address cannot be had (the port is in use, ...).
        """
        if self._socket is None:
            self._socket = bind(self.options.host, self.options.port)
            self.port = self._socket.getsockname()[1]
        return self._socket

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[Proxy]:
        """Listen (and forward) until the block ends; then flag every call still waiting
        for its result, end each conversation's run and close its session."""
        sock = self.bind()
        config = uvicorn.Config(
            self.asgi(),
            log_level="warning",
            access_log=False,
            lifespan="off",
            timeout_graceful_shutdown=1,
        )
        server = QuietServer(config)
        timeout = httpx2.Timeout(connect=10.0, read=None, write=30.0, pool=10.0)
        try:
            async with (
                httpx2.AsyncClient(timeout=timeout, verify=tls_context()) as client,
                anyio.create_task_group() as tg,
                anyio.create_task_group() as timers,
            ):
                self.client, self._tg, self._timers = client, tg, timers
                tg.start_soon(serve, server, sock)
                try:
                    yield self
                finally:
                    for conv in self.conversations:
                        conv.stop()
                    server.should_exit = True
                    with anyio.move_on_after(3):
                        for conv in self.conversations:
                            await conv.agent.wait_for_idle()
                    timers.cancel_scope.cancel()
        finally:
            sock.close()
            self._socket = None
            for conv in self.conversations:
                if conv.recorder is not None:
                    conv.recorder.close()

    @property
    def url(self) -> str:
        host = self.options.host
        shown = f"[{host}]" if ":" in host else host
        return f"http://{shown}:{self.port}/v1"
