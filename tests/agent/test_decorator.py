"""The @tool decorator: schema from the signature, docstring descriptions, the
single-model form, injected parameters, and return value conversion."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import pytest
from tests.agent.helpers import FakeStream, assistant, call, run_loop, text_of
from pydantic import BaseModel, Field

from workbench.agent import (
    AbortSignal,
    AgentTool,
    AgentToolResult,
    ImageContent,
    TextContent,
    to_tool_result,
    tool,
)


@tool
async def read_file(path: str, limit: int = 100, mode: Literal["text", "bytes"] = "text") -> str:
    """Read a file from the workspace.

    Only files inside the workspace can be read.

    Args:
        path: Path of the file, relative to
            the workspace root.
        limit (int): Maximum number of lines.

    Returns:
        The file's text.
    """
    return f"{path}:{limit}:{mode}"


class SearchQuery(BaseModel):
    pattern: str = Field(description="A regular expression.")
    paths: list[str] = Field(default_factory=list)


@tool(name="search", label="Search files", execution_mode="sequential")
async def search_tool(
    query: SearchQuery, tool_call_id: str, signal: AbortSignal
) -> AgentToolResult:
    """Search files for a pattern."""
    return AgentToolResult.text(
        f"{tool_call_id}:{query.pattern}:{query.paths}:{signal.aborted}", details={"n": 0}
    )


def test_decorated_function_becomes_an_agent_tool() -> None:
    assert isinstance(read_file, AgentTool)
    assert read_file.name == "read_file" and read_file.label == "Read File"
    assert read_file.description == "Read a file from the workspace."
    assert read_file.execution_mode is None and read_file.prepare_arguments is None


def test_schema_comes_from_the_signature_and_the_docstring() -> None:
    schema = read_file.json_schema
    assert schema == read_file.parameters.model_json_schema()
    assert schema["required"] == ["path"]
    props = schema["properties"]
    assert set(props) == {"path", "limit", "mode"}
    assert props["path"]["type"] == "string"
    assert props["path"]["description"] == "Path of the file, relative to the workspace root."
    assert props["limit"] == {
        "default": 100,
        "description": "Maximum number of lines.",
        "title": "Limit",
        "type": "integer",
    }
    assert props["mode"]["enum"] == ["text", "bytes"] and "description" not in props["mode"]


def test_annotated_field_constraints_and_descriptions_are_kept() -> None:
    @tool
    async def page(
        number: Annotated[int, Field(ge=1, description="1-based page number.")],
        size: Annotated[int, Field(le=50)] = 10,
    ) -> str:
        """Get a page.

        Args:
            number: (the docstring loses to an explicit description)
            size: Items per page.
        """
        return f"{number}/{size}"

    props = page.json_schema["properties"]
    assert (
        props["number"]["minimum"] == 1 and props["number"]["description"] == "1-based page number."
    )
    assert props["size"]["maximum"] == 50 and props["size"]["description"] == "Items per page."
    with pytest.raises(Exception):  # noqa: B017 - pydantic ValidationError
        page.parameters.model_validate({"number": 0})


def test_single_pydantic_model_parameter_is_the_parameters_model() -> None:
    assert search_tool.parameters is SearchQuery
    assert search_tool.name == "search" and search_tool.label == "Search files"
    assert search_tool.execution_mode == "sequential"
    assert search_tool.description == "Search files for a pattern."
    assert set(search_tool.json_schema["properties"]) == {"pattern", "paths"}


def test_injected_parameters_are_not_part_of_the_schema() -> None:
    @tool
    async def progress(steps: int, tool_call_id: str, signal: AbortSignal, on_update: Any) -> str:
        """Report progress."""
        return "ok"

    assert set(progress.json_schema["properties"]) == {"steps"}


def test_explicit_description_and_prepare_arguments() -> None:
    def prepare(args: dict[str, Any]) -> dict[str, Any]:
        return {"path": args.get("file", args.get("path"))}

    @tool(description="Custom description.", prepare_arguments=prepare)
    async def cat(path: str) -> str:
        """Docstring summary."""
        return path

    assert cat.description == "Custom description." and cat.prepare_arguments is prepare


async def test_a_sync_function_runs_in_a_worker_thread_and_streams_updates() -> None:
    import threading

    threads: list[str] = []

    @tool
    def count(to: int, on_update: Any) -> str:
        """Count up."""
        threads.append(threading.current_thread().name)
        for i in range(1, to + 1):
            on_update(AgentToolResult.text(f"at {i}"))
        return f"counted to {to}"

    stream = FakeStream(assistant(call("c", "count", {"to": 2})), assistant("done"))
    run = await run_loop(stream, [count])
    assert threads and threads[0] != threading.main_thread().name
    updates = [e for e in run.rec.events if e.type == "tool_execution_update"]
    assert [text_of(e.partial_result) for e in updates] == ["at 1", "at 2"]
    assert text_of(run.messages[2]) == "counted to 2"


def test_varargs_and_non_functions_are_refused() -> None:
    with pytest.raises(TypeError, match="function"):
        tool(42)  # type: ignore[call-overload]

    with pytest.raises(TypeError, match="args"):

        @tool
        async def splat(*items: str) -> str:
            return ""


def test_function_without_docstring_has_an_empty_description() -> None:
    @tool
    async def bare(x: int) -> int:
        return x

    assert bare.description == "" and bare.json_schema["required"] == ["x"]


async def test_execute_passes_fields_as_keyword_arguments() -> None:
    params = read_file.parameters.model_validate({"path": "a.txt", "limit": 5})
    result = await read_file.execute("id-1", params, AbortSignal(), lambda r: None)
    assert result == AgentToolResult.text("a.txt:5:text")


async def test_execute_injects_call_id_signal_and_the_model_instance() -> None:
    signal = AbortSignal()
    result = await search_tool.execute(
        "call-9", SearchQuery(pattern="x+", paths=["src"]), signal, lambda r: None
    )
    assert text_of(result) == "call-9:x+:['src']:False" and result.details == {"n": 0}


async def test_on_update_is_injected_and_delivers_updates_in_the_loop() -> None:
    @tool
    async def count(to: int, on_update: Any) -> str:
        """Count."""
        for i in range(to):
            on_update(f"{i + 1}/{to}")
        return "counted"

    stream = FakeStream(assistant(call("c", "count", {"to": 3})), assistant("done"))
    run = await run_loop(stream, [count])
    assert [text_of(u.partial_result) for u in run.rec.of("tool_execution_update")] == [
        "1/3",
        "2/3",
        "3/3",
    ]
    assert text_of(run.messages[2]) == "counted"


async def test_decorated_tools_validate_arguments_in_the_loop() -> None:
    stream = FakeStream(
        assistant(
            call("ok", "read_file", {"path": "README.md"}),
            call("bad", "read_file", {"limit": "many"}),
        ),
        assistant("done"),
    )
    run = await run_loop(stream, [read_file])
    ok, bad = run.messages[2], run.messages[3]
    assert text_of(ok) == "README.md:100:text" and not ok.is_error
    assert bad.is_error
    assert "  - path: Field required" in text_of(bad) and "  - limit: " in text_of(bad)


async def test_a_raising_decorated_tool_is_an_error_result() -> None:
    @tool
    async def fail(reason: str) -> str:
        """Fail."""
        raise RuntimeError(reason)

    run = await run_loop(
        FakeStream(assistant(call("f", "fail", {"reason": "no disk"})), assistant("done")), [fail]
    )
    assert run.messages[2].is_error and "no disk" in text_of(run.messages[2])


class Found(BaseModel):
    path: str
    line: int


@pytest.mark.parametrize(
    ("value", "text", "details"),
    [
        ("plain text", "plain text", None),
        (TextContent(text="block"), "block", None),
        ({"a": 1, "b": [1, 2]}, '{"a": 1, "b": [1, 2]}', {"a": 1, "b": [1, 2]}),
        ([1, "two"], '[1, "two"]', [1, "two"]),
        (42, "42", 42),
        (None, "null", None),
        (Found(path="a.py", line=3), '{"path": "a.py", "line": 3}', {"path": "a.py", "line": 3}),
        ({"é": "ü"}, '{"é": "ü"}', {"é": "ü"}),
    ],
)
def test_return_values_are_converted_to_results(value: Any, text: str, details: Any) -> None:
    result = to_tool_result(value)
    assert isinstance(result, AgentToolResult)
    assert text_of(result) == text and result.details == details and result.terminate is False


def test_results_and_content_lists_pass_through() -> None:
    ready = AgentToolResult(content=[TextContent(text="x")], details={"k": 1}, terminate=True)
    assert to_tool_result(ready) is ready
    image = ImageContent(data="aGk=", mime_type="image/png")
    result = to_tool_result([TextContent(text="caption"), image])
    assert result.content == [TextContent(text="caption"), image] and result.details is None
    assert to_tool_result(image).content == [image]


def test_unserialisable_return_values_fall_back_to_str() -> None:
    class Odd:
        def __str__(self) -> str:
            return "odd!"

    assert text_of(to_tool_result({"x": Odd()})) == '{"x": "odd!"}'


def test_the_dataclass_form_works_without_the_decorator() -> None:
    class P(BaseModel):
        n: int

    async def run(
        tool_call_id: str, params: P, signal: AbortSignal, on_update: Any
    ) -> AgentToolResult:
        return AgentToolResult.text(str(params.n * 2))

    manual = AgentTool(
        name="double", label="Double", description="Doubles n.", parameters=P, execute=run
    )
    assert manual.json_schema["required"] == ["n"] and manual.execution_mode is None
