"""The workbench's own environment, with its secrets moved out of reach of its children.

A command the model runs gets an allow-listed environment (`workbench.tools.command_env`), but
it can read its parent's: `/proc/$PPID/environ` (and `ps eww`) show the environment
the workbench was *started* with, and `/proc/$PPID/cmdline` its arguments
(`--api-key`). Deleting a variable from `os.environ` does not change either: the
kernel reads them from the process's initial stack, which `unsetenv` never touches.

So at start-up (`hold_environment`) every variable whose name says it is a secret is
moved out of `os.environ` into this module's memory, and its value is overwritten
in place in the initial environment and argument areas (through `/proc/self/mem`,
so a bad address is an error, never a crash). `hold_values` does the same for the
values the run learns later (a profile's key from a variable with an ordinary name,
a key given on the command line). The process is also made non-dumpable, so
processes of the same user that are not root cannot read its memory, environment or
file descriptors through `/proc` or attach a debugger (root still can).

Whoever needs a held value asks `environment()` (`os.environ` plus what is held):
the provider settings, `--pass-env`, the proxy's upstream key, redaction.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import re
import sys
from collections.abc import Iterable, MutableMapping

SECRET_NAME = re.compile(
    r"(^|_)(API_?KEY|KEY|TOKEN|SECRET|PASSWORD|PASSWD|PASS|CREDENTIALS?|PAT)(_|$)", re.I
)
"""Environment variable names whose values are treated as secrets: one `_`-separated
word of the name says so (`OPENAI_API_KEY`, `GH_TOKEN`, `AWS_SECRET_ACCESS_KEY`,
`DB_PASSWORD`), so `SSH_AUTH_SOCK` or `GNOME_KEYRING_CONTROL` are not."""
MIN_WIPE = 6
"""Shorter values are left in the process's memory areas: overwriting every
occurrence of a short value would damage unrelated arguments and variables."""
_PR_SET_DUMPABLE = 4

_held: dict[str, str] = {}
_owner = False
"""Whether the workbench owns this process (its command line started it): only then
does it take variables out of `os.environ` (an embedding program keeps its own)."""


def environment() -> dict[str, str]:
    """`os.environ`, plus the variables moved out of it (a later `os.environ` value wins)."""
    return {**_held, **os.environ}


def held() -> dict[str, str]:
    """Name -> value of every variable moved out of `os.environ`."""
    return dict(_held)


def hold_environment(
    names: Iterable[str] = (), environ: MutableMapping[str, str] | None = None
) -> list[str]:
    """Move every secret-named variable (and each of `names`) out of the environment.

    Their values stay readable through `environment()`; the process's initial
    environment and argument areas no longer show them, and the process is made
    non-dumpable. Returns the names moved (in the order found).
    """
    global _owner
    env = os.environ if environ is None else environ
    wanted = set(names)
    moved = [name for name in env if name in wanted or SECRET_NAME.search(name)]
    for name in moved:
        _held[name] = env.pop(name)
    if environ is None:
        _owner = True
        wipe_from_process(moved, [_held[name] for name in moved])
        forbid_inspection()
    return moved


def hide_environment() -> None:
    """For a program that embeds the workbench: its secret-named variables stay in its
    `os.environ` and its children's (they are its own), but the process's initial
    environment area no longer shows them, and the process is made non-dumpable."""
    secrets = {name: v for name, v in os.environ.items() if SECRET_NAME.search(name)}
    values = [v for v in secrets.values() if len(v) >= MIN_WIPE]
    for name, value in os.environ.items():
        if name in secrets or any(v in value for v in values):
            os.putenv(name, value)  # the C environment now points at a copy of its own
    wipe_from_process(secrets, values)
    forbid_inspection()


def hold_values(values: Iterable[str]) -> None:
    """Move every variable holding one of `values` out of `os.environ`, and overwrite
    `values` wherever the process's initial environment and arguments show them.
    Nothing happens unless `hold_environment` took this process's environment."""
    if not _owner:
        return
    wanted = [value for value in values if isinstance(value, str) and len(value) >= MIN_WIPE]
    if not wanted:
        return
    taken = {name: value for name, value in os.environ.items() if any(w in value for w in wanted)}
    for name in taken:
        _held[name] = os.environ.pop(name)
    wipe_from_process(taken, [*wanted, *taken.values()])
    forbid_inspection()


def wipe_from_process(names: Iterable[str], values: Iterable[str]) -> int:
    """Overwrite secrets with zero bytes where the kernel shows the process's initial
    environment and arguments (`/proc/PID/environ` and `/proc/PID/cmdline`).

    In the environment area, the value of each variable of `names`, and of each
    variable whose value holds one of `values` (never a piece of another variable,
    which the C library may still read); in the argument area, every occurrence of
    one of `values` (`--api-key KEY`). Returns how many stretches were overwritten (0
    where there is no Linux `/proc`)."""
    encoded = [os.fsencode(v) for v in values if isinstance(v, str)]
    needles = sorted({v for v in encoded if len(v) >= MIN_WIPE}, key=len, reverse=True)
    wanted = {os.fsencode(name) for name in names}
    areas = _memory_areas()
    if not areas or not (needles or wanted):
        return 0
    count = 0
    try:
        with open("/proc/self/mem", "r+b", buffering=0) as mem:
            for (start, end), is_env in zip(areas, (False, True), strict=True):
                mem.seek(start)
                blob = mem.read(end - start)
                spans = _env_values(blob, wanted, needles) if is_env else _found(blob, needles)
                for at, length in spans:
                    mem.seek(start + at)
                    mem.write(b"\0" * length)
                    count += 1
    except OSError:
        return count
    return count


def _env_values(blob: bytes, names: set[bytes], values: list[bytes]) -> list[tuple[int, int]]:
    """(offset, length) of the value of each `NAME=VALUE` entry of `blob` to overwrite."""
    spans = []
    at = 0
    for entry in blob.split(b"\0"):
        name, equals, value = entry.partition(b"=")
        if equals and value and (name in names or any(v in value for v in values)):
            spans.append((at + len(name) + 1, len(value)))
        at += len(entry) + 1
    return spans


def _found(blob: bytes, values: list[bytes]) -> list[tuple[int, int]]:
    """(offset, length) of every occurrence of each of `values` in `blob`."""
    spans = []
    for value in values:
        at = blob.find(value)
        while at >= 0:
            spans.append((at, len(value)))
            at = blob.find(value, at + len(value))
    return spans


def _memory_areas() -> list[tuple[int, int]]:
    """(start, end) of the argument area, then of the environment area, from
    `/proc/self/stat` (none when it cannot be read)."""
    try:
        with open("/proc/self/stat", encoding="ascii") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return []
    # fields[0] is field 3 (state); arg_start..env_end are fields 48 to 51
    if len(fields) < 49:
        return []
    arg_start, arg_end, env_start, env_end = (int(fields[n - 3]) for n in (48, 49, 50, 51))
    if not (0 < arg_start <= arg_end and 0 < env_start <= env_end):
        return []
    return [(arg_start, arg_end), (env_start, env_end)]


def forbid_inspection() -> None:
    """Make the process non-dumpable: its `/proc` files (environ, mem, fd) become root's
    and a debugger of the same user cannot attach. Linux only; elsewhere nothing."""
    if not sys.platform.startswith("linux"):
        return
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)


def take(name: str) -> str | None:
    """The value of the variable `name` (held or not), from now on held like a secret's."""
    value = environment().get(name)
    if value:
        hold_values([value])
    return value
