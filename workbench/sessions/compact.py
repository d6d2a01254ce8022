"""What the recorder leaves out of a tool's `on_update` lines, and how the reader puts it back.

A `tool_execution_update` carries a tool's output so far, usually the previous
update's output plus a little (a command's log, an MCP server's progress lines):
100,000 progress notifications for one call made a 766 MB session. Each call's
updates are recorded

- as a change to the previous recorded output (`"output": {"drop": k, "append": s}`
  on the line: the first k characters go, s is added; the first is `{"text": s}`),
  when the output is one text block;
- past a call's first `FREE_UPDATES`, at most every `UPDATE_EVERY_MS` (so an
  ordinary call replays update by update, and a flood does not fill the disk): an
  update that comes sooner is held back,
  and only the last one held is written, before the call's next event (or when the
  recording closes), with `unrecorded` saying how many updates were not written (the
  fold counts them, so the screen's count of updates stays right);
- with at most `OUTPUT_CAP` characters of output (its tail), after a line saying how
  many characters before it were not recorded;
- without their `args` when they are the call's arguments at its start
  (`"start_args": true` on the line).

A run's `agent_end` carries every message of the run, which the session already holds
as its `message_end` events: written whole, the last line of a long run is the whole
transcript again (14 MB at a million events). When its messages are exactly those of
the `message_end` lines recorded since the run's `agent_start`, it is written without
them, with `"run_messages": n` on the line (how many), and the reader puts them back
from those lines. Otherwise (a message the session does not hold, one whose line
could not be written or read) it is written whole.

A model request (`provider_request`) carries the whole transcript in its body's
`messages`, as sent: written whole, a session grows with the square of its turns
(233 MB instead of 26 MB at 100k events with the scripted model's simulated wire).
When a request's messages start with the previous request's, it is written with
only the messages added since (the body's `messages` holds those), and
`"messages_from": s, "prefix": n` on the line: the previous request's line is `seq`
s, and its first n messages come first. Otherwise (the first request, a transcript
that changed, a previous request whose line could not be written or read) it is
written whole.

Lines written by an earlier workbench have none of this and read as they are.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from workbench.json_text import LINE_DEPTH, depth

FREE_UPDATES = 200
"""Updates of one call recorded however fast they come."""
UPDATE_EVERY_MS = 100.0
"""After those, the shortest time between two recorded updates of one call (event time)."""
OUTPUT_CAP = 64 * 1024
"""The most characters of a tool's output an update records (its tail)."""

Line = tuple[Any, float, dict[str, Any], Any]
"""(event, when it was written, fields added to the line, fields left out of the event)."""

EXPANDED = frozenset({"tool_execution_update", "agent_end", "provider_request"})
"""The event types whose lines may leave something out (`Expander.expand` puts it back)."""


@dataclass
class _Call:
    args: Any = None
    output: str | None = None
    """The output of the last recorded update (as recorded: capped)."""
    last_ms: float | None = None
    recorded: int = 0
    held: tuple[Any, float] | None = None
    unrecorded: int = 0


