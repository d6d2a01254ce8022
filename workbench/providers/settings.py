"""Where an OpenAI-compatible endpoint is: flags, named profiles, environment.

People switch between OpenAI, Ollama, vLLM, llama.cpp's server and LM Studio, so
an endpoint can be named once in a TOML file and picked with `--profile`. Keys are
the one thing that must never leak: a profile names the *environment variable*
holding its key (`api_key_env`), and the key itself lives in a `SecretStr`, so it
prints and serializes as `**********`.

Precedence, field by field: flags > profile > environment > defaults.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator

from workbench.config_file import default_config_path, load_config
from workbench.secret_env import environment

DEFAULT_BASE_URL = "https://api.openai.com/v1"
TOOL_CHOICE_KEYWORDS = ("auto", "required", "none")
_TOOL_NAME = re.compile(r"^[A-Za-z0-9_.:-]{1,128}$")


def validate_tool_choice(value: str) -> str:
    """`auto`, `required`, `none` or a tool name; raises ValueError otherwise."""
    if value in TOOL_CHOICE_KEYWORDS or _TOOL_NAME.match(value):
        return value
    raise ValueError(
        f"Bad tool choice {value!r}: use auto, required, none or the name of one tool "
        "(letters, digits, _ . : -)"
    )


class OpenAISettings(BaseModel):
    """How to reach one OpenAI-compatible chat-completions endpoint."""

    model_config = ConfigDict(extra="forbid")

    model: str = Field(min_length=1)
    """The model id sent in every request (e.g. `gpt-4.1-mini`, `qwen3:8b`)."""
    base_url: str = DEFAULT_BASE_URL
    """The API root, ending in `/v1` for most servers; `/chat/completions` is appended."""
    api_key: SecretStr | None = None
    """The bearer key; None sends a placeholder (local servers ignore it)."""
    temperature: float | None = Field(default=None, ge=0)
    """Sampling temperature; None leaves the server's default."""
    max_tokens: int | None = Field(default=None, gt=0)
    """Output token cap; None leaves the server's default."""
    max_tokens_param: Literal["max_tokens", "max_completion_tokens"] | None = None
    """Which field carries `max_tokens`; None picks `max_completion_tokens` for
    api.openai.com (its reasoning models reject `max_tokens`) and `max_tokens` elsewhere."""
    tool_choice: str | None = None
    """`auto`, `required`, `none` or a tool name; None leaves the server's default."""
    parallel_tool_calls: bool | None = None
    """Allow several tool calls per reply; None leaves the server's default."""
    extra_headers: dict[str, str] = Field(default_factory=dict)
    """Headers added to every request (for gateways and servers that need them)."""
    extra_body: dict[str, Any] = Field(default_factory=dict)
    """JSON fields merged into every request body (e.g. Ollama's `keep_alive`)."""
    timeout: float = Field(default=120.0, gt=0)
    """Seconds to wait for the server: for the response to start and between chunks."""
    connect_timeout: float = Field(default=10.0, gt=0)
    """Seconds to wait for the TCP connection."""
    max_retries: int = Field(default=2, ge=0)
    """Retries the SDK makes on rate limits, 5xx and connection errors (with backoff)."""
    include_usage: bool = True
    """Ask for token usage in the last chunk (`stream_options.include_usage`)."""
    malformed_arguments: Literal["repair", "verbatim"] = "repair"
    """How a tool call whose raw arguments are not a JSON object is sent back:
    "repair" sends `json.dumps(arguments)` (Ollama, vLLM and llama.cpp parse the string
    and would reject the request), "verbatim" sends it as produced (OpenAI accepts any string)."""
    profile: str | None = None
    """The profile these settings came from, for display."""

    @field_validator("tool_choice")
    @classmethod
    def _check_tool_choice(cls, value: str | None) -> str | None:
        return None if value is None else validate_tool_choice(value)

    @field_validator("base_url")
    @classmethod
    def _check_base_url(cls, value: str) -> str:
        if not re.match(r"^https?://[^/\s]+", value):
            raise ValueError(f"Bad base URL {value!r}: expected http(s)://host[:port]/path")
        return value.rstrip("/")

    @property
    def chat_completions_url(self) -> str:
        return f"{self.base_url}/chat/completions"

    def resolved_max_tokens_param(self) -> str:
        if self.max_tokens_param is not None:
            return self.max_tokens_param
        return "max_completion_tokens" if "api.openai.com" in self.base_url else "max_tokens"


# -- profiles ------------------------------------------------------------------------


