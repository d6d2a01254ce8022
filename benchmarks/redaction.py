"""What redacting every 8-character piece of the known secrets costs, by text shape.

    python benchmarks/redaction.py [--secrets 30] [--mb 3]

Thirty 60-character secrets (about 3,200 pieces, forwards and reversed) against a few
megabytes of: prose with no secret, one repeated character, the whole key on every
line, and 9-character pieces of it between spaces (the most matches). Prints the
median of five runs of each, in seconds.
"""

from __future__ import annotations

import argparse
import random
import statistics
import string
import time

from workbench.redact import Redactor


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--secrets", type=int, default=30)
    parser.add_argument("--mb", type=float, default=3.0)
    args = parser.parse_args()
    rnd = random.Random(1)
    alphabet = string.ascii_letters + string.digits
    secrets = {
        f"S{i}": "".join(rnd.choice(alphabet) for _ in range(60)) for i in range(args.secrets)
    }
    size = int(args.mb * 1_000_000)
    key = secrets["S0"]
    texts = {
        "prose, no secret": "lorem ipsum dolor sit amet 1234567890 abcdefgh\n",
        "one character": "x",
        "the key on every line": key + "\n",
        "9-character pieces": key[:9] + " ",
    }
    start = time.perf_counter()
    redactor = Redactor(secrets)
    print(f"build: {time.perf_counter() - start:.3f} s for {len(secrets)} secrets")
    for label, unit in texts.items():
        text = unit * (size // len(unit))
        times = []
        for _ in range(5):
            start = time.perf_counter()
            redactor(text)
            times.append(time.perf_counter() - start)
        print(f"{label}: {statistics.median(times):.3f} s for {len(text) / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
