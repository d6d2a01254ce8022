"""Saving the images of the selected call's result (any tool's, MCP or built-in) to files.

Two palette commands while the inspector shows a result with images: one writes them
to `saved-images/` in the workspace, the other asks for a folder or file path first
(relative paths are taken from the workspace). A notification says where they went.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual.app import SystemCommand

if TYPE_CHECKING:
    from workbench.agent.types import ImageContent


DEFAULT_FOLDER = "saved-images"


class ResultImages:
    """Mixed into the app: `inspector` shows the selected call, `runtime` has the workspace."""

    def result_images(self) -> list[ImageContent]:
        """The images in the result the inspector shows (none without a result)."""
        from workbench.agent.types import ImageContent

        record = self.inspector.record  # type: ignore[attr-defined]
        content = getattr(record, "content", None) or []
        return [block for block in content if isinstance(block, ImageContent)]

    def image_commands(self) -> Iterator[SystemCommand]:
        count = len(self.result_images())
        if not count:
            return
        what = "its image" if count == 1 else f"its {count} images"
        yield SystemCommand(
            "Save the selected call's images",
            f"Write {what} to {DEFAULT_FOLDER}/ in the workspace",
            lambda: self.save_result_images(None),
        )
        yield SystemCommand(
            "Save the selected call's images to…",
            f"Type a folder (or a file name, for one image) to write {what} to",
            self._ask_image_path,
        )

    def _ask_image_path(self) -> None:
        from workbench.widgets.mcp_catalog import ArgumentsModal

        modal = ArgumentsModal(
            "Save the selected call's images",
            [("path", "a folder, or a file name for one image (relative to the workspace)", True)],
        )

        def chosen(values: dict[str, str] | None) -> None:
            if values and values.get("path", "").strip():
                self.save_result_images(Path(values["path"].strip()).expanduser())

        self.push_screen(modal, chosen)  # type: ignore[attr-defined]

    def save_result_images(self, target: Path | None) -> list[Path]:
        """Write the selected call's images to `target` (None: the default folder);
        the notification names the files, or says why nothing was written."""
        notify: Any = self.notify  # type: ignore[attr-defined]
        images = self.result_images()
        record = self.inspector.record  # type: ignore[attr-defined]
        if not images or record is None:
            notify("The selected call's result has no images.", severity="warning", markup=False)
            return []
        from workbench.images import save_images

        workspace = Path(self.runtime.workspace)  # type: ignore[attr-defined]
        folder = workspace / (target if target is not None else DEFAULT_FOLDER)
        try:
            paths = save_images(images, folder, f"{record.name}-{record.id}")
        except OSError as exc:
            notify(f"Could not save the images: {exc}", severity="error", markup=False)
            return []
        if not paths:
            notify(
                "No image could be saved: their data is not valid base64.",
                severity="warning",
                markup=False,
            )
            return []
        skipped = len(images) - len(paths)
        note = f" ({skipped} skipped: not valid base64)" if skipped else ""
        where = "\n".join(str(p) for p in paths)
        notify(f"Saved {len(paths)} image(s){note}:\n{where}", timeout=8, markup=False)
        return paths
