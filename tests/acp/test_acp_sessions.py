"""An ACP run's session: recorded like any run, replayed to what the live screen showed;
images in prompts; a session the agent resumes (`session/load`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.acp.helpers import Fake, ask_call
from tests.acp.test_acp_run import Bus
from workbench.agent.types import ImageContent, TextContent, UserMessage
from workbench.sessions.reader import read_session
from workbench.view.fold import fold

pytestmark = pytest.mark.timeout(60)

SCRIPT = [
    [
        {"think": "first, the plan"},
        {"plan": [{"content": "list files", "status": "in_progress", "priority": "high"}]},
        {"mode": "plan"},
        {"say": "Listing."},
        *ask_call(),
        {
            "call": {
                "toolCallId": "e1",
                "title": "Edit notes.txt",
                "kind": "edit",
                "status": "pending",
                "locations": [{"path": "notes.txt", "line": 2}],
            }
        },
        {"ask": "e1"},
        {
            "update": {
                "toolCallId": "e1",
                "status": "completed",
                "content": [
                    {"type": "diff", "path": "notes.txt", "oldText": "a\n", "newText": "b\n"}
                ],
            }
        },
        {"say": "Done."},
    ]
]


def shown(state: object) -> list[tuple[str, str]]:
    """What the timeline says: each item's kind and text."""
    return [(i.kind, i.text) for i in state.items]  # type: ignore[attr-defined]


async def test_a_recorded_run_replays_to_what_was_shown(tmp_path: Path) -> None:
    fake = Fake(tmp_path, SCRIPT)
    session = tmp_path / "acp.jsonl"
    run = fake.run(record=True, session=session, allow=["Bash", "edit"], approve="rules")
    bus = Bus(run)
    async with run.connected():
        await run.agent.prompt("go")
    run.runtime.recorder.close()  # type: ignore[union-attr]
    live = fold(bus.events)
    replayed = fold(read_session(session).events)
    assert shown(replayed) == shown(live)
    assert ("notice", "plan:\n▸ list files  (high)") in shown(replayed)
    for call_id in ("c1", "e1"):
        assert replayed.calls[call_id].events == live.calls[call_id].events
        assert replayed.calls[call_id].result_text == live.calls[call_id].result_text
    assert replayed.calls["e1"].result_text.startswith("--- a/notes.txt")

    from workbench.widgets.replay_app import ReplayApp

    app = ReplayApp(read_session(session))
    async with app.run_test(size=(140, 40)) as pilot:
        while not app.settled:
            await pilot.pause(0.02)
        app.select_call("e1")
        await pilot.pause()
        history = app.inspector.section_text("Events")
    assert "agent: locations  notes.txt:2" in history
    assert "agent told  allow_once (Allow)" in history


async def test_images_go_to_an_agent_that_takes_them(tmp_path: Path) -> None:
    fake = Fake(tmp_path, [[{"say": "seen"}]])
    run = fake.run()
    async with run.connected():
        assert run.takes_images
        await run.agent.prompt(
            UserMessage(
                content=[
                    TextContent(text="what is this?"),
                    ImageContent(data="iVBORw0KGgo=", mime_type="image/png"),
                ]
            )
        )
    (prompt,) = fake.sent("session/prompt")
    assert prompt["params"]["prompt"] == [
        {"type": "text", "text": "what is this?"},
        {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
    ]


async def test_load_resumes_the_agents_session(tmp_path: Path) -> None:
    fake = Fake(tmp_path, [[{"say": "resumed"}]])
    run = fake.run(load_session="fake-session-1")
    async with run.connected():
        await run.agent.prompt("go on")
    (load,) = fake.sent("session/load")
    assert load["params"]["sessionId"] == "fake-session-1"
    assert fake.sent("session/new") == []
    assert fake.sent("session/prompt")[0]["params"]["sessionId"] == "fake-session-1"


async def test_exports_show_the_agents_plan_and_mode(tmp_path: Path) -> None:
    from workbench.sessions.export import export

    fake = Fake(tmp_path, SCRIPT)
    session = tmp_path / "acp.jsonl"
    run = fake.run(record=True, session=session, allow=["Bash", "edit"], approve="rules")
    async with run.connected():
        await run.agent.prompt("go")
    run.runtime.recorder.close()  # type: ignore[union-attr]
    recorded = read_session(session)
    markdown = export(recorded, "md")
    assert "> plan:  \n> ▸ list files  (high)" in markdown
    assert "> mode: plan" in markdown
    assert "> ACP agent fake-agent 1.0: session fake-session-1" in markdown
    assert markdown.index("> plan:") < markdown.index("### Tool call")
    # the edit's input was never reported: no `{}` stands for it
    edit = markdown[markdown.index("### Tool call `edit`") :]
    assert edit.split("\n\n")[1] == "Arguments: *not reported by the agent*"
    html = export(recorded, "html")
    assert '<div class="notice"><pre>plan:\n▸ list files  (high)</pre></div>' in html
    assert '<div class="notice"><pre>mode: plan</pre></div>' in html
    assert "ACP agent fake-agent 1.0: session fake-session-1" in html
    assert "not reported by the agent" in html
