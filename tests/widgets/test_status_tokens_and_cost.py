"""The status bar's tokens and cost: usage a server never sent is unknown, not zero,
and at 80 columns the cost stays on the line."""

from __future__ import annotations

from tests.widgets.helpers import send
from tests.widgets.test_times import screen_lines
from workbench.agent import AgentEndEvent, AssistantMessage, MessageEndEvent, Usage
from workbench.view.fold import ViewState
from workbench.widgets.status_bar import tokens_text


def folded(*messages: AssistantMessage) -> ViewState:
    state = ViewState()
    state.apply_all([MessageEndEvent(message=m) for m in messages])
    state.apply_all([AgentEndEvent(messages=list(messages))])
    return state


def test_replies_without_usage_are_unknown_not_free() -> None:
    assert tokens_text(folded(AssistantMessage(), AssistantMessage())) == "tokens unknown"
    some = folded(AssistantMessage(usage=Usage(input=10, output=2)), AssistantMessage())
    assert tokens_text(some) == "tokens 10↑ 2↓ +?"
    full = folded(AssistantMessage(usage=Usage(input=1200, output=34)))
    assert tokens_text(full) == "tokens 1,200↑ 34↓"
    # a reply that failed or was aborted carries no usage by nature: it is not counted
    aborted = folded(
        AssistantMessage(usage=Usage(input=5, output=1)), AssistantMessage(stop_reason="aborted")
    )
    assert tokens_text(aborted) == "tokens 5↑ 1↓"


async def test_at_80_columns_the_status_bar_keeps_the_cost(make_test_app) -> None:
    app = make_test_app(approve="all")
    async with app.run_test(size=(80, 24)) as pilot:
        await send(pilot, app, lambda: app.view_state.run_state == "finished", text=app.prefill)
        await pilot.pause()
        shown = screen_lines(app)
    line = next(text for text in shown if "tokens" in text)  # the status bar, as drawn
    assert "cost $0" in line
