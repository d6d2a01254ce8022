"""The import rules of the tree, read from the source (every `import`, inside functions too).

The layers, bottom up (a module may import its own layer and those below):

1. `workbench/agent` (the runtime port), `workbench/view` (the pure fold of events into
   what the screen shows) and the leaf utilities beside them: `workbench.bus_events`,
   `workbench.json_text`, `workbench.sanitize`, `workbench.pricing`, `workbench.redact`,
   `workbench.images`, `workbench.safe_regex`, `workbench.config_file` and the shared stream builder
   `workbench.providers.stream_builder`.
2. `workbench/sessions`: the session file format (codec, header, reader, recorder, log,
   history, export, the library index, diff, prune and re-run data). It imports only
   itself, layer 1 and the package root (`workbench.__version__`). Nothing else of
   the project: not the runtime, the CLI, the widgets, the built-in `tools` package,
   providers' internals, permissions or MCP.
3. providers, permissions, mcp, tools, project, stepper, scratch: the parts a run is
   built from.
4. `workbench.runtime` (agent and tools from options), `workbench.wiring` (the one wiring
   of gate, stepper, recorder and turn limit) and `workbench.session_runs` (fork and
   re-run, built by the runtime).
5. `workbench/cli` and `workbench/__main__`; the Textual app (`widgets/`) above all.

Pinned here: agent, view and sessions never import `widgets`, `workbench.runtime`,
`workbench.session_runs`, `workbench.cli`, `workbench.__main__` or providers'
internals (every `workbench.providers` module but `stream_builder`); sessions imports
only what layer 2 above allows, and importing it loads nothing else of the project
(what the modules it reaches import on load is followed too); nothing under
`workbench/` imports Textual. `widgets` (the app) and Rich are imported only by the
command line (`workbench/__main__.py`, `workbench/cli/`) and `workbench.embed` (which
opens the app on your own agent), and `widgets` only inside the function that opens
it, so a headless run never loads it.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
WORKBENCH = ROOT / "workbench"
AREAS = ("workbench", "widgets", "tools")
"""The design card's top-level folders."""
PACKAGE = {
    folder: f"workbench.{folder}" if (WORKBENCH / folder).is_symlink() else folder
    for folder in ("widgets", "tools")
}
"""The package each of `widgets/` and `tools/` is imported as: top-level, or (linked into
`workbench/`) `workbench.widgets` and `workbench.tools`."""
WIDGETS, TOOLS = PACKAGE["widgets"], PACKAGE["tools"]

LOWER = ("workbench/agent", "workbench/view", "workbench/sessions")
ABOVE = (
    WIDGETS,
    "workbench.runtime",
    "workbench.session_runs",
    "workbench.cli",
    "workbench.__main__",
    "textual",
    "rich",
)
PROVIDERS_SHARED = ("workbench.providers.stream_builder",)

SESSIONS_MAY_IMPORT = (
    "workbench.sessions",
    "workbench.agent",
    "workbench.view",
    "workbench.bus_events",
    "workbench.json_text",
    "workbench.sanitize",
    "workbench.pricing",
    "workbench.redact",
    "workbench.images",
    "workbench.safe_regex",
    "workbench.config_file",
    *PROVIDERS_SHARED,
)
"""Of the project's own packages (workbench, widgets, tools); anything else installed
(pydantic, platformdirs, the standard library) is free."""

FIRST_PARTY = ("workbench", "widgets", "tools")  # first names of their modules
LAUNCHERS = ("workbench/__main__.py", "workbench/cli", "workbench/embed.py")
"""What opens the app (and prints with Rich): the command line and `embed`."""


Sources = dict[str, str]
"""Path (relative to the repository, with `/`) -> source text."""


def module_name(where: str) -> str:
    parts = where.removesuffix(".py").split("/")
    parts[0] = PACKAGE.get(parts[0], parts[0])
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@functools.cache
def project_sources() -> Sources:
    """Every module of the three areas, by its real path (a linked folder once)."""
    return {
        path.relative_to(ROOT).as_posix(): path.read_text(encoding="utf-8")
        for area in AREAS
        for path in sorted((ROOT / area).rglob("*.py"))
    }


@functools.cache
def imports_of(where: str, source: str, in_functions: bool = True) -> list[tuple[int, str]]:
    """(line, absolute module name) of every import in the file, at any depth (only those
    run on import, outside functions, with `in_functions=False`); `from X import Y` gives
    `X.Y` too (Y may be a module), relative imports are resolved."""
    tree = ast.parse(source, where)
    package = module_name(where)
    if not where.endswith("/__init__.py"):
        package = package.rpartition(".")[0]
    skipped: set[int] = set()
    if not in_functions:
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                skipped |= {id(inner) for inner in ast.walk(node)}
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            found.append((node.lineno, base))
            found += [(node.lineno, f"{base}.{alias.name}") for alias in node.names]
    return found


