"""The README's PNGs are drawn right: rsvg-convert drops a styled run's edge spaces
before stretching it to its cells, so screenshots/make_screenshots.py takes them out
and moves the run's box instead (the space after inline code was lost in the PNGs)."""

from __future__ import annotations

from screenshots.make_screenshots import png_ready

RUNS = (
    '<text class="r2" x="24.4" y="5" textLength="231.8" clip-path="c">'
    "config.json&#160;has&#160;no&#160;</text>"
    '<text class="r17" x="256.2" y="5" textLength="122" clip-path="c">apiBaseUrl</text>'
    '<text class="r2" x="378.2" y="5" textLength="195.2" clip-path="c">'
    "&#160;(src/agent.py&#160;&#160;</text>"
)


def test_edge_spaces_become_offsets_so_each_glyph_keeps_its_cell() -> None:
    fixed = png_ready(RUNS)
    assert 'x="24.4" y="5" textLength="219.6" clip-path="c">config.json&#160;has&#160;no<' in fixed
    assert 'x="256.2" y="5" textLength="122" clip-path="c">apiBaseUrl<' in fixed
    # "(src" starts one cell (12.2) after where the run began: the space is kept as room
    assert 'x="390.4" y="5" textLength="158.6" clip-path="c">(src/agent.py<' in fixed


def test_runs_of_only_spaces_and_no_spaces_are_left_alone() -> None:
    blank = '<text class="r" x="1" y="2" textLength="24.4" clip-path="c">&#160;&#160;</text>'
    assert png_ready(blank) == blank
    assert png_ready(RUNS.split("</text>")[1] + "</text>") == RUNS.split("</text>")[1] + "</text>"
