"""The built-in file tools on real files in a temporary workspace."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

import workbench.tools.list_directory as list_directory_mod
import workbench.tools.read_file as read_file_mod
from workbench.agent import AbortController, AgentTool, AgentToolResult
from workbench.agent.arguments import run_argument_pipeline
from workbench.agent.types import ToolCall
from workbench.tools import READ_ONLY_TOOLS, WorkspaceError, builtin_tools
from workbench.tools.edit_file import fold_flat_edit


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "src" / "pkg" / "mod.py").write_text("def f():\n    return 1\n")
    (root / "src" / "app.py").write_text("import pkg\nAPI = 'x'\n")
    (root / "README.md").write_text("# demo\nSee apiBaseUrl.\n")
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text("apiBaseUrl in git\n")
    (root / "node_modules" / "dep").mkdir(parents=True)
    (root / "node_modules" / "dep" / "index.js").write_text("apiBaseUrl\n")
    return root


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    secret = tmp_path / "outside"
    secret.mkdir()
    (secret / "secret.txt").write_text("TOP SECRET apiBaseUrl\n")
    return secret


def tools_for(root: Path) -> dict[str, AgentTool]:
    return {t.name: t for t in builtin_tools(root)}


async def run(root: Path, name: str, **args: Any) -> AgentToolResult:
    tool = tools_for(root)[name]
    params = tool.parameters.model_validate(args)
    return await tool.execute("call-1", params, AbortController().signal, lambda _u: None)


def text(result: AgentToolResult) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


def test_builtin_tools_are_the_six_bound_builtins(ws: Path) -> None:
    tools = builtin_tools(ws)
    assert [t.name for t in tools] == [
        "read_file",
        "list_directory",
        "search_files",
        "write_file",
        "edit_file",
        "run_command",
    ]
    assert all(t.source == "builtin" for t in tools)
    assert READ_ONLY_TOOLS == ("read_file", "list_directory", "search_files")
    for t in tools:  # every parameter is described for the model
        props = t.json_schema["properties"]
        assert all(p.get("description") for p in props.values()), t.name


# -- read_file -----------------------------------------------------------------------


async def test_read_file_whole_file(ws: Path) -> None:
    result = await run(ws, "read_file", path="src/app.py")
    assert text(result) == "import pkg\nAPI = 'x'\n"
    assert result.details["total_lines"] == 2 and result.details["truncated"] is False


async def test_read_file_line_range_and_continue_notice(ws: Path) -> None:
    (ws / "n.txt").write_text("".join(f"line {i}\n" for i in range(1, 11)))
    result = await run(ws, "read_file", path="n.txt", offset=3, limit=2)
    assert text(result).startswith("line 3\nline 4\n")
    assert "[6 more lines in file. Use offset=5 to continue.]" in text(result)
    assert (result.details["start_line"], result.details["end_line"]) == (3, 4)
    tail = await run(ws, "read_file", path="n.txt", offset=9)
    assert text(tail) == "line 9\nline 10\n"


async def test_read_file_line_cap(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(read_file_mod, "MAX_LINES", 5)
    (ws / "n.txt").write_text("".join(f"{i}\n" for i in range(1, 21)))
    result = await run(ws, "read_file", path="n.txt")
    assert text(result).startswith("1\n2\n3\n4\n5\n\n[Showing lines 1-5 of 20 (5 lines limit)")
    assert "offset=6" in text(result)
    assert result.details["truncated_by"] == "lines"


async def test_read_file_byte_cap(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(read_file_mod, "MAX_BYTES", 1024)
    (ws / "wide.txt").write_text("".join(f"{i:04d}" + "x" * 95 + "\n" for i in range(50)))
    result = await run(ws, "read_file", path="wide.txt")
    body = text(result)
    assert body.count("\n0") <= 10 and "[Showing lines 1-10 of 50 (1KB limit)" in body
    assert "Use offset=11 to continue." in body


async def test_read_file_single_overlong_line(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(read_file_mod, "MAX_BYTES", 100)
    (ws / "long.txt").write_text("a" * 500 + "\nshort\n")
    result = await run(ws, "read_file", path="long.txt")
    assert text(result).startswith("a" * 100 + "\n\n[Line 1 is longer than")


async def test_read_file_refuses_binary(ws: Path) -> None:
    (ws / "img.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))
    with pytest.raises(ValueError, match="img.png is a binary file"):
        await run(ws, "read_file", path="img.png")


async def test_read_file_missing_raises(ws: Path) -> None:
    with pytest.raises(FileNotFoundError, match="File not found: docs/setup.md"):
        await run(ws, "read_file", path="docs/setup.md")


async def test_read_file_directory_and_offset_errors(ws: Path) -> None:
    with pytest.raises(IsADirectoryError, match="use list_directory"):
        await run(ws, "read_file", path="src")
    with pytest.raises(ValueError, match="offset 9 is past the end of src/app.py \\(2 lines\\)"):
        await run(ws, "read_file", path="src/app.py", offset=9)
    (ws / "empty.txt").write_text("")
    assert text(await run(ws, "read_file", path="empty.txt")) == "[The file is empty]"


async def test_special_files_are_refused_without_blocking(ws: Path) -> None:
    os.mkfifo(ws / "pipe")
    for name, args in [
        ("read_file", {}),
        ("write_file", {"content": "x"}),
        ("edit_file", {"edits": [{"old_text": "a", "new_text": "b"}]}),
    ]:
        with pytest.raises(ValueError, match="pipe is not a regular file"):
            await run(ws, name, path="pipe", **args)
    assert "pipe" not in text(await run(ws, "search_files", pattern="x"))


# -- workspace confinement -----------------------------------------------------------

ESCAPES = {
    "dotdot": lambda out: "../outside/secret.txt",
    "dotdot_inside_first": lambda out: "src/../../outside/secret.txt",
    "absolute": lambda out: str(out / "secret.txt"),
    "home": lambda out: "~/secret.txt",
    "file_symlink": lambda out: "link.txt",
    "dir_symlink": lambda out: "linkdir/secret.txt",
}


@pytest.fixture
def linked(ws: Path, outside: Path) -> Path:
    (ws / "link.txt").symlink_to(outside / "secret.txt")
    (ws / "linkdir").symlink_to(outside, target_is_directory=True)
    return ws


@pytest.mark.parametrize("how", sorted(ESCAPES))
async def test_read_file_escapes_are_refused(linked: Path, outside: Path, how: str) -> None:
    with pytest.raises(WorkspaceError, match="outside the workspace|home directory"):
        await run(linked, "read_file", path=ESCAPES[how](outside))


@pytest.mark.parametrize("how", sorted(ESCAPES))
async def test_write_file_escapes_write_nothing(linked: Path, outside: Path, how: str) -> None:
    before = sorted(p.name for p in outside.iterdir())
    with pytest.raises(WorkspaceError):
        await run(linked, "write_file", path=ESCAPES[how](outside), content="pwned")
    assert (outside / "secret.txt").read_text() == "TOP SECRET apiBaseUrl\n"
    assert sorted(p.name for p in outside.iterdir()) == before


@pytest.mark.parametrize("how", sorted(ESCAPES))
async def test_edit_file_escapes_change_nothing(linked: Path, outside: Path, how: str) -> None:
    with pytest.raises(WorkspaceError):
        await run(
            linked,
            "edit_file",
            path=ESCAPES[how](outside),
            edits=[{"old_text": "TOP SECRET", "new_text": "public"}],
        )
    assert (outside / "secret.txt").read_text() == "TOP SECRET apiBaseUrl\n"


@pytest.mark.parametrize("name", ["list_directory", "search_files"])
@pytest.mark.parametrize("path", ["..", "../outside", "linkdir", "/"])
async def test_listing_and_searching_outside_is_refused(linked: Path, name: str, path: str) -> None:
    args = {"path": path} if name == "list_directory" else {"path": path, "pattern": "SECRET"}
    with pytest.raises(WorkspaceError):
        await run(linked, name, **args)


async def test_symlinks_are_never_followed_out_by_listing_or_search(linked: Path) -> None:
    listing = text(await run(linked, "list_directory", path=".", depth=3))
    assert "link.txt -> (outside the workspace)" in listing
    assert "linkdir -> (outside the workspace)" in listing
    assert "secret.txt" not in listing.replace("link.txt", "")
    found = await run(linked, "search_files", pattern="SECRET")
    assert "TOP SECRET" not in text(found)


async def test_paths_that_stay_inside_are_fine(ws: Path) -> None:
    assert text(await run(ws, "read_file", path="src/pkg/../app.py")).startswith("import pkg")
    assert text(await run(ws, "read_file", path=str(ws / "README.md"))).startswith("# demo")
    (ws / "inner_link.py").symlink_to(ws / "src" / "app.py")
    assert text(await run(ws, "read_file", path="inner_link.py")).startswith("import pkg")


# -- list_directory ------------------------------------------------------------------


async def test_list_directory_depth_and_ignores(ws: Path) -> None:
    one = await run(ws, "list_directory", path=".")
    assert text(one).splitlines() == ["README.md", "src/"]
    assert sorted(one.details["skipped"]) == [".git", "node_modules"]
    deep = await run(ws, "list_directory", path=".", depth=3)
    assert text(deep).splitlines() == [
        "README.md",
        "src/",
        "src/app.py",
        "src/pkg/",
        "src/pkg/mod.py",
    ]
    sub = await run(ws, "list_directory", path="src", depth=2, ignore=["*.py"])
    assert text(sub).splitlines() == ["pkg/"]


async def test_list_directory_errors_and_cap(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(NotADirectoryError, match="use read_file"):
        await run(ws, "list_directory", path="README.md")
    with pytest.raises(FileNotFoundError, match="File not found: nope"):  # as for a hidden one
        await run(ws, "list_directory", path="nope")
    monkeypatch.setattr(list_directory_mod, "MAX_ENTRIES", 3)
    capped = await run(ws, "list_directory", path=".", depth=3)
    assert len(text(capped).split("\n\n")[0].splitlines()) == 3
    assert "[Listing stopped at 3 entries" in text(capped) and capped.details["truncated"]


# -- search_files --------------------------------------------------------------------


async def test_search_files_paths_and_line_numbers(ws: Path) -> None:
    (ws / "src" / "cfg.json").write_text('{\n  "apiBaseUrl": "http://x"\n}\n')
    result = await run(ws, "search_files", pattern=r"apiBase\w+")
    assert text(result).splitlines() == [
        "README.md:2: See apiBaseUrl.",
        'src/cfg.json:2:   "apiBaseUrl": "http://x"',
    ]  # .git and node_modules are not searched
    assert result.details["matches"] == 2


async def test_search_files_glob_case_and_limits(ws: Path) -> None:
    assert text(await run(ws, "search_files", pattern="api", glob="*.py")) == (
        "No matches for 'api' in 2 files."
    )
    hit = await run(ws, "search_files", pattern="api", glob="*.py", ignore_case=True)
    assert text(hit) == "src/app.py:2: API = 'x'"
    (ws / "many.txt").write_text("hit\n" * 10)
    capped = await run(ws, "search_files", pattern="hit", path="many.txt", max_results=3)
    assert text(capped).startswith("many.txt:1: hit\nmany.txt:2: hit\nmany.txt:3: hit\n\n[Stopped")
    (ws / "blob.bin").write_bytes(b"hit\x00\x01")
    assert "blob.bin" not in text(await run(ws, "search_files", pattern="hit"))


async def test_search_files_bad_regex_is_a_clear_error(ws: Path) -> None:
    with pytest.raises(ValueError, match=r"Invalid regular expression '\(unclosed'"):
        await run(ws, "search_files", pattern="(unclosed")


# -- write_file ----------------------------------------------------------------------


async def test_write_file_creates_parents_and_overwrites(ws: Path) -> None:
    made = await run(ws, "write_file", path="docs/new/setup.md", content="héllo\n")
    assert (ws / "docs/new/setup.md").read_text(encoding="utf-8") == "héllo\n"
    assert made.details == {"path": "docs/new/setup.md", "bytes": 7, "lines": 1, "created": True}
    assert text(made) == "Created docs/new/setup.md (7 bytes)"
    again = await run(ws, "write_file", path="docs/new/setup.md", content="a\r\nb")
    assert (ws / "docs/new/setup.md").read_bytes() == b"a\r\nb"
    assert text(again).startswith("Overwrote") and again.details["created"] is False
    with pytest.raises(IsADirectoryError):
        await run(ws, "write_file", path="src", content="x")


# -- edit_file -----------------------------------------------------------------------


async def test_edit_file_applies_all_edits_against_the_original(ws: Path) -> None:
    target = ws / "src" / "app.py"
    result = await run(
        ws,
        "edit_file",
        path="src/app.py",
        edits=[
            {"old_text": "API = 'x'", "new_text": "API = 'y'\nDEBUG = True"},
            {"old_text": "import pkg", "new_text": "import pkg  # local"},
        ],
    )
    assert target.read_text() == "import pkg  # local\nAPI = 'y'\nDEBUG = True\n"
    assert result.details["first_changed_line"] == 1
    assert "-API = 'x'" in result.details["diff"] and "+DEBUG = True" in result.details["diff"]


@pytest.mark.parametrize(
    ("edits", "message"),
    [
        ([{"old_text": "nope", "new_text": "x"}], r"edits\[0\].old_text was not found"),
        (
            [{"old_text": "return 1", "new_text": "x"}, {"old_text": "e", "new_text": "E"}],
            r"edits\[1\].old_text occurs 2 times",
        ),
        (
            [
                {"old_text": "def f():", "new_text": "a"},
                {"old_text": "f():\n    ret", "new_text": "b"},
            ],
            r"edits\[0\] and edits\[1\] overlap",
        ),
        ([{"old_text": "return 1", "new_text": "return 1"}], "No changes made"),
    ],
)
async def test_edit_file_failures_write_nothing(ws: Path, edits: Any, message: str) -> None:
    target = ws / "src" / "pkg" / "mod.py"
    before = target.read_bytes()
    with pytest.raises(ValueError, match=message):
        await run(ws, "edit_file", path="src/pkg/mod.py", edits=edits)
    assert target.read_bytes() == before


async def test_edit_file_keeps_crlf_and_bom(ws: Path) -> None:
    target = ws / "win.txt"
    target.write_bytes("\ufeffone\r\ntwo\r\nthree\r\n".encode())
    await run(ws, "edit_file", path="win.txt", edits=[{"old_text": "one\ntwo", "new_text": "1\n2"}])
    assert target.read_bytes() == "\ufeff1\r\n2\r\nthree\r\n".encode()


async def test_edit_file_missing_file(ws: Path) -> None:
    with pytest.raises(FileNotFoundError, match="File not found: nope.txt"):
        await run(ws, "edit_file", path="nope.txt", edits=[{"old_text": "a", "new_text": "b"}])


def test_prepare_arguments_folds_the_flat_form() -> None:
    flat = {"path": "a.py", "old_text": "x", "new_text": "y"}
    assert fold_flat_edit(flat) == {"path": "a.py", "edits": [{"old_text": "x", "new_text": "y"}]}
    assert flat == {"path": "a.py", "old_text": "x", "new_text": "y"}  # pure
    camel = {"path": "a.py", "oldText": "x", "newText": "y"}
    assert fold_flat_edit(camel)["edits"] == [{"old_text": "x", "new_text": "y"}]
    both = {
        "path": "a",
        "edits": [{"oldText": "1", "newText": "2"}],
        "old_text": "x",
        "new_text": "y",
    }
    assert fold_flat_edit(both)["edits"] == [
        {"old_text": "1", "new_text": "2"},
        {"old_text": "x", "new_text": "y"},
    ]
    odd = {"path": "a", "edits": "add apiBaseUrl after model"}
    assert fold_flat_edit(odd) == odd


def test_edit_file_argument_pipeline(ws: Path) -> None:
    """The demo's malformed call fails validation; its flat retry validates."""
    tools = builtin_tools(ws)
    bad = ToolCall(id="c1", name="edit_file", arguments={"path": "a", "edits": "add it"})
    outcome = run_argument_pipeline(bad, tools)
    assert outcome.error is not None and outcome.error.stage == "validate"
    assert "edits: Input should be a valid list" in str(outcome.error)
    flat = ToolCall(
        id="c2", name="edit_file", arguments={"path": "a", "old_text": "x", "new_text": "y"}
    )
    good = run_argument_pipeline(flat, tools)
    assert good.error is None and good.validated is not None
    assert good.prepared == {"path": "a", "edits": [{"old_text": "x", "new_text": "y"}]}


def test_workspace_must_be_a_directory(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("")
    with pytest.raises(NotADirectoryError):
        builtin_tools(tmp_path / "f")
    assert os.path.isdir(tmp_path)
