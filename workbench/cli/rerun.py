"""`workbench rerun FILE`: the recorded model's replies against the real tools
(`workbench.session_runs.rerun`), a report of every result that differs.

Exit code: 0 all the same, 1 something differed, 2 bad input.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from workbench.cli.args import Parser, builtin_names
from workbench.cli.commands import (
    EXIT_DIFFERS,
    EXIT_SAME,
    EXIT_USAGE,
    ask_for_cwd,
    load,
    project_ignores,
)
from workbench.config_file import config_caps
from workbench.sanitize import literal, one_line
from workbench.session_runs import ApproveChoice, rerun, scenario_of
from workbench.sessions.header import AgentSetup
from workbench.sessions.rerun import RerunReport
from workbench.sessions.trust import needs_starting, trusted

if TYPE_CHECKING:
    from workbench.sessions.reader import Session


def rerun_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="workbench rerun",
        description="Run a recorded session again: the recorded model replies, the real tools "
        "under the current permission rules. Reports every call whose result differs from the "
        "recording. Exit code: 0 all the same, 1 something differed, 2 bad input.",
    )
    parser.add_argument("file", type=Path, metavar="FILE", help="a session file (.jsonl)")
    parser.add_argument(
        "--workspace",
        type=Path,
        metavar="DIR",
        help="where the tools run: the recorded files (as they were when the recording "
        "started) are restored into it if it is new or empty; one with files is used as it "
        "is (default: a scratch directory with the recorded files; for a session recorded "
        "before checkpoints, a fresh copy of the recorded scenario's files, or the current "
        "directory if you agree; the path stored in the session is never used)",
    )
    parser.add_argument(
        "--in-place",
        action="store_true",
        help="run in --workspace DIR (or the current directory, if you agree) as it is, "
        "without restoring the recorded files",
    )
    parser.add_argument(
        "--approve",
        choices=["recorded", "all", "none", "rules"],
        default=None,
        help="recorded: each call the same as recorded gets the decision the recording shows "
        "(a person's or a rule's answer, edits, denial reasons), unless your rules deny it; a "
        "call that differs is judged by your rules alone. all/none/rules: every call is judged "
        'by your rules, and "ask" is answered that way. Default: recorded for a session your '
        "workbench recorded, rules for one from anyone else (its decisions are data anyone "
        "could have written: read it, then pass --approve recorded)",
    )
    parser.add_argument("--rules", type=Path, metavar="FILE", help="rules file")
    for flag in ("allow", "ask", "deny"):
        parser.add_argument(
            f"--{flag}",
            action="append",
            default=[],
            metavar="RULE",
            help=f"{flag} calls matching RULE (repeatable)",
        )
    parser.add_argument(
        "--ignore",
        action="append",
        default=[],
        metavar="REGEX",
        help="mask text matching REGEX in both results before comparing (volatile output: "
        "times, ids; repeatable; added to `ignore` under [rerun] in workbench.toml)",
    )
    parser.add_argument("--session", type=Path, metavar="FILE", help="also record the re-run there")
    parser.add_argument("--quiet", action="store_true", help="print only calls that differ")
    add_setup_arguments(parser)
    return parser


def add_setup_arguments(parser: argparse.ArgumentParser) -> None:
    """Which agent a re-run builds: the recorded one, or these instead."""
    group = parser.add_argument_group(
        "the agent",
        "By default the recorded agent is built again: its built-ins, its --tools specs "
        "and its MCP servers (started for the re-run). Tools and servers are started "
        "only from a session recorded by your own workbench (its setup carries your "
        "signature); these flags replace them.",
    )
    group.add_argument(
        "--tools",
        dest="tool_specs",
        action="append",
        default=None,
        metavar="SPEC",
        help="load these tools instead (repeatable)",
    )
    group.add_argument(
        "--builtin-tools", type=builtin_names, metavar="NAMES|none", help="these built-ins instead"
    )
    group.add_argument(
        "--mcp",
        action="append",
        default=None,
        metavar="'COMMAND ARGS'",
        help="start these MCP servers instead (repeatable)",
    )
    group.add_argument(
        "--mcp-url",
        action="append",
        default=None,
        metavar="URL",
        help="connect to these MCP servers instead (repeatable)",
    )
    group.add_argument(
        "--config",
        type=Path,
        metavar="FILE",
        help="config file: its MCP servers instead of the recorded ones, and its [limits] "
        "(default limits: those of your config file)",
    )
    group.add_argument(
        "--trust-recorded-tools",
        action="store_true",
        help="start the recorded tools and MCP servers even though this session was not "
        "recorded by your workbench (they run code: read the header first)",
    )


def rerun_setup(
    session: Session, args: argparse.Namespace, base: Path | None = None
) -> tuple[Any, Any, list[str]]:
    """(setup, MCP servers or None, warnings): what the re-run builds.

    The tools come from, in order: the flags (`--tools`, relative to the current
    directory); the
    recorded specs of a session your own workbench signed (as recorded); the project
    file of `base` (`workbench.toml`'s `tools`); with `--trust-recorded-tools`, the
    recorded specs of any session, looked for under `base`. A path recorded in a
    session someone else wrote is never used: its specs are resolved against `base`,
    and one that is an absolute path is refused.

    Args:
        base: the project directory (default: the current directory); pytest passes
            its rootdir.

    Raises:
        ValueError: a project file that cannot be read, or a recorded absolute spec.
    """
    base = (base or Path.cwd()).resolve()
    recorded = session.header.setup
    warnings: list[str] = []
    setup = recorded.model_copy() if recorded is not None else AgentSetup()
    signed = trusted(recorded)
    if needs_starting(recorded) and not signed:
        assert recorded is not None
        setup = setup.model_copy(update={"tool_specs": [], "mcp_servers": []})
        if args.trust_recorded_tools:
            absolute = [spec for spec in recorded.tool_specs if Path(spec).is_absolute()]
            if absolute:
                raise ValueError(
                    f"the session names tools by an absolute path ({', '.join(absolute)}), "
                    "which a re-run never trusts: pass --tools with them here"
                )
            setup = setup.model_copy(
                update={"tool_specs": list(recorded.tool_specs), "project_dir": str(base)}
            )
            # A recorded server's directory is a path from the file: never trusted.
            kept = [s.model_copy(update={"cwd": None}) for s in recorded.mcp_servers]
            setup = setup.model_copy(update={"mcp_servers": kept})
    if args.tool_specs is not None:
        here = str(Path.cwd().resolve())  # the flags are relative to where you typed them
        setup = setup.model_copy(update={"tool_specs": args.tool_specs, "project_dir": here})
    elif not signed and not args.trust_recorded_tools:
        from workbench.project.config import find_project

        project = find_project(base)
        if project is not None and project.tools:
            setup = setup.model_copy(
                update={"tool_specs": project.tools, "project_dir": str(project.directory)}
            )
        elif needs_starting(recorded):
            assert recorded is not None
            named = [
                *(f"--tools {s}" for s in recorded.tool_specs),
                *(
                    f"MCP server {s.name} ({s.url or ' '.join(s.command or [])})"
                    for s in recorded.mcp_servers
                ),
            ]
            warnings.append(
                "this session was not recorded by your workbench, so its tools are not "
                f"started: {'; '.join(named)} (pass --tools, list them in workbench.toml, "
                "or check them and pass --trust-recorded-tools)"
            )
    if args.builtin_tools is not None:
        setup = setup.model_copy(update={"builtin_tools": args.builtin_tools})
    servers = None
    if args.mcp is not None or args.mcp_url is not None or args.config is not None:
        from workbench.mcp.config import load_mcp_servers, resolve_servers

        configured = load_mcp_servers(args.config, required=True) if args.config else []
        servers = resolve_servers(args.mcp or [], args.mcp_url or [], configured)
    return setup, servers, warnings


def default_approve(session: Any, flag: str) -> tuple[ApproveChoice, list[str]]:
    """How a re-run answers calls when the user did not say: the recorded decisions for a
    session the user's own workbench signed; the user's rules for anyone else's (its
    decisions are data anyone could have written), with the line that says so."""
    if trusted(session.header.setup):
        return "recorded", []
    return "rules", [
        "this session was not recorded by your workbench, so its recorded decisions are "
        f"not replayed: every call is judged by your rules (read it, then pass {flag} "
        "to replay them)"
    ]


def rerun_main(argv: list[str]) -> int:
    from workbench.sessions.checkpoints import has_checkpoints

    args = rerun_parser().parse_args(argv)
    session = load(args.file, "rerun")
    if session is None:
        return EXIT_USAGE
    decisions: list[str] = []
    if args.approve is None:
        args.approve, why = default_approve(session, "--approve recorded")
        decisions += why
    restores = has_checkpoints(session) and not args.in_place
    if (
        args.workspace is not None
        and not args.workspace.is_dir()
        and not (restores and not args.workspace.exists())
    ):
        print(f"workbench rerun: --workspace {args.workspace} is not a directory", file=sys.stderr)
        return EXIT_USAGE
    if args.workspace is None and not restores and (args.in_place or scenario_of(session) is None):
        args.workspace = ask_for_cwd(session, "rerun")
        if args.workspace is None:
            return EXIT_USAGE

    async def go() -> RerunReport:
        return await rerun(
            session,
            workspace=args.workspace,
            in_place=True if args.in_place else None,
            approve=args.approve,
            allow=args.allow,
            ask=args.ask,
            deny=args.deny,
            rules_file=args.rules,
            record_to=args.session,
            setup=setup,
            mcp_servers=servers,
            ignore=ignore,
            caps=caps,
        )

    try:
        caps = config_caps(args.config)  # [limits], as for a live run
        ignore = project_ignores(Path.cwd()) + args.ignore
        setup, servers, warnings = rerun_setup(session, args)
        report = anyio.run(go)
    except (OSError, ValueError) as exc:
        print(f"workbench rerun: {literal(setup_failure(exc))}", file=sys.stderr)
        return EXIT_USAGE
    report.warnings[:0] = decisions + warnings
    for line in report_lines(report, args.file, args.approve, quiet=args.quiet):
        print(line)
    return EXIT_DIFFERS if report.differs else EXIT_SAME


def setup_failure(exc: BaseException) -> str:
    """One line for a re-run that could not start (a tool's import traceback is cut to
    its last line, which says what failed)."""
    lines = [line for line in str(exc).splitlines() if line.strip()]
    if len(lines) <= 1:
        return lines[0] if lines else type(exc).__name__
    return f"{lines[0]}: {lines[-1].strip()}"


def report_lines(
    report: RerunReport, path: Path, approve: str, *, quiet: bool = False
) -> list[str]:
    """The re-run report as plain text lines (untrusted text made literal)."""
    marks = {"same": "✓", "differs": "✗", "missing": "✗", "extra": "✗", "skipped": "–"}
    lines = [
        f"rerun of {literal(str(path))} in {literal(str(report.workspace))} (approve: {approve})"
    ]
    if report.workspace_note:
        lines.append(f"  workspace: {literal(report.workspace_note)}")
    lines += [f"  ! {literal(w)}" for w in report.warnings]
    lines += [f"  {literal(n)}" for n in report.notes]
    for call in report.calls:
        if quiet and call.status in ("same", "skipped"):
            continue
        note = f" ({one_line(call.note, 80)})" if call.note else ""
        call_id, name = literal(call.tool_call_id), literal(call.tool_name)
        lines.append(f"  {marks[call.status]} {call_id:<14} {name:<16} {call.status}{note}")
        if call.status == "differs":
            lines += [f"      {literal(d)}" for d in call.diff()]
        elif call.status in ("missing", "extra"):
            message = call.recorded or call.now
            text = one_line(message.text, 100) if message else ""
            lines.append(f"      {'recorded' if call.recorded else 'now'}: {text}")
    counts = ", ".join(
        f"{report.count(s)} {s}"
        for s in ("same", "differs", "missing", "extra", "skipped")
        if report.count(s)
    )
    if report.files:
        lines.append("  ✗ files at the end:")
        lines += [f"      {literal(f)}" for f in report.files]
    verdict = "something differed" if report.differs else "every result is the same"
    lines.append(f"{len(report.calls)} calls: {counts or 'none'}; {verdict}")
    return lines
