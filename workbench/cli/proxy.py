"""`workbench proxy --upstream URL`: the workbench in front of any OpenAI-compatible agent.

Point the agent's base URL at the proxy (`http://127.0.0.1:8765/v1`); the proxy
forwards to the upstream with the upstream's key, and shows (the app) or prints
(`--headless`) each conversation, recording each one as its own session.
"""

from __future__ import annotations

import argparse
import os
import signal as signals
import sys
from pathlib import Path
from typing import Any

import anyio
from rich.console import Console
from rich.text import Text

from workbench.cli.args import Parser, add_rule_flags, add_step_flags, approve_of, oversight_of
from workbench.sanitize import literal
from workbench.secret_env import take

DEFAULT_KEY_ENV = "OPENAI_API_KEY"


def proxy_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="workbench proxy",
        usage="workbench proxy --upstream URL [options] [-- COMMAND ARGS...]",
        description=(
            "A server in front of a model's API (OpenAI chat completions and Responses, "
            "Anthropic Messages, Gemini): point any agent's base URL at it, or start the agent "
            "after `--` with its environment pointed at it, and watch, approve, pause and "
            "record its tool calls. Each conversation is recorded as a session "
            "(workbench replay FILE)."
        ),
    )
    parser.add_argument(
        "--upstream",
        required=True,
        metavar="URL",
        help="the upstream's base URL, e.g. https://api.openai.com/v1 or http://localhost:11434/v1",
    )
    parser.add_argument(
        "--port", type=int, default=8765, help="port to listen on (default 8765; 0: any free one)"
    )
    parser.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to listen on (default 127.0.0.1: this machine only)",
    )
    parser.add_argument(
        "--api-key-env",
        default=DEFAULT_KEY_ENV,
        metavar="NAME",
        help=f"environment variable holding the upstream's key (default {DEFAULT_KEY_ENV}); "
        "it replaces whatever key the agent sends, and is never recorded",
    )
    parser.add_argument(
        "--token-env",
        metavar="NAME",
        help="environment variable holding a token clients must send as their API key "
        "(without it, any program of this machine may use the proxy)",
    )
    parser.add_argument(
        "--pass-through",
        action="append",
        default=[],
        metavar="GLOB",
        help="forward requests to paths matching GLOB (e.g. '/v1/embeddings') without judging "
        "them; they are shown and noted in the session folder. Other paths the proxy does not "
        "understand are refused",
    )
    parser.add_argument(
        "--headless",
        action="store_true",
        help="no app: print each conversation's events and record them, until Ctrl-C",
    )
    perms = parser.add_argument_group(
        "permissions",
        "Rules as in a native run (--allow/--ask/--deny PATTERN, the rules file). Without a "
        "matching rule a call goes through: the proxy only watches until told otherwise.",
    )
    add_rule_flags(perms, rules_default="./.workbench/rules.toml")
    add_step_flags(
        parser,
        step_help="start in step mode",
        break_help="breakpoint: a tool name or an argument pattern (repeatable)",
    )
    rec = parser.add_argument_group("sessions")
    rec.add_argument(
        "--session-dir",
        type=Path,
        metavar="DIR",
        help="where each conversation's session goes (default: the user's data directory)",
    )
    rec.add_argument("--no-record", action="store_true", help="record no sessions")
    rec.add_argument(
        "--no-chunks",
        action="store_true",
        help="do not keep the upstream's raw chunks (the network view shows them by default)",
    )
    return parser


