"""A run's end is recorded without repeating its transcript, and replay jumps from checkpoints.

`agent_end` carries every message of the run, which the session already holds as its
`message_end` events: the recorder writes it with `run_messages` instead (see
`sessions.compact`), the reader puts the messages back, files with the old, whole line
still read, and a line whose messages the session does not hold is written whole.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from tests.sessions.helpers import runtime_for, write_session
from workbench.sessions.log import of_kinds
from workbench.sessions.reader import read_session
from workbench.sessions.scrub import ScrubFold
from workbench.sessions.workspace_records import RECORD_TYPES
from workbench.view.fold import fold

TWO_RUNS = {
    "name": "two-runs",
    "prompt": "read a.txt",
    "workspace_files": {"a.txt": "alpha\n", "b.txt": "beta\n"},
    "turns": [
        {"text": "Reading.", "tool_calls": [{"name": "read_file", "arguments": {"path": "a.txt"}}]},
        {"text": "It says alpha."},
        {"text": "And b.", "tool_calls": [{"name": "read_file", "arguments": {"path": "b.txt"}}]},
        {"text": "It says beta."},
    ],
}


async def record_two_runs(workspace: Path) -> tuple[Any, list[Any], list[Any]]:
    """Two runs of the scripted model, recorded: the runtime, the events as the bus
    carried them and each as it was then (a streamed message changes afterwards)."""
    runtime = runtime_for(workspace, TWO_RUNS)
    live: list[Any] = []
    then: list[Any] = []

    def listen(event: Any, _signal: Any) -> None:
        live.append(event)
        then.append(event.model_dump())

    runtime.agent.subscribe(listen)
    await runtime.agent.prompt(runtime.prompt)
    await runtime.agent.prompt("now b.txt")
    runtime.recorder.close()
    return runtime, live, then


def lines_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()[1:]]


def dumped(events: Any) -> list[Any]:
    """The events as data, but streamed updates (the codec rebuilds their partial
    message as the stream shares it: compared in `test_recording`)."""
    dumps = (e if isinstance(e, dict) else e.model_dump() for e in events)
    return [d for d in dumps if d["type"] != "message_update"]


async def test_a_runs_end_is_recorded_without_its_messages_and_reads_back_whole(
    tmp_path: Path,
) -> None:
    runtime, live, then = await record_two_runs(tmp_path / "ws")
    path = runtime.session_path
    ends = [line for line in lines_of(path) if line["event"]["type"] == "agent_end"]
    assert len(ends) == 2
    live_ends = [e for e in live if e.type == "agent_end"]
    for line, event in zip(ends, live_ends, strict=True):
        assert "messages" not in line["event"]
        assert line["run_messages"] == len(event.messages) > 1
        assert len(json.dumps(line)) < 200  # not the transcript again
    session = read_session(path)
    assert dumped(session.events) == dumped(then)
    # read out of order too: by index, by kind, and a slice starting mid-run
    ends_at = [i for i, e in enumerate(live) if e.type == "agent_end"]
    for index in ends_at:
        fresh = read_session(path).events  # nothing cached
        assert fresh[index].model_dump() == then[index]
        assert dumped(fresh[index - 2 : index + 1]) == dumped(then[index - 2 : index + 1])
    assert dumped(of_kinds(read_session(path).events, ["agent_end"])) == dumped(live_ends)
    second_run = ends_at[0] + 1
    assert dumped(read_session(path).events.iter_kinds(["agent_end"], second_run + 2)) == dumped(
        live_ends[1:]
    )


async def test_a_session_with_whole_run_ends_still_reads(tmp_path: Path) -> None:
    """The shape earlier workbenches wrote: `agent_end` with its messages, no `run_messages`."""
    runtime, live, then = await record_two_runs(tmp_path / "ws")
    path = runtime.session_path
    header, *lines = path.read_text().splitlines()
    # earlier workbenches wrote no workspace records or summary lines either
    skipped = (*RECORD_TYPES, "session_summary")
    rest = [raw for raw in lines if json.loads(raw)["event"].get("type") not in skipped]
    old = tmp_path / "old.jsonl"
    rewritten = [header]
    for raw, event in zip(rest, live, strict=True):
        line = json.loads(raw)
        if event.type == "agent_end":
            line.pop("run_messages")
            line["event"]["messages"] = [m.model_dump(mode="json") for m in event.messages]
        rewritten.append(json.dumps(line))
    old.write_text("\n".join(rewritten) + "\n")
    session = read_session(old)
    assert session.warnings == []
    assert dumped(session.events) == dumped(then)
    assert dumped(of_kinds(session.events, ["agent_end"])) == dumped(
        e for e in live if e.type == "agent_end"
    )


def test_a_runs_end_with_messages_the_session_does_not_hold_is_written_whole(
    tmp_path: Path,
) -> None:
    """A message that never had its own `message_end`, or one whose line could not be
    written: the run's end keeps its messages, and reads back as it was."""
    from workbench.agent import AgentEndEvent, AgentStartEvent, MessageEndEvent, UserMessage
    from workbench.sessions.header import ModelInfo, SessionHeader
    from workbench.sessions.recorder import Recorder

    path = write_session(tmp_path / "s.jsonl")  # its run ends with no messages
    assert "run_messages" not in lines_of(path)[-1]
    assert read_session(path).events[-1].messages == []

    header = SessionHeader(created=1.0, model=ModelInfo(id="m", provider="p"), workspace="/w")
    said, unsaid = UserMessage(content="said"), UserMessage(content="never said")
    recorder = Recorder(tmp_path / "t.jsonl", header)
    for event in (
        AgentStartEvent(),
        MessageEndEvent(message=said),
        AgentEndEvent(messages=[said, unsaid]),
        AgentStartEvent(),
        MessageEndEvent(message=said),
        AgentEndEvent(messages=[said]),
    ):
        recorder.write(event)
    recorder._compactor.written(MessageEndEvent(message=said), None, 0)  # as if unrecordable
    recorder.write(AgentEndEvent(messages=[said, said]))
    recorder.close()
    lines = lines_of(tmp_path / "t.jsonl")
    assert [("run_messages" in line) for line in lines if line["event"]["type"] == "agent_end"] == [
        False,
        True,
        False,
    ]
    ends = [e for e in read_session(tmp_path / "t.jsonl").events if e.type == "agent_end"]
    assert [[m.content for m in e.messages] for e in ends] == [
        ["said", "never said"],
        ["said"],
        ["said", "said"],
    ]


