"""SchemaForm: inputs generated from a flat JSON Schema object, read back in its types.

One field per property: a checkbox for a boolean, a select for an `enum` (or a
`oneOf`/`anyOf` of `const`s), a typed input for an integer or number, a text input
otherwise. `values()` reads them back (empty optional fields left out) and
`problems()` checks them against the schema (patterns time-bounded). Used by the
dialogs where an MCP server asks for input (elicitation) and where a person fills a
resource template's variables or a prompt's arguments. Labels and choices come from
a server, so they are shown literally.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widget import Widget
from textual.widgets import Checkbox, Input, Select, Static

from widgets.clear_checkbox import ClearCheckbox
from widgets.terminal_safety import LiteralInput
from workbench.sanitize import literal


class SchemaForm(VerticalScroll):
    """The fields of `schema` (an object schema); each field's id is `f-N`, its place:
    a property's name is a server's text, not a valid widget id."""

    def __init__(self, schema: dict[str, Any], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.schema = schema
        self.fields: dict[str, Any] = dict(schema.get("properties") or {})
        self.ids = {name: f"f-{i}" for i, name in enumerate(self.fields)}

    def compose(self) -> ComposeResult:
        for name, spec in self.fields.items():
            yield Static(self._label(name, spec), classes="label")
            yield self._field(name, spec)

    def field_id(self, name: str) -> str:
        return self.ids[name]

    def _label(self, name: str, spec: dict[str, Any]) -> Text:
        required = name in (self.schema.get("required") or [])
        text = Text(literal(str(spec.get("title") or name)), style="bold")
        text.append(f"  {spec.get('type', 'value')}{'' if required else ', optional'}", style="dim")
        if spec.get("description"):
            text.append(f"  {literal(str(spec['description']))}", style="italic")
        return text

    def _field(self, name: str, spec: dict[str, Any]) -> Widget:
        default = spec.get("default")
        choices = _choices(spec)
        if spec.get("type") == "boolean":
            return ClearCheckbox(Text(literal(name)), value=bool(default), id=self.field_id(name))
        if choices:
            options = [(Text(literal(label)), value) for value, label in choices]
            return Select(
                options,
                value=default if default is not None else Select.BLANK,
                id=self.field_id(name),
                allow_blank=True,
            )
        kind = {"integer": "integer", "number": "number"}.get(str(spec.get("type")), "text")
        # a server's default is shown literally, and sent as shown
        return LiteralInput(
            "" if default is None else str(default), type=kind, id=self.field_id(name)
        )

    def values(self) -> dict[str, Any]:
        """The form's values in the schema's types (empty optional fields left out)."""
        out: dict[str, Any] = {}
        for name, spec in self.fields.items():
            widget = self.query_one(f"#{self.field_id(name)}")
            if isinstance(widget, Checkbox):
                out[name] = widget.value
            elif isinstance(widget, Select):
                if widget.value is not Select.BLANK:
                    out[name] = widget.value
            elif isinstance(widget, Input) and widget.value != "":
                out[name] = _typed(widget.value, spec)
        return out

    def problems(self, values: dict[str, Any]) -> list[str]:
        """Each way `values` breaks the schema, as `field: problem`."""
        return _problems(self.schema, values)


def _choices(spec: dict[str, Any]) -> list[tuple[Any, str]]:
    if isinstance(spec.get("enum"), list):
        names = spec.get("enumNames") or spec["enum"]
        return [(v, str(n)) for v, n in zip(spec["enum"], names, strict=False)]
    options = spec.get("oneOf") or spec.get("anyOf")
    if isinstance(options, list) and all(isinstance(o, dict) and "const" in o for o in options):
        return [(o["const"], str(o.get("title", o["const"]))) for o in options]
    return []


def _typed(text: str, spec: dict[str, Any]) -> Any:
    kind = spec.get("type")
    try:
        if kind == "integer":
            return int(text)
        if kind == "number":
            return float(text)
    except ValueError:
        return text  # the schema check names the field
    return text


def _problems(schema: dict[str, Any], values: dict[str, Any]) -> list[str]:
    """Each way `values` breaks `schema`, as `field: problem` (time-bounded patterns)."""
    from jsonschema import Draft202012Validator  # type: ignore[import-untyped]

    from workbench.agent.schema_patterns import with_safe_patterns

    validator = with_safe_patterns(Draft202012Validator)(schema)
    out = []
    for error in sorted(validator.iter_errors(values), key=lambda e: list(e.path)):
        where = ".".join(str(p) for p in error.path) or "form"
        out.append(f"{where}: {error.message}")
    return out
