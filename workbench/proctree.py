"""A process and everything it started, found and ended even after it tried to leave.

A command can leave its process group (`setsid`) and its parent (a double fork
hands the grandchild to init), so neither the group nor the parent link finds
it once the command exits. A `ProcessTree` therefore knows its members three ways:

- the descendants of its root, seen now and on every earlier `watch()` (a pid is
  remembered with its start time, so a reused pid is never mistaken for one);
- every process of this user whose environment carries the tree's mark
  (`WORKBENCH_TREE=<token>`): the environment is inherited through `setsid`, forks
  and execs, so a detached grandchild still carries it;
- (Linux) the above is read from /proc through `psutil`.

`end()` sends SIGTERM to all members, gives them `grace` seconds, SIGKILLs what is
left, and looks again until nothing carrying the mark is alive. A process that
both clears its environment and detaches before the first `watch()` is out of
reach; the command's own process group is still ended with it.
"""

from __future__ import annotations

import os
import secrets
import signal as signals
import time

import anyio
import psutil

MARK = "WORKBENCH_TREE"
"""The environment variable that marks a tree's processes."""


def process_clock() -> float:
    """Now, on the clock of psutil's `create_time()`.

    On Linux that is the boot time plus the time since boot, which drifts from the wall
    clock the longer the machine is up, as the wall clock is adjusted: a tree born "now"
    by the wall clock would, on a machine up long enough, take its new members for
    older than itself and never look at their mark.
    """
    if hasattr(time, "CLOCK_BOOTTIME"):
        return psutil.boot_time() + time.clock_gettime(time.CLOCK_BOOTTIME)
    return time.time()


class ProcessTree:
    """The processes started for one purpose (a command, an MCP server).

    Args:
        label: a word for the token (shows in `ps e`; e.g. "cmd" or a server name).
    """

    def __init__(self, label: str = "tree") -> None:
        self.token = f"{label}-{os.getpid()}-{secrets.token_hex(8)}"
        self.root: int | None = None
        self._known: dict[int, float] = {}
        self._born = process_clock() - 1.0  # (boot time is counted in whole seconds)

    def env(self, base: dict[str, str]) -> dict[str, str]:
        """`base` with the tree's mark: the environment to start the root with."""
        return {**base, MARK: self.token}

    def adopt(self, pid: int) -> None:
        """The tree's root process (started with `env()`)."""
        self.root = pid
        self.watch()

    def adopt_child(self) -> bool:
        """Adopt the member that is a child of this process as the root (for a tree
        started by code that does not hand out its pid); whether one was found."""
        me = os.getpid()
        for proc in self.members():
            try:
                if proc.ppid() == me:
                    self.adopt(proc.pid)
                    return True
            except psutil.Error:
                continue
        return False

    def root_running(self) -> bool:
        """Whether the root process is alive (a zombie is not)."""
        return self.root is not None and running(self.root)

    def watch(self) -> None:
        """Remember the root's descendants now, so they stay known after they detach."""
        for proc in self._descendants():
            self._remember(proc)

    def members(self) -> list[psutil.Process]:
        """Every live (non-zombie) process of the tree, except this process itself."""
        found: dict[int, psutil.Process] = {}
        for proc in self._descendants():
            found[proc.pid] = proc
        for pid, started in list(self._known.items()):
            if pid in found:
                continue
            try:
                proc = psutil.Process(pid)
                if proc.create_time() == started:
                    found[pid] = proc
                else:
                    del self._known[pid]
            except psutil.Error:
                del self._known[pid]
        for proc in psutil.process_iter():
            if proc.pid in found:
                continue
            try:  # only processes younger than the tree can carry its mark
                if proc.create_time() >= self._born and proc.environ().get(MARK) == self.token:
                    found[proc.pid] = proc
            except psutil.Error:
                continue
        me = os.getpid()
        live = []
        for proc in found.values():
            try:
                if proc.pid != me and proc.status() != psutil.STATUS_ZOMBIE:
                    self._remember(proc)
                    live.append(proc)
            except psutil.Error:
                continue
        return live

    async def end(self, grace: float) -> int:
        """SIGTERM every member, SIGKILL the ones left after `grace` s; how many there were."""
        ended: set[int] = set()
        members = self.members()
        for rounds in range(5):  # a member may start others while it is being ended
            if not members:
                break
            ended.update(p.pid for p in members)
            _send(members, signals.SIGTERM if rounds == 0 else signals.SIGKILL)
            deadline = time.monotonic() + (grace if rounds == 0 else 1.0)
            while members and time.monotonic() < deadline:
                await anyio.sleep(0.02)
                members = _alive(members)
            _send(members, signals.SIGKILL)
            members = self.members()
        return len(ended)

    def kill(self) -> None:
        """SIGKILL every member now (when there is no time to wait)."""
        _send(self.members(), signals.SIGKILL)

    def _descendants(self) -> list[psutil.Process]:
        if self.root is None:
            return []
        try:
            root = psutil.Process(self.root)
            return [root, *root.children(recursive=True)]
        except psutil.Error:
            return []

    def _remember(self, proc: psutil.Process) -> None:
        try:
            self._known[proc.pid] = proc.create_time()
        except psutil.Error:
            pass


def running(pid: int) -> bool:
    """Whether `pid` is a live process (a zombie waiting to be reaped is not)."""
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def _send(procs: list[psutil.Process], sig: int) -> None:
    for proc in procs:
        try:
            proc.send_signal(sig)
        except psutil.Error:
            pass


def _alive(procs: list[psutil.Process]) -> list[psutil.Process]:
    live = []
    for proc in procs:
        try:
            if proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE:
                live.append(proc)
        except psutil.Error:
            continue
    return live