class Compactor:
    """The recorder's side: which lines to write for an event, and how."""

    def __init__(self) -> None:
        self._calls: dict[str, _Call] = {}
        self._run: list[Any] | None = []
        """The messages of the `message_end` lines written since the run's `agent_start`
        (None: one was not written, or its line is too deep to read back)."""
        self._request: tuple[int, list[Any]] | None = None
        """The `seq` and messages of the last request written (None: none readable)."""
        self._asking: list[Any] | None = None
        """The messages of the request whose lines are being written."""

    def lines(self, event: Any, ts: float) -> list[Line]:
        """The lines to write for `event` (none while an update is held back)."""
        kind = event.type
        if kind == "tool_execution_update":
            return self._update(event, ts)
        lines: list[Line] = []
        call_id = event.__dict__.get("tool_call_id")  # a model's getattr with a default is slow
        if call_id is not None and call_id in self._calls:
            lines += self._flush(call_id)
            if kind == "tool_execution_end":
                del self._calls[call_id]
        if kind == "tool_execution_start":
            self._calls[event.tool_call_id] = _Call(args=event.args)
        elif kind == "agent_start":
            self._run = []
        elif kind == "provider_request":
            return lines + [self._request_line(event, ts)]
        elif kind == "agent_end":
            lines += self.held()
            if self._run is not None and _same(event.messages, self._run):
                lines.append((event, ts, {"run_messages": len(self._run)}, {"messages": True}))
                return lines
        lines.append((event, ts, {}, None))
        return lines

    def written(self, event: Any, line: bytes | None, seq: int) -> None:
        """`line` was written for `event` as line `seq` (None: an unrecordable line took
        its place)."""
        if event.type == "message_end" and self._run is not None:
            if not _readable(line):
                self._run = None  # the reader will not have it
            else:
                self._run.append(event.message)
        elif event.type == "provider_request":
            asked, self._asking = self._asking, None
            self._request = (seq, asked) if asked is not None and _readable(line) else None

    def _request_line(self, event: Any, ts: float) -> Line:
        body = event.body
        messages = body.get("messages")
        self._asking = messages if isinstance(messages, list) else None
        before = self._request
        if self._asking is not None and before is not None:
            seq, previous = before
            n = len(previous)
            if n <= len(messages) and messages[:n] == previous:  # `is` first, per item
                short = event.model_copy(update={"body": {**body, "messages": messages[n:]}})
                return (short, ts, {"messages_from": seq, "prefix": n}, None)
        return (event, ts, {}, None)

    def forget(self, call_id: str) -> None:
        """A line for this call could not be written: its next output goes whole."""
        if call_id in self._calls:
            self._calls[call_id].output = None

    def held(self) -> list[Line]:
        """The updates held back (written at the end of a run, or of the recording)."""
        return [line for call_id in list(self._calls) for line in self._flush(call_id)]

    def _update(self, event: Any, ts: float) -> list[Line]:
        call = self._calls.setdefault(event.tool_call_id, _Call())
        if (
            call.recorded >= FREE_UPDATES
            and call.last_ms is not None
            and event.timestamp - call.last_ms < UPDATE_EVERY_MS
        ):
            if call.held is not None:
                call.unrecorded += 1
            call.held = (event, ts)
            return []
        if call.held is not None:  # superseded by this one: never written after it
            call.held = None
            call.unrecorded += 1
        return [self._update_line(call, event, ts)]

    def _flush(self, call_id: str) -> list[Line]:
        call = self._calls[call_id]
        if call.held is None:
            return []
        event, ts = call.held
        call.held = None
        return [self._update_line(call, event, ts)]

    def _update_line(self, call: _Call, event: Any, ts: float) -> Line:
        call.last_ms = event.timestamp
        call.recorded += 1
        extra: dict[str, Any] = {}
        exclude: dict[str, Any] = {}
        if call.unrecorded:
            event = event.model_copy(update={"unrecorded": event.unrecorded + call.unrecorded})
            call.unrecorded = 0
        if call.args is not None and event.args == call.args:
            extra["start_args"] = True
            exclude["args"] = True
        text = _only_text(event.partial_result.content)
        if text is not None:
            stored = capped(text)
            before = call.output
            if before is None:  # the call's first recorded output: whole
                extra["output"] = {"text": stored}
            else:
                drop = _overlap(before, stored)
                extra["output"] = {"drop": drop, "append": stored[len(before) - drop :]}
            exclude["partial_result"] = {"content": True}
            call.output = stored
        return (event, ts, extra, exclude or None)


_LEFT_OUT = " characters before this were not recorded]"


def capped(text: str) -> str:
    """`text`, or its last `OUTPUT_CAP` characters after a line saying what was left out."""
    if len(text) <= OUTPUT_CAP:
        return text
    left_out = len(text) - OUTPUT_CAP
    return f"[{left_out:,}{_LEFT_OUT}\n" + text[left_out:]


def left_out_notice(output: str) -> str | None:
    """The line `capped` put first in a recorded output, if it did."""
    first = output[: output.find("\n")] if "\n" in output else output
    return first if first.startswith("[") and first.endswith(_LEFT_OUT) else None


def _request_tail(
    line: dict[str, Any], before: tuple[Any, list[Any]] | None
) -> tuple[int, list[Any]]:
    """How many of the previous request's messages a compact request line keeps, and the
    messages it adds (ValueError: the line does not follow `before`)."""
    prefix = line.get("prefix")
    data = line.get("event")
    body = data.get("body") if isinstance(data, dict) else None
    added = body.get("messages") if isinstance(body, dict) else None
    if (
        before is None
        or line.get("messages_from") != before[0]
        or not isinstance(prefix, int)
        or not 0 <= prefix <= len(before[1])
        or not isinstance(added, list)
    ):
        raise ValueError("a request whose earlier request was not read")
    return prefix, added


def _readable(line: bytes | None) -> bool:
    """The reader will decode this line (written, and not too deep)."""
    return line is not None and not (
        line.count(b"[") + line.count(b"{") > LINE_DEPTH
        and depth(line.decode("utf-8", "replace")) > LINE_DEPTH
    )


def _same(messages: list[Any], recorded: list[Any]) -> bool:
    """The same messages, in order (usually the very same objects)."""
    return len(messages) == len(recorded) and all(
        a is b or a == b for a, b in zip(messages, recorded, strict=True)
    )


