"""The keys the docs name are the keys the app binds: the README files' generated key
tables are up to date with the bindings, and every key a key table or a paragraph
about the permission dialog names is bound where it says."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from textual.app import App

from workbench.widgets.app import WorkbenchApp
from workbench.widgets.help_screen import HELP
from workbench.widgets.key_docs import keys_of, refreshed
from workbench.widgets.permission_modal import PermissionModal
from workbench.widgets.prompt_bar import PromptBar
from workbench.widgets.timeline import Timeline
from workbench.widgets.tool_inspector import ToolInspector

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTS = ["README.md", *sorted(f"docs/{p.name}" for p in (ROOT / "docs").glob("*.md"))]
DOCUMENTS += ["examples/todo_agent/README.md"]
KEY = re.compile(r"\b(F\d{1,2}|ctrl\+[a-z]|[A-Z](?= in the))\b")


@pytest.mark.parametrize("name", DOCUMENTS)
def test_the_generated_key_tables_match_the_bindings(name: str) -> None:
    text = (ROOT / name).read_text(encoding="utf-8")
    assert refreshed(text) == text, f"{name}: run python scripts/doc_keys.py"


def main_table(text: str) -> list[str]:
    """The first column of the key table after "| Key | Does |"."""
    start = text.index("| Key | Does |")
    rows = []
    for line in text[start:].splitlines()[2:]:
        if not line.startswith("|"):
            break
        rows.append(line.split("|")[1])
    return rows


@pytest.mark.parametrize(
    "text",
    [(ROOT / "docs/using.md").read_text(encoding="utf-8"), HELP],
    ids=["docs/using.md", "help screen"],
)
def test_every_key_of_the_main_key_table_is_bound(text: str) -> None:
    bound = keys_of([App, WorkbenchApp, Timeline, PromptBar, ToolInspector]) | {"ctrl+p"}
    named = {k for cell in main_table(text) for k in KEY.findall(cell)}
    assert named and named <= bound, f"named but not bound: {named - bound}"


def dialog_paragraphs(text: str) -> list[str]:
    """Paragraphs that say how a call is approved (and name keys in bold)."""
    paragraphs = re.split(r"\n\s*\n", text)
    return [p for p in paragraphs if "**" in p and re.search(r"dialog|approv", p)]


@pytest.mark.parametrize("name", DOCUMENTS)
def test_the_keys_a_paragraph_on_the_permission_dialog_names_are_the_dialogs(name: str) -> None:
    text = (ROOT / name).read_text(encoding="utf-8")
    paragraphs = [p for p in dialog_paragraphs(text) if "allow" in p.lower()]
    bound = keys_of([PermissionModal]) | {"Enter"}
    for paragraph in paragraphs:
        bold = set(re.findall(r"\*\*([^*\s]+)\*\*", paragraph))
        keys = {k for k in bold if KEY.fullmatch(k) or len(k) == 1 or k in ("Enter", "Esc")}
        assert keys <= bound, f"{name}: the dialog does not bind {keys - bound}: {paragraph}"


def test_a_letter_said_to_allow_would_be_caught() -> None:
    wrong = "In the permission dialog press **a** to allow once, **A** for the session."
    bound = keys_of([PermissionModal]) | {"Enter"}
    assert not {"a", "A"} <= bound and dialog_paragraphs(wrong)
