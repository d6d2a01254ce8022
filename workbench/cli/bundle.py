"""`workbench bundle FILE... --to DIR`: self-contained copies of sessions (each file with
every blob it needs in `DIR/blobs`), to keep in a repository and re-run anywhere
(`workbench rerun`, `pytest --workbench-sessions DIR`).

Exit code: 0 bundled, 2 bad input (a file that is not a session, a blob missing).
"""

from __future__ import annotations

import sys
from pathlib import Path

from workbench.cli.args import Parser
from workbench.cli.commands import EXIT_SAME, EXIT_USAGE, load
from workbench.sanitize import literal


def bundle_main(argv: list[str]) -> int:
    from workbench.sessions.bundle import BundleError, bundle

    parser = Parser(
        prog="workbench bundle",
        description="Copy sessions into DIR with every workspace file they recorded (in "
        "DIR/blobs), so they restore and re-run on any machine. Exit code: 0 bundled, 2 bad "
        "input.",
    )
    parser.add_argument("files", type=Path, nargs="+", metavar="FILE", help="session files")
    parser.add_argument("--to", type=Path, required=True, metavar="DIR", help="the bundle")
    args = parser.parse_args(argv)
    sessions = []
    for path in args.files:
        session = load(path, "bundle")
        if session is None:
            return EXIT_USAGE
        sessions.append(session)
    try:
        done = bundle(sessions, args.to)
    except (BundleError, OSError) as exc:
        print(f"workbench bundle: {literal(str(exc))}", file=sys.stderr)
        return EXIT_USAGE
    print(
        f"bundled {len(done.sessions)} sessions into {literal(str(args.to))} "
        f"({done.blobs} files' contents copied, {done.bytes} bytes)"
    )
    return EXIT_SAME
