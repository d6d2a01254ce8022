"""Heights: starts and lookups agree with plain sums through appends, changes and cuts."""

from __future__ import annotations

import random

from workbench.widgets.heights import Heights


def test_starts_and_finds_match_plain_sums_through_random_edits() -> None:
    rng = random.Random(7)
    heights, values = Heights(), []
    for _ in range(600):
        roll = rng.random()
        if roll < 0.5 or not values:
            value = rng.randint(1, 5)
            heights.append(value)
            values.append(value)
        elif roll < 0.85:
            row, value = rng.randrange(len(values)), rng.randint(1, 9)
            heights.set(row, value)
            values[row] = value
        else:
            keep = rng.randint(0, len(values))
            heights.truncate(keep)
            del values[keep:]
        assert heights.total == sum(values) and len(heights) == len(values)
        row = rng.randint(0, len(values))
        assert heights.start(row) == sum(values[:row])
        line = rng.randint(-1, sum(values))
        found = heights.find(line)
        if line < 0:
            assert found == -1
        elif line >= sum(values):
            assert found == len(values)
        else:
            assert sum(values[:found]) <= line < sum(values[: found + 1])
