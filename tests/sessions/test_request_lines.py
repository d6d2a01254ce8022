"""A model request is recorded as the messages added since the previous request.

Each `provider_request` carries the whole transcript; the recorder writes only what
the previous request did not have (`messages_from`, `prefix`: see `sessions.compact`)
and every reader rebuilds the whole body: in order, by index, from the middle, with
the view fold's batches. Files with whole bodies still read, a request whose messages
do not extend the previous one's is written whole, and a recording's size grows
linearly with its turns.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.sessions.helpers import runtime_for
from workbench.bus_events import ProviderRequestEvent, ProviderResponseEvent
from workbench.sessions.fork import fork_point
from workbench.sessions.header import ModelInfo, SessionHeader
from workbench.sessions.log import of_kinds
from workbench.sessions.reader import read_session
from workbench.sessions.recorder import Recorder
from workbench.view.fold import ViewState

TURNS = {
    "name": "wire",
    "prompt": "read a.txt",
    "workspace_files": {"a.txt": "alpha\n", "b.txt": "beta\n"},
    "turns": [
        {"text": "Reading.", "tool_calls": [{"name": "read_file", "arguments": {"path": "a.txt"}}]},
        {"text": "It says alpha."},
        {"text": "Trying b.", "error": "upstream 502"},
        {"text": "And b.", "tool_calls": [{"name": "read_file", "arguments": {"path": "b.txt"}}]},
        {"text": "It says beta."},
    ],
}


async def record(workspace: Path, data: dict[str, Any] = TURNS) -> tuple[Path, list[dict]]:
    """Three runs (the second ends in a provider failure) with the simulated wire on:
    the session file and each request's body as it was published."""
    runtime = runtime_for(workspace, data, simulated_wire=True)
    bodies: list[dict] = []
    runtime.agent.subscribe(
        lambda e, _s: (
            bodies.append(json.loads(json.dumps(e.body))) if e.type == "provider_request" else None
        )
    )
    await runtime.agent.prompt(runtime.prompt)
    await runtime.agent.prompt("try b")
    await runtime.agent.prompt("again")
    runtime.recorder.close()
    return runtime.recorder.path, bodies


def request_lines(path: Path) -> list[dict[str, Any]]:
    lines = [json.loads(line) for line in path.read_text().splitlines()[1:]]
    return [line for line in lines if line["event"]["type"] == "provider_request"]


def plain(body: dict[str, Any]) -> Any:
    return json.loads(json.dumps(body))


async def test_requests_are_recorded_compactly_and_read_back_whole(tmp_path: Path) -> None:
    path, bodies = await record(tmp_path / "w")
    lines = request_lines(path)
    assert len(lines) == len(bodies) == 5
    assert "messages_from" not in lines[0]
    compact = [line for line in lines if "messages_from" in line]
    assert len(compact) >= 3  # across the runs' boundaries too
    assert all(line["prefix"] > 0 for line in compact)
    # in order, with the view fold's batches
    state = ViewState()
    session = read_session(path, on_batch=lambda batch: [state.apply(e) for e in batch])
    assert [plain(r.request.body) for r in state.network.values()] == bodies
    assert [plain(e.body) for e in session.events if e.type == "provider_request"] == bodies
    # by index and from the middle, each by a reader that read nothing else
    where = [i for i, kind in enumerate(session.events.kinds()) if kind == "provider_request"]
    for i, body in zip(where, bodies, strict=True):
        assert plain(read_session(path).events[i].body) == body
        mid = read_session(path).events[i - 1 : i + 2]
        assert plain(mid[1].body) == body
    assert [plain(e.body) for e in of_kinds(read_session(path).events, ["provider_request"])] == (
        bodies
    )
    tail = list(read_session(path).events.iter_kinds(["provider_request"], start=where[2]))
    assert [plain(e.body) for e in tail] == bodies[2:]


