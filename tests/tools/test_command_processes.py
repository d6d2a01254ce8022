"""`run_command`: an allow-listed environment, and no process outliving its call."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import anyio
import psutil
import pytest

from workbench.agent import AbortController, AgentTool, AgentToolResult
from workbench.proctree import ProcessTree
from workbench.tools import builtin_tools
from workbench.tools.command_env import command_env, config_pass_env
from workbench.tools.run_command import CommandFailed


def command_tool(root: Path, pass_env: tuple[str, ...] = ()) -> AgentTool:
    return next(t for t in builtin_tools(root, pass_env=pass_env) if t.name == "run_command")


async def run(root: Path, command: str, pass_env: tuple[str, ...] = (), **kw: object) -> str:
    tool = command_tool(root, pass_env)
    params = tool.parameters.model_validate({"command": command})
    signal_ = kw.get("signal") or AbortController().signal
    result: AgentToolResult = await tool.execute("c1", params, signal_, lambda _u: None)
    return result.content[0].text  # type: ignore[union-attr]


def alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


# -- environment ---------------------------------------------------------------------


async def test_a_command_never_sees_the_users_keys(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0123456789abcdef")
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_abcdefghijklmnop")
    monkeypatch.setenv("LC_ALL", "C.UTF-8")
    out = await run(tmp_path, 'echo "[$OPENAI_API_KEY][$GITHUB_TOKEN][$LC_ALL][$HOME]"')
    assert out == f"[][][C.UTF-8][{os.environ['HOME']}]"


async def test_pass_env_names_a_variable_on_purpose(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MY_SETTING", "on")
    monkeypatch.setenv("OTHER", "no")
    assert await run(tmp_path, 'echo "$MY_SETTING/$OTHER"', ("MY_SETTING",)) == "on/"


def test_the_allow_list() -> None:
    environ = {
        "PATH": "/bin",
        "TERM": "xterm",
        "LC_CTYPE": "C",
        "AWS_SECRET_ACCESS_KEY": "x",
        "TMPDIR": "/tmp",
        "X": "1",
    }
    assert command_env(["X"], environ) == {
        "PATH": "/bin",
        "TERM": "xterm",
        "LC_CTYPE": "C",
        "TMPDIR": "/tmp",
        "X": "1",
    }


def test_the_config_file_names_variables_to_pass(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    assert config_pass_env(config) == []
    config.write_text('[commands]\npass_env = ["GOPATH", "CARGO_HOME"]\n')
    assert config_pass_env(config) == ["GOPATH", "CARGO_HOME"]
    config.write_text('[commands]\npass_env = "GOPATH"\n')
    with pytest.raises(ValueError, match=r"config.toml:2: commands.pass_env: must be a list of"):
        config_pass_env(config)


# -- processes -----------------------------------------------------------------------


async def test_a_setsid_child_ends_with_its_call(tmp_path: Path) -> None:
    # A child in its own session, with its output away from the pipes: the process
    # group and the pipes both lose track of it; the tree does not.
    started = time.monotonic()
    out = await run(
        tmp_path, "setsid sleep 60 </dev/null >/dev/null 2>&1 & echo $! > child.pid; echo done"
    )
    assert out == "done"
    pid = int((tmp_path / "child.pid").read_text())
    assert not alive(pid)
    assert time.monotonic() - started < 5


async def test_a_double_forked_setsid_grandchild_ends_with_its_call(tmp_path: Path) -> None:
    script = (
        "setsid sh -c '(sleep 60 </dev/null >/dev/null 2>&1 & echo $! > grandchild.pid)' "
        "</dev/null >/dev/null 2>&1; while [ ! -s grandchild.pid ]; do sleep 0.01; done; echo ok"
    )
    assert await run(tmp_path, script) == "ok"
    pid = int((tmp_path / "grandchild.pid").read_text())
    assert not alive(pid)


async def test_abort_ends_a_setsid_child(tmp_path: Path) -> None:
    controller = AbortController()
    tool = command_tool(tmp_path)
    params = tool.parameters(command="setsid sleep 60 >/dev/null 2>&1 & echo $! > c.pid; wait")
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:

            async def runner() -> None:
                with pytest.raises(CommandFailed, match="Command aborted"):
                    await tool.execute("c", params, controller.signal, lambda _u: None)

            tg.start_soon(runner)
            while not (tmp_path / "c.pid").exists() or not (tmp_path / "c.pid").read_text():
                await anyio.sleep(0.01)
            controller.abort()
    assert not alive(int((tmp_path / "c.pid").read_text()))


async def test_a_tree_finds_a_detached_member_by_its_mark() -> None:
    tree = ProcessTree("test")
    proc = subprocess.Popen(["sleep", "60"], env=tree.env(dict(os.environ)), start_new_session=True)
    try:
        # until the child has exec'd, its environment is still the parent's (no mark yet)
        with anyio.fail_after(10):
            while not tree.members():
                await anyio.sleep(0.01)
        assert [p.pid for p in tree.members()] == [proc.pid]  # never adopted: found by mark
        assert await tree.end(grace=1.0) == 1
        assert proc.wait(timeout=5) == -signal.SIGTERM
        assert tree.members() == []
    finally:
        proc.kill()
        proc.wait()
