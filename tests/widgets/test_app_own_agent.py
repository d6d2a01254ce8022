"""The app on your own agent (examples/todo_agent) under Pilot: your tools' origin in
the permission dialog and the inspector, prepared arguments, structured content, and a
run cut by --max-turns with a notice."""

from __future__ import annotations

from pathlib import Path

from tests.support.notifications import notifications
from tests.widgets.helpers import wait_for
from workbench.cli.args import build_parser
from workbench.cli.run_options import options_from_args
from workbench.runtime import build_runtime
from workbench.widgets.permission_modal import PermissionModal


def app_for(*argv: str):  # type: ignore[no-untyped-def]
    from workbench.widgets.app import make_app

    args = build_parser().parse_args(list(argv))
    options = options_from_args(args, headless=False, approve=args.approve or "ask")
    options.pace = float("inf")
    options.record = False
    return make_app(build_runtime(options))


async def test_the_app_shows_where_your_tools_come_from(todo: Path) -> None:
    app = app_for()
    async with app.run_test(size=(140, 44)) as pilot:
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, PermissionModal))
        dialog = str(app.screen.query_one("#perm-desc").render())
        assert "from file todo_tools.py:" in dialog
        while app.view_state.run_state != "finished":  # allow each call once
            if isinstance(app.screen, PermissionModal):
                await pilot.press("ctrl+y")
            await wait_for(
                pilot,
                lambda: (
                    isinstance(app.screen, PermissionModal)
                    or app.view_state.run_state == "finished"
                ),
                timeout=20,
            )
        calls = {c.name: c for c in app.view_state.calls.values()}
        app.select_call(calls["add_task"].id)
        await wait_for(pilot, lambda: app.inspector.plain_lines()[0].startswith("add_task"))
        assert app.inspector.plain_lines()[0].startswith("add_task  file todo_tools.py:")
        assert calls["add_task"].parsed == {"name": "Write the changelog", "due": "2026-12-04"}
        assert calls["add_task"].prepared == {"title": "Write the changelog", "due": "2026-12-04"}
        app.select_call(calls["summarize"].id)
        await wait_for(pilot, lambda: app.inspector.plain_lines()[0].startswith("summarize"))
        result = app.inspector.section_text("Result")
        assert "structured content" in result and '"overdue": []' in result


async def test_max_turns_stops_the_app_run_with_a_notice(todo: Path) -> None:
    app = app_for("--max-turns", "2", "--approve", "all")
    async with app.run_test(size=(140, 44)) as pilot:
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.view_state.run_state == "finished", timeout=20)
        await wait_for(
            pilot,
            lambda: any("--max-turns 2" in str(n.message) for n in notifications(app)),
            timeout=5,
        )
    assert [m.role for m in app.agent.state.messages][-1] == "toolResult"


async def test_the_network_view_shows_your_system_prompt_and_tools(todo: Path) -> None:
    from textual.widgets import Static

    from tests.support.chat_server import ChatServer, finish, stream_reply, text_chunks
    from workbench.widgets.network_view import NetworkViewScreen

    with ChatServer() as server:
        server.script(stream_reply([*text_chunks("hello"), finish()]))
        app = app_for(
            "--base-url",
            server.url,
            "--model",
            "test-model",
            "--system-prompt",
            "Be terse, always.",
        )
        async with app.run_test(size=(160, 48)) as pilot:
            app.prompt_bar.input.value = "hi"
            await pilot.press("enter")
            await wait_for(pilot, lambda: app.view_state.run_state == "finished")
            await pilot.press("f4")
            await wait_for(pilot, lambda: isinstance(app.screen, NetworkViewScreen))
            detail = str(app.screen.query_one("#request-detail", Static).render())
            assert '"content": "Be terse, always."' in detail
            assert '"name": "summarize"' in detail  # the project's tools went with it
