"""One protected set for every tool and every writer (issue 36).

`.workbench/` and `.git` at any depth (directories and the `.git` files of
worktrees and submodules), every `workbench.toml` and `pyproject.toml`, the rules
file, the MCP config files in use and the sessions directory: a changing call
that names one is allowed only by a rule naming it, or by a person. For MCP
tools every string argument is judged (a `move_file`'s `destination`, a list of
paths, a `file://` URI), after the same normalisation as the built-ins'.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support.gate_calls import run_calls
from workbench.agent import (
    AbortController,
    AgentContext,
    AgentTool,
    AssistantMessage,
    BeforeToolCallContext,
    ToolCall,
)
from workbench.agent.arguments import JsonArguments
from workbench.permissions import PermissionGate
from workbench.permissions.protected import as_path, protected_root, protected_target

TAKEOVER = '[[rule]]\nmatch = "*"\naction = "allow"\n'


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / ".workbench").mkdir(parents=True)
    (root / ".workbench" / "rules.toml").write_text("")
    (root / "vendor" / "lib" / ".git").mkdir(parents=True)
    (root / "vendor" / "lib" / ".git" / "config").write_text("[core]\n")
    (root / "sub").mkdir()
    (root / "sub" / ".git").write_text("gitdir: ../.git/modules/sub\n")  # a submodule's file
    (root / "workbench.toml").write_text('tools = ["mine.py"]\n')
    (root / "pyproject.toml").write_text('[project]\nname = "x"\n')
    (root / "a.txt").write_text("a\n")
    (root / "link").symlink_to(root / ".workbench")
    return root


def spellings(ws: Path) -> list[str]:
    """Ways to name a protected path, as a model or an MCP server's argument may."""
    return [
        ".workbench/rules.toml",
        "./.workbench/rules.toml",
        "a/../.workbench/rules.toml",
        ".WORKBENCH/rules.toml",
        ".workbench",
        f"{ws}/.workbench/rules.toml",
        f"/{ws}/.workbench/rules.toml",  # //WS/...
        f"//{ws}/./.workbench//rules.toml",
        f"file://{ws}/.workbench/rules.toml",
        f"FILE://{ws}/%2Eworkbench/rules.toml",
        "link/rules.toml",  # a symlink into .workbench
        ".git/hooks/pre-commit",
        "vendor/lib/.git/config",
        "vendor/lib/.GIT/config",
        "sub/.git",
        "workbench.toml",
        "./WorkBench.toml",
        "sub/pyproject.toml",
        f"{ws}/pyproject.toml",
        " .workbench/rules.toml",
    ]


def mcp_tool(name: str) -> AgentTool:
    return AgentTool(name, name, "", {"type": "object"}, execute=None, source="mcp:srv")  # type: ignore[arg-type]


def context(tool: AgentTool, args: dict[str, Any]) -> Any:
    call = ToolCall(id="c1", name=tool.name, arguments=args)
    message = AssistantMessage(content=[call], stop_reason="toolUse")
    return BeforeToolCallContext(
        message, call, JsonArguments.model_validate(args), AgentContext(tools=[tool]), tool
    )


async def verdict(gate: PermissionGate, tool: AgentTool, args: dict[str, Any]) -> str | None:
    """The reason the gate blocked the call (None: it runs)."""
    result = await gate(context(tool, args), AbortController().signal)
    return result.reason if result is not None and result.block else None


# -- MCP tools: every string argument -----------------------------------------------------


@pytest.mark.parametrize("policy", ["all", "rules"])
@pytest.mark.parametrize("allow", [["mcp:srv"], ["*"], ['srv__move_file(destination="**")']])
async def test_an_mcp_move_into_a_protected_path_is_never_allowed_by_a_broad_rule(
    ws: Path, policy: Any, allow: list[str]
) -> None:
    gate = PermissionGate.for_workspace(ws, policy=policy, allow=allow)
    move = mcp_tool("srv__move_file")
    for target in spellings(ws):
        reason = await verdict(gate, move, {"source": "a.txt", "destination": target})
        assert reason is not None and "protected path" in reason, target
    assert await verdict(gate, move, {"source": "a.txt", "destination": "b.txt"}) is None


