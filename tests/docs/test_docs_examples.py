"""The docs' examples work when copied as they are."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from workbench.cli.args import add_provider_arguments
from workbench.pricing import load_prices
from workbench.providers.settings import settings_from_args

ROOT = Path(__file__).resolve().parents[2]


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_provider_arguments(parser)
    return parser.parse_args(list(argv))


def toml_blocks(doc: str) -> list[str]:
    text = (ROOT / doc).read_text(encoding="utf-8")
    return re.findall(r"```toml\n(.*?)```", text, flags=re.S)


def profiles_example() -> str:
    return next(b for b in toml_blocks("docs/providers.md") if "[profiles.vllm]" in b)


@pytest.mark.parametrize("profile", ["ollama", "vllm", "llamacpp", "lmstudio"])
def test_keyless_profiles_work_without_any_key(profile: str, tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(profiles_example())
    settings = settings_from_args(parse("--profile", profile, "--config", str(config)), environ={})
    assert settings is not None and settings.api_key is None


def test_the_readme_price_example_loads(tmp_path: Path) -> None:
    block = next(b for b in toml_blocks("docs/using.md") if "[prices." in b)
    config = tmp_path / "config.toml"
    config.write_text(block)
    prices = load_prices(config)
    assert prices.configured
    for pattern in prices.configured:
        assert prices.price_of(pattern.replace("*", "x")) is not None


def test_providers_doc_says_ctrl_c_aborts_not_esc() -> None:
    text = (ROOT / "docs/providers.md").read_text(encoding="utf-8")
    assert "Esc in the app" not in text and "ctrl+c in the app" in text


def test_the_runtime_docs_stream_fn_example_runs_as_written() -> None:
    """docs/runtime.md "Writing your own stream function": the example, run as it is."""
    import subprocess
    import sys

    text = (ROOT / "docs/runtime.md").read_text(encoding="utf-8")
    block = next(
        b for b in re.findall(r"```python\n(.*?)```", text, flags=re.S) if "my_stream" in b
    )
    out = subprocess.run(
        [sys.executable, "-c", block], capture_output=True, text=True, timeout=60, cwd=ROOT
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "It says HELLO."
