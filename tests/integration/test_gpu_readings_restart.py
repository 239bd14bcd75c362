"""A host's GPU readings are one of the loops that must run all night: when the loop fails it
is said and started again, and the sidebar's bars come back."""

from __future__ import annotations

import os

import pytest

from swarm_tui.fleet import engine, link
from swarm_tui.testing import async_wait_until, mock_agent
from swarm_tui.testing.gpus import fake_nvidia_smi

pytestmark = pytest.mark.integration

FAKE_SMI = """#!/bin/sh
# a stand-in nvidia-smi: 2 GPUs, as `--query-gpu=... --format=csv,noheader,nounits` prints
printf '0, 97, 61000, 81920\\n1, 3, 1024, 81920\\n'
"""


async def test_failing_gpu_readings_are_restarted_and_said(
    sandbox, start_fleet, monkeypatch, tmp_path
) -> None:
    bindir = fake_nvidia_smi(tmp_path, FAKE_SMI)
    monkeypatch.setenv("PATH", f"{bindir}:{os.environ['PATH']}")
    monkeypatch.setattr(engine, "GPU_INTERVAL", 0.2)
    parse = link.parse_gpus
    failed: list[str] = []

    def once_broken(text: str) -> list[link.GpuStat]:
        if not failed:
            failed.append(text)
            raise RuntimeError("a reading no parser expected")
        return parse(text)

    monkeypatch.setattr(link, "parse_gpus", once_broken)
    run = await start_fleet(sandbox.layout("gpus", mock_agent("Ada")))
    fleet = run.fleet
    notices: list[str] = []
    told = fleet.listener.notice
    monkeypatch.setattr(fleet.listener, "notice", lambda text: (notices.append(text), told(text)))
    (local,) = fleet.links.values()
    await async_wait_until(lambda: failed, 10, "the injected failure")
    await async_wait_until(
        lambda: any(n.startswith(f"GPU readings of {local.name} failed") for n in notices),
        10,
        "a notice that the GPU readings failed and were restarted",
        lambda: repr(notices),
    )
    assert any("restarted" in n for n in notices), notices
    await async_wait_until(
        lambda: local.gpus is not None and [g.util for g in local.gpus] == [97, 3],
        10,
        "the restarted loop's readings",
        lambda: repr(local.gpus),
    )
