"""Heights: the line heights of a list of rows, with where each row starts, in O(log n).

The timeline draws thousands of items line by line and needs, for a line, the item
that holds it, and for an item, its first line. Keeping the starts in a list means
walking every item whenever one item's height changes, which the timeline does
each time it draws an off-screen text: a long timeline settled its texts in
quadratic time. A Fenwick tree (binary indexed tree) of the heights answers both
questions and takes a change in O(log n).
"""

from __future__ import annotations


class Heights:
    """Row heights (non-negative), appended, changed, or cut from the end."""

    def __init__(self) -> None:
        self._values: list[int] = []
        self._tree: list[int] = [0]
        """1-based: `_tree[i]` holds the sum of the `i & -i` values ending at row i - 1."""
        self._total = 0

    def __len__(self) -> int:
        return len(self._values)

    def __getitem__(self, row: int) -> int:
        return self._values[row]

    @property
    def total(self) -> int:
        return self._total

    def append(self, height: int) -> None:
        self._values.append(height)
        n = len(self._values)
        # the node covers rows n - lowbit(n) .. n - 1: this one and the sums before it
        self._tree.append(height + self.start(n - 1) - self.start(n - (n & -n)))
        self._total += height

    def truncate(self, rows: int) -> None:
        """Keep the first `rows` rows (a node depends only on the rows up to its own)."""
        if rows < len(self._values):
            self._total = self.start(rows)
            del self._values[rows:], self._tree[rows + 1 :]

    def set(self, row: int, height: int) -> None:
        change = height - self._values[row]
        if not change:
            return
        self._values[row] = height
        self._total += change
        tree, i, n = self._tree, row + 1, len(self._values)
        while i <= n:
            tree[i] += change
            i += i & -i

    def start(self, row: int) -> int:
        """The first line of `row` (the sum of the heights before it)."""
        tree, i, line = self._tree, row, 0
        while i > 0:
            line += tree[i]
            i -= i & -i
        return line

    def find(self, line: int) -> int:
        """The row holding `line` (0 <= line < total); -1 before the first line, and
        `len(self)` past the last."""
        if line < 0:
            return -1
        if line >= self._total:
            return len(self._values)
        tree, n = self._tree, len(self._values)
        row, step = 0, 1 << n.bit_length()
        while step:
            nxt = row + step
            if nxt <= n and tree[nxt] <= line:
                row = nxt
                line -= tree[nxt]
            step >>= 1
        return row
