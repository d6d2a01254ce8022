"""A session's events, read from its file when asked for, not held in memory.

A session is mostly streamed deltas (nine events in ten), and one event held as a
pydantic model costs several times its line on disk. `EventLog` keeps, per event,
where its line starts, its type and whether it marks an error (10 bytes), and
decodes lines when they are asked for:

- `log[i]` decodes one event (a small cache keeps the last ones, so asking again
  gives the same object);
- iterating, or `log[a:b]`, decodes in order with the codec's `Decoder` (from the
  start of the turn `a` is in), so a streamed message is rebuilt whole, as
  `read_session` always gave it;
- `of_kinds(log, kinds)` decodes only the events of those types (what export and
  rerun read: messages, decisions, runs);
- `fold_batches(a, b)` hands the view fold events in batches, with each run of
  streamed deltas to one block as one `DeltaRun` (its text joined), not a model an
  event: most of a session, at a fraction of the cost.

The file must not change while it is read (a session file is only ever appended to
while it is recorded, and is read once that is over).
"""

from __future__ import annotations

import json
import re
from array import array
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, BinaryIO, overload

from workbench.json_text import LINE_DEPTH, loads
from workbench.sessions.codec import Decoder
from workbench.view.fold import DeltaRun

CHUNK = 1 << 20
"""Bytes read at a time when decoding in order."""
BATCH = 4096
"""Events handed to the fold at a time."""
CACHED = 256
"""Events `log[i]` keeps decoded."""
RUN_KINDS = frozenset({"agent_start", "message_end"})
"""What a run's end, written without its messages, is rebuilt from."""

# A streamed delta as the codec writes it (see `codec.encode`): matched whole, the
# line is valid and needs no JSON parser; anything else takes the full path. The
# quantifiers are possessive (`*+`): what follows each never starts with a character
# it takes, so giving one back never helps, and not keeping the places to give back
# halves the matching time (most of reading a session).
_NUMBER = rb"-?[0-9][0-9.eE+-]*+"
DELTA_LINE = re.compile(
    rb'\{"seq":[0-9]++,"ts":('
    + _NUMBER
    + rb'),"event":\{"timestamp":('
    + _NUMBER
    + rb'),"type":"message_update","assistant_message_event":\{"timestamp":'
    + _NUMBER
    + rb',"type":"((?:text|thinking|toolcall)_delta)","content_index":([0-9]++),'
    rb'"delta":"([^"\\]*+(?:\\.[^"\\]*+)*+)"\}\}\}\r?'
)


class FoldBatcher:
    """Decodes event lines in order into what the view fold takes: each run of deltas
    to one block as one `DeltaRun`, every other event whole (the codec's `Decoder`).

    Args:
        keep: keep what was decoded for `take` (False: only check the lines).
    """

    def __init__(self, keep: bool = True) -> None:
        self.keep = keep
        self.decoder = Decoder(keep_run=keep)  # checking only: no run's transcript held
        self.events: list[Any] = []
        self._kind: bytes = b""
        self._index = b""
        self._parts: list[str] = []
        self._last = b"0"

    def add(self, raw: bytes) -> Any:
        """Decode one line and return its event (None for a delta).

        Raises:
            ValueError, ValidationError: the line is not a valid event line.
        """
        match = DELTA_LINE.fullmatch(raw)
        if match is not None:
            if self.keep:
                self.delta(match)
            return None
        line = loads(raw, LINE_DEPTH)
        if not isinstance(line, dict) or "event" not in line:
            raise ValueError("not an event line")
        event = self.decoder.decode(line)
        if self.keep:
            self._flush()
            self.events.append(event)
        return event

    def delta(self, match: re.Match[bytes]) -> None:
        """Add a delta line (matched by `DELTA_LINE`) to the run it continues."""
        kind, index, delta, last = match.group(3, 4, 5, 2)
        if kind != self._kind or index != self._index:
            self._flush()
            self._kind, self._index = kind, index
        self._parts.append(json.loads(b'"' + delta + b'"') if b"\\" in delta else delta.decode())
        self._last = last

    def take(self) -> list[Any]:
        """What was decoded since the last `take`."""
        self._flush()
        events, self.events = self.events, []
        return events

    def _flush(self) -> None:
        parts = self._parts
        if parts:
            self.events.append(
                DeltaRun(
                    self._kind.decode(),
                    int(self._index),
                    "".join(parts),
                    len(parts),
                    float(self._last),
                )
            )
            self._parts = []
            self._kind = b""


