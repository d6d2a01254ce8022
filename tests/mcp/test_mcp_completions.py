"""Completions (`completion/complete`): the server's suggestions for a prompt's
arguments and a template's variables, with the other arguments as context, offered in
the form as the person types."""

from __future__ import annotations

from functools import partial

from textual.app import App
from textual.widgets import Input, Static

from tests.mcp.helpers import mcp_run
from tests.widgets.helpers import wait_for
from workbench.widgets.mcp_catalog import ArgumentsModal


async def test_the_server_completes_template_variables_and_prompt_arguments() -> None:
    async with mcp_run() as run:
        connection = run.hub.connection("toolbox")
        template = ("ref/resource", "note://by-name/{name}")
        assert await connection.complete(template, "name", "n", {}) == ["news", "notes"]
        review = ("ref/prompt", "review")
        assert await connection.complete(review, "focus", "", {}) == ["bugs"]
        with_code = await connection.complete(review, "focus", "s", {"code": "x = 1"})
        assert with_code == ["style", "speed"]


async def test_the_form_suggests_as_you_type() -> None:
    async with mcp_run() as run:
        connection = run.hub.connection("toolbox")
        complete = partial(connection.complete, ("ref/prompt", "review"))
        fields = [("code", "", True), ("focus", "", False)]
        results: list[object] = []

        class Host(App[None]):
            def on_mount(self) -> None:
                self.push_screen(ArgumentsModal("Prompt review", fields, complete), results.append)

        app = Host()
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.pause()
            modal = app.screen
            modal.query_one("#f-0", Input).value = "x = 1"
            focus = modal.query_one("#f-1", Input)
            focus.focus()
            await pilot.press("s")
            hint = modal.query_one("#args-suggested", Static)
            await wait_for(pilot, lambda: "style, speed" in str(hint.render()), timeout=10)
            await wait_for(pilot, lambda: focus._suggestion == "style", timeout=10)
            await pilot.press("right")  # takes the suggestion
            assert focus.value == "style"
            await pilot.press("ctrl+y")
            await wait_for(pilot, lambda: bool(results))
        assert results == [{"code": "x = 1", "focus": "style"}]
