"""The run the flags describe: the command line's flags, filled in from the current
directory's project file and the config file, made into `RunOptions` and a runtime.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.cli.args import oversight_of
from workbench.sanitize import literal

if TYPE_CHECKING:
    from workbench.runtime import RunOptions, Runtime


def say(text: str) -> None:
    """One line on stderr, as the workbench says everything there (shown literally)."""
    print(f"workbench: {literal(text)}", file=sys.stderr)


def runtime_of(
    args: argparse.Namespace, headless: bool, approve: Any, say: Callable[[str], None]
) -> Runtime:
    """The runtime the flags describe (`say` hears what was done on the way).

    Raises:
        OSError, ValueError: bad input (a flag, the project file, a file they name).
    """
    from workbench.runtime import build_runtime

    options = options_from_args(args, headless, approve, say)
    if options.workspace is not None and not options.workspace.is_dir():
        raise ValueError(f"--workspace {options.workspace} is not a directory")
    if options.mcp or options.mcp_servers:  # stdio servers boot while the runtime loads
        from workbench.mcp.early import start_early_for

        start_early_for(options)
    return build_runtime(options)


def options_from_args(
    args: argparse.Namespace,
    headless: bool,
    approve: Any,
    say: Callable[[str], None] = say,
) -> RunOptions:
    """The run the flags (and the current directory's project file) describe; `say`
    hears what was done on the way (a project's prune policy).

    Raises:
        ValueError: a bad project file, prompt file or provider setting.
    """
    from workbench.config_file import config_caps
    from workbench.providers.settings import settings_from_args
    from workbench.runtime import RunOptions, pace_of

    if getattr(args, "demo", False):
        _no_project(args, Path.cwd())  # the built-in demo, whatever this directory holds
    else:
        apply_project(args, Path.cwd())
    provider_settings = settings_from_args(args)
    system_prompt = system_prompt_of(args)  # a missing prompt file is said first
    if provider_settings is None and args.scenario is None:
        _demo_or_refuse(args)
    if args.project_prune is not None and not args.no_record:
        from workbench.cli.prune import apply_policy

        said = apply_policy(args.project_prune)
        if said:
            say(said)
    return RunOptions(
        scenario=args.scenario or "demo",
        workspace=args.workspace,
        pace=pace_of(args.pace, headless),
        provider_settings=provider_settings,
        **oversight_of(args, approve),
        slow_after=args.slow_after,
        capture_chunks=args.capture_chunks,
        mcp_servers=[*args.project_mcp, *_mcp_servers(args)],
        mcp_log_level=args.mcp_log_level,
        pass_env=[*_config_pass_env(args), *args.pass_env],
        session=args.session,
        record=not args.no_record,
        tool_specs=args.tool_specs or [],
        tool_specs_from=getattr(args, "tool_specs_from", "--tools"),
        builtin_tools=args.builtin_tools,
        project_dir=args.project_dir,
        system_prompt=system_prompt,
        max_turns=args.max_turns,
        tool_choice_sticky=bool(args.tool_choice_sticky),
        prices=_config_prices(args),
        caps=config_caps(args.config),  # [limits]
        simulated_wire=True,
        checkpoints=getattr(args, "project_checkpoints", None),
    )


# What a project file may set, by flag (`dest`): (key in the file, is a path).
_PROJECT_FLAGS = {
    "tool_specs": ("tools", False),
    "builtin_tools": ("builtin_tools", False),
    "profile": ("profile", False),
    "model": ("model", False),
    "base_url": ("base_url", False),
    "tool_choice": ("tool_choice", False),
    "tool_choice_sticky": ("tool_choice_sticky", False),
    "scenario": ("scenario", True),
    "rules": ("rules", True),
    "workspace": ("workspace", True),
    "max_turns": ("max_turns", False),
}


def _no_project(args: argparse.Namespace, directory: Path) -> None:
    args.project_dir = directory
    args.project_mcp = []
    args.project_prune = None
    args.project_path = None


def _demo_or_refuse(args: argparse.Namespace) -> None:
    """No model and no scenario: the built-in demo, when that is what was asked for
    (`workbench demo`, or nothing of your own agent named); otherwise say so.

    Raises:
        ValueError: your tools or system prompt are named (in the project file or by
            flags) but no model is: the demo would play with them attached.
    """
    if getattr(args, "demo", False):
        return
    own = args.tool_specs or args.system_prompt is not None or args.system_prompt_file is not None
    if not own:
        return
    project: Path | None = getattr(args, "project_path", None)
    where = f"{project.name} ({project})" if project is not None else "the command line"
    raise ValueError(
        f"no model is configured in {where}: set `profile`, or `base_url` and `model` "
        "(or --profile, or --base-url and --model; a scripted `scenario` runs offline). "
        "`workbench demo` runs the built-in demo"
    )


def apply_project(args: argparse.Namespace, directory: Path) -> None:
    """Fill the flags not given from the project file of `directory` (if any).

    Sets `args.project_dir` (where tool specs are found) and `args.project_mcp` (its
    MCP servers). Raises ValueError for a bad project file.
    """
    from workbench.project.config import find_project

    _no_project(args, directory)
    project = find_project(directory)
    if project is None:
        return
    args.project_path = project.path
    args.project_prune = project.sessions.prune if project.sessions else None
    args.project_dir = project.directory
    for dest, (key, is_path) in _PROJECT_FLAGS.items():
        value = getattr(project, key)
        if value is None or (dest == "tool_specs" and not value):
            continue  # not in the file (`builtin_tools = []` is: it means none)
        if getattr(args, dest, None) is None:
            setattr(args, dest, project.resolve(value) if is_path else value)
            if dest == "tool_specs" and project.path is not None:
                args.tool_specs_from = f"{project.path.name} tools"
    prompt_given = args.system_prompt is not None or args.system_prompt_file is not None
    if not prompt_given:
        args.system_prompt = project.system_prompt
        args.system_prompt_file = project.resolve(project.system_prompt_file)
    args.project_mcp = project.mcp_servers()
    args.project_checkpoints = project.checkpoints


def system_prompt_of(args: argparse.Namespace) -> str | None:
    """`--system-prompt`, or the text of `--system-prompt-file` (None: neither)."""
    if args.system_prompt_file is None:
        return args.system_prompt
    path: Path = args.system_prompt_file
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        why = getattr(exc, "strerror", None) or exc
        raise ValueError(f"--system-prompt-file {path}: {why}") from None


def _config_prices(args: Any) -> Any:
    """The price table: the config file's `[prices]` (--config, else the default), then
    the built-in prices."""
    from workbench.config_file import default_config_path
    from workbench.pricing import load_prices

    return load_prices(args.config or default_config_path(), required=args.config is not None)


def _mcp_servers(args: Any) -> list[Any]:
    """Every MCP server to start: the config file's `[mcp.servers.NAME]` tables (--config,
    else the default), then each --mcp-config file's, then the flags' in their order."""
    from workbench.config_file import default_config_path
    from workbench.mcp.config import load_mcp_json, load_mcp_servers, servers_from_flags

    servers = load_mcp_servers(
        args.config or default_config_path(), required=args.config is not None
    )
    for path in args.mcp_config:
        servers += load_mcp_json(Path(path))
    return servers + servers_from_flags(getattr(args, "mcp_specs", None) or [])


def _config_pass_env(args: Any) -> list[str]:
    """`[commands] pass_env` of the config file (--config, else the default)."""
    from workbench.config_file import default_config_path
    from workbench.tools.command_env import config_pass_env

    return config_pass_env(args.config or default_config_path())
