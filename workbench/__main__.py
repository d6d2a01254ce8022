"""`workbench`: the command-line entry point.

The Textual app is imported inside `main()` only when it is needed, so the
headless mode and the runtime never load Textual.
"""

from __future__ import annotations

import sys

import anyio

from workbench.cli.args import build_parser, pace_of
from workbench.providers.settings import settings_from_args
from workbench.runtime import RunOptions, build_runtime


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
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
        )
        if options.workspace is not None and not options.workspace.is_dir():
            raise ValueError(f"--workspace {options.workspace} is not a directory")
        runtime = build_runtime(options)
    except (OSError, ValueError) as exc:
        print(f"workbench: {exc}", file=sys.stderr)
        return 2
    if not headless:
        from widgets.app import make_app

        return make_app(runtime).run() or 0

    from workbench.cli.headless import run_headless

    prompt = args.headless or runtime.prompt
    if not prompt:
        print("workbench: --headless needs a PROMPT (the model has no scenario prompt)", file=sys.stderr)
        return 2
    return anyio.run(run_headless, runtime, prompt)


if __name__ == "__main__":
    sys.exit(main())
