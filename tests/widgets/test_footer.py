"""The footer: one widget drawing the keys that act where the focus is. (That it looks
exactly like Textual's footer is pinned by the snapshot tests, made with Textual's.)"""

from __future__ import annotations

from typing import Any, ClassVar

from textual import events
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import Input

from tests.widgets.helpers import wait_for
from workbench.widgets.footer import Footer


class Keys(App[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("f1", "one", "One", tooltip="the first"),
        Binding("f2", "two", "Two"),
        Binding("f3", "hidden", "Hidden", show=False),
        Binding("f4", "one", "One again"),  # the same action: only the first shows
    ]

    def __init__(self, *extra: Binding) -> None:
        super().__init__()
        self.pressed: list[str] = []
        self.bells = 0
        self.two_enabled = False
        for binding in extra:
            self._bindings.bind(binding.key, binding.action, binding.description)

    def compose(self) -> ComposeResult:
        yield Input(id="box")
        yield Footer()

    def action_one(self) -> None:
        self.pressed.append("one")

    def action_two(self) -> None:
        self.pressed.append("two")

    def action_many(self, which: str) -> None:
        self.pressed.append(which)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "two":
            return True if self.two_enabled else None  # None: shown, but disabled
        return True

    def bell(self) -> None:
        self.bells += 1


def shown(footer: Footer) -> list[tuple[str, str, bool]]:
    return [(item.display, item.description, item.enabled) for item in footer.items]


def style_at(footer: Footer, column: int) -> Any:
    """The style of the cell at `column` of the footer's line."""
    x = 0
    for segment in footer.render_line(0):
        x += segment.cell_length
        if x > column:
            return segment.style
    raise AssertionError(f"no cell {column}")


def column_of(footer: Footer, text: str) -> int:
    column = footer.render_line(0).text.index(text)
    assert column >= 0
    return column


async def test_it_shows_one_key_per_action_and_which_are_disabled() -> None:
    app = Keys()
    async with app.run_test(size=(100, 5)) as pilot:
        footer = app.query_one(Footer)
        await wait_for(pilot, lambda: footer.items)
        assert shown(footer) == [
            ("f1", "One", True),
            ("f2", "Two", False),
            ("^p", "palette", True),
        ]
        line = footer.render_line(0).text
        assert line.startswith(" f1 One  f2 Two ")
        assert line.endswith("▏^p palette ") and len(line) == 100
        two = style_at(footer, column_of(footer, "Two"))
        assert two is not None and two.dim  # disabled keys are dimmed
        assert not footer.children  # drawn, not made of widgets

        app.two_enabled = True
        app.refresh_bindings()
        await wait_for(pilot, lambda: shown(footer)[1] == ("f2", "Two", True))
        assert not style_at(footer, column_of(footer, "Two")).dim


async def test_a_click_presses_the_key_and_a_disabled_one_rings() -> None:
    app = Keys()
    async with app.run_test(size=(100, 5)) as pilot:
        footer = app.query_one(Footer)
        await wait_for(pilot, lambda: footer.items)
        await pilot.click(Footer, offset=(column_of(footer, "One"), 0))
        await wait_for(pilot, lambda: app.pressed == ["one"])
        await pilot.click(Footer, offset=(column_of(footer, "Two"), 0))
        await pilot.pause()
        assert app.pressed == ["one"] and app.bells == 1
        await pilot.click(Footer, offset=(60, 0))  # between the keys and the palette
        await pilot.pause()
        assert app.pressed == ["one"] and app.bells == 1


async def test_hovering_a_key_lights_it_and_shows_its_tooltip() -> None:
    app = Keys()
    async with app.run_test(size=(100, 5)) as pilot:
        footer = app.query_one(Footer)
        await wait_for(pilot, lambda: footer.items)
        one = column_of(footer, "One")
        before = style_at(footer, one)
        await pilot.hover(Footer, offset=(one, 0))
        await pilot.pause()
        assert footer.tooltip == "the first"
        lit = style_at(footer, one)
        assert lit is not None and before is not None and lit.bgcolor != before.bgcolor
        await pilot.hover(Input, offset=(1, 1))
        await pilot.pause()
        assert footer.tooltip is None
        assert style_at(footer, one) == before


async def test_a_change_of_focus_mounts_nothing() -> None:
    app = Keys()
    async with app.run_test(size=(100, 5)) as pilot:
        footer = app.query_one(Footer)
        await wait_for(pilot, lambda: footer.items)
        assert app.focused is app.query_one(Input)
        widgets = set(app.screen.walk_children())
        app.set_focus(None)
        await pilot.pause()
        app.query_one(Input).focus()
        await pilot.pause()
        assert set(app.screen.walk_children()) == widgets  # Textual's footer made new keys


async def test_keys_that_do_not_fit_scroll_sideways_under_the_wheel() -> None:
    extra = [Binding(f"ctrl+{c}", f"many('{c}')", f"Key {c}") for c in "bdefghjk"]
    app = Keys(*extra)
    async with app.run_test(size=(40, 5)) as pilot:
        footer = app.query_one(Footer)
        await wait_for(pilot, lambda: footer.items)
        start = footer.render_line(0).text
        assert start.startswith(" f1 One") and start.endswith("▏^p palette ")

        def wheel(kind: Any) -> None:
            footer.post_message(kind(footer, 5, 0, 0, 1, 0, False, False, False))

        for _ in range(50):  # far past the end: it stops at the last key
            wheel(events.MouseScrollDown)
        await pilot.pause()
        end = footer.render_line(0).text
        assert end != start and end.endswith("▏^p palette ") and len(end) == 40
        last = [item for item in footer.items if not item.palette][-1]
        assert end[: 40 - len("▏^p palette ")].rstrip().endswith(last.description)
        wheel(events.MouseScrollUp)
        await pilot.pause()
        assert footer.render_line(0).text not in (start, end)
        for _ in range(50):
            wheel(events.MouseScrollUp)
        await pilot.pause()
        assert footer.render_line(0).text == start


async def test_a_new_theme_recolours_the_keys() -> None:
    app = Keys()
    async with app.run_test(size=(100, 5)) as pilot:
        footer = app.query_one(Footer)
        await wait_for(pilot, lambda: footer.items)
        before = style_at(footer, column_of(footer, "f1"))
        app.theme = "gruvbox" if app.theme != "gruvbox" else "nord"
        await pilot.pause()
        await pilot.pause()
        after = style_at(footer, column_of(footer, "f1"))
        assert before is not None and after is not None and before.color != after.color
