"""In the app, a person answers what a server asks: a form for elicitation, the
request (to send, edit or decline) for sampling. Typing into them decides nothing."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Input, Static

from tests.mcp.helpers import TOOLBOX, calls
from tests.widgets.helpers import wait_for
from workbench.providers.scripted import Scenario
from workbench.runtime import RunOptions, build_runtime
from workbench.widgets.app import make_app
from workbench.widgets.mcp_requests import ElicitationModal, SamplingModal


def app_calling(tmp_path: Path, *pairs: tuple[str, dict[str, object]]):  # type: ignore[no-untyped-def]
    scenario = Scenario.model_validate(
        {"name": "ask", "prompt": "go", "turns": [calls(*pairs), {"text": "done"}]}
    )
    runtime = build_runtime(
        RunOptions(
            scenario=scenario,
            workspace=tmp_path,
            tools=[],
            mcp=[TOOLBOX],
            allow=["mcp:toolbox"],
            record=False,
        )
    )
    return make_app(runtime, subtitle="test")


async def test_a_form_asks_checks_and_sends(tmp_path: Path) -> None:
    app = app_calling(tmp_path, ("toolbox__ask_contact", {}))
    async with app.run_test(size=(140, 44)) as pilot:
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, ElicitationModal), timeout=20)
        modal = app.screen
        assert any("Who should get the report?" == str(s.render()) for s in modal.query(Static))
        await pilot.press(*"a hurried user types prose here")  # into the first field
        assert isinstance(app.screen, ElicitationModal)  # nothing was decided
        modal.query_one("#f-0", Input).value = ""
        await pilot.press("ctrl+y")  # required fields empty: refused, with the reasons
        error = str(modal.query_one("#elicit-error", Static).render())
        assert "'name' is a required property" in error
        assert isinstance(app.screen, ElicitationModal)
        modal.query_one("#f-0", Input).value = "Ann"
        modal.query_one("#f-1", Input).value = "41"
        await pilot.press("ctrl+y")
        await wait_for(pilot, lambda: app.view_state.run_state == "finished", timeout=20)
        calls_ = list(app.view_state.calls.values())
        assert calls_[0].result_text == (
            'contact: {"name":"Ann","age":41,"urgent":false,"channel":"mail"}'
        )


async def test_a_url_is_shown_and_declining_says_so(tmp_path: Path) -> None:
    app = app_calling(tmp_path, ("toolbox__ask_login", {}))
    async with app.run_test(size=(140, 44)) as pilot:
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, ElicitationModal), timeout=20)
        url = str(app.screen.query_one("#elicit-url", Static).render())
        assert url == "https://example.com/login"
        await pilot.press("ctrl+n")
        await wait_for(pilot, lambda: app.view_state.run_state == "finished", timeout=20)
        assert list(app.view_state.calls.values())[0].result_text == "login: decline"


async def test_sampling_shows_the_request_and_can_be_declined_or_sent(tmp_path: Path) -> None:
    app = app_calling(
        tmp_path, ("toolbox__summarize", {"text": "one"}), ("toolbox__summarize", {"text": "two"})
    )
    async with app.run_test(size=(140, 44)) as pilot:
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, SamplingModal), timeout=20)
        shown = str(app.screen.query_one("#sample-request", Static).render())
        assert "system  Summarize in five words." in shown
        assert "user  one" in shown or "user  two" in shown
        await pilot.press("ctrl+n")  # decline the first ...
        await wait_for(pilot, lambda: isinstance(app.screen, SamplingModal), timeout=20)
        modal = app.screen
        assert "maxTokens 50" in str(modal.query_one("#sample-parameters", Static).render())
        await pilot.press("ctrl+y")  # no reply yet: refused
        assert "The reply is empty" in str(modal.query_one("#sample-error", Static).render())
        await pilot.press("ctrl+g")  # ... generate a reply for the second, then send it
        await wait_for(pilot, lambda: modal.generated is not None)
        await pilot.press("ctrl+y")
        await wait_for(pilot, lambda: app.view_state.run_state == "finished", timeout=20)
        results = sorted(c.result_text for c in app.view_state.calls.values())
        assert any("the user declined the sampling request" in r for r in results)
        assert any(r.startswith("summary (scripted") for r in results)
        await pilot.pause()
        # a line for each request, under the calls (a long one wraps)
        shown = " ".join(" ".join(app.timeline.plain_lines()).split())
        assert "↳ toolbox asked the model: one → declined: the user declined the sampling" in shown
        assert "↳ toolbox asked the model: two →" in shown
        assert shown.count("↳ toolbox asked the model: ") == 2


async def test_hostile_property_names_make_a_plain_form() -> None:
    import mcp_types
    from textual.app import App

    schema = {
        "type": "object",
        "properties": {
            "na me; [b]x[/b]": {"type": "string", "description": "\x1b]2;owned\x07"},
            "#id.class": {"type": "boolean"},
        },
        "required": ["na me; [b]x[/b]"],
    }
    params = mcp_types.ElicitRequestFormParams(mode="form", message="fill", requested_schema=schema)
    results: list[object] = []

    class Host(App[None]):
        def on_mount(self) -> None:
            self.push_screen(ElicitationModal("evil", params), results.append)

    app = Host()
    async with app.run_test() as pilot:
        await pilot.pause()
        modal = app.screen
        assert isinstance(modal, ElicitationModal)
        labels = [str(s.render()) for s in modal.query(Static)]
        assert any(label.startswith("na me; [b]x[/b]") for label in labels)  # not markup
        assert not any("\x1b" in label for label in labels)
        modal.query_one("#f-0", Input).value = "ok"
        await pilot.press("ctrl+y")
        await pilot.pause()
    # the optional flag left alone is not sent (not as false either)
    assert results == [("accept", {"na me; [b]x[/b]": "ok"})]