class Profile(BaseModel):
    """One `[profiles.NAME]` table of the config file; every field is optional."""

    model_config = ConfigDict(extra="forbid")

    base_url: str | None = None
    model: str | None = None
    api_key_env: str | None = None
    """The NAME of the environment variable that holds the key (preferred)."""
    api_key: SecretStr | None = None
    """The key itself (discouraged: config files get shared and committed)."""
    temperature: float | None = None
    max_tokens: int | None = None
    max_tokens_param: Literal["max_tokens", "max_completion_tokens"] | None = None
    tool_choice: str | None = None
    parallel_tool_calls: bool | None = None
    extra_headers: dict[str, str] | None = None
    extra_body: dict[str, Any] | None = None
    timeout: float | None = None
    connect_timeout: float | None = None
    max_retries: int | None = None
    include_usage: bool | None = None
    malformed_arguments: Literal["repair", "verbatim"] | None = None


class ProviderConfig(BaseModel):
    """The provider part of the config file: `default_profile` and `[profiles.*]`."""

    default_profile: str | None = None
    profiles: dict[str, Profile] = Field(default_factory=dict)


def load_provider_config(path: Path, *, required: bool = False) -> ProviderConfig:
    """The profiles of the config file (`load_config`). A missing file is empty unless
    `required`."""
    config = load_config(path, required=required)
    try:
        return ProviderConfig.model_validate(
            {"default_profile": config.default_profile, "profiles": config.profiles}
        )
    except ValidationError as exc:
        raise ValueError(f"Bad profile in {path}: {_first_error(exc)}") from None


# -- flags ---------------------------------------------------------------------------


def settings_from_args(
    args: argparse.Namespace, environ: Mapping[str, str] | None = None
) -> OpenAISettings | None:
    """Resolve the endpoint from flags, profile, environment and defaults.

    Returns None when no endpoint was asked for (no --base-url, --model or --profile,
    and no OPENAI_BASE_URL): the caller runs the built-in scripted model.
    The config's `default_profile` applies when a real endpoint is asked for without
    --profile and without --base-url.

    Raises:
        ValueError: unknown profile, bad tool choice, missing model, unreadable config.
    """
    if environ is None:  # the environment with the secrets start-up moved out of it
        environ = environment()

    def flag(name: str) -> Any:
        return getattr(args, name, None)  # tolerate parsers without some of the flags

    if not (flag("base_url") or flag("model") or flag("profile") or environ.get("OPENAI_BASE_URL")):
        return None

    config_flag: Path | None = flag("config")
    config_path = config_flag or default_config_path(environ)
    config = load_provider_config(config_path, required=config_flag is not None)
    profile_name: str | None = flag("profile")
    if profile_name is None and not flag("base_url"):
        profile_name = config.default_profile
    profile = Profile()
    if profile_name is not None:
        if profile_name not in config.profiles:
            known = ", ".join(sorted(config.profiles)) or "none"
            raise ValueError(
                f"Unknown profile {profile_name!r} in {config_path} (profiles: {known})"
            )
        profile = config.profiles[profile_name]

    values: dict[str, Any] = {}
    # environment, then profile, then flags: later wins
    if environ.get("OPENAI_BASE_URL"):
        values["base_url"] = environ["OPENAI_BASE_URL"]
    if environ.get("OPENAI_API_KEY"):
        values["api_key"] = environ["OPENAI_API_KEY"]
    values.update(profile.model_dump(exclude_none=True, exclude={"api_key", "api_key_env"}))
    if profile.api_key_env and flag("api_key") is None:
        key = environ.get(profile.api_key_env)
        if not key:
            raise ValueError(
                f"Profile {profile_name!r} reads its API key from ${profile.api_key_env}, "
                "which is not set"
            )
        values["api_key"] = key
    elif profile.api_key is not None:
        values["api_key"] = profile.api_key.get_secret_value()
    for name in ("base_url", "model", "api_key", "tool_choice", "temperature", "max_tokens"):
        if flag(name) is not None:
            values[name] = flag(name)

    if not values.get("model"):
        where = f" or set model in profile {profile_name!r}" if profile_name else ""
        raise ValueError(f"No model given: pass --model{where}")
    if values.get("tool_choice") is not None:
        validate_tool_choice(values["tool_choice"])
    try:
        return OpenAISettings(profile=profile_name, **values)
    except ValidationError as exc:
        raise ValueError(f"Bad provider settings: {_first_error(exc)}") from None


def _first_error(exc: ValidationError) -> str:
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err["loc"])
    return f"{where}: {err['msg']}" if where else str(err["msg"])
