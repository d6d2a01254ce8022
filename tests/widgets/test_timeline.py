"""The timeline widget on the real app: what it shows, mouse and keys, texts drawn
lazily, and a burst of events coalesced into a few refreshes."""

from __future__ import annotations

from tests.widgets.helpers import scenario_of, send, wait_for
from workbench.agent import AgentToolResult, tool
from workbench.widgets.footer import Footer
from workbench.widgets.network_view import NetworkViewScreen
from workbench.widgets.screen_stats import ScreenStats
from workbench.widgets.timeline import Timeline

MARKDOWN = (
    "## Findings {n}\n\nThe **config** has `apiBaseUrl` unset, so requests go to the default "
    "endpoint; every client reads it at start-up and caches it for the session.\n\n"
    "- first point about turn {n}, long enough to wrap on a narrow timeline column\n"
    "- second point\n\n```python\nprint({n})\n```\n"
)


async def finished_demo(app, pilot) -> Timeline:  # type: ignore[no-untyped-def]
    app.prompt_bar.input.value = app.prefill or "go"
    await pilot.press("enter")
    await wait_for(pilot, lambda: app.view_state.run_state in ("finished", "error"))
    return app.timeline


async def click_line(pilot, timeline: Timeline, text: str, x: int) -> int:  # type: ignore[no-untyped-def]
    """Scroll to the top and click the first timeline line holding `text`; its index."""
    timeline.scroll_home(animate=False, immediate=True)
    await pilot.pause()
    line = next(i for i, shown in enumerate(timeline.plain_lines()) if text in shown)
    await pilot.click(timeline, offset=(x, line - int(timeline.scroll_y)))
    return line


async def test_clicking_a_turn_heading_opens_that_turns_request(make_test_app) -> None:
    app = make_test_app(approve="all")
    async with app.run_test(size=(160, 48)) as pilot:
        timeline = await finished_demo(app, pilot)
        await click_line(pilot, timeline, "assistant · turn 2", x=4)
        await wait_for(pilot, lambda: isinstance(app.screen, NetworkViewScreen))
        assert app.screen.turn == 2


async def test_thinking_opens_on_click_and_all_of_it_on_t(make_test_app) -> None:
    app = make_test_app(approve="all")
    async with app.run_test(size=(160, 48)) as pilot:
        timeline = await finished_demo(app, pilot)
        assert not any("The user wants to know" in line for line in timeline.plain_lines())
        title = await click_line(pilot, timeline, "▶ thinking", x=3)
        await pilot.pause()
        lines = timeline.plain_lines()
        assert "▼ thinking" in lines[title]
        assert "The user wants to know" in lines[title + 1]
        await pilot.press("t")  # the timeline has focus: close every thinking block
        await pilot.pause()
        assert not any("The user wants to know" in line for line in timeline.plain_lines())
        await pilot.press("t")
        await pilot.pause()
        assert any("The user wants to know" in line for line in timeline.plain_lines())


async def test_cards_follow_the_call_and_keys_walk_every_call_in_order(make_test_app) -> None:
    app = make_test_app(approve="all")
    async with app.run_test(size=(160, 48)) as pilot:
        timeline = await finished_demo(app, pilot)
        order = [i for batch in timeline.batches() for i in batch]
        assert order == [i for item in app.view_state.items for i in item.tool_call_ids]
        lines = timeline.plain_lines()
        for call_id in order:  # each card shows its own call's label and stage
            record = app.view_state.calls[call_id]
            card = lines[timeline.line_of(call_id)]
            assert app.labels.get(record.name, record.name) in card
        timeline.focus()
        await pilot.pause()
        app.select_call(order[0])
        await pilot.pause()
        for expected in order[1:]:
            await pilot.press("down")
            await pilot.pause()
            assert app.inspector.record.id == expected == timeline.selected_id
            line = timeline.line_of(expected)
            height = timeline.scrollable_content_region.height
            assert timeline.scroll_y <= line < timeline.scroll_y + height


