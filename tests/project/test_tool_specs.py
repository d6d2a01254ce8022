"""`--tools SPEC`: your own tools from a file or a module, and the errors you get when
a spec is wrong (your traceback, both origins of a duplicate, what was found instead)."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from workbench.__main__ import main
from workbench.agent import AgentToolResult, BeforeToolCallContext, ToolCall
from workbench.agent.abort import AbortController
from workbench.project import ToolSpecError, load_tools
from workbench.runtime import RunOptions, build_runtime

TOOLS = '''
    import json                                   # imported: not a tool
    from workbench.agent import AgentTool, tool
    from siblings import shared_word              # the project dir is on sys.path

    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    @tool
    async def shout(text: str) -> str:
        """Shout it."""
        return text.upper() + shared_word

    def untyped(x):
        return x

    def _private(x: int) -> int:
        return x

    def progress(steps: int, on_update, signal) -> str:
        """Report progress."""
        for i in range(steps):
            on_update(f"step {i + 1}")
        return f"aborted={signal.aborted}"
'''


def write(directory: Path, name: str, text: str) -> Path:
    path = directory / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    write(tmp_path, "siblings.py", "shared_word = '!'\n")
    write(tmp_path, "agent_tools.py", TOOLS)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_a_file_gives_its_own_top_level_tools_in_order_with_their_origin(project: Path) -> None:
    tools = load_tools(["./agent_tools.py"], project)
    assert [t.name for t in tools] == ["add", "shout", "progress"]
    assert [t.source for t in tools] == [
        "file agent_tools.py:6",
        "file agent_tools.py:10",
        "file agent_tools.py:21",
    ]
    add = tools[0]
    assert add.description == "Add two numbers."
    assert add.json_schema["properties"]["a"]["type"] == "integer"


async def test_plain_functions_run_sync_and_get_on_update_and_signal(project: Path) -> None:
    tools = {t.name: t for t in load_tools(["agent_tools.py"], project)}
    signal = AbortController().signal
    params = tools["add"].parameters.model_validate({"a": 2, "b": 3})  # type: ignore[union-attr]
    updates: list[AgentToolResult] = []
    result = await tools["add"].execute("c1", params, signal, updates.append)
    assert result.content[0].text == "5"  # type: ignore[union-attr]
    params = tools["progress"].parameters.model_validate({"steps": 2})  # type: ignore[union-attr]
    result = await tools["progress"].execute("c2", params, signal, updates.append)
    assert updates == ["step 1", "step 2"]  # the loop makes results of them
    assert result.content[0].text == "aborted=False"  # type: ignore[union-attr]
    params = tools["shout"].parameters.model_validate({"text": "hi"})  # type: ignore[union-attr]
    result = await tools["shout"].execute("c3", params, signal, updates.append)
    assert result.content[0].text == "HI!"  # type: ignore[union-attr]


def test_attr_specs_pick_one_object_or_a_list(project: Path) -> None:
    write(
        project,
        "listed.py",
        """
        from agent_tools import shout
        def one(x: str) -> str:
            return x
        TOOLS = [shout, one]
    """,
    )
    assert [t.name for t in load_tools(["listed.py:TOOLS"], project)] == ["shout", "one"]
    assert [t.name for t in load_tools(["agent_tools:add"], project)] == ["add"]
    assert load_tools(["agent_tools:add"], project)[0].source == "file agent_tools.py:6"


@pytest.mark.parametrize(
    ("spec", "needle"),
    [
        ("agent_tools.py:json", "json is a module, not a tool"),
        ("agent_tools.py:untyped", "untyped is a function without type hints"),
        ("agent_tools.py:nope", "has no attribute 'nope'"),
        ("missing.py", "no such file"),
        ("no_such_module", "no module named 'no_such_module'"),
    ],
)
def test_a_spec_that_names_no_tool_says_why(project: Path, spec: str, needle: str) -> None:
    with pytest.raises(ToolSpecError, match=needle):
        load_tools([spec], project)


def test_a_file_without_tools_says_what_it_found(project: Path) -> None:
    write(
        project,
        "helpers.py",
        """
        def helper(x):
            return x
        class Thing:
            pass
    """,
    )
    with pytest.raises(ToolSpecError) as caught:
        load_tools(["helpers.py"], project)
    message = str(caught.value)
    assert "no tools found" in message
    assert "functions without type hints on every parameter: helper" in message
    assert "classes: Thing" in message


def test_an_import_error_shows_the_users_frames_only_and_exits_2(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(
        project,
        "broken.py",
        """
        def helper():
            return undefined_name
        helper()
    """,
    )
    assert (
        main(["--headless", "go", "--tools", "broken.py", "--scenario", "demo", "--no-record"]) == 2
    )
    err = capsys.readouterr().err
    assert "Traceback" in err and 'broken.py", line 4' in err and 'broken.py", line 3' in err
    assert "NameError: name 'undefined_name' is not defined" in err
    assert "importlib" not in err and "tool_specs.py" not in err and "__main__" not in err


def test_a_name_defined_twice_is_refused_with_both_origins(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(
        project,
        "more.py",
        """
        def add(x: int) -> int:
            return x
    """,
    )
    assert (
        main(
            ["--headless", "go", "--tools", "agent_tools.py", "--tools", "more.py"]
            + ["--scenario", "demo", "--no-record"]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert "'add' is defined twice: file agent_tools.py:6 and file more.py:2" in err
    write(
        project,
        "mine.py",
        """
        def read_file(path: str) -> str:
            return path
    """,
    )
    assert (
        main(["--headless", "go", "--tools", "mine.py", "--scenario", "demo", "--no-record"]) == 2
    )
    assert "'read_file' is defined twice: builtin and file mine.py:2" in capsys.readouterr().err


def test_builtin_tools_are_chosen_by_name_or_none(project: Path) -> None:
    def names(**kw: Any) -> list[str]:
        runtime = build_runtime(RunOptions(workspace=project, record=False, **kw))
        return [t.name for t in runtime.agent.state.tools]

    assert len(names()) == 6
    assert names(builtin_tools=["run_command", "read_file"]) == ["run_command", "read_file"]
    assert names(builtin_tools=[], tool_specs=["agent_tools.py"]) == ["add", "shout", "progress"]
    with pytest.raises(ValueError, match="no built-in tool 'cat'"):
        names(builtin_tools=["cat"])


async def test_your_read_file_is_not_allowed_by_the_builtin_default(project: Path) -> None:
    write(
        project,
        "mine.py",
        """
        def read_file(path: str) -> str:
            return path
    """,
    )
    runtime = build_runtime(
        RunOptions(
            workspace=project,
            record=False,
            builtin_tools=[],
            tool_specs=["mine.py"],
            approve="rules",
        )
    )
    tool = runtime.agent.state.tools[0]
    call = ToolCall(id="c", name="read_file", arguments={"path": "x"})
    args = tool.parameters.model_validate({"path": "x"})  # type: ignore[union-attr]
    ctx = BeforeToolCallContext(None, call, args, None, tool)  # type: ignore[arg-type]
    decision = await runtime.gate(ctx)
    assert decision is not None and decision.block and "no allow rule" in (decision.reason or "")