def within(name: str, prefixes: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def within_path(where: str, prefixes: tuple[str, ...]) -> bool:
    return any(where == p or where.startswith(p + "/") for p in prefixes)


def violations(
    sources: Sources,
    folders: tuple[str, ...],
    bad: Callable[[str], bool],
    *,
    skip: tuple[str, ...] = (),
    in_functions: bool = True,
) -> list[str]:
    """`file:line imports name` for each import under `folders` (but not `skip`) that
    `bad` refuses."""
    return [
        f"{where}:{line} imports {name}"
        for where, source in sources.items()
        if within_path(where, folders) and not within_path(where, skip)
        for line, name in imports_of(where, source, in_functions)
        if bad(name)
    ]


def above_lower_layers(sources: Sources) -> list[str]:
    def bad(name: str) -> bool:
        provider_internal = (
            within(name, ("workbench.providers",))
            and name != "workbench.providers"
            and not within(name, PROVIDERS_SHARED)
        )
        return within(name, ABOVE) or provider_internal

    return violations(sources, LOWER, bad)


def outside_sessions_layer(sources: Sources) -> list[str]:
    def bad(name: str) -> bool:
        if name.split(".")[0] not in FIRST_PARTY or name in ("workbench", "workbench.__version__"):
            return False
        return not within(name, SESSIONS_MAY_IMPORT)

    return violations(sources, ("workbench/sessions",), bad)


def loaded_with_sessions(sources: Sources) -> list[str]:
    """`module (via importer)` for each project module that importing any sessions module
    loads (its own imports at any depth, then what each module reached imports on load,
    parent packages included) and that layer 2 does not allow."""
    where_of = {module_name(where): where for where in sources}

    def found(name: str) -> list[str]:
        """The project modules an import of `name` runs (parent packages too)."""
        parts = name.split(".")
        while parts and ".".join(parts) not in where_of:
            parts.pop()
        return [".".join(parts[:n]) for n in range(2, len(parts) + 1)]

    todo = [(m, "") for m in where_of if within(m, ("workbench.sessions",))]
    via: dict[str, str] = {}
    while todo:
        module, importer = todo.pop()
        if module in via:
            continue
        via[module] = importer
        where = where_of[module]
        own = within(module, ("workbench.sessions",))
        for _line, name in imports_of(where, sources[where], own):
            todo += [(m, module) for m in found(name) if m not in via]
    return sorted(
        f"{module} (via {importer})"
        for module, importer in via.items()
        # the providers package itself is loaded as the parent of the stream builder;
        # anything its __init__ imports on load is followed like the rest
        if not within(module, SESSIONS_MAY_IMPORT) and module != "workbench.providers"
    )


def ui_in_workbench(sources: Sources) -> list[str]:
    return [
        *violations(sources, ("workbench",), lambda name: within(name, ("textual",))),
        *violations(
            sources, ("workbench",), lambda name: within(name, (WIDGETS, "rich")), skip=LAUNCHERS
        ),
        *violations(sources, LAUNCHERS, lambda name: within(name, (WIDGETS,)), in_functions=False),
    ]


def app_on_the_command_line(sources: Sources) -> list[str]:
    """The app (`widgets`) never imports the command line, which opens it: no cycle
    between the two top-level areas (the CLI runs replay for the library's screen)."""
    return violations(
        sources, ("widgets",), lambda name: within(name, ("workbench.cli", "workbench.__main__"))
    )


def test_the_app_never_imports_the_command_line() -> None:
    assert app_on_the_command_line(project_sources()) == []


def test_agent_view_and_sessions_import_nothing_above_them() -> None:
    assert above_lower_layers(project_sources()) == []


def test_sessions_is_the_file_format_and_imports_only_below_it() -> None:
    assert outside_sessions_layer(project_sources()) == []


def test_importing_sessions_loads_nothing_above_it() -> None:
    assert loaded_with_sessions(project_sources()) == []


def test_nothing_under_workbench_imports_textual_and_only_the_command_line_the_app() -> None:
    assert ui_in_workbench(project_sources()) == []


@pytest.mark.parametrize(
    ("folder", "line", "check"),
    [
        ("workbench/sessions", "from workbench.runtime import build_runtime", above_lower_layers),
        ("workbench/sessions", "import workbench.cli.args", above_lower_layers),
        ("workbench/sessions", "from ..session_runs import rerun", above_lower_layers),
        (
            "workbench/agent",
            "from workbench.providers.scripted import Scenario",
            above_lower_layers,
        ),
        ("workbench/agent/x", "from ...providers import openai", above_lower_layers),
        ("workbench/view", f"from {WIDGETS}.app import WorkbenchApp", above_lower_layers),
        (
            "workbench/sessions",
            "from workbench.permissions import PermissionGate",
            outside_sessions_layer,
        ),
        ("workbench/sessions", f"from {TOOLS} import builtin_tools", outside_sessions_layer),
        ("workbench/sessions", "from ..mcp import McpHub", outside_sessions_layer),
        ("workbench/sessions", "from workbench.runtime import x", loaded_with_sessions),
        (
            "workbench/json_text.py",
            "TOP from workbench.permissions import gate",
            loaded_with_sessions,
        ),
        ("workbench/mcp", "from textual.app import App", ui_in_workbench),
        ("workbench/cli", "from textual.app import App", ui_in_workbench),
        ("workbench/permissions", f"from {WIDGETS}.app import make_app", ui_in_workbench),
        ("workbench/view", "from rich.text import Text", ui_in_workbench),
        ("workbench/cli", f"TOP import {WIDGETS}.app", ui_in_workbench),
        ("widgets", "from workbench.cli.replay import replay_main", app_on_the_command_line),
        ("widgets/x", "import workbench.__main__", app_on_the_command_line),
    ],
)
def test_a_violating_import_is_caught_wherever_it_is(
    folder: str, line: str, check: Callable[[Sources], list[str]]
) -> None:
    """Each check sees an import added to a module at any depth (inside a function by
    default; at module level with TOP), absolute or relative, in a new module of a folder
    or (a `.py` path) at the end of an existing one."""
    sources = project_sources()
    statement = line.removeprefix("TOP ")
    if line.startswith("TOP "):  # run on import: a launcher may import widgets only later
        source = f"import os\n\n{statement}\n"
    else:
        source = f"def later() -> None:\n    if True:\n        {statement}\n"
    probe = folder if folder.endswith(".py") else f"{folder}/zz_import_probe.py"
    if probe in sources:
        source = sources[probe] + "\n" + source
    number = source.count("\n")
    assert check(sources) == []
    found = check({**sources, probe: source})
    if check is loaded_with_sessions:  # what the probe module brought in, named by importer
        assert any(f.endswith(f"(via {module_name(probe)})") for f in found), found
    else:
        assert found and all(f.startswith(f"{probe}:{number} imports ") for f in found), found


# -- no cycle between two areas ------------------------------------------------------

KNOWN_CYCLES = {
    ("workbench.agent", "workbench.images"): "content caps read an image's header; "
    "images.py builds the agent's ImageContent",
    ("workbench.cli", "workbench.embed"): "`workbench run FILE:AGENT` opens your agent "
    "through embed; embed's run_headless prints through cli.headless",
}
"""The two pairs of areas that import each other today, each for a reason; any other
pair is a new cycle."""


def area_of(name: str) -> str | None:
    """The area a module belongs to: `widgets`, `tools`, or one package or module right
    under `workbench` (`workbench.agent`, `workbench.runtime`); None for anything else."""
    for folder, package in PACKAGE.items():
        if within(name, (package,)):
            return folder
    parts = name.split(".")
    if parts[0] != "workbench" or len(parts) < 2:
        return None
    return f"workbench.{parts[1]}"


def mutual_imports(sources: Sources) -> dict[tuple[str, str], str]:
    """Each pair of areas that import each other (at any depth, inside functions too),
    with one import each way."""
    edges: dict[tuple[str, str], str] = {}
    for where, source in sources.items():
        mine = area_of(module_name(where))
        for line, name in imports_of(where, source):
            theirs = area_of(name)
            if mine and theirs and theirs != mine:
                edges.setdefault((mine, theirs), f"{where}:{line} imports {name}")
    return {
        (a, b): f"{edges[(a, b)]}; {edges[(b, a)]}" for (a, b) in edges if a < b and (b, a) in edges
    }


def test_no_two_areas_import_each_other() -> None:
    found = mutual_imports(project_sources())
    assert set(found) == set(KNOWN_CYCLES), found


def test_a_new_cycle_between_two_areas_is_caught() -> None:
    sources = project_sources()
    probe = {
        **sources,
        "workbench/agent/zz_probe.py": "def later() -> None:\n    import workbench.runtime\n",
        "tools/zz_probe.py": f"from {WIDGETS}.app import make_app\n",
        "widgets/zz_probe.py": f"from {TOOLS} import builtin_tools\n",
    }
    found = set(mutual_imports(probe)) - set(KNOWN_CYCLES)
    assert found == {("workbench.agent", "workbench.runtime"), ("tools", "widgets")}
