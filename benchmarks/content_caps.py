"""What a huge image and an endless model reply cost the real workbench (headless).

    python benchmarks/content_caps.py [--python PYTHON] [--seconds 60] [--image-mb 40]

1. An MCP server's tool answers one image of `--image-mb` MB: the run's wall time,
   the workbench's peak memory (RSS), and the longest line of the session file.
2. A chat-completions server streams reasoning without end: after `--seconds` (or
   when the workbench stops on its own), its peak memory, the session file's size,
   and whether it stopped by itself.

`--python` runs another checkout's interpreter (its workbench), to compare before and
after a change. Prints one line of figures per case.
"""

from __future__ import annotations

import argparse
import json
import socket
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import psutil

IMAGE_SERVER = """
import base64, sys
from mcp.server.mcpserver import MCPServer
from mcp.types import ImageContent

server = MCPServer("pictures")
DATA = base64.b64encode(b"\\x89PNG\\r\\n\\x1a\\n" + b"\\0" * (MB * 1024 * 1024)).decode()

@server.tool()
def snapshot() -> list[ImageContent]:
    '''One huge image.'''
    return [ImageContent(type="image", data=DATA, mime_type="image/png")]

server.run()
"""


def reasoning_chunk(text: str) -> bytes:
    chunk = {
        "id": "c",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "m",
        "choices": [{"index": 0, "delta": {"reasoning_content": text}, "finish_reason": None}],
    }
    return f"data: {json.dumps(chunk)}\n\n".encode()


class Endless(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - stdlib signature
        pass

    def do_POST(self) -> None:  # noqa: N802 - stdlib naming
        self.rfile.read(int(self.headers.get("content-length", 0)))
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.end_headers()
        piece = reasoning_chunk("Let me think about this once more. " * 30)
        try:
            while True:
                self.wfile.write(piece)
        except OSError:
            return


def watch(proc: subprocess.Popen[bytes], seconds: float) -> tuple[float, int, bool]:
    """(wall seconds, peak RSS bytes, ended by itself) of `proc`, killed after `seconds`."""
    start = time.monotonic()
    peak = 0
    ps = psutil.Process(proc.pid)
    while proc.poll() is None and time.monotonic() - start < seconds:
        try:
            peak = max(peak, ps.memory_info().rss)
        except psutil.Error:
            break
        time.sleep(0.1)
    ended = proc.poll() is not None
    if not ended:
        proc.kill()
    proc.wait()
    return time.monotonic() - start, peak, ended


def workbench(python: str, cwd: Path, args: list[str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [python, "-m", "workbench", "--headless", "go", "--approve", "all", *args],
        cwd=cwd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def image_case(python: str, cwd: Path, tmp: Path, mb: int, seconds: float) -> None:
    server = tmp / "pictures.py"
    server.write_text(IMAGE_SERVER.replace("MB * 1024", f"{mb} * 1024"))
    scenario = tmp / "scenario.json"
    turns = [{"tool_calls": [{"name": "pictures__snapshot", "arguments": {}}]}, {"text": "done"}]
    scenario.write_text(json.dumps({"name": "image", "turns": turns}))
    session = tmp / "image.jsonl"
    mcp = f"{python} {server}"
    proc = workbench(
        python, cwd, ["--scenario", str(scenario), "--mcp", mcp, "--session", str(session)]
    )
    wall, peak, ended = watch(proc, seconds)
    longest = max((len(line) for line in session.open("rb")), default=0) if session.exists() else 0
    print(
        f"{mb} MB MCP image: {wall:.1f} s{'' if ended else ' (killed)'}, "
        f"peak RSS {peak / 1e6:.0f} MB, longest session line {longest / 1e6:.2f} MB"
    )


def reasoning_case(python: str, cwd: Path, tmp: Path, seconds: float) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = ThreadingHTTPServer(("127.0.0.1", port), Endless)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    session = tmp / "reasoning.jsonl"
    base = f"http://127.0.0.1:{port}/v1"
    proc = workbench(python, cwd, ["--base-url", base, "--model", "m", "--session", str(session)])
    wall, peak, ended = watch(proc, seconds)
    server.shutdown()
    size = session.stat().st_size if session.exists() else 0
    how = "stopped by itself" if ended else "still streaming, killed"
    print(
        f"endless reasoning: {wall:.1f} s ({how}), peak RSS {peak / 1e6:.0f} MB, "
        f"session {size / 1e6:.1f} MB"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--cwd", type=Path, default=Path(__file__).resolve().parents[1])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--image-mb", type=int, default=40)
    parser.add_argument("--case", choices=["image", "reasoning", "both"], default="both")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        if args.case in ("image", "both"):
            image_case(args.python, args.cwd, tmp, args.image_mb, args.seconds * 3)
        if args.case in ("reasoning", "both"):
            reasoning_case(args.python, args.cwd, tmp, args.seconds)


if __name__ == "__main__":
    main()
