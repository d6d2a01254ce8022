"""The one place the workbench relies on Textual's private API.

Textual offers no public way to ask whether an app or widget has begun to close, and a
refresh queued just before a close must not draw on a screen that is being torn down.
Each private name is read here only, named for what it tells, and
`tests/widgets/test_textual_compat.py` fails when a Textual release changes it.
"""

from __future__ import annotations

from textual.message_pump import MessagePump


def is_closing(node: MessagePump) -> bool:
    """True once Textual has begun to close `node` (it takes no more messages)."""
    return node._closing or node._closed
