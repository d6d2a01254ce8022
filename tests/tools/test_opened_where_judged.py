"""Files are opened where they were judged (issue 36).

A directory swapped for a symlink between the judgement and the open cannot lead a
read or a write outside the workspace; a hard link to a hidden file reads as a
missing file; a hidden file and a missing one get the same message from every file
tool; no message names the workspace's absolute path.
"""

from __future__ import annotations

import ctypes
import os
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from workbench.agent import AbortController
from workbench.tools import builtin_tools
from workbench.tools.workspace import Workspace, WorkspaceError

EDIT = {"old_text": "TOKEN", "new_text": "x"}


@pytest.fixture
def layout(tmp_path: Path) -> tuple[Path, Path]:
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    (ws / "d").mkdir(parents=True)
    (ws / "d" / "f.txt").write_text("inside\n")
    (ws / "a.txt").write_text("a\n")
    (ws / ".env").write_text("TOKEN=hunter2\n")
    (ws / "secrets").mkdir()
    (ws / "secrets" / "key.txt").write_text("TOKEN key\n")
    outside.mkdir()
    (outside / "f.txt").write_text("OUTSIDE SECRET\n")
    return ws, outside


def tools_for(ws: Path, may_read: Callable[[str], bool] | None = None) -> dict[str, Any]:
    return {t.name: t for t in builtin_tools(ws, may_read)}


def hide(rel: str) -> bool:
    """The gate's `may_read` under DENY."""
    return not (rel == ".env" or rel.startswith("secrets/"))


async def call(tool: Any, **args: Any) -> Any:
    params = tool.parameters.model_validate(args)
    return await tool.execute("c1", params, AbortController().signal, None)


async def outcome(tool: Any, **args: Any) -> str:
    """The text the model sees: the result, or the error the loop reports."""
    try:
        return (await call(tool, **args)).content[0].text  # type: ignore[no-any-return]
    except Exception as exc:  # noqa: BLE001 - what the model is shown
        return str(exc)


def swap(ws: Path, outside: Path) -> None:
    """`ws/d` becomes a symlink to `outside` (its directory kept aside)."""
    os.rename(ws / "d", ws / "d.kept")
    os.symlink(outside, ws / "d")


# -- a swap between judgement and open -------------------------------------------------


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("write_file", {"path": "d/new.txt", "content": "PWNED"}),
        ("write_file", {"path": "d/f.txt", "content": "PWNED"}),
        ("edit_file", {"path": "d/f.txt", "edits": [{"old_text": "OUTSIDE", "new_text": "PWNED"}]}),
        ("read_file", {"path": "d/f.txt"}),
        ("search_files", {"pattern": "SECRET", "path": "d"}),
        ("search_files", {"pattern": "SECRET", "path": "d/f.txt"}),
        ("list_directory", {"path": "d"}),
    ],
)
async def test_a_directory_swapped_right_after_the_judgement_is_never_followed(
    layout: tuple[Path, Path], name: str, args: dict[str, Any]
) -> None:
    ws, outside = layout
    space = Workspace(ws)
    judge = space.resolve

    def judged_then_swapped(path: str) -> Path:
        real = judge(path)  # what the gate judged: inside
        if (ws / "d").is_dir() and not (ws / "d").is_symlink():
            swap(ws, outside)
        return real

    space.resolve = judged_then_swapped  # type: ignore[method-assign]
    tool = {t.name: t for t in builtin_tools(space.root, None)}[name]
    tool = _bound(tool, space)
    text = await outcome(tool, **args)
    assert "changed while it was being opened" in text
    assert "SECRET" not in text and "f.txt" not in text.replace("d/f.txt", "")
    assert sorted(p.name for p in outside.iterdir()) == ["f.txt"]
    assert (outside / "f.txt").read_text() == "OUTSIDE SECRET\n"


def _bound(tool: Any, space: Workspace) -> Any:
    """The same tool, built on `space` (whose resolve the test wrapped)."""
    from workbench.tools import edit_file, list_directory, read_file, search_files, write_file

    makers = {
        "read_file": read_file.make_read_file,
        "write_file": write_file.make_write_file,
        "edit_file": edit_file.make_edit_file,
        "list_directory": list_directory.make_list_directory,
        "search_files": search_files.make_search_files,
    }
    return makers[tool.name](space)


