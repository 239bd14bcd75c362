"""A review whose message to the judge failed says so as a review, with the message and why:
it said `Judge: fresh start stopped: message failed`, with no fresh start anywhere."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import pytest

from swarm_tui.errors import SwarmError
from swarm_tui.fleet.fresh import settled


def parts(status: str, detail: str) -> tuple[Any, Any]:
    row = SimpleNamespace(status=status, detail=detail)
    store = SimpleNamespace(message=lambda _id: row)
    agent = SimpleNamespace(
        name="Judge", tracker=SimpleNamespace(ready=True), changed=asyncio.Event()
    )
    return store, agent


async def test_a_failed_review_message_is_said_as_a_review() -> None:
    store, agent = parts("failed", "text still in the input box after one rescue Enter")
    with pytest.raises(SwarmError) as err:
        await settled(store, agent, 53, 5.0, what="review")
    assert str(err.value) == (
        "Judge: review stopped: message #53 failed (text still in the "
        "input box after one rescue Enter)"
    )


async def test_a_fresh_start_still_says_fresh_start() -> None:
    store, agent = parts("uncertain", "")
    with pytest.raises(SwarmError, match=r"^Judge: fresh start stopped: message #7 uncertain$"):
        await settled(store, agent, 7, 5.0)
