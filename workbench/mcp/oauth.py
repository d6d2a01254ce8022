"""OAuth 2.1 for HTTP MCP servers: the authorization-code flow with PKCE.

The MCP SDK's `OAuthClientProvider` does the protocol. On a 401 it finds the protected
resource's metadata (from the answer's `WWW-Authenticate`, else
`/.well-known/oauth-protected-resource`), then its authorization server's
(`/.well-known/oauth-authorization-server`), registers the workbench as a client there
(dynamic client registration), builds the authorization URL with a PKCE challenge,
exchanges the code for tokens and refreshes them when they expire.

Here is what the SDK leaves to its client:

- **the person**: the authorization URL is handed to `on_url` (the app shows it, a
  headless run prints it); the server's start timeout stops while the person is away;
- **the redirect**: a listener on 127.0.0.1 (RFC 8252 §7.3, loopback redirect) that takes
  the one redirect carrying this authorization's `state` and answers the browser with a
  page saying it can be closed; the port is the one the client was registered with, so a
  stored registration stays valid from run to run;
- **the tokens**: kept in a 0600 file of their own (`oauth_tokens`), never in a session.
"""

from __future__ import annotations

import socket
from collections.abc import Callable
from urllib.parse import parse_qs, urlsplit

import anyio
import h11
from anyio.abc import SocketListener, SocketStream
from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider, OAuthFlowError
from mcp.shared.auth import OAuthClientMetadata

from workbench.mcp.oauth_tokens import TokenFile

CALLBACK_PATH = "/callback"
REQUEST_BYTES = 64 * 1024
"""The most a browser's request to the listener may be (its headers): more is refused."""
CONNECTION_SECONDS = 10.0
"""How long one connection to the listener may take to send its request."""

_DONE = b"""<!doctype html><meta charset="utf-8"><title>Agent Workbench</title>
<p>Authorization received. You can close this tab and go back to the workbench.</p>"""
_FAILED = b"""<!doctype html><meta charset="utf-8"><title>Agent Workbench</title>
<p>The authorization server refused. The workbench says why.</p>"""


class RedirectListener:
    """The loopback endpoint the authorization server sends the browser back to.

    The port is taken at once (so the redirect URI can be registered before the person
    is asked) and listened on only while an authorization waits.

    Raises:
        OSError: `port` cannot be bound.
    """

    def __init__(self, port: int = 0) -> None:
        self._socket: socket.socket | None = self._bind(port)
        self.port: int = self._socket.getsockname()[1]

    @staticmethod
    def _bind(port: int) -> socket.socket:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            sock.close()
            raise
        return sock

    @property
    def redirect_uri(self) -> str:
        return f"http://127.0.0.1:{self.port}{CALLBACK_PATH}"

    def close(self) -> None:
        if self._socket is not None:
            self._socket.close()
            self._socket = None

    async def wait(self, state: str | None) -> AuthorizationCodeResult:
        """Listen until the browser comes back with this authorization's `state`.

        Raises:
            OAuthFlowError: the authorization server sent an error instead of a code.
        """
        sock = self._socket if self._socket is not None else self._bind(self.port)
        self._socket = None
        sock.listen(8)
        listener = await SocketListener.from_socket(sock)
        outcome: list[AuthorizationCodeResult | OAuthFlowError] = []
        async with listener, anyio.create_task_group() as tg:

            async def answer(stream: SocketStream) -> None:
                async with stream:
                    with anyio.move_on_after(CONNECTION_SECONDS):
                        got = await _answer(stream, state)
                        if got is not None:
                            outcome.append(got)
                            tg.cancel_scope.cancel()

            async def accept() -> None:
                while True:
                    tg.start_soon(answer, await listener.accept())

            tg.start_soon(accept)
        self._socket = self._bind(self.port)  # kept for a later authorization
        if isinstance(outcome[0], OAuthFlowError):
            raise outcome[0]
        return outcome[0]


