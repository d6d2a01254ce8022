"""Sessions: every run is a file you can step through, re-run and export later.

- `recorder`: a bus listener appending each event as one JSON line, as it happens;
- `reader`: reads a file back (header checked, a torn last line skipped);
- `history`: positions of turns, calls, decisions and errors; where to fork;
- `fork`: a recorded transcript cut at a turn, to continue live;
- `rerun`: the recorded model replies against the real tools, result by result;
- `export`: a Markdown transcript or the normalized messages as JSON.

Nothing here imports Textual or Rich; replay's screen is `widgets.replay_app`.
"""

from workbench.sessions.fork import ForkPoint, fork_point
from workbench.sessions.header import (
    FORMAT,
    FORMAT_VERSION,
    ParentInfo,
    SessionHeader,
    build_header,
    default_session_dir,
    default_session_path,
)
from workbench.sessions.history import Marks, fork_cut, messages_of
from workbench.sessions.reader import Session, SessionError, read_session
from workbench.sessions.recorder import Recorder, start_recording

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "ForkPoint",
    "Marks",
    "ParentInfo",
    "Recorder",
    "Session",
    "SessionError",
    "SessionHeader",
    "build_header",
    "default_session_dir",
    "default_session_path",
    "fork_cut",
    "fork_point",
    "messages_of",
    "read_session",
    "start_recording",
]