class EventLog(Sequence[Any]):
    """The events of one session file (built by `reader.read_session`)."""

    def __init__(self, path: Path, kinds: Sequence[str]) -> None:
        self.path = path
        self.kind_names = tuple(kinds)
        self._code = {name: code for code, name in enumerate(self.kind_names)}
        self.offsets = array("q")
        """Where each event's line starts in the file."""
        self.codes = bytearray()
        """Each event's type, as an index into `kind_names`."""
        self.errors = bytearray()
        """1 where the event marks an error (see `history.is_error`)."""
        self._cache: OrderedDict[int, Any] = OrderedDict()
        self._kept: dict[int, Any] = {}
        """Events too dear to decode again (a run's end written without its messages)."""
        self.requests: dict[int, tuple[Any, list[Any]]] = {}
        """The `seq` and whole messages of requests decoded while the file was read for
        the view fold (which holds them anyway): a jump back need not rebuild them."""

    def code(self, kind: str) -> int:
        """The code of an event type in `codes`."""
        return self._code[kind]

    @property
    def stamps(self) -> Sequence[float]:
        """When each event's line was written (epoch ms; read from the file when asked)."""
        return _Stamps(self)

    def __len__(self) -> int:
        return len(self.offsets)

    def kind(self, index: int) -> str:
        return self.kind_names[self.codes[index]]

    def kinds(self) -> Iterator[str]:
        names = self.kind_names
        return (names[code] for code in self.codes)

    @overload
    def __getitem__(self, index: int) -> Any: ...
    @overload
    def __getitem__(self, index: slice) -> list[Any]: ...
    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            start, stop, step = index.indices(len(self))
            events = list(self._decode_range(start, stop)) if start < stop else []
            return events if step == 1 else events[::step]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError("event index out of range")
        kept = self._kept.get(index)
        if kept is not None:
            return kept
        cache = self._cache
        event = cache.get(index)
        if event is None:
            try:
                event = Decoder().decode(loads(next(self._lines(index, index + 1)), LINE_DEPTH))
            except ValueError:  # a compact line: read it after the lines it refers to
                event = next(self._decode_range(index, index + 1))
                if event.type == "agent_end":  # it took the run's messages: keep it
                    self._kept[index] = event
            cache[index] = event
            if len(cache) > CACHED:
                cache.popitem(last=False)
        else:
            cache.move_to_end(index)
        return event

    def __iter__(self) -> Iterator[Any]:
        return self._decode_range(0, len(self))

    def iter_kinds(
        self, kinds: Iterable[str], start: int = 0, stop: int | None = None
    ) -> Iterator[Any]:
        """The events of these types, in order, decoded one by one."""
        names = set(kinds)
        stop = len(self) if stop is None else stop
        if "tool_execution_update" in names:  # compact lines need the lines before them
            yield from (e for e in self._decode_range(start, stop) if e.type in names)
            return
        shared = None
        read = names
        if "agent_end" in names or "provider_request" in names:  # compact lines refer back
            shared = self._primed(start, stop)
        if "agent_end" in names:  # a run's end may refer to the run's messages
            read = names | RUN_KINDS
        with self.path.open("rb") as handle:
            for index in self.where(read, start, stop):
                line = loads(self._line(handle, index), LINE_DEPTH)
                event = (shared or Decoder()).decode(line)
                if event.type in names:
                    yield event

    def fold_batches(self, start: int, stop: int) -> Iterator[list[Any]]:
        """Events `start`..`stop` for the view fold, about `BATCH` lines at a time, each
        run of deltas as one `DeltaRun` (see `FoldBatcher`)."""
        batcher = FoldBatcher()
        batcher.decoder = self._primed(start, stop)
        lines = 0
        for raw in self._lines(start, stop):
            batcher.add(raw)
            lines += 1
            if lines >= BATCH:
                yield batcher.take()
                lines = 0
        if lines:
            yield batcher.take()

    # -- reading lines ---------------------------------------------------------------------

    def _decode_range(self, start: int, stop: int) -> Iterator[Any]:
        """Events `start`..`stop`, decoded in order from the turn `start` is in: a
        streamed message is rebuilt from its start, and a compact update line
        (`sessions.compact`) finds the call's start and earlier output."""
        if start >= stop:
            return
        turn = self.codes.rfind(bytes((self._code["turn_start"],)), 0, start + 1)
        first = max(turn, 0)
        decoder = self._primed(first, stop)
        for index, raw in enumerate(self._lines(first, stop), first):
            event = decoder.decode(loads(raw, LINE_DEPTH))
            if index >= start:
                yield event

    def _primed(self, start: int, stop: int) -> Decoder:
        """A decoder for events `start`..`stop` in order, knowing what their compact
        lines (`sessions.compact`) refer to before `start`: a run's end written
        without its messages is given them from the run's `message_end` lines, and a
        request written as the messages added since the previous one is given those
        of the requests before it."""
        decoder = Decoder()
        self._prime_request(decoder, start, stop)
        codes = self.codes
        end = codes.find(bytes((self._code["agent_end"],)), start, stop)
        begin = bytes((self._code["agent_start"],))
        if end < 0 or codes.find(begin, start, end) >= 0:
            return decoder
        first = max(codes.rfind(begin, 0, start), 0)
        with self.path.open("rb") as handle:
            for index in self.where(RUN_KINDS, first, start):
                decoder.decode(loads(self._line(handle, index), LINE_DEPTH))
        return decoder

    def _prime_request(self, decoder: Decoder, start: int, stop: int) -> None:
        """Give `decoder` the last request before `start` when a request follows: from
        the requests remembered while the file was read, else from its lines (back to
        the last one written whole)."""
        code = self._code["provider_request"]
        mark = bytes((code,))
        if self.codes.find(mark, start, stop) < 0:
            return
        last = self.codes.rfind(mark, 0, start)
        if last < 0:
            return
        known = self.requests.get(last)
        if known is not None:
            decoder.expander.request = known
            return
        chain: list[dict[str, Any]] = []
        with self.path.open("rb") as handle:
            for index in reversed(list(self.where(("provider_request",), 0, start))):
                line = loads(self._line(handle, index), LINE_DEPTH)
                chain.append(line)
                if "messages_from" not in line:
                    break
        decoder.expander.follow(chain[::-1])

    def where(self, kinds: Iterable[str], start: int = 0, stop: int | None = None) -> Iterator[int]:
        """The indices of the events of these types in `start`..`stop`, in order (found by
        a regex over the type codes, not a step of Python an event)."""
        stop = len(self) if stop is None else stop
        wanted = bytes(self._code[k] for k in kinds if k in self._code)
        if not wanted:
            return iter(())
        pattern = re.compile(b"[" + re.escape(wanted) + b"]")
        return (m.start() for m in pattern.finditer(self.codes, start, stop))

    def remember(self, index: int, event: Any) -> None:
        """Keep `event`, decoded in order while the file was read, as `self[index]`."""
        self._kept[index] = event

    def _line(self, handle: BinaryIO, index: int) -> bytes:
        handle.seek(self.offsets[index])
        return handle.readline().rstrip(b"\n")

    def _lines(self, start: int, stop: int) -> Iterator[bytes]:
        """The lines of events `start`..`stop`, read `CHUNK` bytes at a time."""
        offsets = self.offsets
        with self.path.open("rb") as handle:
            index = start
            while index < stop:
                base = offsets[index]
                handle.seek(base)
                end = offsets[stop] if stop < len(offsets) else None
                block = handle.read(CHUNK if end is None else max(1, min(CHUNK, end - base)))
                while True:
                    position = offsets[index] - base
                    end = block.find(b"\n", position)
                    if end < 0:  # the line goes on past the block
                        if position == 0:  # longer than a block: read it whole
                            block += handle.readline()
                            end = len(block) if not block.endswith(b"\n") else len(block) - 1
                        else:
                            break
                    yield block[position:end]
                    index += 1
                    if index >= stop or offsets[index] - base >= len(block):
                        break


class _Stamps(Sequence[float]):
    """The `ts` of each line of a log, read when asked for."""

    def __init__(self, log: EventLog) -> None:
        self.log = log

    def __len__(self) -> int:
        return len(self.log)

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            start, stop, step = index.indices(len(self))
            stamps = [_ts(raw) for raw in self.log._lines(start, stop)] if start < stop else []
            return stamps[::step]
        return self[index : index + 1 or None][0]


def _ts(raw: bytes) -> float:
    ts = json.loads(raw).get("ts")
    return float(ts) if isinstance(ts, (int, float)) else 0.0


def of_kinds(events: Iterable[Any], kinds: Iterable[str]) -> Iterator[Any]:
    """The events of these types, in order (an `EventLog` decodes only those)."""
    if isinstance(events, EventLog):
        return events.iter_kinds(kinds)
    wanted = set(kinds)
    return (e for e in events if e.type in wanted)


def types_of(events: Sequence[Any]) -> Iterator[str]:
    """Each event's type, in order (an `EventLog` decodes nothing)."""
    if isinstance(events, EventLog):
        return events.kinds()
    return (e.type for e in events)
