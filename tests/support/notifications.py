"""What an app was asked to notify, read through Textual's public `App.notify`.

`notifications(app)` lists every notification the app (or any of its widgets, which
notify through it) showed, oldest first, as Textual's public `Notification`. Importing
this module wraps `App.notify` once for the whole test process; the wrapper records and
then calls Textual's own, so what the app shows is unchanged. Tests read this instead of
the app's private notification store.
"""

from __future__ import annotations

import weakref
from typing import Any

from textual.app import App
from textual.notifications import Notification, SeverityLevel

_SEEN: weakref.WeakKeyDictionary[App[Any], list[Notification]] = weakref.WeakKeyDictionary()


def notifications(app: App[Any]) -> list[Notification]:
    """Every notification `app` was asked to show so far, oldest first."""
    return list(_SEEN.get(app, ()))


def _install() -> None:
    textual_notify = App.notify
    if getattr(textual_notify, "_records_notifications", False):
        return

    def notify(
        self: App[Any],
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None:
        note = Notification(message, title, severity, markup=markup)
        _SEEN.setdefault(self, []).append(note)
        textual_notify(
            self, message, title=title, severity=severity, timeout=timeout, markup=markup
        )

    notify._records_notifications = True  # type: ignore[attr-defined]
    App.notify = notify  # type: ignore[method-assign]


_install()