def _only_text(content: Any) -> str | None:
    if len(content) == 1 and getattr(content[0], "type", None) == "text":
        text: str = content[0].text
        return text
    return None


def _overlap(before: str, after: str, tries: int = 8) -> int:
    """The fewest leading characters of `before` to drop so that the rest starts
    `after` (all of it when no cheap way is found)."""
    if after.startswith(before):
        return 0
    head = after[:64]
    start = 1
    for _ in range(tries):
        k = before.find(head, start) if head else len(before)
        if k < 0:
            break
        if after.startswith(before[k:]):
            return k
        start = k + 1
    return len(before)


class Expander:
    """The reader's side: puts back what `Compactor` left out of a line's event data."""

    def __init__(self, *, keep_run: bool = True) -> None:
        """`keep_run=False`: for a reader that only checks lines, a run's end written
        as the count of its messages is checked against that count and given no
        messages (it would otherwise hold the whole run's transcript while reading)."""
        self._outputs: dict[str, str] = {}
        self._args: dict[str, Any] = {}
        self._keep_run = keep_run
        self._run: list[Any] = []
        """The messages of the `message_end` events read since the last `agent_start`."""
        self._run_count = 0
        """How many there were (kept or not)."""
        self.request: tuple[Any, list[Any]] | None = None
        """The `seq` of the last request line read and its messages (whole)."""
        self._seq: Any = None

    def expand(self, line: dict[str, Any], data: dict[str, Any]) -> dict[str, Any]:
        """The event data of `line`, whole again (raises ValueError when it cannot be:
        a line read without the ones before it that it refers to)."""
        if data.get("type") == "agent_end" and "run_messages" in line and "messages" not in data:
            if line["run_messages"] != self._run_count:
                raise ValueError("a run's end whose messages were not read")
            return {**data, "messages": list(self._run)}  # empty when not kept
        if data.get("type") == "provider_request":
            self._seq = line.get("seq")
            if "messages_from" in line:
                return self._whole_request(line, data)
            return data
        if data.get("type") == "tool_execution_update":
            call_id = data.get("tool_call_id")
            if line.get("start_args"):
                if call_id not in self._args:
                    raise ValueError("an update of a call whose start was not read")
                data = {**data, "args": self._args[call_id]}
            output = line.get("output")
            if isinstance(output, dict):
                if "text" in output:
                    text = output["text"]
                    if not isinstance(text, str):
                        raise ValueError("an update's output is not text")
                else:
                    before = self._outputs.get(call_id) if call_id is not None else None
                    drop, append = output.get("drop", 0), output.get("append", "")
                    if (
                        before is None
                        or not isinstance(drop, int)
                        or not isinstance(append, str)
                        or not 0 <= drop <= len(before)
                    ):
                        raise ValueError("an update's output does not follow the one before")
                    text = before[drop:] + append
                if call_id is not None:
                    self._outputs[call_id] = text
                partial = dict(data.get("partial_result") or {})
                partial["content"] = [{"type": "text", "text": text}]
                data = {**data, "partial_result": partial}
        return data

    def _whole_request(self, line: dict[str, Any], data: dict[str, Any]) -> dict[str, Any]:
        before = self.request
        prefix, added = _request_tail(line, before)
        assert before is not None
        body = {**data["body"], "messages": before[1][:prefix] + added}
        return {**data, "body": body}

    def follow(self, lines: list[dict[str, Any]]) -> None:
        """Take the request lines that lead to the next one (the last written whole,
        then those written after it, in order) as read, without making their events:
        what a reader starting in the middle needs to rebuild the next request."""
        self.request = None
        for line in lines:
            data = line["event"]
            if "messages_from" not in line:
                messages = data.get("body", {}).get("messages") if isinstance(data, dict) else None
                if not isinstance(messages, list):
                    raise ValueError("a request without messages")
                self.request = (line.get("seq"), list(messages))
                continue
            prefix, added = _request_tail(line, self.request)
            assert self.request is not None
            messages = self.request[1]
            del messages[prefix:]  # only this reader holds the list: no copy a request
            messages.extend(added)
            self.request = (line.get("seq"), messages)

    def read(self, event: Any) -> None:
        """Note what later lines may refer to."""
        kind = event.type
        if kind == "provider_request":
            messages = event.body.get("messages")
            self.request = (self._seq, messages) if isinstance(messages, list) else None
            return
        if kind == "message_end":
            self._run_count += 1
            if self._keep_run:
                self._run.append(event.message)
        elif kind == "agent_start":
            self._run = []
            self._run_count = 0
        elif kind == "tool_execution_start":
            self._args[event.tool_call_id] = event.args
        elif kind == "tool_execution_end":
            self._args.pop(event.tool_call_id, None)
            self._outputs.pop(event.tool_call_id, None)
