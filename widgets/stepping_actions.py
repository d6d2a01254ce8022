"""The app's stepping actions: step mode, step / continue / run to end, breakpoints,
and, at a pause before a tool, editing its arguments or answering it yourself.

A mixin of `WorkbenchApp` (it uses the app's runtime, view state, notifications,
workers and screens); the keys are bound in the app's `BINDINGS`.
"""

from __future__ import annotations

from typing import Any

from workbench.stepper import Resume, StepperError


class SteppingActions:
    """`action_*` methods for the stepper, for `WorkbenchApp`."""

    runtime: Any
    selected_id: str | None
    view_state: Any
    notify: Any
    run_worker: Any
    push_screen: Any

    def _stepper_or_warn(self) -> Any:
        stepper = self.runtime.stepper
        if stepper is None:
            self.notify("Stepping is not available in this mode.", severity="warning")
        return stepper

    def action_toggle_step(self) -> None:
        if (stepper := self._stepper_or_warn()) is not None:
            enabled = not stepper.enabled
            self.run_worker(stepper.set_enabled(enabled), group="control")
            state = "on: pausing at every point" if enabled else "off"
            self.notify(f"Step mode {state}.", timeout=2)

    def _resume(self, action: Resume | str) -> bool:
        stepper = self._stepper_or_warn()
        pause = self.view_state.pause
        if stepper is None:
            return False
        if pause is None:
            self.notify("The run is not paused.", severity="warning", timeout=2)
            return False
        try:
            stepper.resume(pause.pause_id, action)
        except StepperError as exc:
            self.notify(str(exc), severity="error", markup=False)
            return False
        return True

    def action_step(self) -> None:
        self._resume("step")

    def action_continue_run(self) -> None:
        self._resume("continue")

    def action_run_to_end(self) -> None:
        self._resume("run_to_end")

    def action_toggle_breakpoint(self) -> None:
        stepper = self._stepper_or_warn()
        record = self.view_state.calls.get(self.selected_id or "")
        if stepper is None:
            return
        if record is None:
            self.notify("Select a tool call first.", severity="warning", timeout=2)
            return
        name = record.name
        exists = any(bp.text == name for bp in stepper.breakpoints)

        async def toggle() -> None:
            try:
                if exists:
                    await stepper.remove_breakpoint(name)
                else:
                    await stepper.add_breakpoint(name)
            except StepperError as exc:  # a tool name no pattern can name (a model's)
                self.notify(f"No breakpoint on {name}: {exc}", severity="error")
                return
            done = "cleared" if exists else "set"
            self.notify(f"Breakpoint on {name} {done}.", timeout=2)

        self.run_worker(toggle(), group="control")

    def action_breakpoints(self) -> None:
        from widgets.breakpoints_modal import BreakpointsModal

        if (stepper := self._stepper_or_warn()) is not None:
            self.push_screen(BreakpointsModal(stepper))

    def _paused_tool(self, what: str) -> Any:
        pause = self.view_state.pause
        if pause is None or pause.point != "before_tool" or self.runtime.stepper is None:
            self.notify(f"Pause before a tool call to {what}.", severity="warning", timeout=2)
            return None
        return pause

    def action_edit_paused(self) -> None:
        from widgets.json_editor import JsonEditModal

        if (pause := self._paused_tool("edit its arguments")) is None:
            return
        stepper = self.runtime.stepper
        title = f"Edit the arguments of {pause.tool_name} (re-validated)"

        def submit(args: dict[str, Any]) -> None:
            stepper.resume(pause.pause_id, Resume.edit(args))

        self.push_screen(JsonEditModal(title, pause.args or {}, submit))

    def action_answer_paused(self) -> None:
        from widgets.inject_modal import InjectResultModal

        if (pause := self._paused_tool("answer it yourself")) is None:
            return
        stepper = self.runtime.stepper

        def submit(text: str, is_error: bool) -> None:
            stepper.resume(pause.pause_id, Resume.inject(text, is_error=is_error))

        self.push_screen(InjectResultModal(pause.tool_name or "", submit))