@pytest.mark.parametrize(
    "args",
    [
        {"paths": ["a.txt", ".git/hooks/post-checkout"]},
        {"edits": [{"file": "x", "to": "sub/.workbench/rules.toml"}]},
        {"uri": "file:///{ws}/.workbench/rules.toml"},
        {"target": "{ws}/vendor/lib/.git/config"},
        {"to": "pyproject.toml", "content": "[tool.workbench]\n"},
    ],
)
async def test_any_string_argument_of_an_mcp_tool_is_judged(ws: Path, args: dict[str, Any]) -> None:
    filled = _fill(args, str(ws))
    gate = PermissionGate.for_workspace(ws, policy="all", allow=["mcp:srv"])
    reason = await verdict(gate, mcp_tool("srv__do"), filled)
    assert reason is not None and "protected path" in reason


def _fill(value: Any, ws: str) -> Any:
    if isinstance(value, str):
        return value.replace("{ws}", ws)
    if isinstance(value, dict):
        return {k: _fill(v, ws) for k, v in value.items()}
    return [_fill(v, ws) for v in value]


async def test_ordinary_mcp_arguments_still_run_by_rule(ws: Path) -> None:
    gate = PermissionGate.for_workspace(ws, policy="rules", allow=["mcp:srv"])
    tool = mcp_tool("srv__search")
    for args in (
        {"query": "how .git works", "path": "src"},
        {"text": "see .workbench/rules.toml\nfor details"},
        {"pattern": ".gitignore", "files": ["a.txt", "b/.github/ci.yml"]},
        {"n": 3, "flag": True, "nested": {"deep": ["x", 1]}},
    ):
        assert await verdict(gate, tool, args) is None, args


async def test_a_person_is_asked_and_told_which_path(ws: Path) -> None:
    import anyio

    events: list[Any] = []
    gate = PermissionGate.for_workspace(ws, allow=["mcp:srv"], publish=events.append)
    async with anyio.create_task_group() as tg:
        tg.start_soon(
            verdict, gate, mcp_tool("srv__move_file"), {"destination": "//x/../workbench.toml"}
        )
        with anyio.fail_after(5):
            while not gate.pending:
                await anyio.sleep(0)
        (request,) = gate.pending
        assert request.protected is not None and "workbench.toml" in request.protected
        from workbench.permissions import PermissionAnswer

        gate.decide(request.request_id, PermissionAnswer("deny"))


# -- built-in tools --------------------------------------------------------------------


@pytest.mark.parametrize(
    "target",
    [
        "workbench.toml",
        "pyproject.toml",
        "sub/pyproject.toml",
        "vendor/lib/.git/config",
        "vendor/lib/.Git/hooks/x",
        "sub/.git",
        "deep/.workbench/rules.toml",
        "link/rules.toml",
    ],
)
async def test_only_allow_write_file_never_rewrites_the_projects_config(
    ws: Path, target: str
) -> None:
    before = {p: p.read_bytes() for p in ws.rglob("*") if p.is_file()}
    (result,) = await run_calls(
        ws,
        [("write_file", {"path": target, "content": TAKEOVER})],
        approve="all",
        allow=["write_file"],
    )
    assert result.is_error and "protected path" in result.text
    assert {p: p.read_bytes() for p in ws.rglob("*") if p.is_file()} == before


async def test_a_rule_naming_the_file_allows_it_and_content_is_not_a_path(ws: Path) -> None:
    calls = [
        ("write_file", {"path": "workbench.toml", "content": "# mine\n"}),
        ("write_file", {"path": "notes.md", "content": ".git/config"}),
    ]
    results = await run_calls(
        ws, calls, approve="rules", allow=['write_file(path="workbench.toml")', "write_file"]
    )
    assert [r.is_error for r in results] == [False, False]
    assert (ws / "workbench.toml").read_text() == "# mine\n"


def test_the_runs_own_files_are_protected(ws: Path) -> None:
    from workbench.mcp.config import McpServerConfig
    from workbench.runtime import RunOptions, build_runtime

    (ws / "servers.json").write_text('{"mcpServers": {}}')
    (ws / "cfg").mkdir()
    (ws / "cfg" / "rules.toml").write_text("")
    server = McpServerConfig(name="s", command=["true"], source=str(ws / "servers.json"))
    options = RunOptions(
        workspace=ws,
        record=False,
        rules_file=ws / "cfg" / "rules.toml",
        mcp_servers=[server],
        session=ws / "sessions" / "s.jsonl",
    )
    gate = build_runtime(options).gate
    assert gate is not None
    assert set(gate.protected_files) == {"cfg/rules.toml", "servers.json", "sessions"}
    for path in ("servers.json", "./SERVERS.json", "sessions/s.jsonl", "cfg/rules.toml"):
        assert gate.judge("write_file", {"path": as_path(path)})[2] is not None, path
    assert gate.judge("write_file", {"path": "sessionsx"})[2] is None


