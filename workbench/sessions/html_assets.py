"""The style sheet and the script of the HTML export (inline: the page loads nothing).

The page's Content-Security-Policy allows exactly these two blocks by their hash
(`csp`), and nothing else: no request of any kind, no other script, no inline style
attribute. So text from the session, escaped as it is, could not run or fetch even if
it got past the escaping.
"""

from __future__ import annotations

import base64
import hashlib

CSS = """
:root { color-scheme: light dark; --fg: #1d1f21; --bg: #fbfbfa; --muted: #5f6368;
  --line: #d9d9d6; --card: #ffffff; --ok: #1b7f3a; --err: #b3261e; --deny: #9a5b00;
  --accent: #2957a4; --code: #f3f3f0; }
@media (prefers-color-scheme: dark) {
  :root { --fg: #e6e6e3; --bg: #17181a; --muted: #a0a4a8; --line: #34363a;
    --card: #1f2023; --ok: #6fcf8a; --err: #ff8a80; --deny: #f0b35a; --accent: #8ab4f8;
    --code: #26282b; }
}
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg);
  font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
main { max-width: 1100px; margin: 0 auto; padding: 12px; }
h1 { font-size: 1.3em; margin: 8px 0; overflow-wrap: anywhere; }
h2 { font-size: 1.1em; margin: 20px 0 8px; border-bottom: 1px solid var(--line); }
h3 { font-size: 1em; margin: 12px 0 6px; }
.facts { display: grid; grid-template-columns: repeat(auto-fill, minmax(170px, 1fr));
  gap: 6px 14px; margin: 8px 0; }
.facts div { overflow-wrap: anywhere; }
.facts b { display: block; color: var(--muted); font-weight: 500; font-size: .8em; }
pre, code { font: 13px/1.4 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
pre { background: var(--code); padding: 8px; margin: 4px 0; border-radius: 4px;
  white-space: pre-wrap; overflow-wrap: anywhere; max-height: 60vh; overflow: auto; }
.turn { background: var(--card); border: 1px solid var(--line); border-radius: 6px;
  padding: 8px 12px; margin: 10px 0; }
.turn > header { display: flex; flex-wrap: wrap; gap: 4px 14px; color: var(--muted);
  font-size: .85em; }
.turn > header strong { color: var(--fg); }
.prompt { border-left: 3px solid var(--accent); padding-left: 8px; }
.notice { border-left: 3px dotted var(--muted, #888); padding-left: 8px; }
.say { white-space: pre-wrap; overflow-wrap: anywhere; }
details.call { border: 1px solid var(--line); border-radius: 4px; margin: 6px 0;
  padding: 4px 8px; }
details.call > summary { cursor: pointer; display: flex; flex-wrap: wrap;
  gap: 2px 10px; align-items: baseline; }
.name { font-weight: 600; overflow-wrap: anywhere; }
.id, .muted { color: var(--muted); font-size: .85em; overflow-wrap: anywhere; }
.tag { font-size: .8em; padding: 0 6px; border-radius: 8px; border: 1px solid; }
.ok { color: var(--ok); } .error { color: var(--err); } .denied { color: var(--deny); }
dl.stages { display: grid; grid-template-columns: max-content minmax(0, 1fr);
  gap: 2px 10px; margin: 6px 0; }
dl.stages dt { color: var(--muted); font-size: .85em; padding-top: 6px; }
dl.stages dd { margin: 0; min-width: 0; }
.timeline { list-style: none; padding: 0; margin: 0; }
.timeline li { display: grid;
  grid-template-columns: 5.5em minmax(0, 1fr) 5.5em 5em minmax(4em, 9em);
  gap: 6px; align-items: center; padding: 2px 0; border-bottom: 1px dotted var(--line); }
.timeline a { color: inherit; text-decoration: none; overflow-wrap: anywhere; }
.timeline progress { width: 100%; height: 8px; }
.table { overflow-x: auto; }
table { border-collapse: collapse; width: 100%; font-size: .9em; }
th, td { text-align: left; padding: 4px 6px; border-bottom: 1px solid var(--line);
  vertical-align: top; }
td pre { max-height: 40vh; }
.tools { display: flex; flex-wrap: wrap; gap: 6px; margin: 8px 0; }
button, input { font: inherit; padding: 3px 8px; }
.hidden { display: none; }
@media (max-width: 640px) {
  body { font-size: 14px; } main { padding: 6px; }
  .timeline li { grid-template-columns: 3.8em minmax(0, 1fr) 4.6em 4.2em; }
  .timeline li progress { display: none; }
  dl.stages { grid-template-columns: minmax(0, 1fr); }
  dl.stages dt { padding-top: 4px; }
}
"""

JS = """
(function () {
  "use strict";
  var calls = Array.prototype.slice.call(document.querySelectorAll("details.call"));
  function setAll(open) { calls.forEach(function (d) { d.open = open; }); }
  var expand = document.getElementById("expand");
  var collapse = document.getElementById("collapse");
  var filter = document.getElementById("filter");
  var errors = document.getElementById("only-errors");
  if (expand) { expand.addEventListener("click", function () { setAll(true); }); }
  if (collapse) { collapse.addEventListener("click", function () { setAll(false); }); }
  function apply() {
    var text = filter ? filter.value.toLowerCase() : "";
    var onlyErrors = errors ? errors.checked : false;
    calls.forEach(function (d) {
      var name = (d.getAttribute("data-name") || "").toLowerCase();
      var failed = d.getAttribute("data-outcome") !== "ok";
      var shown = name.indexOf(text) !== -1 && (!onlyErrors || failed);
      d.classList.toggle("hidden", !shown);
    });
  }
  if (filter) { filter.addEventListener("input", apply); }
  if (errors) { errors.addEventListener("change", apply); }
  document.documentElement.setAttribute("data-ready", String(calls.length));
})();
"""


def _hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def csp() -> str:
    """The page's Content-Security-Policy: nothing but these two inline blocks."""
    return (
        f"default-src 'none'; style-src {_hash(CSS)}; script-src {_hash(JS)}; "
        "img-src 'none'; connect-src 'none'; font-src 'none'; form-action 'none'; "
        "base-uri 'none'"
    )