async def test_long_texts_off_screen_are_drawn_when_scrolled_into_view(make_test_app) -> None:
    turns = [{"text": MARKDOWN.format(n=n)} for n in range(40)]
    listing = [{"name": "list_directory", "arguments": {"path": "."}}]
    turns = [{**turn, "tool_calls": listing} for turn in turns]
    app = make_test_app(scenario_of([*turns, {"text": "the end"}]))
    async with app.run_test(size=(100, 30)) as pilot:
        timeline = await finished_demo(app, pilot)
        assert any("the end" in line for line in timeline.plain_lines()[-4:])
        timeline.scroll_home(animate=False, immediate=True)
        await pilot.pause()
        everything = timeline.plain_lines()  # every text drawn: the true layout
        assert timeline.virtual_size.height == len(everything)
        top = int(timeline.scroll_y)
        height = timeline.scrollable_content_region.height
        shown = [timeline.render_line(y).text.rstrip() for y in range(height)]
        assert shown == [line.rstrip() for line in everything[top : top + len(shown)]]
        assert any("Findings 0" in line for line in shown)
        assert sum("print(" in line for line in everything) == 40  # every code block drawn


async def test_after_a_burst_the_screen_catches_up_with_everything(make_test_app) -> None:
    @tool
    async def chatty(n: int, on_update) -> str:  # type: ignore[no-untyped-def]
        """Report progress ten times, then finish."""
        for step in range(10):
            on_update(AgentToolResult.text(f"call {n}: step {step + 1}/10"))
        return f"call {n} done"

    turns = [
        {
            "text": "working " * 100,
            "tool_calls": [{"name": "chatty", "arguments": {"n": n}} for n in range(20)],
        }
        for _ in range(15)
    ]
    stats = ScreenStats()
    app = make_test_app(
        scenario_of([*turns, {"text": "all done"}]), tools=[chatty], allow=["chatty"], stats=stats
    )
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_for(pilot, lambda: app._shown)
        await send(pilot, app, lambda: app.view_state.run_state == "finished", timeout=60)
        state = app.view_state
        assert state.event_count > 8_000
        assert stats.refreshes < state.event_count / 500  # drawn a handful of times, not per event
        await wait_for(pilot, lambda: stats.synced == state.event_count)
        newest = state.latest_call_id
        assert app.inspector.record is not None and app.inspector.record.id == newest
        assert app.inspector.record.result_text == "call 19 done"
        assert any("all done" in line for line in app.timeline.plain_lines()[-4:])
        footer_keys = [key.description for key in app.query_one(Footer).items]
        assert "Cancel run" not in footer_keys  # the footer caught up with the run's end


async def test_a_resized_terminal_redraws_the_timeline_at_the_new_width(make_test_app) -> None:
    app = make_test_app(approve="all")
    async with app.run_test(size=(160, 48)) as pilot:
        timeline = await finished_demo(app, pilot)
        wide = max(len(line.rstrip()) for line in timeline.plain_lines())
        await pilot.resize_terminal(120, 30)  # side by side still, the timeline narrower
        await wait_for(pilot, lambda: timeline.size.width < 80)
        narrow = timeline.plain_lines()
        assert max(len(line.rstrip()) for line in narrow) <= timeline.size.width < wide
        assert any("assistant · turn 1" in line for line in narrow)