def exchange(a: Path, b: Path) -> None:
    """Swap two names in one step (renameat2 RENAME_EXCHANGE): `a` is never missing."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.renameat2(-100, os.fsencode(a), -100, os.fsencode(b), 2) != 0:  # AT_FDCWD, EXCHANGE
        errno = ctypes.get_errno()
        raise OSError(errno, os.strerror(errno), str(a))


async def test_racing_swaps_never_put_a_file_outside(layout: tuple[Path, Path]) -> None:
    """A thread swaps `d` with a link outside, atomically and without pause, while
    writes go on: each write lands inside or is refused; none ever lands outside. The
    writes go on until both have happened many times, so the race was really run."""
    ws, outside = layout
    os.symlink(outside, ws / "link")
    write = tools_for(ws)["write_file"]
    stop = threading.Event()

    def flipper() -> None:
        while not stop.is_set():
            exchange(ws / "d", ws / "link")

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible: the race is hit often
    thread = threading.Thread(target=flipper, daemon=True)
    thread.start()
    landed = refused = 0
    try:
        while landed < 50 or refused < 50:
            assert thread.is_alive(), "the flipper stopped"
            text = await outcome(write, path=f"d/w{landed + refused}.txt", content="x")
            if text.startswith("Created"):
                landed += 1
            else:
                assert "symlink" in text or "changed while it was being" in text, text
                assert str(ws) not in text
                refused += 1
    finally:
        stop.set()
        thread.join()
        sys.setswitchinterval(interval)
    if (ws / "d").is_symlink():
        exchange(ws / "d", ws / "link")
    assert sorted(p.name for p in outside.iterdir()) == ["f.txt"]
    assert len(list((ws / "d").iterdir())) == landed + 1  # f.txt and every write that landed


# -- hard links --------------------------------------------------------------------------


@pytest.mark.parametrize("target", [".env", "secrets/key.txt"])
async def test_a_hard_link_of_a_hidden_file_reads_as_missing(
    layout: tuple[Path, Path], target: str
) -> None:
    ws, _ = layout
    os.link(ws / target, ws / "notes.txt")  # what an allowed `ln .env notes.txt` makes
    os.link(ws / target, ws / "d" / "deep.txt")
    tools = tools_for(ws, hide)
    for path in ("notes.txt", "d/deep.txt"):
        assert await outcome(tools["read_file"], path=path) == f"File not found: {path}"
        edited = await outcome(tools["edit_file"], path=path, edits=[EDIT])
        assert edited == f"File not found: {path}"
    found = await call(tools["search_files"], pattern="TOKEN")
    assert found.content[0].text.startswith("No matches")
    assert found.details["files_hidden"] == 4
    assert (ws / target).read_text().startswith("TOKEN")


async def test_a_hard_link_of_a_file_outside_reads_as_missing(layout: tuple[Path, Path]) -> None:
    ws, outside = layout
    os.link(outside / "f.txt", ws / "copy.txt")
    tools = tools_for(ws, hide)
    assert await outcome(tools["read_file"], path="copy.txt") == "File not found: copy.txt"


async def test_hard_links_among_visible_files_still_read(layout: tuple[Path, Path]) -> None:
    ws, _ = layout
    os.link(ws / "a.txt", ws / "b.txt")
    tools = tools_for(ws, hide)
    assert await outcome(tools["read_file"], path="b.txt") == "a\n"


# -- one message for hidden and missing; no absolute paths -------------------------------


async def test_hidden_and_missing_read_the_same_in_every_tool(layout: tuple[Path, Path]) -> None:
    ws, _ = layout
    tools = tools_for(ws, hide)
    for hidden, missing in ((".env", ".envx"), ("secrets/key.txt", "secrets/nope.txt")):
        for name, args in (
            ("list_directory", {}),
            ("search_files", {"pattern": "TOKEN"}),
        ):
            seen = await outcome(tools[name], path=hidden, **args)
            gone = await outcome(tools[name], path=missing, **args)
            assert seen == f"File not found: {hidden}" and gone == f"File not found: {missing}"
    wrote = await call(tools["write_file"], path="secrets/key.txt", content="x")
    made = await call(tools["write_file"], path="secrets/new.txt", content="x")
    assert wrote.content[0].text == "Wrote secrets/key.txt (1 bytes)"
    assert made.content[0].text == "Wrote secrets/new.txt (1 bytes)"
    assert wrote.details.keys() == made.details.keys() and "created" not in wrote.details
    shown = await call(tools["write_file"], path="b.txt", content="x")
    assert shown.content[0].text == "Created b.txt (1 bytes)" and shown.details["created"]
    assert await outcome(tools["read_file"], path="nope") == "File not found: nope"
    assert await outcome(tools["edit_file"], path="nope", edits=[EDIT]) == "File not found: nope"


async def test_no_message_names_the_workspace(layout: tuple[Path, Path]) -> None:
    ws, _ = layout
    os.mkfifo(ws / "pipe")
    tools = tools_for(ws)
    attempts = [
        ("write_file", {"path": "a.txt/b", "content": "x"}),
        ("write_file", {"path": "a.txt/b/c", "content": "x"}),
        ("write_file", {"path": "d", "content": "x"}),
        ("write_file", {"path": "pipe", "content": "x"}),
        ("read_file", {"path": "a.txt/b"}),
        ("read_file", {"path": "pipe"}),
        ("edit_file", {"path": "a.txt/b", "edits": [EDIT]}),
        ("list_directory", {"path": "a.txt"}),
        ("list_directory", {"path": "a.txt/b"}),
        ("search_files", {"pattern": "x", "path": "a.txt/b"}),
    ]
    for name, args in attempts:
        text = await outcome(tools[name], **args)
        assert str(ws) not in text and str(ws.parent) not in text, (name, args, text)
    os.chmod(ws / "d", 0o500)
    try:
        text = await outcome(tools["write_file"], path="d/sub/x.txt", content="x")
    finally:
        os.chmod(ws / "d", 0o700)
    assert str(ws) not in text


def test_open_refuses_a_link_in_the_path_even_without_a_race(layout: tuple[Path, Path]) -> None:
    from workbench.tools.opening import PathChanged, open_under

    ws, outside = layout
    swap(ws, outside)
    with pytest.raises(PathChanged):
        open_under(ws, "d/f.txt", os.O_RDONLY)
    with pytest.raises(PathChanged):
        open_under(ws, "d", os.O_RDONLY)
    with pytest.raises(PathChanged):
        open_under(ws, "d/x/y.txt", os.O_WRONLY | os.O_CREAT, make_parents=True)
    assert sorted(p.name for p in outside.iterdir()) == ["f.txt"]
    with pytest.raises(WorkspaceError):
        Workspace(ws).open("d/f.txt", os.O_RDONLY)  # judged: the link leads outside
