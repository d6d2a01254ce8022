"""`workbench`: the command-line entry point.

The Textual app is imported inside `main()` only when it is needed, so the
headless mode and the runtime never load Textual.
"""

from __future__ import annotations

import sys
from typing import Any

import anyio

from workbench.cli.args import build_parser, pace_of, parse
from workbench.providers.settings import settings_from_args
from workbench.runtime import RunOptions, build_runtime
from workbench.sessions.cli import SUBCOMMANDS, subcommand_main


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in SUBCOMMANDS:  # replay | rerun | export FILE
        if argv[0] == "replay":
            from widgets.replay_app import replay_main

            return replay_main(argv[1:])
        return subcommand_main(argv[0], argv[1:])
    parser = build_parser()
    args = parse(parser, argv)
    headless = args.headless is not None
    approve = args.approve or ("rules" if headless else "ask")
    if headless and approve == "ask":
        parser.error("--approve ask needs the app; headless runs take all, none or rules")
    try:
        options = RunOptions(
            scenario=args.scenario,
            workspace=args.workspace,
            pace=pace_of(args.pace, headless),
            provider_settings=settings_from_args(args),
            approve=approve,
            rules_file=args.rules,
            allow=args.allow,
            ask=args.ask,
            deny=args.deny,
            step=args.step,
            breakpoints=args.breakpoints,
            slow_after=args.slow_after,
            capture_chunks=args.capture_chunks,
            mcp=args.mcp,
            mcp_urls=args.mcp_url,
            mcp_servers=_config_mcp_servers(args),
            pass_env=[*_config_pass_env(args), *args.pass_env],
            session=args.session,
            record=not args.no_record,
            prices=_config_prices(args),
            simulated_wire=True,
        )
        if options.workspace is not None and not options.workspace.is_dir():
            raise ValueError(f"--workspace {options.workspace} is not a directory")
        runtime = build_runtime(options)
    except (OSError, ValueError) as exc:
        print(f"workbench: {exc}", file=sys.stderr)
        return 2
    if not headless:
        from widgets.app import make_app

        app = make_app(runtime, prefill=args.prompt)
        code = app.run() or 0
        for path in app.session_paths:
            if path.exists():
                print(f"workbench: session recorded to {path}", file=sys.stderr)
        return code

    prompt = args.headless or runtime.prompt
    if not prompt:
        print("workbench: --headless needs a PROMPT (the model has no scenario prompt)", file=sys.stderr)
        return 2
    if runtime.session_path is not None:
        print(f"workbench: recording the session to {runtime.session_path}", file=sys.stderr)
    return anyio.run(_run_headless, runtime, prompt, args.jsonl)


def _config_prices(args: Any) -> Any:
    """The price table: the config file's `[prices]` (--config, else the default), then
    the built-in prices."""
    from workbench.pricing import load_prices
    from workbench.providers.settings import default_config_path

    return load_prices(args.config or default_config_path(), required=args.config is not None)


def _config_mcp_servers(args: Any) -> list[Any]:
    """The `[mcp.servers.NAME]` tables of the config file (--config, else the default)."""
    from workbench.mcp.config import load_mcp_servers
    from workbench.providers.settings import default_config_path

    return load_mcp_servers(args.config or default_config_path(), required=args.config is not None)


def _config_pass_env(args: Any) -> list[str]:
    """`[commands] pass_env` of the config file (--config, else the default)."""
    from tools.command_env import config_pass_env
    from workbench.providers.settings import default_config_path

    return config_pass_env(args.config or default_config_path())


async def _run_headless(runtime: Any, prompt: str, jsonl: bool = False) -> int:
    """Start the MCP servers first (if any) and say how each went; the run goes on
    with whatever started."""
    from workbench.cli.headless import run_headless

    if runtime.mcp is None:
        return await run_headless(runtime, prompt, jsonl=jsonl)
    from workbench.mcp.hub import describe_failure

    async with runtime.mcp.attach(runtime.agent) as hub:
        for line in hub.report():
            print(f"workbench: {line}", file=sys.stderr)
        hub.on_change = lambda c: print(f"workbench: {describe_failure(c)}", file=sys.stderr)
        return await run_headless(runtime, prompt, jsonl=jsonl)


if __name__ == "__main__":
    sys.exit(main())