async def test_a_fork_records_its_copied_requests_compactly_and_reads_them_whole(
    tmp_path: Path,
) -> None:
    path, bodies = await record(tmp_path / "w")
    session = read_session(path)
    point = fork_point(session, 3)
    copied = [plain(e.body) for e in point.events if e.type == "provider_request"]
    assert copied == bodies[: len(copied)] and len(copied) >= 2
    header = SessionHeader(created=1.0, model=ModelInfo(id="m", provider="p"), workspace="/w")
    prelude = zip(point.events, point.stamps, strict=True)
    recorder = Recorder(tmp_path / "fork.jsonl", header, prelude=prelude)
    recorder.close()
    assert sum("messages_from" in line for line in request_lines(recorder.path)) >= 1
    forked = read_session(recorder.path)
    assert [plain(e.body) for e in forked.events if e.type == "provider_request"] == copied


async def test_files_with_whole_request_bodies_read_as_before(tmp_path: Path) -> None:
    path, bodies = await record(tmp_path / "w")
    raw = path.read_text().splitlines()
    whole = iter(bodies)
    old = [raw[0]]
    for text in raw[1:]:
        line = json.loads(text)
        if line["event"]["type"] == "provider_request":
            line.pop("messages_from", None), line.pop("prefix", None)
            line["event"]["body"] = next(whole)
        old.append(json.dumps(line))
    (tmp_path / "old.jsonl").write_text("\n".join(old) + "\n")
    session = read_session(tmp_path / "old.jsonl")
    assert [plain(e.body) for e in session.events if e.type == "provider_request"] == bodies
    i = [k for k, kind in enumerate(session.events.kinds()) if kind == "provider_request"][-1]
    assert plain(read_session(tmp_path / "old.jsonl").events[i].body) == bodies[-1]


def test_a_request_that_does_not_extend_the_previous_one_is_written_whole(tmp_path: Path) -> None:
    header = SessionHeader(created=1.0, model=ModelInfo(id="m", provider="p"), workspace="/w")
    recorder = Recorder(tmp_path / "t.jsonl", header)
    said = [{"role": "user", "content": "hi"}]

    def request(messages: list[Any]) -> ProviderRequestEvent:
        body = {"model": "m", "messages": messages, "stream": True}
        return ProviderRequestEvent(request_id="r", provider="p", model="m", body=body)

    sent = [
        said,
        said + [{"role": "assistant", "content": "yo"}],  # extends: compact
        [{"role": "user", "content": "other"}],  # a transcript that changed: whole
        [{"role": "user", "content": "other"}, {"role": "user", "content": "more"}],  # compact
    ]
    for messages in sent:
        recorder.write(request(messages))
        recorder.write(ProviderResponseEvent(request_id="r", total_ms=1.0, error="failed"))
    recorder._compactor.written(request(said), None, 0)  # as if the last was unrecordable
    recorder.write(request(sent[-1] + [{"role": "user", "content": "x"}]))
    sent.append(sent[-1] + [{"role": "user", "content": "x"}])
    recorder.close()
    lines = request_lines(tmp_path / "t.jsonl")
    assert [("messages_from" in line) for line in lines] == [False, True, False, True, False]
    assert [len(line["event"]["body"]["messages"]) for line in lines] == [1, 1, 1, 1, 3]
    events = read_session(tmp_path / "t.jsonl").events
    assert [e.body["messages"] for e in events if e.type == "provider_request"] == sent
    assert events[-1].body["messages"] == sent[-1]


def many_turns(n: int) -> dict[str, Any]:
    turns = [
        {
            "text": f"Turn {k}: " + "words " * 40,
            "tool_calls": [{"name": "read_file", "arguments": {"path": "a.txt"}}],
        }
        for k in range(n)
    ]
    return {**TURNS, "turns": [*turns, {"text": "Done."}]}


async def test_a_recordings_size_grows_linearly_with_its_turns(tmp_path: Path) -> None:
    sizes = []
    for n in (30, 90):
        runtime = runtime_for(tmp_path / str(n), many_turns(n), simulated_wire=True)
        await runtime.agent.prompt(runtime.prompt)
        runtime.recorder.close()
        sizes.append(runtime.recorder.path.stat().st_size)
    # three times the turns: about three times the bytes (whole bodies: 4.4)
    assert sizes[1] / sizes[0] < 3.5
