"""Regenerate the README's screenshots from the real app: `python screenshots/make_screenshots.py`.

Writes screenshots/<moment>-<size>.svg for every moment in `moments.py` at 80x24
and 200x60, and a PNG beside each when `rsvg-convert` is installed (Debian:
librsvg2-bin).
"""

from __future__ import annotations

import asyncio
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


async def main() -> None:
    converter = shutil.which("rsvg-convert")
    for moment in MOMENTS:
        for size_name, size in SIZES.items():
            name = f"{moment.name}-{size_name}"
            path = await shoot(name, size, moment.drive, moment)
            if converter:
                png = str(path.with_suffix(".png"))
                subprocess.run([converter, str(path), "-o", png], check=True)
            print(f"wrote {path.relative_to(HERE.parent)}" + (" (+ .png)" if converter else ""))


if __name__ == "__main__":
    asyncio.run(main())
