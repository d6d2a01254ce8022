"""Textual's private API: used only in widgets/textual_compat.py, and still what it was.

When a Textual release renames or changes what the adapter reads, these tests fail
before the app quietly draws on a closing screen or checks an attribute that is gone.
"""

from __future__ import annotations

import ast
import functools
import importlib
import inspect
import re
from pathlib import Path

from textual.app import App, ComposeResult
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Static

from workbench.widgets.clear_checkbox import ClearCheckbox
from workbench.widgets.textual_compat import is_closing

WIDGETS = Path(__file__).resolve().parents[2] / "widgets"


class _OneStatic(App[None]):
    def compose(self) -> ComposeResult:
        yield Static("hello", id="hello")


async def test_an_app_is_closing_only_once_it_exits() -> None:
    app = _OneStatic()
    async with app.run_test() as pilot:
        assert not is_closing(app)
        static = app.query_one("#hello", Static)
        assert not is_closing(static)
        await static.remove()
        await pilot.pause()
        assert is_closing(static)
        assert not is_closing(app)
    assert is_closing(app)


async def test_the_clear_checkbox_draws_its_state_in_words() -> None:
    class _Box(App[None]):
        def compose(self) -> ComposeResult:
            yield ClearCheckbox("remember", id="box")

    app = _Box()
    async with app.run_test() as pilot:
        box = app.query_one(ClearCheckbox)
        assert box.render().plain.startswith("[ ] ")
        assert box.get_content_width(app.size, app.size) == len("[ ]  remember ")
        box.value = True
        await pilot.pause()
        assert box.render().plain.startswith("[x] ")
        assert box.region.width >= len("[x]  remember ")


def _private_names(source: str) -> set[str]:
    assigned = re.findall(r"self\.(_[a-z]\w*)\s*(?::[^=\n]*)?=", source)
    defined = re.findall(r"^\s+(?:async\s+)?def (_[a-z]\w*)\(", source, re.M)
    class_level = re.findall(r"^\s+(_[a-z]\w*)\s*[:=]", source, re.M)
    return set(assigned) | set(defined) | set(class_level)


@functools.cache
def _names_of(cls: type) -> frozenset[str]:
    return frozenset(_private_names(inspect.getsource(cls)))


def _textual_names(cls: type) -> set[str]:
    names: set[str] = set()
    for base in cls.__mro__:
        if base.__module__.startswith("textual."):
            names |= _names_of(base)
    return names


def test_no_widget_uses_or_shadows_a_private_name_of_textual() -> None:
    """Every `self._x` of the workbench's Textual classes (and of the mixins that
    become part of them) is the workbench's own, not one of Textual's internals."""
    shared = _textual_names(App) | _textual_names(Screen) | _textual_names(Widget)
    clashes = []
    for path in sorted(WIDGETS.glob("*.py")):
        if path.stem == "textual_compat":
            continue
        module = importlib.import_module(f"workbench.widgets.{path.stem}")
        text = path.read_text()
        for node in ast.parse(text).body:
            if not isinstance(node, ast.ClassDef):
                continue
            cls = getattr(module, node.name)
            source = ast.get_source_segment(text, node) or ""
            mine = set(re.findall(r"self\.(_[a-z]\w*)", source)) | _private_names(source)
            is_textual = any(b.__module__.startswith("textual.") for b in cls.__mro__)
            theirs = _textual_names(cls) if is_textual else shared
            clashes += [f"{path.name}: {node.name}.{attr}" for attr in sorted(mine & theirs)]
    assert not clashes, "use widgets/textual_compat.py: " + ", ".join(clashes)


def test_tests_read_notifications_through_the_public_hook() -> None:
    tests = Path(__file__).resolve().parents[1]
    readers = [
        str(path.relative_to(tests))
        for path in sorted(tests.rglob("*.py"))
        if path != Path(__file__).resolve() and "app._notifications" in path.read_text()
    ]
    assert not readers, "use tests.support.notifications.notifications(app): " + ", ".join(readers)
