"""Pilot test: what a person changed shows everywhere afterwards, and rerun runs it."""

from __future__ import annotations

import json
from pathlib import Path

from textual.widgets import TextArea

from tests.widgets.helpers import blocking_tools, scenario_of, send, wait_for
from workbench.cli.rerun import report_lines
from workbench.session_runs import rerun
from workbench.sessions import read_session
from workbench.sessions.export import to_json, to_markdown
from workbench.widgets.inject_modal import InjectResultModal
from workbench.widgets.json_editor import JsonEditModal
from workbench.widgets.permission_modal import PermissionModal

TURNS = [
    {
        "tool_calls": [
            {"name": "write_file", "arguments": {"path": "a.txt", "content": "the model's"}}
        ]
    },
    {"tool_calls": [{"name": "read_file", "raw": '{"path": "a.txt"'}]},
    {"tool_calls": [{"name": "read_file", "arguments": {"path": "missing.md"}}]},
    {"text": "done"},
]


def paused_at(app, call_id: str) -> bool:  # type: ignore[no-untyped-def]
    pause = app.view_state.pause
    return pause is not None and pause.tool_call_id == call_id


async def edit_json(app, pilot, args: dict) -> None:  # type: ignore[no-untyped-def]
    await wait_for(pilot, lambda: isinstance(app.screen, JsonEditModal))
    app.screen.query_one(TextArea).text = json.dumps(args)
    await pilot.press("ctrl+s")


async def test_edits_and_injected_results_show_in_cards_exports_and_rerun(
    make_test_app, tmp_path: Path
) -> None:
    app = make_test_app(scenario_of(TURNS), breakpoints=["@parse", "@error"])
    async with app.run_test(size=(160, 48)) as pilot:
        # 1. The dialog asks for write_file: the user edits the content, then allows.
        await send(pilot, app, lambda: isinstance(app.screen, PermissionModal))
        await pilot.press("f2")
        await edit_json(app, pilot, {"path": "a.txt", "content": "mine"})
        # 2. Malformed JSON stops at @parse: the user writes the arguments it meant.
        await wait_for(pilot, lambda: paused_at(app, "call_2_1"))
        await pilot.press("f2")
        await edit_json(app, pilot, {"path": "a.txt"})
        # 3. A missing file stops at @error: the user answers in its place.
        await wait_for(pilot, lambda: paused_at(app, "call_3_1"))
        await pilot.press("ctrl+o")
        await wait_for(pilot, lambda: isinstance(app.screen, InjectResultModal))
        app.screen.query_one(TextArea).text = "missing.md was never written; skip it"
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: app.view_state.run_state == "finished")
        lines = app.timeline.plain_lines()
        app.select_call("call_1_1")
        await pilot.pause()
        inspector = "\n".join(app.inspector.plain_lines())
    assert (app.runtime.workspace / "a.txt").read_text() == "mine"
    write = next(line for line in lines if "write_file" in line and "✓ done" in line)
    assert (
        "✎ edited by you" in write
        and app.view_state.calls["call_1_1"].ran_args["content"] == "mine"
    )
    assert "edited by you in the permission dialog" in inspector
    assert '"mine"' in inspector and "the model's" in inspector  # what ran, and the original
    read = next(line for line in lines if "read_file" in line and '"a.txt"' in line)
    assert "✎ edited by you" in read
    assert any("injected by you" in line for line in lines)

    session = read_session(app.runtime.session_path)
    md = to_markdown(session)
    assert "Arguments, as the model sent them:" in md and "the model's" in md
    assert "Arguments that ran (arguments edited by the user in the permission dialog):" in md
    assert "Arguments that ran (arguments edited by the user at failed arguments):" in md
    assert "Result (ok, result injected by the user in place of its error result):" in md
    interventions = json.loads(to_json(session))["interventions"]
    assert [(i["tool_call_id"], i["kind"], i["by"], i["where"]) for i in interventions] == [
        ("call_1_1", "edited_arguments", "the user", "in the permission dialog"),
        ("call_2_1", "edited_arguments", "the user", "at failed arguments"),
        ("call_3_1", "injected_result", "the user", "in place of its error result"),
    ]
    assert interventions[0]["arguments"] == {"path": "a.txt", "content": "mine"}

    # rerun runs what ran: the edited write, the edited read; it says so.
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    report = await rerun(session, workspace=fresh, approve="all")
    outcomes = {c.tool_call_id: c for c in report.calls}
    assert (fresh / "a.txt").read_text() == "mine"
    assert outcomes["call_1_1"].status == "same"
    assert "edited by the user in the permission dialog" in outcomes["call_1_1"].note
    assert (
        outcomes["call_2_1"].status == "same" and "at failed arguments" in outcomes["call_2_1"].note
    )
    assert outcomes["call_3_1"].status == "skipped"
    printed = "\n".join(report_lines(report, session.path, "all"))
    assert (
        "call_1_1       write_file       same (ran as edited by the user in the permission dialog)"
        in printed
    )


async def test_a_call_cancelled_with_f8_says_who_everywhere(make_test_app, tmp_path: Path) -> None:
    from workbench.tools import builtin_tools

    _release, (slow, _fast) = blocking_tools()

    turns = [{"tool_calls": [{"name": "slow", "arguments": {}}]}, {"text": "ok"}]
    app = make_test_app(scenario_of(turns), tools=[slow, *builtin_tools(tmp_path)], allow=["slow"])
    async with app.run_test(size=(160, 48)) as pilot:
        await send(
            pilot,
            app,
            lambda: (
                app.view_state.calls.get("call_1_1") is not None
                and app.view_state.calls["call_1_1"].status == "running"
            ),
        )
        await pilot.press("f8")
        await wait_for(pilot, lambda: app.view_state.run_state == "finished")
        lines = app.timeline.plain_lines()
    assert any("Cancelled by the user (F8)" in line for line in lines)
    session = read_session(app.runtime.session_path)
    assert "cancelled by the user with F8 (this call only)" in to_markdown(session)
    kinds = [(i["kind"], i["where"]) for i in json.loads(to_json(session))["interventions"]]
    assert kinds == [("cancelled", "with F8 (this call only)")]