async def test_a_terminal_made_narrow_stacks_the_timeline_over_the_inspector(make_test_app) -> None:
    """Below 110 cells the screen switches to the stacked layout, and back (at start-up
    and on every resize), with a compact footer while stacked."""
    app = make_test_app(approve="all")
    async with app.run_test(size=(160, 48)) as pilot:
        timeline = await finished_demo(app, pilot)
        footer = app.query_one(Footer)
        assert not app.screen.has_class("-narrow") and not footer.compact
        await pilot.resize_terminal(90, 30)
        await wait_for(pilot, lambda: app.screen.has_class("-narrow"))
        await wait_for(pilot, lambda: timeline.size.width > 80)  # the whole width, stacked
        assert footer.compact
        assert app.inspector.region.y > timeline.region.y  # under the timeline
        assert max(len(line.rstrip()) for line in timeline.plain_lines()) <= timeline.size.width
        await pilot.resize_terminal(160, 48)
        await wait_for(pilot, lambda: not app.screen.has_class("-narrow") and not footer.compact)
        await wait_for(pilot, lambda: app.inspector.region.x > timeline.region.x)  # side by side
        await pilot.press("f1")  # a dialog on top while the terminal shrinks
        await wait_for(pilot, lambda: app.screen is not app.screen_stack[0])
        await pilot.resize_terminal(90, 30)
        await wait_for(pilot, lambda: app.screen.size.width == 90)
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is app.screen_stack[0])
        await wait_for(pilot, lambda: app.screen.has_class("-narrow") and footer.compact)


async def test_a_timeline_made_shorter_keeps_following_the_newest_line(make_test_app) -> None:
    app = make_test_app(approve="all")
    async with app.run_test(size=(120, 40)) as pilot:
        timeline = await finished_demo(app, pilot)
        assert timeline.follow and timeline.scroll_y == timeline.max_scroll_y > 0
        height = timeline.size.height
        await pilot.resize_terminal(120, 30)  # the same width, fewer rows
        await wait_for(pilot, lambda: timeline.size.height < height)
        assert timeline.scroll_y == timeline.max_scroll_y


def lone_timeline(state, height: int):  # type: ignore[no-untyped-def]
    """An app with only a timeline `height` lines tall, showing `state`."""
    from textual.app import App, ComposeResult

    class One(App[None]):
        CSS = f"Timeline {{ height: {height}; }}"

        def compose(self) -> ComposeResult:
            yield Timeline({}, state, clock=lambda: 0.0)

    return One()


async def test_following_reaches_the_end_when_the_timeline_first_overflows() -> None:
    """One sync that makes the timeline overflow ends on its newest line, the scrollbar's
    thumb at the end, and the track (hidden while everything fit) shown."""
    from workbench.view.fold import ViewState
    from workbench.view.records import Block, TimelineItem

    def user(n: int) -> TimelineItem:
        return TimelineItem("user", turn=n, blocks=[Block("text", f"message {n}")])

    state = ViewState(items=[user(0)])
    app = lone_timeline(state, 8)
    async with app.run_test(size=(80, 24)) as pilot:
        timeline = app.query_one(Timeline)
        timeline.sync(state, 0.0)
        await pilot.pause()
        assert timeline.max_scroll_y == 0 and timeline.has_class("-fits")
        state.items.extend(user(n) for n in range(1, 12))
        timeline.sync(state, 0.0)
        await pilot.pause()
        assert timeline.follow and timeline.max_scroll_y > 0
        assert timeline.scroll_y == timeline.max_scroll_y
        assert timeline.vertical_scrollbar.position == timeline.scroll_y  # the thumb at the end too
        assert not timeline.has_class("-fits")
        assert "message 11" in timeline.render_line(timeline.size.height - 2).text


def _markdown_state(turns: int):  # type: ignore[no-untyped-def]
    from workbench.view.fold import ViewState
    from workbench.view.records import Block, TimelineItem

    items = [
        TimelineItem("assistant", turn=n, blocks=[Block("text", MARKDOWN.format(n=n))])
        for n in range(turns)
    ]
    return ViewState(items=items)


