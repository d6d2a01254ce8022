"""Endpoint settings: flags, profiles, environment, precedence, secrets."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from workbench.cli.args import add_provider_arguments
from workbench.providers.settings import (
    OpenAISettings,
    default_config_path,
    settings_from_args,
)

CONFIG = """
default_profile = "ollama"

[profiles.ollama]
base_url = "http://localhost:11434/v1"
model = "qwen3:8b"
extra_body = { keep_alive = "10m" }

[profiles.openai]
base_url = "https://api.openai.com/v1"
model = "gpt-4.1-mini"
api_key_env = "MY_OPENAI_KEY"
temperature = 0.3
tool_choice = "required"
parallel_tool_calls = false
extra_headers = { "X-Title" = "workbench" }

[profiles.vllm]
base_url = "http://localhost:8000/v1"
api_key = "inline-secret"
"""


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_provider_arguments(parser)
    return parser.parse_args(list(argv))


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(CONFIG)
    return path


def test_nothing_asked_for_means_scripted_demo(config: Path) -> None:
    assert settings_from_args(parse(), environ={"WORKBENCH_CONFIG": str(config)}) is None
    assert settings_from_args(parse(), environ={"OPENAI_API_KEY": "k"}) is None


def test_flags_only(tmp_path: Path) -> None:
    args = parse(
        "--base-url",
        "http://localhost:8080/v1/",
        "--model",
        "llama",
        "--api-key",
        "sk-1",
        "--tool-choice",
        "none",
        "--temperature",
        "0.5",
        "--max-tokens",
        "64",
    )
    s = settings_from_args(args, environ={"WORKBENCH_CONFIG": str(tmp_path / "missing.toml")})
    assert s is not None
    assert (s.base_url, s.model, s.tool_choice, s.temperature, s.max_tokens) == (
        "http://localhost:8080/v1",
        "llama",
        "none",
        0.5,
        64,
    )
    assert s.api_key is not None and s.api_key.get_secret_value() == "sk-1"
    assert s.profile is None


def test_environment_alone_selects_the_endpoint(tmp_path: Path) -> None:
    env = {
        "OPENAI_BASE_URL": "http://localhost:1234/v1",
        "OPENAI_API_KEY": "lm",
        "WORKBENCH_CONFIG": str(tmp_path / "none.toml"),
    }
    s = settings_from_args(parse("--model", "local"), environ=env)
    assert s is not None and s.base_url == "http://localhost:1234/v1"
    assert s.api_key is not None and s.api_key.get_secret_value() == "lm"
    with pytest.raises(ValueError, match="No model given: pass --model"):
        settings_from_args(parse(), environ=env)


def test_profile_with_key_from_named_env_var(config: Path) -> None:
    env = {"MY_OPENAI_KEY": "sk-from-env", "OPENAI_API_KEY": "ignored"}
    s = settings_from_args(parse("--config", str(config), "--profile", "openai"), environ=env)
    assert s is not None
    assert s.profile == "openai" and s.model == "gpt-4.1-mini"
    assert s.api_key is not None and s.api_key.get_secret_value() == "sk-from-env"
    assert (s.temperature, s.tool_choice, s.parallel_tool_calls) == (0.3, "required", False)
    assert s.extra_headers == {"X-Title": "workbench"}


def test_precedence_flags_over_profile_over_env(config: Path) -> None:
    env = {"OPENAI_BASE_URL": "http://env/v1", "OPENAI_API_KEY": "env-key", "MY_OPENAI_KEY": "p"}
    s = settings_from_args(
        parse(
            "--config",
            str(config),
            "--profile",
            "openai",
            "--model",
            "o4-mini",
            "--temperature",
            "1",
        ),
        environ=env,
    )
    assert s is not None
    assert s.model == "o4-mini" and s.temperature == 1.0  # flags
    assert s.base_url == "https://api.openai.com/v1"  # profile over env
    # a profile without key settings falls back to the environment's key
    s2 = settings_from_args(parse("--config", str(config), "--profile", "ollama"), environ=env)
    assert s2 is not None and s2.api_key is not None and s2.api_key.get_secret_value() == "env-key"
    assert s2.extra_body == {"keep_alive": "10m"}


def test_default_profile_applies_without_base_url(config: Path) -> None:
    env = {"WORKBENCH_CONFIG": str(config)}
    s = settings_from_args(parse("--model", "llama3.2"), environ=env)
    assert s is not None and s.profile == "ollama"
    assert (s.base_url, s.model) == ("http://localhost:11434/v1", "llama3.2")
    s = settings_from_args(parse("--base-url", "http://h/v1", "--model", "x"), environ=env)
    assert s is not None and s.profile is None and s.extra_body == {}


def test_clear_errors(config: Path) -> None:
    with pytest.raises(
        ValueError, match=r"Unknown profile 'nope' .*profiles: ollama, openai, vllm"
    ):
        settings_from_args(parse("--config", str(config), "--profile", "nope"), environ={})
    with pytest.raises(ValueError, match=r"MY_OPENAI_KEY, which is not set"):
        settings_from_args(parse("--config", str(config), "--profile", "openai"), environ={})
    with pytest.raises(ValueError, match="Bad tool choice"):
        settings_from_args(
            parse("--model", "m", "--base-url", "http://h/v1", "--tool-choice", "a b"), environ={}
        )
    with pytest.raises(ValueError, match="set model in profile 'vllm'"):
        settings_from_args(parse("--config", str(config), "--profile", "vllm"), environ={})
    with pytest.raises(ValueError, match="Config file not found"):
        settings_from_args(parse("--config", "/nonexistent/x.toml", "--model", "m"), environ={})
    with pytest.raises(ValueError, match="Bad base URL"):
        settings_from_args(parse("--base-url", "localhost:8000", "--model", "m"), environ={})


def test_bad_profile_file_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text("[profiles.x]\nmodle = 'typo'\n")
    with pytest.raises(ValueError, match=r"Bad profile in .*modle"):
        settings_from_args(parse("--config", str(path), "--profile", "x"), environ={})
    path.write_text("[profiles.x\n")
    with pytest.raises(ValueError, match="Cannot read config file"):
        settings_from_args(parse("--config", str(path), "--profile", "x"), environ={})


def test_api_key_never_serializes(config: Path) -> None:
    s = settings_from_args(
        parse("--config", str(config), "--profile", "vllm", "--model", "m"), environ={}
    )
    assert s is not None and s.api_key is not None
    assert s.api_key.get_secret_value() == "inline-secret"
    for text in (repr(s), str(s), s.model_dump_json(), str(s.model_dump(mode="json"))):
        assert "inline-secret" not in text


def test_default_config_path(tmp_path: Path) -> None:
    assert default_config_path({"WORKBENCH_CONFIG": "/x/c.toml"}) == Path("/x/c.toml")
    assert (
        default_config_path({"XDG_CONFIG_HOME": str(tmp_path)})
        == tmp_path / "agent-workbench/config.toml"
    )
    assert default_config_path({}).parts[-3:] == (".config", "agent-workbench", "config.toml")


def test_settings_validate_directly() -> None:
    with pytest.raises(ValueError):
        OpenAISettings(model="")
    assert OpenAISettings(model="m").resolved_max_tokens_param() == "max_completion_tokens"
    assert (
        OpenAISettings(model="m", base_url="http://localhost:8000/v1").resolved_max_tokens_param()
        == "max_tokens"
    )


def test_api_key_flag_satisfies_a_profile_whose_env_var_is_unset(config: Path) -> None:
    args = parse("--config", str(config), "--profile", "openai", "--api-key", "sk-flag")
    s = settings_from_args(args, environ={})
    assert s is not None and s.api_key is not None and s.api_key.get_secret_value() == "sk-flag"