async def test_any_jump_from_a_checkpoint_equals_a_fold_from_the_first_event(
    tmp_path: Path,
) -> None:
    """Random jumps, back and forth, in a session of two runs: each equals the fold of
    the events up to there, and no jump folds a run's end again (a checkpoint follows
    each)."""
    runtime, live, then = await record_two_runs(tmp_path / "ws")
    scrub = ScrubFold()
    session = read_session(runtime.session_path, scrub.feed)
    events = session.events
    scrub.attach(events)
    ends = [i + 1 for i, e in enumerate(live) if e.type == "agent_end"]
    assert set(ends) <= set(scrub._positions)  # a checkpoint after each run's end
    expected = [fold(live[:position]) for position in range(len(live) + 1)]
    rng = random.Random(19)
    targets = [rng.randrange(len(live) + 1) for _ in range(60)] + [len(live), 0, ends[0]]
    for target in targets:
        assert scrub.goto(target) == expected[target], f"differs at {target}"
    start = ScrubFold(events)  # folded from the events alone, not while reading
    for target in reversed(range(len(live) + 1)):
        assert start.goto(target) == expected[target], f"differs at {target}"


def test_reading_leaves_the_collector_as_it_found_it(tmp_path: Path) -> None:
    """Reading pauses the cyclic collector's usual schedule (it collects the youngest
    objects once a chunk instead) and gives it back, also when the file is refused."""
    import gc

    import pytest

    from workbench.sessions.reader import SessionError

    path = write_session(tmp_path / "s.jsonl")
    bad = tmp_path / "bad.jsonl"
    bad.write_text(path.read_text().splitlines()[0] + "\n{not json\n{}\n")
    assert gc.isenabled()
    read_session(path)
    assert gc.isenabled()
    with pytest.raises(SessionError):
        read_session(bad)
    assert gc.isenabled()
    gc.disable()
    try:
        read_session(path)
        assert not gc.isenabled()
    finally:
        gc.enable()
