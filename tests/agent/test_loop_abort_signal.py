"""AbortController / AbortSignal: the latch, reasons, listeners, waiting, linking."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from workbench.agent import AbortController, AbortError, AbortSignal, ToolCallAborts


def test_signal_starts_clear_and_latches() -> None:
    controller = AbortController()
    signal = controller.signal
    assert not signal.aborted and signal.reason is None
    signal.throw_if_aborted()
    controller.abort()
    assert signal.aborted and signal.reason == "Operation aborted"
    controller.abort("again")  # a latch: the first reason stays
    assert signal.reason == "Operation aborted"
    with pytest.raises(AbortError, match="Operation aborted") as info:
        signal.throw_if_aborted()
    assert info.value.reason == "Operation aborted"


def test_abort_reason_is_kept() -> None:
    controller = AbortController()
    controller.abort({"why": "user"})
    assert controller.signal.reason == {"why": "user"}
    assert AbortError().reason is None and str(AbortError()) == "Operation aborted"


def test_listeners_run_once_in_order_and_can_be_removed() -> None:
    controller = AbortController()
    calls: list[str] = []
    controller.signal.add_listener(lambda r: calls.append(f"a:{r}"))
    remove_b = controller.signal.add_listener(lambda r: calls.append(f"b:{r}"))
    controller.signal.add_listener(lambda r: calls.append(f"c:{r}"))
    remove_b()
    remove_b()  # idempotent
    controller.abort("stop")
    controller.abort("stop")
    assert calls == ["a:stop", "c:stop"]
    late: list[Any] = []
    remover = controller.signal.add_listener(late.append)  # already aborted: at once
    assert late == ["stop"]
    remover()


def test_a_listener_may_remove_other_listeners_while_firing() -> None:
    controller = AbortController()
    calls: list[str] = []
    removers: list[Any] = []
    controller.signal.add_listener(lambda r: [f() for f in removers])
    removers.append(controller.signal.add_listener(lambda r: calls.append("second")))
    controller.abort()
    assert calls == ["second"]  # listeners registered at abort time all run


def test_child_controllers_follow_the_parent_but_not_the_other_way() -> None:
    parent = AbortController()
    child = AbortController(parent.signal)
    sibling = AbortController(parent.signal)
    child.abort("only me")
    assert child.signal.aborted and not parent.signal.aborted and not sibling.signal.aborted
    parent.abort("everyone")
    assert sibling.signal.reason == "everyone" and child.signal.reason == "only me"


def test_unlinked_child_ignores_the_parent() -> None:
    parent = AbortController()
    child = AbortController(parent.signal)
    child.unlink()
    parent.abort()
    assert not child.signal.aborted


def test_many_linked_children_unlink_cheaply() -> None:
    parent = AbortController()
    children = [AbortController(parent.signal) for _ in range(20000)]
    for child in children:  # would be quadratic with a list of callbacks
        child.unlink()
    parent.abort()
    assert not any(c.signal.aborted for c in children)


async def test_wait_returns_when_aborted() -> None:
    controller = AbortController()
    woke: list[bool] = []

    async def waiter() -> None:
        await controller.signal.wait()
        woke.append(True)

    async with anyio.create_task_group() as tg:
        tg.start_soon(waiter)
        tg.start_soon(waiter)
        await anyio.sleep(0.01)
        assert woke == []
        controller.abort()
    assert woke == [True, True]
    with anyio.fail_after(1):
        await controller.signal.wait()  # already aborted: at once


async def test_cancelled_wait_leaves_no_waiter_behind() -> None:
    signal = AbortSignal()
    with anyio.move_on_after(0.01):
        await signal.wait()
    assert signal._waiters == []


def test_tool_call_aborts_registry() -> None:
    run = AbortController()
    aborts = ToolCallAborts()
    a = aborts.open("a", run.signal)
    b = aborts.open("b", run.signal)
    assert "a" in aborts and aborts.abort("a") and a.signal.reason == "Tool call aborted by user"
    assert not b.signal.aborted
    aborts.close("a")
    assert "a" not in aborts and not aborts.abort("a")
    run.abort()
    assert b.signal.aborted
    aborts.close("b")
    aborts.close("b")
    c = aborts.open("c", None)
    assert aborts.abort("c", "reason given") and c.signal.reason == "reason given"


def test_closing_one_of_two_calls_with_the_same_id_keeps_the_other_linked() -> None:
    run = AbortController()
    aborts = ToolCallAborts()
    first = aborts.open("dup", run.signal)
    second = aborts.open("dup", run.signal)
    aborts.close("dup", first)
    assert "dup" in aborts  # still the second call's
    run.abort("stop")
    assert second.signal.reason == "stop" and not first.signal.aborted
    aborts.close("dup", second)
    assert "dup" not in aborts
