"""The keys the docs name, from the app's real bindings: a dialog's key table for the
README files (`scripts/doc_keys.py` writes it between markers; a test checks it), and
every key the main screen answers (a test checks the README's key table against it)."""

from __future__ import annotations

from collections.abc import Iterable

from textual.binding import Binding, BindingType

_NAMES = {"escape": "Esc", "enter": "Enter", "tab": "Tab", "up": "↑", "down": "↓"}


def key_name(key: str) -> str:
    """A binding's key as the docs write it: `ctrl+y`, `F2`, `Esc`, `T`."""
    if key.startswith("f") and key[1:].isdigit():
        return key.upper()
    return _NAMES.get(key, key)


def bindings_of(classes: Iterable[type]) -> list[Binding]:
    """Every binding of `classes` (their own BINDINGS, each key of a multi-key one apart)."""
    found: list[Binding] = []
    for cls in classes:
        raw: list[BindingType] = list(cls.__dict__.get("BINDINGS", []))
        for item in raw:
            found += list(Binding.make_bindings([item]))
    return found


def keys_of(classes: Iterable[type]) -> set[str]:
    """Every key `classes` bind, as the docs write them."""
    return {key_name(b.key) for b in bindings_of(classes)}


def key_table(classes: Iterable[type], extra: Iterable[tuple[str, str]] = ()) -> str:
    """A Markdown table of the keys shown in the footer (first binding of each key),
    then `extra` rows (buttons, say)."""
    rows: dict[str, str] = {}
    for b in bindings_of(classes):
        name = key_name(b.key)
        if b.show and b.description and name not in rows:
            rows[name] = b.description
    lines = ["| Key | Does |", "| --- | --- |"]
    lines += [f"| {key} | {does} |" for key, does in rows.items()]
    lines += [f"| {key} | {does} |" for key, does in extra]
    return "\n".join(lines)


def permission_dialog_table() -> str:
    """The permission dialog's keys and buttons, as the docs list them."""
    from workbench.widgets.permission_modal import PermissionModal

    return key_table(
        [PermissionModal],
        [
            ("Enter (in the reason box)", "Deny, with the reason typed"),
            ("Tab to a button, Enter", "Always allow the tool, or calls like this one"),
        ],
    )


BEGIN = "<!-- keys: {name} (generated from the app's bindings by scripts/doc_keys.py) -->"
END = "<!-- end of keys -->"

GENERATED = {"permission dialog": permission_dialog_table}
"""What `scripts/doc_keys.py` writes between a document's markers, by name."""


def refreshed(text: str) -> str:
    """`text` with every marked block written anew from the bindings."""
    for name, make in GENERATED.items():
        begin = BEGIN.format(name=name)
        start = text.find(begin)
        while start != -1:
            body = start + len(begin)
            end = text.index(END, body)
            text = text[:body] + "\n" + make() + "\n" + text[end:]
            start = text.find(begin, body)
    return text
