"""The user's config file: one model, read once, strict, with errors that name the line."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.config_file import config_caps, load_config
from workbench.mcp.config import load_mcp_servers
from workbench.pricing import load_prices
from workbench.providers.settings import load_provider_config
from workbench.tools.command_env import config_pass_env

WHOLE = """\
default_profile = "local"

[profiles.local]
base_url = "http://127.0.0.1:11434/v1"
model = "qwen3:8b"

[prices."qwen3:8b"]
input = 0.1
output = 0.2

[mcp.servers.files]
command = ["files-server"]

[commands]
pass_env = ["GOPATH"]

[limits]
max_turn_output_chars = 5000
"""


def test_every_part_reads_its_table_from_one_parse(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "config.toml"
    config.write_text(WHOLE)
    parsed: list[str] = []
    import workbench.config_file as config_file

    loads = config_file.tomllib.loads
    monkeypatch.setattr(
        config_file.tomllib, "loads", lambda text: parsed.append(text) or loads(text)
    )
    assert load_provider_config(config).profiles["local"].model == "qwen3:8b"
    assert "qwen3:8b" in load_prices(config).configured
    assert [s.name for s in load_mcp_servers(config)] == ["files"]
    assert config_pass_env(config) == ["GOPATH"]
    assert config_caps(config).max_turn_output_chars == 5000
    assert len(parsed) == 1
    config.write_text(WHOLE.replace("GOPATH", "CARGO_HOME"))
    assert config_pass_env(config) == ["CARGO_HOME"]  # a changed file is read again
    assert len(parsed) == 2


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("[profile.local]\nmodel = 'x'\n", ":1: unknown key 'profile'; did you mean 'profiles'?"),
        ("[commands]\npass_env = ['A']\npasenv = ['B']\n", ":3: unknown key 'commands.pasenv'"),
        ("[mcp]\nserver = {}\n", ":2: unknown key 'mcp.server'; did you mean 'servers'?"),
        ("\n\n[commands]\npass_env = 'A'\n", ":4: commands.pass_env: must be a list"),
        ("[limits]\nmax_turn_output_chars = [\n", "Cannot read config file"),
    ],
)
def test_a_bad_config_file_names_the_file_and_the_line(
    tmp_path: Path, text: str, said: str
) -> None:
    config = tmp_path / "config.toml"
    config.write_text(text)
    with pytest.raises(ValueError) as info:
        load_config(config)
    assert str(config) in str(info.value) and said in str(info.value)


def test_a_missing_file_is_empty_unless_it_was_named(tmp_path: Path) -> None:
    assert load_config(tmp_path / "none.toml").profiles == {}
    with pytest.raises(ValueError, match="Config file not found"):
        load_config(tmp_path / "none.toml", required=True)
