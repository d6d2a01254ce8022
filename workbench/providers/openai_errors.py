"""What went wrong with a request to an OpenAI-compatible server, in words.

Every failure of a request becomes one readable message (with the HTTP status when
there was one): the server's own error text, what to check, and whether the SDK had
already retried. Keys and auth-bearing headers are cut out before a message leaves the
provider (`redact`).
"""

from __future__ import annotations

from typing import Any

import anyio
import openai

from workbench.providers.openai_stream import StreamError, error_text
from workbench.providers.settings import OpenAISettings
from workbench.redact import is_credential_header

try:  # openai>=3 is built on httpx2; earlier versions on httpx
    import httpx2 as httpx
except ImportError:  # pragma: no cover
    import httpx  # type: ignore[no-redef,import-not-found,unused-ignore]

_STATUS_NAMES = {
    400: "Bad request",
    401: "Authentication failed",
    403: "Permission denied",
    404: "Not found",
    408: "Request timeout",
    413: "Request too large",
    422: "Unprocessable request",
    429: "Rate limited",
}
_STATUS_HINTS = {
    401: " Check the API key (--api-key, OPENAI_API_KEY or the profile's api_key_env).",
    404: " Check --base-url (it usually ends in /v1) and --model.",
}


def _empty_hint(tool_choice: str | None) -> str:
    """What to try after an empty response, knowing the request's tool_choice."""
    if tool_choice not in (None, "auto"):
        return f". The request set tool_choice={tool_choice!r}: try --tool-choice auto."
    said = "auto" if tool_choice == "auto" else "left unset"
    return f". The request's tool_choice was {said}; the server's own log says why."


def describe_error(
    exc: BaseException, settings: OpenAISettings, chunks_read: int = 0
) -> tuple[str, int | None]:
    """A readable message for any failure of a request, and the HTTP status if there was one."""
    url = settings.chat_completions_url
    if isinstance(exc, StreamError):
        text = str(exc)
        if text.startswith("Empty response"):
            text += _empty_hint(settings.tool_choice)
        return text, None
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        kind = _STATUS_NAMES.get(status) or ("Server error" if status >= 500 else "HTTP error")
        server_says = error_text(exc.body) if exc.body is not None else "(no body)"
        text = f"{kind} (HTTP {status}) from {url}: {server_says}"
        if settings.max_retries and _sdk_retries(exc.response):
            text += f" (still failing after {settings.max_retries} retries)"
        return text + _STATUS_HINTS.get(status, ""), status
    if isinstance(exc, openai.APITimeoutError):
        return f"Request timed out: no response from {url} within {settings.timeout:g}s", None
    if isinstance(exc, openai.APIConnectionError):
        cause = exc.__cause__ or exc
        return f"Could not connect to {url}: {_exception_text(cause)}. Is the server running?", None
    if isinstance(exc, httpx.TimeoutException):
        return (
            f"Timed out mid-stream: no data from {url} for {settings.timeout:g}s "
            f"after {chunks_read} chunk(s)",
            None,
        )
    if isinstance(exc, (httpx.HTTPError, httpx.StreamError, OSError, anyio.EndOfStream)):
        return (
            f"Connection lost mid-stream after {chunks_read} chunk(s): {_exception_text(exc)}",
            None,
        )
    if isinstance(exc, openai.OpenAIError):
        return f"OpenAI client error: {_exception_text(exc)}", None
    return f"Unexpected error talking to {url}: {_exception_text(exc)}", None


def redact(text: str, settings: OpenAISettings) -> str:
    """`text` with the API key and any auth-bearing header value replaced by `***`.

    Some servers echo the key they rejected; error messages end up in events and
    session files, so the key is cut out before they leave the provider.
    """
    secrets = [v for k, v in settings.extra_headers.items() if is_credential_header(k)]
    if settings.api_key is not None:
        secrets.append(settings.api_key.get_secret_value())
    for secret in sorted(secrets, key=len, reverse=True):
        for candidate in (secret, secret.removeprefix("Bearer ")):
            if len(candidate) >= 4:
                text = text.replace(candidate, "***")
    return text


def _sdk_retries(response: Any) -> bool:
    """Whether the SDK retried this response (mirrors its own rule)."""
    headers = response.headers
    if headers.get("x-should-retry") in ("true", "false"):
        return bool(headers.get("x-should-retry") == "true")
    try:
        if float(headers.get("retry-after", "0")) > 120:
            return False
    except ValueError:
        pass
    status = response.status_code
    return bool(status in (408, 409, 429) or status >= 500)


def _exception_text(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