async def _answer(
    stream: SocketStream, state: str | None
) -> AuthorizationCodeResult | OAuthFlowError | None:
    """Read one request: the redirect with `state` gives its code (or error); anything
    else is answered 404 or 400 and gives None."""
    connection = h11.Connection(h11.SERVER)
    received = 0
    while True:
        event = connection.next_event()
        if event is h11.NEED_DATA:
            try:
                data = await stream.receive(4096)
            except (anyio.EndOfStream, anyio.BrokenResourceError):
                return None
            received += len(data)
            if received > REQUEST_BYTES:
                return None
            connection.receive_data(data)
            continue
        if isinstance(event, h11.Request):
            break
        return None
    target = urlsplit(event.target.decode("ascii", "replace"))
    query = {key: values[0] for key, values in parse_qs(target.query).items()}
    outcome: AuthorizationCodeResult | OAuthFlowError | None = None
    if target.path != CALLBACK_PATH:
        status, body = 404, b"Not found"
    elif state is not None and query.get("state") != state:
        status, body = 400, b"This is not the authorization the workbench is waiting for."
    elif "error" in query:
        why = query.get("error_description") or query["error"]
        status, body = 200, _FAILED
        outcome = OAuthFlowError(f"the authorization server refused: {why}")
    elif "code" in query:
        status, body = 200, _DONE
        outcome = AuthorizationCodeResult(
            code=query["code"], state=query.get("state"), iss=query.get("iss")
        )
    else:
        status, body = 400, b"No authorization code in this request."
    kind = "text/html" if body.startswith(b"<!doctype") else "text/plain"
    head = h11.Response(
        status_code=status,
        headers=[
            ("content-type", f"{kind}; charset=utf-8"),
            ("content-length", str(len(body))),
            ("connection", "close"),
            ("cache-control", "no-store"),
        ],
    )
    try:
        for part in (head, h11.Data(data=body), h11.EndOfMessage()):
            await stream.send(connection.send(part) or b"")
    except (anyio.BrokenResourceError, anyio.ClosedResourceError):
        pass  # the browser went away; the code it brought still counts
    return outcome


class Authorization:
    """OAuth for one HTTP server while it is connected (`provider` goes to httpx).

    Args:
        server_url: the MCP endpoint.
        on_url: told the authorization URL when a person must open it.
        on_wait: told True while the flow waits for the person, False once they are back.
        tokens: where the tokens are kept (default: the server's file in `tokens_dir()`).
    """

    def __init__(
        self,
        server_url: str,
        on_url: Callable[[str], None],
        on_wait: Callable[[bool], None],
        tokens: TokenFile | None = None,
    ) -> None:
        self.tokens = tokens or TokenFile(server_url)
        self._on_url, self._on_wait = on_url, on_wait
        self._state: str | None = None
        self.listener = self._listener()
        self.provider = OAuthClientProvider(
            server_url=server_url,
            client_metadata=OAuthClientMetadata(
                client_name="Agent Workbench",
                redirect_uris=[self.listener.redirect_uri],  # type: ignore[list-item]
                grant_types=["authorization_code", "refresh_token"],
                response_types=["code"],
                token_endpoint_auth_method="none",
            ),
            storage=self.tokens,
            redirect_handler=self._redirect,
            callback_handler=self._callback,
        )

    def _listener(self) -> RedirectListener:
        """On the port of the stored registration if it is free; else on a new port,
        and the stored client (registered for the old one) is forgotten."""
        registered = self.tokens.registered_redirect()
        port = urlsplit(registered).port if registered else None
        if port:
            try:
                return RedirectListener(port)
            except OSError:
                pass
        listener = RedirectListener()
        if registered is not None:
            self.tokens.forget_client()
        return listener

    async def _redirect(self, url: str) -> None:
        self._state = parse_qs(urlsplit(url).query).get("state", [None])[0]
        self._on_wait(True)
        self._on_url(url)

    async def _callback(self) -> AuthorizationCodeResult:
        try:
            return await self.listener.wait(self._state)
        finally:
            self._on_wait(False)

    def close(self) -> None:
        self.listener.close()
