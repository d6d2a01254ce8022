"""`workbench` (and `python -m workbench`): the command-line entry point.

What each command does lives in `workbench/cli/` (`main.py` routes the first word).
"""

from __future__ import annotations

import sys

from workbench.cli.main import main

__all__ = ["main"]

if __name__ == "__main__":
    sys.exit(main())
