"""What a newcomer meets first: the demo's network view, a new run, the hints, the
modals' own keys, the 80-column footer, one thinking block from the keyboard."""

from __future__ import annotations

import io
from pathlib import Path

import anyio
from rich.console import Console
from textual.widgets import OptionList, Static

from tests.support.chat_server import ChatServer, Pause, stream_reply, text_chunks
from tests.support.notifications import notifications
from tests.widgets.helpers import scenario_of, wait_for
from workbench.providers.settings import OpenAISettings
from workbench.runtime import RunOptions, build_runtime
from workbench.widgets.app import make_app
from workbench.widgets.breakpoints_modal import BreakpointsModal
from workbench.widgets.footer import Footer
from workbench.widgets.help_screen import HelpScreen
from workbench.widgets.network_view import NetworkViewScreen


async def run_demo(app, pilot) -> None:  # type: ignore[no-untyped-def]
    app.prompt_bar.input.value = app.prefill
    await pilot.press("enter")
    await wait_for(pilot, lambda: app.view_state.run_state in ("finished", "error"))


def footer_keys(screen) -> list[str]:  # type: ignore[no-untyped-def]
    footer = screen.query_one(Footer)
    return [key.description for key in footer.items]


async def test_the_network_view_shows_the_demos_simulated_requests(make_test_app) -> None:
    app = make_test_app(approve="all", simulated_wire=True)
    async with app.run_test(size=(160, 48)) as pilot:
        await run_demo(app, pilot)
        records = list(app.view_state.network.values())
        assert len(records) == 5  # one a turn
        assert all(r.request.simulated and r.response and r.response.simulated for r in records)
        await pilot.press("f4")
        await wait_for(pilot, lambda: isinstance(app.screen, NetworkViewScreen))
        options = app.screen.query_one(OptionList)
        assert all("sim" in str(options.get_option_at_index(i).prompt) for i in range(5))
        detail = str(app.screen.query_one("#request-detail", Static).render())
        assert detail.startswith("SIMULATED nothing was sent")
        assert "time to first token" in detail and "finish_reason tool_calls" in detail
        assert '"role": "system"' in detail and '"tools": [' in detail
        assert "config.json has an apiBaseUrl" in detail  # the user's message, as it would be sent
        options.highlighted = 1
        await pilot.pause()
        second = str(app.screen.query_one("#request-detail", Static).render())
        assert '"role": "tool"' in second and '"tool_call_id": "call_1_1"' in second


async def test_an_aborted_request_is_marked_in_the_request_list(tmp_path: Path) -> None:
    with ChatServer() as server:
        server.script(stream_reply(text_chunks("Once upon", 2), done=False, then=[Pause(5.0)]))
        settings = OpenAISettings(base_url=server.url, model="m", max_retries=0)
        app = make_app(
            build_runtime(RunOptions(workspace=tmp_path, provider_settings=settings, record=False))
        )
        async with app.run_test(size=(160, 48)) as pilot:
            app.prompt_bar.input.value = "tell a story"
            await pilot.press("enter")
            await wait_for(
                pilot,
                lambda: (
                    "Once upon"
                    in "".join(
                        i.blocks[0].text
                        for i in app.view_state.items
                        if i.kind == "assistant" and i.blocks
                    )
                ),
            )
            await pilot.press("ctrl+c")
            await wait_for(pilot, lambda: app.view_state.run_state == "aborted")
            await wait_for(pilot, lambda: all(r.response for r in app.view_state.network.values()))
            await pilot.press("f4")
            await wait_for(pilot, lambda: isinstance(app.screen, NetworkViewScreen))
            label = str(app.screen.query_one(OptionList).get_option_at_index(0).prompt)
            assert "aborted" in label and "200" not in label
            detail = str(app.screen.query_one("#request-detail", Static).render())
            assert "ABORTED" in detail and "status 200" not in detail


