"""Sessions: the file format. Every run is a file you can step through, re-run and
export later.

- `recorder`: a bus listener appending each event as one JSON line, as it happens;
- `reader`: reads a file back (header checked, a torn last line skipped);
- `history`: positions of turns, calls, decisions and errors; where to fork;
- `fork`: a recorded transcript cut at a turn, to continue live;
- `rerun`: a recording's runs, and its results compared with a re-run's;
- `trust`: what a session file may not decide (where tools run, what code starts);
- `export`: a Markdown transcript or the normalized messages as JSON;
- `workspace_records`, `blobs`, `checkpoints`: the workspace's files as a session
  records them (records between the events, contents in a blob store beside the
  files), and restoring them as they were at any turn (`restore_workspace`). They
  are recorded by `workbench.checkpointer`.

This package imports nothing above it (not the runtime, the command line, the app or
the providers; `tests/workbench/test_import_rules.py`). Running a fork or a re-run is
`workbench.session_runs`; the subcommands are in `workbench.cli`; replay's screen is
`workbench.widgets.replay_app`.
"""

from importlib import import_module
from typing import Any

# Imported when first asked for: recording (all the app needs at start) imports only
# the recorder and the codec, not what reading, replay, re-run and fork need.
_WHERE = {
    "ForkPoint": "fork",
    "fork_point": "fork",
    "FORMAT": "header",
    "FORMAT_VERSION": "header",
    "ParentInfo": "header",
    "SessionHeader": "header",
    "build_header": "header",
    "default_session_dir": "header",
    "default_session_path": "header",
    "Marks": "history",
    "fork_cut": "history",
    "messages_of": "history",
    "Session": "reader",
    "SessionError": "reader",
    "read_session": "reader",
    "Recorder": "recorder",
    "start_recording": "recorder",
}


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f"workbench.sessions.{_WHERE[name]}"), name)


__all__ = sorted(_WHERE)
