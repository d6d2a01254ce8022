"""The main screen's footer: Textual's, with the keys it removes let go of.

Textual's footer rebuilds its keys at every focus or binding change, and each new key
watches the footer's `compact` reactive. Textual drops a removed key's watcher only
when `compact` changes, which it never does here, so the list kept every key ever
shown and each new key scanned it all: the cost of a key press grew with how many
had come before (and the removed keys stayed in memory).
"""

from __future__ import annotations

from textual.widgets import Footer as TextualFooter


class Footer(TextualFooter):
    async def recompose(self) -> None:
        await super().recompose()
        # Running the watchers prunes those of closed widgets (the keys just removed).
        self.mutate_reactive(TextualFooter.compact)
