"""Masks: volatile text (times, ids, temporary paths) hidden before results are compared.

`rerun`, the pytest plugin and `diff` take regular expressions (`--ignore REGEX`,
`--workbench-ignore REGEX`, `ignore = [...]` under `[rerun]` in `workbench.toml`);
every match in a result's text is replaced by `MASK` on both sides before comparing,
and the diffs show the masked texts. Patterns come from a command line or a project
file, and results from anything a tool printed, so each match runs under a time bound
(`workbench.safe_regex`): a pattern too slow on a text fails the comparison with the
reason rather than holding the run.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from workbench.safe_regex import MATCH_TIMEOUT, RegexTimeout, compile_pattern

MASK = "<masked>"


class Masks:
    """Compiled patterns; `apply` masks a text.

    Raises:
        workbench.safe_regex.RegexSyntaxError: a pattern that does not compile.
    """

    def __init__(self, patterns: Iterable[str] = ()) -> None:
        self.patterns = list(dict.fromkeys(patterns))
        self.compiled = [compile_pattern(p) for p in self.patterns]

    def __bool__(self) -> bool:
        return bool(self.compiled)

    def apply(self, text: str) -> str:
        for compiled in self.compiled:
            try:
                text = compiled.sub(MASK, text, timeout=MATCH_TIMEOUT, concurrent=True)
            except TimeoutError:
                raise RegexTimeout(
                    f"the mask {compiled.pattern!r} took more than {MATCH_TIMEOUT:g}s on a "
                    "result: make it simpler"
                ) from None
        return text

    def content(self, blocks: Iterable[Any]) -> list[dict[str, Any]]:
        """Content blocks dumped, their text masked (other blocks as they are)."""
        out = []
        for block in blocks:
            data = block.model_dump()
            if isinstance(data.get("text"), str):
                data["text"] = self.apply(data["text"])
            out.append(data)
        return out
