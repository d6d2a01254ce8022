"""`read_file` and `edit_file` on huge files: small memory, a clear message."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

import workbench.tools.edit_file as edit_file_mod
import workbench.tools.read_file as read_file_mod
from workbench.agent import AbortController, AgentToolResult
from workbench.tools import builtin_tools


async def run(root: Path, name: str, **args: Any) -> AgentToolResult:
    tool = next(t for t in builtin_tools(root) if t.name == name)
    return await tool.execute(
        "c", tool.parameters.model_validate(args), AbortController().signal, lambda _u: None
    )


def sparse(path: Path, head: str, size: int) -> None:
    """A text head, then a hole: one endless line of NUL characters, no newline."""
    path.write_text(head)
    os.truncate(path, size)


async def test_read_file_reads_a_window_of_a_huge_file_without_holding_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(read_file_mod, "MAX_SCAN_CHARS", 1024 * 1024)
    sparse(tmp_path / "big.log", "".join(f"line {i}\n" * 1 for i in range(1, 2000)), 8 << 20)
    held: list[int] = []
    real = read_file_mod._Window.take

    def spy(self: Any, line: str, size: int) -> int:
        held.append(len(line))
        return real(self, line, size)

    monkeypatch.setattr(read_file_mod._Window, "take", spy)
    result = await run(tmp_path, "read_file", path="big.log", limit=5)
    text = result.content[0].text  # type: ignore[union-attr]
    assert text.startswith("line 1\nline 2\nline 3\nline 4\nline 5\n\n[Showing lines 1-5; ")
    assert "the file goes on (8388608 bytes in all" in text and "Use offset=6" in text
    assert result.details["total_lines"] is None
    assert max(held) < 100  # only the five lines were held, not the 8 MB line


async def test_read_file_keeps_only_the_start_of_an_endless_line(tmp_path: Path) -> None:
    (tmp_path / "one.txt").write_text("x" * 3_000_000)
    result = await run(tmp_path, "read_file", path="one.txt")
    text = result.content[0].text  # type: ignore[union-attr]
    assert text.startswith("x" * 1000) and "Line 1 is longer than the 50KB limit" in text
    assert len(text) < 52_000


async def test_edit_file_refuses_a_file_over_its_cap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(edit_file_mod, "MAX_EDIT_BYTES", 1024 * 1024)
    sparse(tmp_path / "big.txt", "needle\n" + "hay\n" * 4096, 4 << 20)
    edits = [{"old_text": "needle", "new_text": "pin"}]
    refused = r"big.txt is 4194304 bytes; edit_file edits files up to 1 MB"
    with pytest.raises(ValueError, match=refused):
        await run(tmp_path, "edit_file", path="big.txt", edits=edits)
    assert (tmp_path / "big.txt").read_bytes()[:7] == b"needle\n"
