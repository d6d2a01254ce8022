"""Images in any tool's result: the inspector names type, size and pixel size, and
the palette saves them to files in the workspace (or a typed path)."""

from __future__ import annotations

import base64
from pathlib import Path

import anyio
from pydantic import BaseModel

from tests.support.notifications import notifications
from tests.widgets.helpers import palette_pick, wait_for
from tests.workbench.test_images import GIF, PNG
from workbench.agent import AgentTool, AgentToolResult, ImageContent, TextContent
from workbench.providers.scripted import Scenario
from workbench.runtime import RunOptions, build_runtime
from workbench.widgets.app import make_app


class NoArgs(BaseModel):
    pass


async def _shoot(*_: object) -> AgentToolResult:
    return AgentToolResult(
        content=[
            TextContent(text="two pictures"),
            ImageContent(data=base64.b64encode(PNG).decode(), mime_type="image/png"),
            ImageContent(data=base64.b64encode(GIF).decode(), mime_type="image/gif"),
        ]
    )


async def _run_app(tmp_path: Path):  # noqa: ANN202 - yields the app under Pilot
    tool = AgentTool("shoot", "Shoot", "Takes pictures.", NoArgs, _shoot)
    scenario = Scenario.model_validate(
        {
            "name": "img",
            "turns": [{"tool_calls": [{"name": "shoot", "arguments": {}}]}, {"text": "done"}],
        }
    )
    runtime = build_runtime(
        RunOptions(scenario=scenario, workspace=tmp_path, tools=[tool], allow=["shoot"])
    )
    return make_app(runtime, subtitle="test")


async def _finish(app, pilot) -> None:  # noqa: ANN001
    app.prompt_bar.input.value = "go"
    await pilot.press("enter")
    with anyio.fail_after(10):
        while app.view_state.run_state != "finished":
            await pilot.pause(0.02)
    await pilot.pause()


async def test_the_inspector_describes_images_and_the_palette_saves_them(tmp_path: Path) -> None:
    app = await _run_app(tmp_path)
    async with app.run_test(size=(140, 44)) as pilot:
        await _finish(app, pilot)
        text = "\n".join(app.inspector.plain_lines())
        assert "[image image/png, 70 bytes, 1×1 px]" in text
        assert "[image image/gif, 30 bytes, 320×200 px]" in text
        assert "Save the selected call's images" in text
        await palette_pick(pilot, app, "Save the selected call's images")
        folder = tmp_path / "saved-images"
        await wait_for(pilot, lambda: folder.is_dir() and len(list(folder.iterdir())) == 2)
        saved = sorted(folder.iterdir())
        assert [p.suffix for p in saved] == [".png", ".gif"]
        assert saved[0].read_bytes() == PNG and saved[1].read_bytes() == GIF
        message = [n.message for n in notifications(app)][-1]
        assert message.startswith("Saved 2 image(s):") and str(saved[0]) in message


async def test_images_go_to_a_typed_path(tmp_path: Path) -> None:
    app = await _run_app(tmp_path)
    async with app.run_test(size=(140, 44)) as pilot:
        await _finish(app, pilot)
        for command in app.image_commands():
            if command.title.endswith("to…"):
                command.callback()
        await pilot.pause()
        await pilot.press(*"shots/here")
        await pilot.press("enter")
        await pilot.pause()
        saved = sorted((tmp_path / "shots" / "here").iterdir())
        assert len(saved) == 2
        assert any(str(saved[0]) in n.message for n in notifications(app))
