"""The permission dialog, opened as the fold shows a request waiting for a person.

A mixin of `WorkbenchApp`: each refresh calls `_open_dialogs`, which opens the first
pending request's dialog (and selects its call), and closes a dialog whose request
was settled elsewhere (a rule added meanwhile, a cancelled run).
"""

from __future__ import annotations

from typing import Any


class PermissionDialogs:
    """`_open_dialogs` for `WorkbenchApp`."""

    runtime: Any
    agent: Any
    view_state: Any
    screen: Any
    selected_id: str | None
    _permission_open: str | None
    push_screen: Any
    _schedule_refresh: Any

    def _open_dialogs(self) -> None:
        if self.runtime.gate is None:
            return
        pending = self.view_state.pending_requests
        if self._permission_open is not None and self._permission_open not in pending:
            from workbench.widgets.permission_modal import PermissionModal

            if isinstance(self.screen, PermissionModal):
                self.screen.dismiss(None)
            self._permission_open = None
        if self._permission_open is None and pending:
            self._show_permission(next(iter(pending)))

    def _show_permission(self, request_id: str) -> None:
        from workbench.widgets.permission_modal import PermissionModal

        state = self.view_state
        call_id = state.pending_requests[request_id]
        record = state.calls[call_id]
        self.selected_id = call_id
        self._permission_open = request_id
        tool = next((t for t in self.agent.state.tools if t.name == record.name), None)
        batch = [r.id for r in state.batch_of(record)]
        modal = PermissionModal(
            record,
            tool=tool,
            gate=self.runtime.gate,
            request_id=request_id,
            position=(batch.index(call_id) + 1 if call_id in batch else 1, len(batch)),
            pending=len(state.pending_requests),
        )

        def closed(_result: object) -> None:
            if self._permission_open == request_id:
                self._permission_open = None
            self._schedule_refresh()

        self.push_screen(modal, closed)
