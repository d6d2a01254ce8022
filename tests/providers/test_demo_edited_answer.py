"""The demo's last answer does not claim a value the file does not hold: when a person
edited the edit (in the dialog, or at a pause), the answer says so."""

from __future__ import annotations

from workbench.agent import ToolResultMessage
from workbench.agent.types import TextContent
from workbench.providers.scripted import Scenario, ScriptedTurn


def answer(read_back: str) -> ScriptedTurn:
    last = Scenario.load("demo").turns[-1]
    results = [
        ToolResultMessage(tool_call_id="c1", tool_name="run_command", content=[]),
        ToolResultMessage(
            tool_call_id="c2", tool_name="read_file", content=[TextContent(text=read_back)]
        ),
    ]
    return next((b.turn for b in last.branches if b.when.matches(results)), last)


def test_the_canned_answer_stands_when_the_file_holds_its_value() -> None:
    said = answer('{\n  "apiBaseUrl": "http://127.0.0.1:11434/v1",\n}').text or ""
    assert said.startswith("**Done.**") and "http://127.0.0.1:11434/v1" in said


def test_an_edited_value_is_not_contradicted() -> None:
    said = answer('{\n  "apiBaseUrl": "http://localhost:8080/v1",\n}').text or ""
    assert "http://127.0.0.1:11434/v1" not in said
    assert "was not mine" in said and "read_file" in said
