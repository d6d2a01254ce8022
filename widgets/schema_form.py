"""SchemaForm: inputs generated from a JSON Schema object, read back in its types.

One field per property, built from what the schema says the value is:

- a boolean: a checkbox when required; when optional, a choice of true / false that
  starts unset (an optional flag left alone is not sent);
- an `enum` (labels from `enumNames`), or a `oneOf`/`anyOf` of `const`s (labels from
  their `title`s): a select that starts on the default, or unset;
- an array of such choices: a list of checkboxes, the defaults ticked;
- an object with properties: its own fields, indented (left out when optional and
  nothing in it is set);
- any other array: its items, each with a remove button, and an add button;
- an integer or a number: a typed input; a string: a text input; anything else
  (no type, a mix of types): a text input read as JSON when it parses.

`anyOf: [X, null]` (how pydantic writes `X | None`), `type: [X, "null"]` and local
`$ref`s (`#/$defs/...`) are read as X. `values()` reads the form back (fields left
unset are left out) and `problems()` checks the values against the schema (patterns
time-bounded). Used by the dialogs where an MCP server asks for input (elicitation),
where a person fills a template's variables or a prompt's arguments, and where a tool
is called by hand. Labels and choices come from a server, so they are shown literally.
Top-level fields have ids `f-N` by place (a property's name is a server's text, not a
valid widget id); a nested field's id extends its parent's (`f-2-0`, `f-3-i1`).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any, Literal

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.suggester import Suggester
from textual.widget import Widget
from textual.widgets import Button, Checkbox, Input, Select, SelectionList, Static

from workbench.sanitize import literal
from workbench.widgets.clear_checkbox import ClearCheckbox
from workbench.widgets.terminal_safety import LiteralInput

UNSET: Any = object()
"""What a field left empty reads as (it is left out of the values)."""
_REF_DEPTH = 8
"""How many `$ref`s deep a form follows (a recursive schema stops there)."""


class SchemaForm(VerticalScroll):
    """The fields of `schema` (an object schema)."""

    DEFAULT_CSS = """
    SchemaForm FieldBox { height: auto; }
    SchemaForm .nested { height: auto; padding: 0 0 0 2; border-left: solid $panel; }
    SchemaForm .item { height: auto; }
    SchemaForm .item > FieldBox { width: 1fr; }
    SchemaForm .item > Button { width: auto; margin: 0 0 0 1; }
    SchemaForm SelectionList { height: auto; max-height: 10; }
    SchemaForm .add { margin: 0 0 0 0; }
    """

    def __init__(
        self, schema: dict[str, Any], complete: CompleteFn | None = None, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self.schema = schema
        self.root = ObjectFields(schema, schema, "f", top=True)
        self.root.complete = complete
        self.root.form = self

    def compose(self) -> ComposeResult:
        yield self.root

    class Suggested(Message):
        """The server suggested `values` for field `name` (`completion/complete`)."""

        def __init__(self, name: str, values: list[str]) -> None:
            super().__init__()
            self.name, self.values = name, values

    suggested: tuple[str, list[str]] | None = None

    def values(self) -> dict[str, Any]:
        """The form's values in the schema's types (fields left unset left out)."""
        out = self.root.read()
        return {} if out is UNSET else dict(out)

    def problems(self, values: dict[str, Any]) -> list[str]:
        """Each way `values` breaks the schema, as `field: problem`."""
        return _problems(self.schema, values)


class ObjectFields(Vertical):
    """The fields of one object schema; reads as a dict (UNSET when optional and empty)."""

    DEFAULT_CSS = "ObjectFields { height: auto; }"

    def __init__(
        self,
        spec: dict[str, Any],
        root: dict[str, Any],
        prefix: str,
        *,
        top: bool = False,
        required: bool = True,
        default: Any = None,
    ) -> None:
        super().__init__(classes="" if top else "nested", id=None if top else prefix)
        self.spec, self.root, self.prefix = spec, root, prefix
        self.top, self.required = top, required
        props = spec.get("properties")
        self.properties: dict[str, Any] = dict(props) if isinstance(props, dict) else {}
        needed = spec.get("required")
        self.needed = set(needed) if isinstance(needed, list) else set()
        self.default = default if isinstance(default, dict) else {}
        self.complete: CompleteFn | None = None
        self.form: SchemaForm | None = None

    def compose(self) -> ComposeResult:
        for i, (name, raw) in enumerate(self.properties.items()):
            spec = plain(raw, self.root)
            own = spec.get("default", self.default.get(name))
            field_id = f"{self.prefix}-{i}"
            box = FieldBox(name, spec, self.root, field_id, name in self.needed, own)
            if self.complete is not None and self.form is not None and box.kind == "string":
                box.suggester = Completions(self.complete, name, self.form)
            yield box

    def read(self) -> Any:
        out = {}
        for box in self.query_children(FieldBox):
            value = box.read()
            if value is not UNSET:
                out[box.name_] = value
        if not out and not self.top and not self.required:
            return UNSET
        return out


class FieldBox(Vertical):
    """One value: its label (unless an array's item) and its control."""

    DEFAULT_CSS = "FieldBox { height: auto; }"

    def __init__(
        self,
        name: str | None,
        spec: dict[str, Any],
        root: dict[str, Any],
        field_id: str,
        required: bool,
        default: Any,
    ) -> None:
        super().__init__()
        self.name_, self.spec, self.root = name, spec, root
        self.field_id, self.required, self.default = field_id, required, default
        self.choices = choices(spec)
        items = plain(spec.get("items"), root) if isinstance(spec.get("items"), dict) else {}
        self.item_spec: dict[str, Any] = items
        self.kind = _kind(spec, self.choices, items, required)
        self.suggester: Suggester | None = None
        if self.kind == "flag":
            self.choices = [(True, "true"), (False, "false")]
        elif self.kind == "multi":
            self.choices = choices(items)

    def compose(self) -> ComposeResult:
        if self.name_ is not None:
            yield Static(self._label(), classes="label")
        yield self._control()

    def _label(self) -> Text:
        spec = self.spec
        text = Text(literal(str(spec.get("title") or self.name_)), style="bold")
        kind = spec.get("type", "value")
        text.append(f"  {literal(str(kind))}{'' if self.required else ', optional'}", style="dim")
        if spec.get("description"):
            text.append(f"  {literal(str(spec['description']))}", style="italic")
        return text

    def _control(self) -> Widget:
        default, fid = self.default, self.field_id
        if self.kind == "checkbox":
            return ClearCheckbox(Text(literal(self.name_ or "")), value=bool(default), id=fid)
        if self.kind in ("choice", "flag"):
            options = [(Text(literal(label)), i) for i, (_, label) in enumerate(self.choices)]
            start = _index(self.choices, default)
            return Select(options, value=Select.NULL if start is None else start, id=fid)
        if self.kind == "multi":
            picked = default if isinstance(default, list) else []
            marks = [
                (Text(literal(label)), i, any(_same(v, p) for p in picked))
                for i, (v, label) in enumerate(self.choices)
            ]
            return SelectionList[int](*marks, id=fid)
        if self.kind == "object":
            return ObjectFields(self.spec, self.root, fid, required=self.required, default=default)
        if self.kind == "array":
            return ArrayField(self.item_spec, self.root, fid, default, required=self.required)
        shown = "" if default is None else _shown(default, self.kind)
        kind: Literal["integer", "number", "text"] = (
            "integer" if self.kind == "integer" else "number" if self.kind == "number" else "text"
        )
        return LiteralInput(shown, type=kind, id=fid, suggester=self.suggester)

    def read(self) -> Any:
        control = self.children[-1]
        if isinstance(control, Checkbox):
            return control.value
        if isinstance(control, Select):
            index = control.value
            return UNSET if index == Select.NULL else self.choices[int(index)][0]  # type: ignore[arg-type]
        if isinstance(control, SelectionList):
            chosen = set(control.selected)
            values = [v for i, (v, _) in enumerate(self.choices) if i in chosen]
            return values if values or self.required else UNSET
        if isinstance(control, ObjectFields | ArrayField):
            return control.read()
        if isinstance(control, Input):
            return UNSET if control.value == "" else _typed(control.value, self.kind)
        return UNSET


class ArrayField(Vertical):
    """An array's items, each with a remove button, and a button that adds one."""

    DEFAULT_CSS = "ArrayField { height: auto; }"

    def __init__(
        self,
        items: dict[str, Any],
        root: dict[str, Any],
        prefix: str,
        default: Any,
        *,
        required: bool,
    ) -> None:
        super().__init__(classes="nested", id=prefix)
        self.required = required
        self.items, self.root, self.prefix = items, root, prefix
        self.start = default if isinstance(default, list) else []
        self.made = 0

    def compose(self) -> ComposeResult:
        for value in self.start:
            yield self._item(value)
        yield Button("+ add an item", id=f"{self.prefix}-add", classes="add", compact=True)

    def _item(self, value: Any) -> Horizontal:
        fid = f"{self.prefix}-i{self.made}"
        self.made += 1
        box = FieldBox(None, self.items, self.root, fid, True, value)
        return Horizontal(box, Button("remove", id=f"{fid}-remove", compact=True), classes="item")

    @on(Button.Pressed)
    async def _pressed(self, event: Button.Pressed) -> None:
        button = event.button
        if button.parent is self and button.has_class("add"):
            event.stop()
            await self.mount(self._item(self.items.get("default")), before=button)
        elif isinstance(button.parent, Widget) and button.parent.parent is self:
            event.stop()
            await button.parent.remove()

    def read(self) -> Any:
        out = []
        for row in self.query_children(".item"):
            value = row.query_children(FieldBox).first().read()
            if value is not UNSET:
                out.append(value)
        return out if out or self.required else UNSET


CompleteFn = Callable[[str, str, dict[str, str]], Awaitable[list[str]]]
"""(argument name, text typed, the other arguments) -> the server's suggestions."""


class Completions(Suggester):
    """Suggests, as the person types, the first of the server's completions that
    continues the text (right arrow takes it); the others are listed under the form."""

    def __init__(self, complete: CompleteFn, name: str, form: SchemaForm) -> None:
        super().__init__(use_cache=False, case_sensitive=True)
        self.complete, self.name, self.form = complete, name, form

    async def get_suggestion(self, value: str) -> str | None:
        others = {k: str(v) for k, v in self.form.values().items() if k != self.name}
        try:
            found = await self.complete(self.name, value, others)
        except Exception:  # noqa: BLE001 - a failed completion only suggests nothing
            return None
        self.form.suggested = (self.name, found)
        self.form.post_message(SchemaForm.Suggested(self.name, found))
        return next((v for v in found if v.startswith(value) and v != value), None)


def plain(spec: Any, root: dict[str, Any], depth: int = 0) -> dict[str, Any]:
    """`spec` as the form reads it: a local `$ref` followed, `X | null` taken as X."""
    if not isinstance(spec, dict):
        return {}
    ref = spec.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/") and depth < _REF_DEPTH:
        target: Any = root
        for part in ref[2:].split("/"):
            target = target.get(part) if isinstance(target, dict) else None
        if isinstance(target, dict):
            rest = {k: v for k, v in spec.items() if k != "$ref"}
            return plain({**target, **rest}, root, depth + 1)
    kind = spec.get("type")
    if isinstance(kind, list):
        real = [k for k in kind if k != "null"]
        if len(real) == 1:
            spec = {**spec, "type": real[0]}
    for key in ("anyOf", "oneOf"):
        options = spec.get(key)
        if not isinstance(options, list):
            continue
        real_options = [o for o in options if not (isinstance(o, dict) and o.get("type") == "null")]
        if len(real_options) == 1 and len(real_options) < len(options):
            rest = {k: v for k, v in spec.items() if k != key}
            if rest.get("default", 0) is None:
                del rest["default"]
            return plain({**real_options[0], **rest}, root, depth + 1)
    return spec


def choices(spec: dict[str, Any]) -> list[tuple[Any, str]]:
    """The (value, label) choices of an `enum` or a list of `const`s, else []."""
    if isinstance(spec.get("enum"), list):
        names = spec.get("enumNames")
        labels = names if isinstance(names, list) and len(names) == len(spec["enum"]) else None
        return [(v, str(labels[i]) if labels else _label(v)) for i, v in enumerate(spec["enum"])]
    for key in ("oneOf", "anyOf"):
        options = spec.get(key)
        if (
            isinstance(options, list)
            and options
            and all(isinstance(o, dict) and "const" in o for o in options)
        ):
            return [(o["const"], str(o.get("title") or _label(o["const"]))) for o in options]
    return []


def _kind(
    spec: dict[str, Any], options: list[tuple[Any, str]], items: dict[str, Any], required: bool
) -> str:
    kind = spec.get("type")
    if options:
        return "choice"
    if kind == "boolean":
        return "checkbox" if required else "flag"
    if kind == "array" and choices(items):
        return "multi"
    if kind == "object" or (kind is None and isinstance(spec.get("properties"), dict)):
        return "object" if isinstance(spec.get("properties"), dict) else "json"
    if kind == "array":
        return "array"
    if kind in ("integer", "number", "string"):
        return str(kind)
    return "json"


def _label(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def _same(a: Any, b: Any) -> bool:
    """JSON equality (True is not 1 here, unlike in Python)."""
    return type(a) is type(b) and a == b


def _index(options: list[tuple[Any, str]], value: Any) -> int | None:
    return next((i for i, (v, _) in enumerate(options) if _same(v, value)), None)


def _shown(value: Any, kind: str) -> str:
    if kind in ("string", "integer", "number") and not isinstance(value, dict | list):
        return str(value)
    return json.dumps(value, ensure_ascii=False)


def _typed(text: str, kind: str) -> Any:
    try:
        if kind == "integer":
            return int(text)
        if kind == "number":  # a whole number stays one (as typed, as JSON has it)
            return int(text) if text.strip().lstrip("-").isdigit() else float(text)
        if kind == "json":
            return json.loads(text)
    except ValueError:
        return text  # the schema check names the field
    return text


def _problems(schema: dict[str, Any], values: dict[str, Any]) -> list[str]:
    """Each way `values` breaks `schema`, as `field: problem` (time-bounded patterns)."""
    from jsonschema import Draft202012Validator  # type: ignore[import-untyped]

    from workbench.agent.schema_patterns import with_safe_patterns

    validator = with_safe_patterns(Draft202012Validator)(schema)
    out = []
    for error in sorted(validator.iter_errors(values), key=lambda e: [str(p) for p in e.path]):
        where = ".".join(str(p) for p in error.path) or "form"
        out.append(f"{where}: {error.message}")
    return out
