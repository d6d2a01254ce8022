"""The environment a model's shell command gets: an allow-list, not the user's all.

The user's environment holds API keys and tokens (OPENAI_API_KEY, GITHUB_TOKEN,
cloud credentials). A command the model asked for gets only what a shell needs to
work (where programs are, who and where the user is, language, terminal, temporary
directory) plus the names the user passes on purpose: `--pass-env NAME`
(repeatable) or `pass_env = ["NAME", ...]` under `[commands]` in the config file.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from workbench.config_file import load_config
from workbench.secret_env import environment

ALLOWED = frozenset(
    {
        "PATH",
        "HOME",
        "USER",
        "LOGNAME",
        "SHELL",
        "LANG",
        "LANGUAGE",
        "TERM",
        "COLORTERM",
        "TMPDIR",
        "TMP",
        "TEMP",
        "TZ",
    }
)
"""Variables every command gets (when the user has them set)."""
ALLOWED_PREFIXES = ("LC_",)
"""Prefixes of variables every command gets (the locale categories)."""


def command_env(
    pass_env: Iterable[str] = (), environ: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The allowed part of `environ` (default: the workbench's, with the secrets start-up
    moved out of it), plus the variables named in `pass_env`."""
    if environ is None:
        environ = environment()
    extra = set(pass_env)
    return {
        name: value
        for name, value in environ.items()
        if name in ALLOWED or name.startswith(ALLOWED_PREFIXES) or name in extra
    }


def config_pass_env(path: Path) -> list[str]:
    """`[commands] pass_env` from the config file at `path` ([] if it has none).

    Raises:
        ValueError: the file cannot be read, or `pass_env` is not a list of names.
    """
    return list(load_config(path).commands.pass_env)
