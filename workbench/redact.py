"""The values of the keys the workbench knows, kept out of what it records and sends.

A command can print `$OPENAI_API_KEY` if the user passed it on (`--pass-env`), an
MCP server can echo its `Authorization` header: whatever a tool returns goes to the
model, the screen and the session file. A `Redactor` holds the secret values the
workbench was given (the provider's API key and headers, every MCP server's
headers and env, and the user's environment variables whose names say they are
secrets) and replaces them with `[REDACTED:NAME]`. The loop applies it to every
tool result and update (see `workbench.agent.result_limits`).

Printing a key whole is not the only way out: `cut -c1-16`, `rev`, `fold -w 4` or a
line cut in the middle give it back in pieces. So every run of `PIECE` characters
of a token-like secret, forwards or reversed, is redacted wherever it appears, and
whitespace (line breaks included) between its characters does not hide it. All the
pieces of all the secrets are matched in one pass (Aho-Corasick), so the cost is
linear in the text's length however many secrets there are. A `Redactor.stream()`
carries the end of each text into the next, for output that arrives in chunks.

What is not caught: a secret transformed beyond reversal and whitespace (base64,
hex, characters joined by other separators); that is why the workbench's own
environment no longer holds it (`workbench.secret_env`).
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ahocorasick_rs import AhoCorasick, MatchKind

from workbench.secret_env import SECRET_NAME, environment, hold_values

__all__ = [
    "CREDENTIAL_HEADERS",
    "MIN_LENGTH",
    "PIECE",
    "SECRET_NAME",
    "Redactor",
    "Secret",
    "is_credential_header",
    "known_secrets",
    "redactor_for",
]

CREDENTIAL_HEADERS = frozenset(
    {
        "authorization",
        "proxy-authorization",
        "api-key",
        "x-api-key",
        "openai-api-key",
        "x-goog-api-key",
        "x-portkey-api-key",
        "helicone-auth",
        "cookie",
        "set-cookie",
    }
)
"""HTTP headers (lower-case) that carry credentials: never recorded or shown, and their
values are cut out of error messages. `is_credential_header` also knows the rest of
the family (any header one of whose words is a key, token, secret, auth, ...)."""
_CREDENTIAL_WORDS = frozenset(
    {"key", "token", "secret", "auth", "authorization", "password", "passwd"}
    | {"cookie", "credential", "credentials", "signature", "session"}
)
MIN_LENGTH = 6
"""Shorter values are not redacted: they would match ordinary text."""
PIECE = 8
"""A run of this many characters of a token-like secret is redacted wherever it is."""
_WHITESPACE = re.compile(r"\s+")
_CARRY = 4096
"""Most characters of one chunk a stream keeps to join with the next."""


def is_credential_header(name: str) -> bool:
    """Whether the HTTP header `name` carries a credential (`Authorization`,
    `x-goog-api-key`, `helicone-auth`, `x-portkey-api-key`, `x-amz-security-token`...)."""
    lower = name.strip().lower()
    return lower in CREDENTIAL_HEADERS or any(
        word in _CREDENTIAL_WORDS for word in re.split(r"[-_]", lower)
    )


@dataclass(frozen=True)
class Secret:
    """A value to redact; `pieces` False: only the whole value (a setting that is not a
    credential, such as an MCP server's `LOG_LEVEL`, whose pieces are ordinary words).
    A path is always redacted whole only."""

    value: str
    pieces: bool = True


class Redactor:
    """Replaces known secret values, and every piece of them, in text. Call it with a string."""

    def __init__(self, secrets: Mapping[str, str | Secret]) -> None:
        names: dict[str, str] = {}
        """Pattern -> the name of the first secret it came from."""
        for name, secret in secrets.items():
            if isinstance(secret, str):
                secret = Secret(secret)
            if not isinstance(secret.value, str) or len(secret.value) < MIN_LENGTH:
                continue
            for pattern in _patterns(secret.value, secret.pieces):
                names.setdefault(pattern, name)
        self._patterns = list(names)
        self._names = list(names.values())
        self.longest = max(map(len, self._patterns), default=0)
        """Characters (without whitespace) of the longest pattern."""
        self._leftmost: Any = None
        self._every: Any = None
        if self._patterns:
            # leftmost-longest: a whole value wins over its pieces, and a text made of
            # secrets costs one match per secret, not one per piece
            self._leftmost = AhoCorasick(self._patterns, matchkind=MatchKind.LeftmostLongest)
            self._every = AhoCorasick(self._patterns)

    def __bool__(self) -> bool:
        return self.longest > 0

    def __call__(self, text: str) -> str:
        return self._replace(text, 0)

    def stream(self) -> Callable[[str], str]:
        """A redactor for texts that are chunks of one output, in order: a secret split
        between the end of one text and the start of the next is still found."""
        return _Stream(self)

    def spans(self, text: str, keep_from: int = 0) -> list[tuple[int, int, str]]:
        """(start, end, name) of each stretch of `text` to redact, in order, not touching.

        With `keep_from`, every match that crosses that index is found too (the
        leftmost-longest search could step over one that starts inside a match
        lying wholly before it)."""
        if not self.longest or not text:
            return []
        compact = "".join(text.split())
        found = self._leftmost.find_matches_as_indexes(compact)
        if keep_from:
            boundary = len("".join(text[:keep_from].split()))
            head = compact[: boundary + self.longest]
            found += [
                m
                for m in self._every.find_matches_as_indexes(head, overlapping=True)
                if m[1] < boundary < m[2]
            ]
        if not found:
            return []
        starts, removed = _whitespace_map(text)

        def original(index: int) -> int:
            return index + removed[bisect.bisect_right(starts, index)]

        spans: list[tuple[int, int, str]] = []
        if keep_from:  # the junction's matches join the leftmost ones, which are in order
            found.sort(key=lambda m: m[1])
        for pattern, first, last in found:
            start, stop = original(first), original(last - 1) + 1
            if spans and start <= spans[-1][1]:
                spans[-1] = (spans[-1][0], max(spans[-1][1], stop), spans[-1][2])
            else:
                spans.append((start, stop, self._names[pattern]))
        return spans

    def _replace(self, text: str, keep_from: int) -> str:
        """`text[keep_from:]` with every span of `text` that reaches into it replaced."""
        out: list[str] = []
        at = keep_from
        for start, stop, name in self.spans(text, keep_from):
            if stop <= keep_from:
                continue
            start = max(start, keep_from)
            out.append(text[at:start])
            out.append(f"[REDACTED:{name}]")
            at = stop
        if at == keep_from:
            return text[keep_from:] if keep_from else text
        out.append(text[at:])
        return "".join(out)


class _Stream:
    """`Redactor.stream()`: redacts each chunk with the end of the one before in view."""

    def __init__(self, redactor: Redactor) -> None:
        self.redactor = redactor
        self.carry = ""

    def __call__(self, text: str) -> str:
        joined = self.carry + text
        out = self.redactor._replace(joined, len(self.carry))  # noqa: SLF001 - one class's helper
        self.carry = _tail(joined, self.redactor.longest - 1)
        return out


def _tail(text: str, chars: int) -> str:
    """The end of `text` holding its last `chars` characters that are not whitespace."""
    if chars <= 0:
        return ""
    seen = 0
    for at in range(len(text) - 1, max(-1, len(text) - 1 - _CARRY), -1):
        if not text[at].isspace():
            seen += 1
            if seen == chars:
                return text[at:]
    return text[-_CARRY:]


def _whitespace_map(text: str) -> tuple[list[int], list[int]]:
    """For mapping an index of `text` without whitespace back to `text`: the compact
    index where each run of whitespace stood, and how much was removed before it."""
    runs = [match.span() for match in _WHITESPACE.finditer(text)]
    removed = [0, *itertools.accumulate(end - start for start, end in runs)]
    starts = [start - before for (start, _end), before in zip(runs, removed, strict=False)]
    return starts, removed


def _patterns(value: str, pieces: bool) -> Iterable[str]:
    """What to search for (whitespace removed): the value whole, forwards and reversed,
    and (with `pieces`, unless the value is a path) every `PIECE` characters of each of
    its words, forwards and reversed."""
    whole = "".join(value.split())
    if not whole:
        return
    yield whole
    yield whole[::-1]
    if not pieces or _looks_like_path(value):
        return
    for word in value.split():
        for at in range(len(word) - PIECE + 1):
            piece = word[at : at + PIECE]
            yield piece
            yield piece[::-1]


def _looks_like_path(value: str) -> bool:
    """A file path (`SSH_KEY=/home/me/.ssh/id_ed25519`): redacted whole, never by pieces,
    which would hide every path under the same directory."""
    return value.startswith(("/", "~/", "./", "../")) or bool(re.match(r"^[A-Za-z]:[\\/]", value))


def known_secrets(
    provider_settings: Any = None,
    mcp_servers: Iterable[Any] = (),
    environ: Mapping[str, str] | None = None,
) -> dict[str, str | Secret]:
    """Name -> value of every secret the workbench was given or can see (`environ`:
    the workbench's environment with what start-up moved out of it)."""
    env = environment() if environ is None else environ
    found: dict[str, str | Secret] = {
        name: value for name, value in env.items() if SECRET_NAME.search(name)
    }
    if provider_settings is not None:
        key = getattr(provider_settings, "api_key", None)
        if key is not None:
            found["api_key"] = key.get_secret_value()
        for header, value in (getattr(provider_settings, "extra_headers", None) or {}).items():
            found.update(_header(f"header {header}", header, value))
    for server in mcp_servers:
        for header, value in server.headers.items():
            found.update(_header(f"{server.name} header {header}", header, value))
        for name, value in server.env.items():
            found[f"{server.name} env {name}"] = Secret(value, bool(SECRET_NAME.search(name)))
    return found


def _header(name: str, header: str, value: str) -> dict[str, str | Secret]:
    """A header's value (by pieces if it carries a credential), and the token of an
    `Authorization: Bearer TOKEN`-style value on its own too."""
    credential = is_credential_header(header)
    found: dict[str, str | Secret] = {}
    scheme, _, token = value.partition(" ")
    if scheme and token:  # first: its pieces are named after the token, not the header
        found[f"{name} token"] = Secret(token, credential)
    found[name] = Secret(value, credential)
    return found


def redactor_for(provider_settings: Any = None, mcp_servers: Iterable[Any] = ()) -> Redactor | None:
    """A `Redactor` for what this run knows, or None when there is nothing to redact.

    The provider's key and credential headers are also moved out of the process's
    environment, whatever the variable that held them was called (`secret_env`)."""
    secrets = known_secrets(provider_settings, mcp_servers)
    provider = known_secrets(provider_settings, environ={})
    hold_values(s.value if isinstance(s, Secret) else s for s in provider.values())
    redactor = Redactor(secrets)
    return redactor if redactor else None
