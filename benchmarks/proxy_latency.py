"""Proxy latency: what `workbench proxy` adds to each streamed chunk.

An upstream in this process streams a chat completion whose every chunk carries the
moment it was written (`time.monotonic_ns()`, one clock for every process on Linux).
A client reads the stream, straight from the upstream and through the proxy (the real
command, `workbench proxy --headless`, in its own process, recording its sessions as
it does by default), and notes for each chunk how long it took to arrive. Rounds
alternate between the two paths; the table shows the median and the 95th percentile
per chunk, the difference and the ratio.

With `--app` the proxy is the app, `workbench proxy` without `--headless`, in a
pseudo-terminal of 160x48 whose output is read and thrown away: every round continues
one conversation (the client sends the replies so far back, with one more question),
so the conversation is on screen and each reply is painted as it streams.

    python benchmarks/proxy_latency.py                 # 8 rounds of 200 chunks, 2 ms apart
    python benchmarks/proxy_latency.py --rounds 20 --chunks 500 --gap 0.001
    python benchmarks/proxy_latency.py --hold          # with a deny rule (text still streams)
    python benchmarks/proxy_latency.py --app           # the app, the conversation on screen
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import httpx2  # noqa: E402


class _Upstream(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    chunks = 200
    gap = 0.002

    def log_message(self, *_args: Any) -> None:
        pass

    def do_POST(self) -> None:  # noqa: N802 - stdlib naming
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for i in range(self.chunks + 1):
            if i == self.chunks:
                delta: dict[str, Any] = {}
                finish: str | None = "stop"
            else:
                delta, finish = {"content": f"{time.monotonic_ns()} "}, None
            chunk = {
                "id": "bench",
                "object": "chat.completion.chunk",
                "created": 0,
                "model": "bench",
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            }
            data = f"data: {json.dumps(chunk)}\n\n".encode()
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()
            time.sleep(self.gap)
        done = b"data: [DONE]\n\n"
        self.wfile.write(b"%x\r\n%s\r\n0\r\n\r\n" % (len(done), done))
        self.wfile.flush()


async def one_stream(
    client: httpx2.AsyncClient, base: str, messages: list[dict[str, Any]] | None = None
) -> list[float]:
    """Per-chunk latency in microseconds, from the upstream's write to the client's read.
    With `messages`, the conversation so far: the reply and one more question are added."""
    out: list[float] = []
    sent = messages if messages is not None else [{"role": "user", "content": "go"}]
    body = {"model": "bench", "stream": True, "messages": sent}
    text: list[str] = []
    async with client.stream("POST", f"{base}/chat/completions", json=body) as response:
        async for line in response.aiter_lines():
            now = time.monotonic_ns()
            if not line.startswith("data: {"):
                continue
            match = re.search(r'"content": "(\d+) "', line)
            if match:
                out.append((now - int(match.group(1))) / 1000)
                text.append(match.group(1) + " ")
    if messages is not None:
        messages += [
            {"role": "assistant", "content": "".join(text)},
            {"role": "user", "content": "again"},
        ]
    return out


def start_proxy(upstream: str, sessions: str, hold: bool) -> tuple[subprocess.Popen[str], str]:
    args = [
        sys.executable,
        "-m",
        "workbench",
        "proxy",
        "--headless",
        "--upstream",
        upstream,
        "--port",
        "0",
        "--session-dir",
        sessions,
        "--api-key-env",
        "BENCH_NO_KEY",
    ]
    if hold:
        args += ["--deny", "read_file"]
    proc = subprocess.Popen(
        args,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    match = re.search(r"listening on (\S+),", line)
    if not match:
        proc.kill()
        raise SystemExit(f"the proxy did not start: {line!r}")
    threading.Thread(target=proc.stdout.read, daemon=True).start()  # keep its pipe drained
    return proc, match.group(1)


def start_app(upstream: str, sessions: str, hold: bool) -> tuple[subprocess.Popen[bytes], str]:
    """`workbench proxy` as the app, in a pseudo-terminal whose output is drained."""
    import fcntl
    import pty
    import struct
    import termios

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    args = [sys.executable, "-m", "workbench", "proxy", "--upstream", upstream]
    args += ["--port", str(port), "--session-dir", sessions, "--api-key-env", "BENCH_NO_KEY"]
    if hold:
        args += ["--deny", "read_file"]
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 48, 160, 0, 0))
    proc = subprocess.Popen(
        args,
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env={**os.environ, "PYTHONPATH": str(ROOT), "TERM": "xterm-256color"},
        start_new_session=True,
    )
    os.close(slave)

    def drain() -> None:
        try:
            while os.read(master, 65536):
                pass
        except OSError:
            pass

    threading.Thread(target=drain, daemon=True).start()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return proc, f"http://127.0.0.1:{port}/v1"
        except OSError:
            if proc.poll() is not None:
                break
            time.sleep(0.2)
    proc.kill()
    raise SystemExit("the app did not start listening")


def summary(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[int(len(ordered) * 0.95) - 1]


async def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--chunks", type=int, default=200)
    parser.add_argument("--gap", type=float, default=0.002, help="seconds between upstream chunks")
    parser.add_argument("--hold", action="store_true", help="run the proxy with a deny rule")
    parser.add_argument(
        "--app", action="store_true", help="the proxy is the app, the conversation on screen"
    )
    args = parser.parse_args()
    _Upstream.chunks, _Upstream.gap = args.chunks, args.gap
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Upstream)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    upstream = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    with tempfile.TemporaryDirectory() as sessions:
        start = start_app if args.app else start_proxy
        proc, proxied = start(upstream, sessions, args.hold)
        try:
            direct: list[float] = []
            through: list[float] = []
            mine: list[dict[str, Any]] | None = [{"role": "user", "content": "go"}]
            theirs: list[dict[str, Any]] | None = [{"role": "user", "content": "go"}]
            if not args.app:
                mine = theirs = None
            async with httpx2.AsyncClient(timeout=60) as client:
                await one_stream(client, proxied, mine)  # warm up both paths
                await one_stream(client, upstream, theirs)
                for _ in range(args.rounds):
                    direct += await one_stream(client, upstream, theirs)
                    through += await one_stream(client, proxied, mine)
        finally:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)
        sessions_written = len(list(Path(sessions).glob("*.jsonl")))
    httpd.shutdown()
    d_med, d_p95 = summary(direct)
    p_med, p_p95 = summary(through)
    print(
        f"{args.rounds} rounds x {args.chunks} chunks, {args.gap * 1000:g} ms apart"
        f"{' (deny rule on read_file)' if args.hold else ''}"
        f"{'; the app, the conversation on screen' if args.app else '; headless'}"
        f"; {sessions_written} sessions recorded"
    )
    print(f"{'path':<16}{'median µs':>12}{'p95 µs':>12}")
    print(f"{'direct':<16}{d_med:>12.0f}{d_p95:>12.0f}")
    print(f"{'through proxy':<16}{p_med:>12.0f}{p_p95:>12.0f}")
    print(
        f"added per chunk: {p_med - d_med:.0f} µs median, {p_p95 - d_p95:.0f} µs p95; "
        f"ratio of medians {p_med / d_med:.2f}"
    )


if __name__ == "__main__":
    asyncio.run(main())
