"""Regenerate the README's screenshots from the real app: `python screenshots/make_screenshots.py`.

Writes screenshots/<moment>-<size>.svg for every moment in `moments.py` at 80x24
and 200x60, and a PNG beside each when `rsvg-convert` is installed (Debian:
librsvg2-bin).
"""

from __future__ import annotations

import asyncio
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from screenshots.moments import MOMENTS, SIZES, build_app  # noqa: E402


async def shoot(name: str, size: tuple[int, int], drive, options_moment) -> Path:  # type: ignore[no-untyped-def]
    with tempfile.TemporaryDirectory(prefix="workbench-shot-") as tmp:
        app = build_app(options_moment, Path(tmp))
        async with app.run_test(size=size) as pilot:
            await drive(pilot)
            svg = app.export_screenshot(title=f"Agent Workbench — {name}")
            app.agent.abort("screenshot taken")
    path = HERE / f"{name}.svg"
    path.write_text(svg, encoding="utf-8")
    return path


_TEXT = re.compile(
    r'(<text [^>]*?x=")([\d.]+)("[^>]*?textLength=")([\d.]+)("[^>]*>)((?:[^<&]|&[^;]+;)*)(</text>)'
)
_CHAR = re.compile(r"&[^;]+;|[^&]")
_SPACE = "&#160;"


def _pinned(match: re.Match[str]) -> str:
    """One styled run with its edge spaces taken out and its box moved to match."""
    head, x, mid, length, tail, body, end = match.groups()
    chars = _CHAR.findall(body)
    if not chars or all(c == _SPACE for c in chars):
        return match.group(0)
    width = float(length) / len(chars)
    lead = next(i for i, c in enumerate(chars) if c != _SPACE)
    trail = next(i for i, c in enumerate(reversed(chars)) if c != _SPACE)
    kept = chars[lead : len(chars) - trail]
    return f"{head}{float(x) + lead * width:g}{mid}{len(kept) * width:g}{tail}{''.join(kept)}{end}"


def png_ready(svg: str) -> str:
    """The SVG as rsvg-convert draws it right. Each styled run of cells is one <text>
    stretched to its cells' width (textLength); rsvg drops a run's leading and trailing
    spaces before stretching, so the run after an inline code span lost its space and
    slid left. With the edge spaces taken out and each run's box moved and shrunk to
    what is left, every glyph lands in its own cell."""
    return _TEXT.sub(_pinned, svg)


async def main() -> None:
    converter = shutil.which("rsvg-convert")
    for moment in MOMENTS:
        for size_name, size in SIZES.items():
            name = f"{moment.name}-{size_name}"
            path = await shoot(name, size, moment.drive, moment)
            if converter:
                png = str(path.with_suffix(".png"))
                with tempfile.NamedTemporaryFile("w", suffix=".svg", encoding="utf-8") as fixed:
                    fixed.write(png_ready(path.read_text(encoding="utf-8")))
                    fixed.flush()
                    subprocess.run([converter, fixed.name, "-o", png], check=True)
            print(f"wrote {path.relative_to(HERE.parent)}" + (" (+ .png)" if converter else ""))


if __name__ == "__main__":
    asyncio.run(main())