# -- the pure parts ---------------------------------------------------------------------


def test_protected_root_normalises_and_casefolds() -> None:
    assert protected_root("./.workbench/x") == ".workbench"
    assert protected_root("a/../.GIT/config") == ".GIT"
    assert protected_root("//.git") == "/.git"
    assert protected_root("x/y/.git/hooks/h") == "x/y/.git"
    assert protected_root("x/WORKBENCH.TOML") == "x/WORKBENCH.TOML"
    assert protected_root("r.toml", ["R.toml"]) == "R.toml"
    assert protected_root("s/x.jsonl", ["s"]) == "s"
    for free in (".gitignore", ".github/x", "src/git/x", "workbench.toml.bak", "sx", "a.git"):
        assert protected_root(free, ["s"]) is None, free


def test_as_path_forms(tmp_path: Path) -> None:
    root = tmp_path / "w"
    assert as_path(f"//{root}/a") == f"{root}/a"
    assert as_path(f"//{root}/a", root) == "a"
    assert as_path(f"file://{root}/a%20b", root) == "a b"
    assert as_path(f"file://localhost{root}/a", root) == "a"
    assert as_path(str(root), root) == "."
    assert as_path(f"{root}x/a", root) == f"{root}x/a"  # a sibling is not inside
    assert as_path("a/./b/../c") == "a/c"


def test_built_ins_judge_only_their_path_arguments_other_tools_every_string() -> None:
    args = {"path": "notes.md", "content": ".git/config"}
    assert protected_target("write_file", args) is None
    assert protected_target("srv__write", args, builtin=False) == ".git/config"
    assert protected_target("read_file", {"path": ".git/config"}) is None
    assert protected_target("read_file", {"path": ".git/config"}, builtin=False) == ".git/config"


def test_edges_of_the_normalisation(tmp_path: Path) -> None:
    assert as_path("") == "." and as_path("file://") == "/"
    assert as_path("/a/b", Path("/")) == "a/b"
    long = ".git/" + "a" * 4091
    assert len(long) == 4096 and protected_target("s", {"x": long}, builtin=False) == long
    assert protected_target("s", {"x": long + "a"}, builtin=False) is None  # never a path
    assert protected_target("s", {"x": "a\x00/.git"}, builtin=False, root=tmp_path) == "a\x00/.git"
    assert protected_target("s", {"x": "a\x00b"}, builtin=False, root=tmp_path) is None
    assert protected_target("write_file", {"content": "x", "path": ".git/x"}) == ".git/x"
    assert protected_root("s/x", ["s/"]) == "s/"


def test_a_link_outside_that_leads_into_a_protected_path(tmp_path: Path) -> None:
    ws, elsewhere = tmp_path / "ws", tmp_path / "elsewhere"
    (ws / ".workbench").mkdir(parents=True)
    elsewhere.mkdir()
    (elsewhere / "lnk").symlink_to(ws / ".workbench")
    target = str(elsewhere / "lnk" / "rules.toml")
    args = {"destination": target}
    assert protected_target("s__move", args, builtin=False) is None  # as written: elsewhere
    found = protected_target("s__move", args, builtin=False, root=ws)
    assert found == ".workbench/rules.toml"


def test_the_warning_says_what_the_path_holds() -> None:
    from workbench.permissions.protected import protection_warning

    def warn(path: str) -> str | None:
        return protection_warning("write_file", {"path": path})

    assert warn("workbench.toml") == (
        "Protected path: this call changes workbench.toml, which holds the project's "
        "workbench configuration (tools it imports, rules, servers)."
    )
    assert warn("a/pyproject.toml") == (
        "Protected path: this call changes a/pyproject.toml, which holds the project's "
        "configuration ([tool.workbench] among it)."
    )
    assert warn("vendor/lib/.git/config") == (
        "Protected path: this call changes vendor/lib/.git/config, which holds git's internals "
        "(hooks there run on your next commit)."
    )
    assert warn("src/a.py") is None
    assert protection_warning("read_file", {"path": ".git/x"}) is None  # a reader by default