async def test_during_a_burst_only_what_is_on_screen_is_drawn_and_the_track_waits() -> None:
    """A busy sync draws the texts on screen, not the screenful above them, and leaves
    the track's restyle for later; the first calm sync does both."""
    state = _markdown_state(0)
    app = lone_timeline(state, 12)
    async with app.run_test(size=(80, 24)) as pilot:
        timeline = app.query_one(Timeline)
        timeline.sync(state, 0.0)
        await pilot.pause()
        assert timeline.has_class("-fits")
        state.items.extend(_markdown_state(12).items)
        timeline.sync(state, 0.0, busy=True)
        await pilot.pause()
        assert timeline.scroll_y == timeline.max_scroll_y > 0
        assert timeline.has_class("-fits")  # restyled once the burst is over
        texts = [part for view in timeline._views for part in view.parts if part.key[0] == "md"]
        assert [part.estimated for part in texts] == [True] * 11 + [False]  # only the one on screen
        shown = [timeline.render_line(y).text for y in range(timeline.size.height)]
        assert any("print(11)" in line for line in shown)

        timeline.sync(state, 0.0)
        await pilot.pause()
        assert not texts[-2].estimated  # the screenful above, for smooth paging
        assert not timeline.has_class("-fits")
        assert timeline.scroll_y == timeline.max_scroll_y
        assert any("print(11)" in timeline.render_line(y).text for y in range(timeline.size.height))


async def test_a_new_theme_recolours_the_timeline_and_the_inspector(make_test_app) -> None:
    """Both are drawn into cached lines: a theme change must redraw them in its colours."""
    app = make_test_app(approve="all")
    async with app.run_test(size=(160, 48)) as pilot:
        timeline = await finished_demo(app, pilot)
        inspector = app.inspector
        await wait_for(pilot, lambda: "Result" in inspector._anchors)

        def head_colour():  # type: ignore[no-untyped-def]
            lines = enumerate(timeline.plain_lines())
            y = next(i for i, line in lines if "assistant · turn 1" in line)
            return next(s.style.color for s in timeline._strip(y) if s.text.strip())

        def title_colour():  # type: ignore[no-untyped-def]
            line = inspector._lines[inspector._anchors["Result"]]
            return next(s.style.color for s in line if s.text.strip())

        assert head_colour() == timeline.get_component_rich_style("timeline--head").color
        old_head, old_title = head_colour(), title_colour()
        app.theme = "nord"

        def head_style():  # type: ignore[no-untyped-def]
            return timeline.get_component_rich_style("timeline--head").color

        def title_style():  # type: ignore[no-untyped-def]
            return inspector.get_component_rich_style("inspector--title").color

        await wait_for(pilot, lambda: head_style() != old_head)
        await wait_for(pilot, lambda: head_colour() == head_style())
        await wait_for(pilot, lambda: title_colour() == title_style())
        assert head_colour() != old_head and title_colour() != old_title


async def test_a_new_state_of_the_same_session_keeps_what_was_drawn_and_reset_forgets_it() -> None:
    """Items are known by index and `rev`: a fresh fold of the same events (replay moving
    back) reuses every drawn part; a change of `rev` redraws that item only; `reset`
    (another session) draws everything again."""
    first = _markdown_state(3)
    app = lone_timeline(first, 12)
    async with app.run_test(size=(80, 24)) as pilot:
        timeline = app.query_one(Timeline)
        timeline.sync(first, 0.0)
        timeline.settle_all()
        await pilot.pause()
        drawn = [view.parts for view in timeline._views]
        again = _markdown_state(3)  # equal items, other objects
        again.items[2].blocks[0].text += "\n\nOne more line."
        again.items[2].rev += 1
        timeline.sync(again, 0.0)
        assert timeline.state is again
        assert [view.item for view in timeline._views] == again.items
        assert all(a is b for a, b in zip(timeline._views[0].parts, drawn[0], strict=True))
        assert all(a is b for a, b in zip(timeline._views[1].parts, drawn[1], strict=True))
        assert timeline._views[2].parts is not drawn[2]
        assert any("One more line." in line for line in timeline.plain_lines())
        timeline.reset(again)
        timeline.sync(again, 0.0)
        assert not any(a is b for a, b in zip(timeline._views[0].parts, drawn[0], strict=True))
