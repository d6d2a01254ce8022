"""Write the key tables of the README files from the app's real bindings.

    python scripts/doc_keys.py

Each table sits between `<!-- keys: NAME ... -->` and `<!-- end of keys -->`;
tests/docs/test_doc_keys.py fails when one is out of date.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from workbench.widgets.key_docs import refreshed  # noqa: E402

DOCUMENTS = ["README.md", *sorted(f"docs/{p.name}" for p in (ROOT / "docs").glob("*.md"))]
DOCUMENTS += ["examples/todo_agent/README.md"]


def main() -> int:
    for name in DOCUMENTS:
        path = ROOT / name
        text = path.read_text(encoding="utf-8")
        new = refreshed(text)
        if new != text:
            path.write_text(new, encoding="utf-8")
            print(f"wrote {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