async def test_new_run_starts_a_fresh_workspace_and_session(make_test_app, tmp_path: Path) -> None:
    scenario = scenario_of(
        [
            {
                "tool_calls": [
                    {"name": "write_file", "arguments": {"path": "made.txt", "content": "x"}}
                ]
            },
            {"text": "ok"},
        ],
        prompt="make a file",
        workspace_files={"seed.txt": "seed"},
    )
    runtime = build_runtime(RunOptions(scenario=scenario, approve="all"))
    app = make_app(runtime)
    async with app.run_test(size=(160, 48)) as pilot:
        await run_demo(app, pilot)
        first_workspace, first_session = runtime.workspace, runtime.session_path
        assert (first_workspace / "made.txt").exists()
        await pilot.press("ctrl+n")
        await wait_for(pilot, lambda: app.runtime is not runtime)
        new = app.runtime
        assert new.workspace != first_workspace and (new.workspace / "seed.txt").exists()
        assert not (new.workspace / "made.txt").exists()
        assert new.session_path is not None and new.session_path != first_session
        assert app.view_state.items == [] and app.prompt_bar.input.value == "make a file"
        assert "Nothing yet" in app.timeline.plain_lines()[1]
        await run_demo(app, pilot)
        assert (new.workspace / "made.txt").exists()
        assert [i.kind for i in app.view_state.items].count("user") == 1  # only the new run's
        assert app.session_paths == [first_session, new.session_path]
    first_lines = first_session.read_text().splitlines()
    second_lines = new.session_path.read_text().splitlines()
    assert sum('"agent_start"' in line for line in first_lines) == 1
    assert sum('"agent_start"' in line for line in second_lines) == 1


async def test_new_run_is_in_the_palette_and_waits_for_a_running_run(make_test_app) -> None:
    app = make_test_app(pace=50)
    async with app.run_test(size=(160, 48)) as pilot:
        commands = [c.title for c in app.get_system_commands(app.screen)]
        assert "New run (ctrl+n)" in commands
        app.prompt_bar.input.value = app.prefill
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.agent.state.is_streaming)
        runtime = app.runtime
        await pilot.press("ctrl+n")
        await pilot.pause()
        assert app.runtime is runtime
        assert any("ctrl+c cancels it" in str(n.message) for n in notifications(app))
        await pilot.press("ctrl+c")


async def test_empty_state_mentions_the_prompt_only_when_one_is_there(tmp_path: Path) -> None:
    with ChatServer() as server:
        settings = OpenAISettings(base_url=server.url, model="m")
        app = make_app(
            build_runtime(RunOptions(workspace=tmp_path, provider_settings=settings, record=False))
        )
        async with app.run_test(size=(160, 48)) as pilot:
            await pilot.pause()
            line = app.timeline.plain_lines()[1]
            assert "Nothing yet" in line and "already there" not in line


async def test_the_demos_empty_state_says_its_prompt_is_there(make_test_app) -> None:
    app = make_test_app()
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        assert "already there" in app.timeline.plain_lines()[1]


async def test_ctrl_c_when_idle_says_how_to_quit(make_test_app) -> None:
    app = make_test_app()
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert any("ctrl+q quits" in str(n.message) for n in notifications(app))
        assert app.is_running


async def test_modals_show_their_own_keys_and_how_to_leave(make_test_app) -> None:
    app = make_test_app(approve="all")
    async with app.run_test(size=(160, 48)) as pilot:
        await run_demo(app, pilot)
        for key, screen_type, expected in (
            ("f1", HelpScreen, {"Close"}),
            ("f4", NetworkViewScreen, {"Close", "Raw chunks", "Requests/Summary"}),
            ("ctrl+b", BreakpointsModal, {"Close"}),  # Delete shows once the list has focus
        ):
            await pilot.press(key)
            await wait_for(pilot, lambda t=screen_type: isinstance(app.screen, t))
            keys = footer_keys(app.screen)
            assert expected <= set(keys), keys
            assert "Step mode" not in keys  # not the main screen's keys
            assert "closes" in str(
                app.screen.query_one(
                    ".-textual-compact, VerticalScroll, TabbedContent, Vertical"
                ).border_subtitle
            )
            await pilot.press("escape")
            await wait_for(pilot, lambda t=screen_type: not isinstance(app.screen, t))


async def test_s_switches_the_network_views_tabs(make_test_app) -> None:
    app = make_test_app(approve="all", simulated_wire=True)
    async with app.run_test(size=(160, 48)) as pilot:
        await run_demo(app, pilot)
        await pilot.press("f4")
        await wait_for(pilot, lambda: isinstance(app.screen, NetworkViewScreen))
        await pilot.press("s")
        await pilot.pause()
        assert app.screen.query_one("TabbedContent").active == "tab-summary"
        await pilot.press("s")
        await pilot.pause()
        assert app.screen.query_one("TabbedContent").active == "tab-requests"


