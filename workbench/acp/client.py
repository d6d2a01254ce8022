"""The client side of the ACP connection: what the agent sends and asks the workbench.

`session/update` notifications feed the run's stream (messages, thoughts, tool
calls) or become notices (plan, mode, slash commands, usage);
`session/request_permission` is handed to the loop's hook (`permission`); the
`fs/*` and `terminal/*` requests are served under the gate (`served`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from acp import RequestError

from workbench.acp.calls import block_text
from workbench.acp.permission import PermissionAsk, answer_late
from workbench.acp.served import read_text_file, write_text_file
from workbench.acp.stream import FeedItem

if TYPE_CHECKING:
    from acp.schema import CreateTerminalResponse, EnvVariable

    from workbench.acp.run import AcpRun

PLAN_MARKS = {"completed": "✓", "in_progress": "▸", "pending": "○"}


def _json(model: Any) -> dict[str, Any]:
    if isinstance(model, dict):
        return model
    return model.model_dump(mode="json", by_alias=True, exclude_unset=True)


class AcpClient:
    """The `acp.Client` the connection calls (one per run)."""

    def __init__(self, run: AcpRun) -> None:
        self.run = run

    def on_connect(self, conn: Any) -> None:
        pass

    def observe(self, event: Any) -> None:
        """Every message from the agent, in the order it came (the connection hands each
        notification to a task of its own, and a prompt's answer may overtake them):
        its `session/update`s are taken here, in order."""
        message = event.message
        if event.direction.value != "incoming" or message.get("method") != "session/update":
            return
        params = message.get("params") or {}
        if params.get("sessionId") != self.run.session_id and self.run.session_id is not None:
            return
        data = params.get("update") or {}
        kind = data.get("sessionUpdate")
        run = self.run
        if kind == "agent_message_chunk":
            run.feed(FeedItem("text", text=block_text(data.get("content"))))
        elif kind == "agent_thought_chunk":
            run.feed(FeedItem("thought", text=block_text(data.get("content"))))
        elif kind == "tool_call":
            run.report(data, new=True)
        elif kind == "tool_call_update":
            run.report(data, new=False)
        else:
            run.spawn(self._notice(kind, data))

    async def session_update(self, session_id: str, update: Any, **_kwargs: Any) -> None:
        """Taken by `observe` (in order) already."""

    async def _notice(self, kind: Any, data: dict[str, Any]) -> None:
        run = self.run
        if kind == "plan":
            await run.notice("plan", plan_text(data.get("entries") or []), data)
        elif kind == "available_commands_update":
            run.commands = list(data.get("availableCommands") or [])
            names = " ".join(f"/{c.get('name')}" for c in run.commands)
            await run.notice("commands", f"slash commands: {names or '(none)'}", data)
        elif kind == "current_mode_update":
            run.mode = data.get("currentModeId")
            await run.notice("mode", f"mode: {run.mode}", data)
        elif kind == "user_message_chunk":  # a loaded session's history, replayed
            text = block_text(data.get("content"))
            await run.notice("info", f"(history) user: {text}", data)
        elif kind == "usage_update":
            await run.notice("usage", f"usage: {usage_text(data)}", data)
        else:
            await run.notice("info", f"agent update: {kind}", data)

    async def request_permission(
        self, session_id: str, tool_call: Any, options: list[Any], **_kwargs: Any
    ) -> Any:
        from acp.schema import RequestPermissionResponse

        run = self.run
        fields = _json(tool_call)
        call = run.calls.get(str(fields.get("toolCallId")))
        ask_options = [_json(o) for o in options]
        if call is None:  # asked about a call it never announced: announce it now
            call = run.report(fields, new=True)
        elif fields:
            run.report(fields, new=False)
        ask = PermissionAsk(call, ask_options)
        if not run.prompting or run.cancelled:
            ask.cancel()
        elif call.judged:  # the ask is answered when judged, or cancelled with the prompt
            run.asks.append(ask)
            run.spawn(answer_late(run, ask))
        else:
            run.asks.append(ask)
            call.asked = ask
            call.touch()
            run.settle_if_known(call)
        outcome = await ask.answer
        if ask in run.asks:
            run.asks.remove(ask)
        await run.note(call, "agent told", _outcome_text(outcome, ask_options))
        return RequestPermissionResponse.model_validate({"outcome": outcome})

    # -- files and terminals, under the gate -----------------------------------------

    async def read_text_file(
        self,
        session_id: str,
        path: str,
        line: int | None = None,
        limit: int | None = None,
        **_kwargs: Any,
    ) -> Any:
        from acp.schema import ReadTextFileResponse

        content = await read_text_file(self.run, path, line, limit)
        return ReadTextFileResponse(content=content)

    async def write_text_file(
        self, session_id: str, path: str, content: str, **_kwargs: Any
    ) -> Any:
        from acp.schema import WriteTextFileResponse

        await write_text_file(self.run, path, content)
        return WriteTextFileResponse()

    async def create_terminal(
        self,
        session_id: str,
        command: str,
        args: list[str] | None = None,
        env: list[EnvVariable] | None = None,
        cwd: str | None = None,
        output_byte_limit: int | None = None,
        **kwargs: Any,
    ) -> CreateTerminalResponse:
        return await self.run.terminals.create(
            command, args=args, env=env, cwd=cwd, output_byte_limit=output_byte_limit, **kwargs
        )

    async def terminal_output(self, session_id: str, terminal_id: str, **_kwargs: Any) -> Any:
        return self.run.terminals.output(terminal_id)

    async def wait_for_terminal_exit(
        self, session_id: str, terminal_id: str, **_kwargs: Any
    ) -> Any:
        return await self.run.terminals.wait(terminal_id)

    async def kill_terminal(self, session_id: str, terminal_id: str, **_kwargs: Any) -> Any:
        return await self.run.terminals.kill(terminal_id)

    async def release_terminal(self, session_id: str, terminal_id: str, **_kwargs: Any) -> Any:
        return await self.run.terminals.release(terminal_id)

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise RequestError.method_not_found(method)

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        return None


def plan_text(entries: list[dict[str, Any]]) -> str:
    rows = [
        f"{PLAN_MARKS.get(str(e.get('status')), '·')} {e.get('content')}"
        + (f"  ({e['priority']})" if e.get("priority") and e.get("priority") != "medium" else "")
        for e in entries
    ]
    return "plan:\n" + "\n".join(rows) if rows else "plan: (empty)"


def usage_text(data: dict[str, Any]) -> str:
    fields = {k: v for k, v in data.items() if k not in ("sessionUpdate", "_meta")}
    return ", ".join(f"{k} {v}" for k, v in fields.items())


def _outcome_text(outcome: dict[str, Any], options: list[dict[str, Any]]) -> str:
    if outcome.get("outcome") != "selected":
        return "cancelled"
    chosen = next((o for o in options if o.get("optionId") == outcome.get("optionId")), {})
    return f"{chosen.get('kind', '?')} ({chosen.get('name', outcome.get('optionId'))})"
