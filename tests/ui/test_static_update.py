"""`static_update.update` shows new content without laying out the screen when the
widget's height stays the same, and lays out when it changes."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from widgets import static_update


class Probe(App[None]):
    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static("one\ntwo", id="body")
            yield Static("below", id="below")


async def test_same_height_repaints_without_a_layout_taller_lays_out() -> None:
    app = Probe()
    async with app.run_test(size=(40, 10)) as pilot:
        await pilot.pause()  # start-up's own layouts are done
        body, below = app.query_one("#body", Static), app.query_one("#below", Static)
        layouts: list[int] = []
        original = app.screen._refresh_layout

        def counted(*args, **kwargs):  # type: ignore[no-untyped-def]
            layouts.append(1)
            return original(*args, **kwargs)

        app.screen._refresh_layout = counted  # type: ignore[method-assign]
        static_update.update(body, "three\nfour")
        await pilot.pause()
        assert layouts == []
        assert [body.render_line(y).text.rstrip() for y in range(2)] == ["three", "four"]
        assert below.region.y == 2

        static_update.update(body, "a\nb\nc")
        await pilot.pause()
        assert layouts  # taller: laid out again
        assert body.size.height == 3 and below.region.y == 3

        static_update.update(body, "a long line that wraps across the forty cells of this screen")
        await pilot.pause()
        assert body.size.height == 2 and below.region.y == 2  # wrapped height counts