async def test_the_80_column_footer_has_no_stray_character(make_test_app) -> None:
    app = make_test_app(pace=50)
    async with app.run_test(size=(80, 24)) as pilot:
        app.prompt_bar.input.value = app.prefill
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.agent.state.is_streaming)
        footer = app.screen.query_one(Footer)
        await wait_for(pilot, lambda: not app._refresh_pending)  # drawn for the streaming run
        line = footer.render_line(0).text
        assert len(line) == 80 and line.endswith("▏^p palette")  # nothing shows after it
        await pilot.press("ctrl+c")


async def test_one_thinking_block_opens_from_the_keyboard(make_test_app) -> None:
    app = make_test_app(approve="all")
    async with app.run_test(size=(160, 48)) as pilot:
        await run_demo(app, pilot)
        timeline = app.timeline
        timeline.focus()
        await pilot.pause()
        assert not any("The user wants to know" in x for x in timeline.plain_lines())
        app.select_call("call_1_2")  # a call of the reply that thought
        await pilot.pause()
        await pilot.press("T")
        await pilot.pause()
        lines = timeline.plain_lines()
        assert any("The user wants to know" in x for x in lines)
        assert sum("▼ thinking" in x for x in lines) == 1
        await pilot.press("T")
        await pilot.pause()
        assert not any("The user wants to know" in x for x in timeline.plain_lines())
        await anyio.sleep(0)


async def test_the_status_bar_and_summary_show_what_the_session_cost(tmp_path: Path) -> None:
    from tests.support.chat_server import finish, usage_chunk
    from workbench.pricing import Price, PriceTable
    from workbench.widgets.status_bar import StatusBar

    with ChatServer() as server:
        server.script(
            stream_reply([*text_chunks("one"), finish(), usage_chunk(3_000, 500, cached=2_000)]),
            stream_reply([*text_chunks("two"), finish(), usage_chunk(1_000, 1_000)]),
            stream_reply([*text_chunks("three"), finish(), usage_chunk(1_000, 1_000)]),
        )
        settings = OpenAISettings(base_url=server.url, model="my-model", max_retries=0)
        prices = PriceTable(configured={"my-model": Price(input=1, output=2, cached=0.5)})
        app = make_app(
            build_runtime(RunOptions(workspace=tmp_path, provider_settings=settings, prices=prices))
        )
        async with app.run_test(size=(160, 48)) as pilot:
            for text in ("first", "second"):
                app.prompt_bar.input.value = text
                await pilot.press("enter")
                await wait_for(
                    pilot,
                    lambda: (
                        app.view_state.run_state == "finished" and not app.agent.state.is_streaming
                    ),
                )
            status = str(app.screen.query_one(StatusBar).render())
            assert "cost $0.0030 turn · $0.0030 run · $0.0060 session" in status
            await pilot.press("ctrl+n")  # a new run: a new session, its cost starts at nothing
            await wait_for(pilot, lambda: not app.view_state.turns)
            assert "$0 session" in str(app.screen.query_one(StatusBar).render())
            app.prompt_bar.input.value = "third"
            await pilot.press("enter")
            await wait_for(
                pilot,
                lambda: app.view_state.run_state == "finished" and not app.agent.state.is_streaming,
            )
            await pilot.press("f4")
            await wait_for(pilot, lambda: isinstance(app.screen, NetworkViewScreen))
            out = Console(file=io.StringIO(), width=150, color_system=None)
            out.print(app.screen._summary())
            rows = out.file.getvalue().splitlines()
            assert rows[0].split()[-1] == "cost"
            assert rows[-1].split()[0] == "session" and rows[-1].split()[-1] == "$0.0030"


async def test_a_model_without_a_price_costs_unknown(tmp_path: Path) -> None:
    from tests.support.chat_server import finish, usage_chunk
    from workbench.widgets.status_bar import StatusBar

    with ChatServer() as server:
        server.script(stream_reply([*text_chunks("one"), finish(), usage_chunk(10, 5)]))
        settings = OpenAISettings(base_url=server.url, model="no-price-model", max_retries=0)
        app = make_app(
            build_runtime(RunOptions(workspace=tmp_path, provider_settings=settings, record=False))
        )
        async with app.run_test(size=(100, 30)) as pilot:
            app.prompt_bar.input.value = "hi"
            await pilot.press("enter")
            await wait_for(
                pilot,
                lambda: app.view_state.run_state == "finished" and not app.agent.state.is_streaming,
            )
            assert "cost unknown" in str(app.screen.query_one(StatusBar).render())