def proxy_main(argv: list[str]) -> int:
    from workbench.proxy import Proxy, ProxyOptions
    from workbench.proxy.guard import is_loopback
    from workbench.proxy.launcher import split_command

    parser = proxy_parser()
    own, command = split_command(argv)
    args = parser.parse_args(own)
    approve = approve_of(parser, args, bool(args.headless))
    if not is_loopback(args.host):
        print(
            f"workbench proxy: WARNING: listening on {args.host}, not only this machine: anyone "
            "who can reach it can use the upstream's key through it",
            file=sys.stderr,
        )
    key = take(args.api_key_env) or None
    if key is None:
        print(
            f"workbench proxy: ${args.api_key_env} is not set: forwarding without a key",
            file=sys.stderr,
        )
    token = None
    if args.token_env:
        token = take(args.token_env) or None
        if token is None:
            print(f"workbench proxy: ${args.token_env} is not set", file=sys.stderr)
            return 2
    try:
        proxy = Proxy(
            ProxyOptions(
                token=token,
                pass_through=list(args.pass_through),
                upstream=args.upstream,
                api_key=key,
                host=args.host,
                port=args.port,
                **oversight_of(args, approve),
                record=not args.no_record,
                session_dir=args.session_dir,
                capture_chunks=not args.no_chunks,
            )
        )
    except ValueError as exc:
        print(f"workbench proxy: {exc}", file=sys.stderr)
        return 2
    try:
        if args.headless:
            proxy.bind()
            return anyio.run(serve_headless, proxy, None, command)
        from workbench.widgets.proxy_app import ProxyApp

        proxy.bind()  # a port in use fails here, before the screen opens
        code = ProxyApp(proxy, command=command).run() or 0
    except OSError as exc:
        print(
            f"workbench proxy: cannot listen on {args.host}:{args.port}: {exc.strerror or exc}",
            file=sys.stderr,
        )
        return 2
    say_sessions(proxy, Console(stderr=True, highlight=False))
    return code


async def serve_headless(
    proxy: Any, console: Console | None = None, command: list[str] | None = None
) -> int:
    """Print every conversation's events until SIGINT or SIGTERM (or, with a `command`,
    until the client it starts ends: its exit status is returned), then stop cleanly."""
    from workbench.cli.headless import EventPrinter

    console = console or Console(highlight=False)

    def announce(conv: Any) -> None:
        conv.agent.subscribe(EventPrinter(console, prefix=f"[{conv.number}] "))
        where = f", recording to {conv.recorder.path}" if conv.recorder is not None else ""
        console.print(Text(literal(f"workbench proxy: {conv.name} started{where}"), style="bold"))

    proxy.on_conversation.append(announce)
    proxy.on_unjudged.append(
        lambda entry: console.print(
            Text(
                literal(
                    f"workbench proxy: forwarded UNJUDGED (--pass-through): "
                    f"{entry['method']} {entry['path']}"
                ),
                style="bold yellow",
            )
        )
    )
    with anyio.open_signal_receiver(signals.SIGINT, signals.SIGTERM) as received:
        async with proxy.running():
            console.print(
                Text(
                    literal(
                        f"workbench proxy: listening on {proxy.url}, "
                        f"forwarding to {proxy.upstream} "
                        "(Ctrl-C stops)"
                    ),
                    style="bold",
                )
            )
            if command:
                code = await _run_until_either(proxy, command, received, console)
            else:
                async for _ in received:
                    break
                code = 0
    say_sessions(proxy, console)
    return code


async def _run_until_either(proxy: Any, command: list[str], received: Any, console: Console) -> int:
    """Run the client; a signal stops it (and the proxy) too."""
    from workbench.proxy.launcher import client_environment, run_client

    env = client_environment(
        os.environ,
        proxy.url,
        token=proxy.options.token,
        has_upstream_key=proxy.options.api_key is not None,
    )
    console.print(Text(literal(f"workbench proxy: starting {' '.join(command)}"), style="bold"))
    code = 1
    async with anyio.create_task_group() as tg:

        async def client() -> None:
            nonlocal code
            try:
                code = await run_client(command, env)
            except OSError as exc:
                console.print(Text(literal(f"workbench proxy: cannot start {command[0]}: {exc}")))
                code = 127
            tg.cancel_scope.cancel()

        async def signals() -> None:
            async for _ in received:
                tg.cancel_scope.cancel()
                return

        tg.start_soon(client)
        tg.start_soon(signals)
    console.print(Text(literal(f"workbench proxy: {command[0]} ended ({code})"), style="bold"))
    return code


def say_sessions(proxy: Any, console: Console) -> None:
    for conv in proxy.conversations:
        if conv.recorder is not None and conv.recorder.path.exists():
            missing = len(conv.never_answered)
            flagged = f" ({missing} calls never answered)" if missing else ""
            console.print(
                Text(
                    literal(
                        f"workbench proxy: {conv.name} recorded to {conv.recorder.path}{flagged}"
                    )
                )
            )
