"""The app's stepping actions: step mode, step / continue / run to end, breakpoints,
and, at a pause before a tool, editing its arguments or answering it yourself.

A mixin of `WorkbenchApp` (it uses the app's runtime, view state, notifications,
workers and screens); the keys are bound in the app's `BINDINGS`. The stepper is
imported where it is used: the app draws its first frame before the runtime exists.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from workbench.stepper import Resume


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
        from workbench.stepper import StepperError

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
        from workbench.stepper import StepperError

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
        from workbench.widgets.breakpoints_modal import BreakpointsModal

        if (stepper := self._stepper_or_warn()) is not None:
            self.push_screen(BreakpointsModal(stepper))

    def pause_refusal(self, action: str, pause: Any) -> str | None:
        """Why `action` (edit_paused, answer_paused) cannot act at `pause` (None: it can)."""
        point = pause.point
        if action == "edit_paused":
            if point == "invalid_arguments" and pause.failed_stage == "lookup":
                return (
                    f"There is no tool {pause.tool_name!r}: editing its arguments cannot help. "
                    "F10 or F5 send the error to the model."
                )
            if point in ("before_tool", "invalid_arguments"):
                return None
            if point == "after_tool":
                return (
                    "The call is over: ctrl+o replaces its error result before the model sees it."
                )
        elif point in ("before_tool", "after_tool"):
            return None
        elif point == "invalid_arguments":
            return (
                "Its arguments failed: F2 edits them (the pipeline runs again); "
                "F10 or F5 send the error to the model."
            )
        return "Paused before a model request: there is no tool call here (F10 step, F5 continue)."

    def action_why(self, action: str) -> None:
        """A key pressed where it cannot act: say why."""
        pause = self.view_state.pause
        if pause is None:
            self.notify(
                "The run is not paused: that key acts at a pause (F6 steps, ctrl+b sets "
                "breakpoints).",
                severity="warning",
                timeout=3,
            )
            return
        why = (
            self.pause_refusal(action, pause)
            if action in ("edit_paused", "answer_paused")
            else None
        )
        if why is not None:
            self.notify(why, severity="warning", timeout=4, markup=False)

    def action_edit_paused(self) -> None:
        from workbench.widgets.json_editor import JsonEditModal

        pause = self.view_state.pause
        if pause is None or self.runtime.stepper is None:
            self.action_why("edit_paused")
            return
        stepper = self.runtime.stepper
        if pause.point == "invalid_arguments":
            title = (
                f"Edit the arguments of {pause.tool_name}: the whole pipeline runs again on them"
            )
        else:
            title = f"Edit the arguments of {pause.tool_name} (re-validated)"

        def submit(args: dict[str, Any]) -> None:
            from workbench.stepper import Resume

            stepper.resume(pause.pause_id, Resume.edit(args))

        self.push_screen(JsonEditModal(title, pause.args or {}, submit))

    def action_answer_paused(self) -> None:
        from workbench.widgets.inject_modal import InjectResultModal

        pause = self.view_state.pause
        if pause is None or self.runtime.stepper is None:
            self.action_why("answer_paused")
            return
        stepper = self.runtime.stepper

        def submit(text: str, is_error: bool) -> None:
            from workbench.stepper import Resume

            stepper.resume(pause.pause_id, Resume.inject(text, is_error=is_error))

        replacing = pause.point == "after_tool"
        self.push_screen(InjectResultModal(pause.tool_name or "", submit, replacing=replacing))
