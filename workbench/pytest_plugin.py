"""Recorded sessions as pytest tests: `pytest --workbench-sessions DIR`.

Every session file (`*.jsonl`) under DIR becomes one test item that re-runs it
(`workbench.session_runs.rerun`: the recorded model replies, the real tools, the
session's own tools and MCP servers) and fails with the re-run's report, the first
divergence first. Given only that flag, pytest runs the sessions and nothing else;
given test paths too, it runs both.

Each item runs in a scratch directory of its own under pytest's temporary directory
(so items never share files, under `pytest-xdist` too), seeded with, in this order:
a copy of `--workbench-workspace DIR`; the files recorded at the session's start (its
workspace checkpoints, restored by the re-run); the recorded scenario's files; or a
copy of the directory the session says it ran in (refused for `/` and the home
directory). Copies leave out `.git` and `.workbench`, and a scenario never seeds
protected files (`workbench.scratch.seed`): the re-runs follow the rules of the
directory pytest runs in (or `--workbench-rules`), never rules a session brought.

Each item's tools run in its workspace (it is the current directory during the
re-run). A session your workbench signed starts its recorded tools; one recorded
elsewhere takes `--workbench-tools SPEC` or the `tools` of the project's
`workbench.toml` (in pytest's rootdir, else where pytest started); no path a session
file holds is used. In a session your workbench signed, calls the same as recorded
get the recorded decisions; anyone else's are judged by your rules unless you pass
`--workbench-approve recorded` (a session file cannot approve its own calls). A re-run
that cannot start fails its item in one line.

The plugin is registered through the `pytest11` entry point; without the flag it
adds its options and does nothing else (this module imports nothing but pytest;
the runtime is imported when a session item is collected).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from workbench.session_runs import ApproveChoice

OPTION = "--workbench-sessions"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("workbench", "Agent Workbench: recorded sessions as tests")
    group.addoption(
        OPTION,
        action="append",
        default=[],
        metavar="DIR",
        help="re-run every session file (*.jsonl) under DIR as a test (repeatable)",
    )
    group.addoption(
        "--workbench-workspace",
        metavar="DIR",
        help="seed each session's scratch workspace with a copy of DIR (default: the "
        "recorded scenario's files, else a copy of the directory the session ran in)",
    )
    group.addoption(
        "--workbench-approve",
        choices=["recorded", "all", "none", "rules"],
        default=None,
        help="recorded: calls the same as recorded get the recorded decision, others are "
        'judged by your rules; all/none/rules: every call by your rules, and "ask" '
        "answered that way. Default: recorded for sessions your workbench signed, rules "
        "for anyone else's (pass recorded, having read them, to replay their decisions)",
    )
    group.addoption("--workbench-rules", metavar="FILE", help="the permission rules file")
    group.addoption(
        "--workbench-tools",
        action="append",
        default=None,
        metavar="SPEC",
        help="load these tools (a --tools spec: file.py, module, file.py:NAME; repeatable) "
        "for sessions recorded elsewhere (default: the `tools` of workbench.toml in "
        "pytest's rootdir, or the recorded ones for sessions your workbench signed)",
    )
    group.addoption(
        "--workbench-ignore",
        action="append",
        default=[],
        metavar="REGEX",
        help="mask text matching REGEX in both results before comparing (volatile output; "
        "repeatable; added to `ignore` under [rerun] in workbench.toml)",
    )
    group.addoption(
        "--workbench-trust-recorded-tools",
        action="store_true",
        help="start the recorded --tools and MCP servers of sessions not recorded by your "
        "workbench too (they run code: read the headers first)",
    )


def pytest_configure(config: pytest.Config) -> None:
    directories = _directories(config)
    if not directories:
        return
    paths = [str(d) for d in directories]
    if config.args_source == pytest.Config.ArgsSource.ARGS:
        config.args = [*config.args, *(p for p in paths if p not in config.args)]
    else:  # no paths given: the sessions only, not the project's testpaths
        config.args = paths


def _directories(config: pytest.Config) -> list[Path]:
    base = config.invocation_params.dir
    return [(base / d).resolve() for d in config.getoption(OPTION.lstrip("-").replace("-", "_"))]


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if file_path.suffix != ".jsonl":
        return None
    directories = _directories(parent.config)
    if not any(file_path.is_relative_to(d) for d in directories):
        return None
    return SessionFile.from_parent(parent, path=file_path)


class SessionFile(pytest.File):
    """One session file: one item, named after its first prompt."""

    def collect(self) -> Any:
        """Reads only the header and the first prompt: every pytest-xdist worker
        collects every item, and each item reads its file whole when it runs."""
        from workbench.sanitize import one_line
        from workbench.sessions.reader import SessionError, peek_session

        try:
            _header, first = peek_session(self.path)
        except SessionError as exc:  # the item fails with the reason
            yield SessionItem.from_parent(self, name="unreadable", problem=str(exc))
            return
        prompt = one_line(" ".join(first.split()), 60)
        yield SessionItem.from_parent(self, name=prompt.replace("::", ": ") or "rerun", problem="")


class SessionDiverged(Exception):
    """A re-run whose results differ from the recording (the report's lines as args)."""


class SessionItem(pytest.Item):
    def __init__(self, *, problem: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.recorded: Any = None
        self.problem = problem

    def runtest(self) -> None:
        from workbench.sessions.reader import SessionError, read_session

        if not self.problem:
            try:
                self.recorded = read_session(self.path)
            except SessionError as exc:
                self.problem = str(exc)
        if self.recorded is None:
            raise pytest.fail.Exception(
                f"not a session the workbench can read: {self.problem}", pytrace=False
            )
        from workbench.cli.rerun import setup_failure
        from workbench.sanitize import literal

        try:
            workspace, seeded = self._workspace()
            self.add_report_section("call", "workspace", f"{workspace} ({seeded})")
            report = _rerun(self.recorded, workspace, self.config)
        except (OSError, ValueError) as exc:  # one line per item, not a traceback
            raise pytest.fail.Exception(
                f"the re-run could not start: {literal(setup_failure(exc))}", pytrace=False
            ) from None
        lines = report_text(report, self.path, approve_of(self.recorded, self.config)[0])
        if report.differs:
            raise SessionDiverged("\n".join(lines))
        self.add_report_section("call", "rerun", "\n".join(lines))

    def _workspace(self) -> tuple[Path, str]:
        """A fresh directory for this item, and what it was seeded with."""
        import shutil
        import tempfile

        from workbench.sanitize import literal
        from workbench.scratch import seed
        from workbench.session_runs import scenario_of
        from workbench.sessions.checkpoints import has_checkpoints
        from workbench.sessions.trust import check_workspace

        factory = getattr(self.config, "_tmp_path_factory", None)  # None with -p no:tmpdir
        base = factory.getbasetemp() if factory is not None else None
        root = Path(tempfile.mkdtemp(prefix="workbench-", dir=base))
        given = self.config.getoption("workbench_workspace")
        scenario = scenario_of(self.recorded)
        if given:
            source = self.config.invocation_params.dir / given
            why = f"a copy of --workbench-workspace {given}"
        elif has_checkpoints(self.recorded):  # the re-run restores them into a new directory
            return root / "workspace", "the files recorded at the session's start"
        elif scenario is not None:
            try:
                seed(root, scenario.workspace_files)
            except ValueError as exc:
                raise pytest.fail.Exception(literal(str(exc))) from None
            return root, "the recorded scenario's files"
        else:
            recorded = self.recorded.header.workspace
            if not recorded or not Path(recorded).is_dir():
                raise pytest.fail.Exception(
                    f"the session ran in {literal(repr(recorded or '(unknown)'))}, which is "
                    "not here: pass --workbench-workspace DIR with the files it started from"
                )
            source = Path(recorded)
            why = f"a copy of the directory the session ran in, {literal(recorded)}"
        check_workspace(source)
        target = root / "workspace"
        shutil.copytree(
            source, target, symlinks=True, ignore=shutil.ignore_patterns(".git", ".workbench")
        )
        return target, why

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, SessionDiverged):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, f"session {self.path.name}: {self.name}"


def _rerun(session: Any, workspace: Path, config: pytest.Config) -> Any:
    import argparse

    import anyio

    from workbench.cli.rerun import rerun_setup
    from workbench.permissions import RULES_FILE
    from workbench.session_runs import rerun

    flags = argparse.Namespace(
        trust_recorded_tools=config.getoption("workbench_trust_recorded_tools"),
        tool_specs=config.getoption("workbench_tools"),
        builtin_tools=None,
        mcp=None,
        mcp_url=None,
        config=None,
    )
    from workbench.cli.commands import project_ignores

    base = project_dir(config)
    ignore = project_ignores(base) + config.getoption("workbench_ignore")
    setup, servers, warnings = rerun_setup(session, flags, base)
    approve, why = approve_of(session, config)
    rules = config.getoption("workbench_rules")

    async def go() -> Any:
        return await rerun(
            session,
            workspace=workspace,
            approve=approve,
            # the user's rules (where pytest runs), never a file of the scratch workspace
            rules_file=config.invocation_params.dir / (rules or RULES_FILE),
            setup=setup,
            mcp_servers=servers,
            ignore=ignore,
        )

    report = anyio.run(go)
    report.warnings[:0] = warnings + why
    return report


def project_dir(config: pytest.Config) -> Path:
    """Where the project's `workbench.toml` is: pytest's rootdir, else the directory
    pytest was started in (the rootdir is the ancestor of every path on the command
    line when no ini file fixes it)."""
    from workbench.project.config import find_project

    root = config.rootpath
    if find_project(root) is not None:
        return root
    return config.invocation_params.dir


def report_text(report: Any, path: Path, approve: str) -> list[str]:
    """The re-run report, its first divergence named first."""
    from workbench.cli.rerun import report_lines
    from workbench.sanitize import literal

    lines = report_lines(report, path, approve)
    first = next((c for c in report.calls if c.status in ("differs", "missing", "extra")), None)
    if first is None and report.files:
        return [f"first divergence: the files at the end: {literal(report.files[0])}", "", *lines]
    if first is None:
        return lines
    where = report.calls.index(first) + 1
    head = (
        f"first divergence: call {where} of {len(report.calls)}, "
        f"{literal(first.tool_call_id)} ({literal(first.tool_name)}): {first.status}"
    )
    return [
        head,
        *([f"  {literal(d)}" for d in first.diff()] if first.status == "differs" else []),
        "",
        *lines,
    ]


def approve_of(session: Any, config: pytest.Config) -> tuple[ApproveChoice, list[str]]:
    """`--workbench-approve`, or the default `workbench rerun` has for this session."""
    from workbench.cli.rerun import default_approve

    chosen = config.getoption("workbench_approve")
    if chosen is not None:
        return chosen, []
    return default_approve(session, "--workbench-approve recorded")
