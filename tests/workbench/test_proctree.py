"""The process tree's clock: members are told from older processes by their create time."""

from __future__ import annotations

import subprocess

import psutil

from workbench.proctree import ProcessTree, process_clock


def test_a_process_started_now_is_started_now_on_the_trees_clock() -> None:
    # The wall clock drifts from the one create times are on (0.7 s on a box up nine
    # hours): measured on the wall clock, this fails there.
    child = subprocess.Popen(["sleep", "5"])
    try:
        started = psutil.Process(child.pid).create_time()
        assert abs(started - process_clock()) < 0.5
    finally:
        child.kill()
        child.wait()


def test_a_detached_member_is_found_by_its_mark_alone() -> None:
    tree = ProcessTree("test")
    # Not a child of the tree's root (there is none): only the mark in its environment
    # and its create time make it a member.
    child = subprocess.Popen(["sleep", "5"], env=tree.env({"PATH": "/usr/bin:/bin"}))
    try:
        assert [proc.pid for proc in tree.members()] == [child.pid]
    finally:
        child.kill()
        child.wait()
