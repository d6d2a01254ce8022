"""Who may use the proxy, and which paths it serves: no I/O here.

The proxy spends the upstream's key, so it answers only this machine's programs:
the `Host` must be a loopback name (or the address it was told to listen on) with
the proxy's port, which a web page reaching it by DNS rebinding cannot send; a
request with an `Origin` is a browser's and is refused (the proxy has no CORS at
all); a body sent to a JSON endpoint must say it is JSON, so no form or
`text/plain` "simple request" a page can send without asking gets through; and
with `--token`, the token must come as the client's key.

Paths are normalised before anything is decided (`/v1/./chat/completions`,
`//v1/chat/completions` and `%2e` segments are the same path to the upstream),
and the normalised path is the one forwarded.
"""

from __future__ import annotations

import fnmatch
import hmac
import ipaddress
import posixpath
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from urllib.parse import unquote

KEY_HEADERS = frozenset(
    {"authorization", "x-api-key", "x-goog-api-key", "api-key", "openai-api-key"}
)
"""Where each format's clients send their key: replaced by the upstream's key."""
GATEWAY_KEY_HEADERS = frozenset(
    {
        "helicone-auth",
        "x-portkey-api-key",
        "x-portkey-virtual-key",
        "cf-aig-authorization",
        "x-litellm-api-key",
        "x-goog-user-project",
        "proxy-authorization",
    }
)
"""Keys for gateways in front of a model (forwarded, never recorded)."""
SECRET_WORDS = ("key", "token", "secret", "auth", "cookie", "password", "signature")
"""Header names holding one of these are never recorded, whatever the gateway."""


@dataclass(frozen=True)
class Refusal:
    status: int
    message: str


def is_loopback(host: str) -> bool:
    """Whether `host` is reachable from this machine only."""
    if host.lower() in ("localhost", "localhost."):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def split_host(value: str) -> tuple[str, int | None]:
    """`Host` header -> (name, port); port None when absent or not a number."""
    if value.startswith("["):
        name, _, rest = value[1:].partition("]")
        port = rest[1:] if rest.startswith(":") else ""
    else:
        name, _, port = value.rpartition(":") if ":" in value else (value, "", "")
    return name, int(port) if port.isdigit() else None


def check_request(
    headers: Mapping[str, str],
    *,
    port: int | None,
    bound_host: str,
    token: str | None,
) -> Refusal | None:
    """Why this request may not use the proxy (None: it may)."""
    if "origin" in headers:
        return Refusal(
            403,
            "The workbench proxy refuses requests from web pages (this request has an Origin "
            "header); point a program, not a browser, at it",
        )
    name, got_port = split_host(headers.get("host", ""))
    host_ok = is_loopback(name) or (name == bound_host.strip("[]") and bool(name))
    if not host_ok or got_port != port:
        return Refusal(
            421,
            f"The workbench proxy answers only requests addressed to it on this machine "
            f"(Host {headers.get('host', '')!r} is not localhost:{port})",
        )
    if token is not None and not _has_token(headers, token):
        return Refusal(
            401,
            "The workbench proxy was started with --token: send that token as the API key",
        )
    return None


def _has_token(headers: Mapping[str, str], token: str) -> bool:
    for name in KEY_HEADERS:
        value = headers.get(name, "")
        if name == "authorization" and value.lower().startswith("bearer "):
            value = value[7:]
        if value and hmac.compare_digest(value.strip().encode(), token.encode()):
            return True
    return False


def check_json_body(content_type: str | None) -> Refusal | None:
    """A judged endpoint's body must be declared JSON."""
    media = (content_type or "").split(";")[0].strip().lower()
    if media == "application/json" or (
        media.startswith("application/") and media.endswith("+json")
    ):
        return None
    return Refusal(
        415,
        f"The workbench proxy takes only JSON bodies here (Content-Type {media or 'missing'!r})",
    )


def normal_path(path: str) -> str:
    """The path as the upstream will take it: decoded, dot segments and doubled slashes gone."""
    decoded = unquote(path)
    for _ in range(3):  # %252e -> %2e -> .
        again = unquote(decoded)
        if again == decoded:
            break
        decoded = again
    out = posixpath.normpath("/" + decoded.lstrip("/"))
    if out.startswith("//"):
        out = "/" + out.lstrip("/")
    return out + ("/" if decoded.endswith("/") and out != "/" else "")


def matches_any(path: str, globs: Sequence[str]) -> bool:
    return any(fnmatch.fnmatchcase(path, g) for g in globs)


def recorded_headers(items: Iterable[tuple[str, str]], hop: frozenset[str]) -> dict[str, str]:
    """The headers worth recording: no key of any kind, no hop-by-hop ones."""
    from workbench.redact import CREDENTIAL_HEADERS

    out = {}
    for name, value in items:
        low = name.lower()
        if low in hop or low in CREDENTIAL_HEADERS or low in KEY_HEADERS:
            continue
        if low in GATEWAY_KEY_HEADERS or any(w in low for w in SECRET_WORDS):
            continue
        out[name] = value
    return out


def forwarded_headers(
    items: Iterable[tuple[str, str]], hop: frozenset[str], *, keep_key: bool = False
) -> dict[str, str]:
    """The client's headers as forwarded: its own key goes unless `keep_key` (the
    upstream's replaces it); gateway keys stay, since the gateway needs them."""
    return {
        name: value
        for name, value in items
        if name.lower() not in hop
        and (keep_key or name.lower() not in KEY_HEADERS)
        and name.lower() not in ("cookie", "origin", "referer")
    }
