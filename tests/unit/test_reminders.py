"""Reminder timing with a controllable clock: every, idle (the stall watchdog), time of day;
repeats collapse while one waits; schedules survive a restart."""

from __future__ import annotations

import datetime as dt
import time
from pathlib import Path

import pytest

from swarm_tui.agents.base import AgentState
from swarm_tui.config.layout import load_layout
from swarm_tui.config.work import ReminderSpec
from swarm_tui.fleet.engine import Fleet
from swarm_tui.fleet.reminders import Reminders, next_time_of_day
from swarm_tui.fleet.store import Store


class Clock:
    def __init__(self, t: float) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


def fleet_with(tmp: Path, reminders: str) -> Fleet:
    path = tmp / "r.toml"
    path.write_text(
        'name = "r"\n[[agents]]\nname = "Ada"\nfocus = "the parser"\n'
        '[[agents]]\nname = "Bob"\nrole = "judge"\n' + reminders
    )
    return Fleet(load_layout(path), Store(tmp / "r.sqlite3"))


def sent(fleet: Fleet) -> list[tuple[str, str, str]]:
    return [(m.sender, m.recipient, m.text) for m in fleet.store.messages()]


@pytest.fixture
def clock() -> Clock:
    return Clock(dt.datetime(2026, 12, 2, 9, 0, 0).timestamp())


def test_every_fires_on_schedule_and_repeats_collapse(tmp_path: Path, clock: Clock) -> None:
    fleet = fleet_with(
        tmp_path,
        '[[reminders]]\nto = "Ada"\nevery = "30m"\ntext = "keep going on {focus}, {agent}"\n',
    )
    rem = Reminders(fleet, clock)
    rem.seed()
    assert rem.tick() == []
    clock.t += 29 * 60
    assert rem.tick() == []
    clock.t += 61
    assert rem.tick() == [(1, "Ada")]
    assert sent(fleet) == [("reminder:1", "Ada", "keep going on the parser, Ada")]
    # Ada is busy: the first is still queued, so the next one collapses into it
    clock.t += 30 * 60
    assert rem.tick() == []
    assert len(sent(fleet)) == 1
    fleet.store.mark(1, "delivered")
    clock.t += 30 * 60
    assert rem.tick() == [(1, "Ada")]


def test_idle_watchdog_fires_once_per_idle_stretch(tmp_path: Path, clock: Clock) -> None:
    fleet = fleet_with(tmp_path, '[[reminders]]\nto = "all"\nidle = "10m"\nskill = "stall"\n')
    rem = Reminders(fleet, clock)
    rem.seed()
    ada, bob = fleet.agents["Ada"], fleet.agents["Bob"]
    rem.state_changed(ada, AgentState.IDLE)
    rem.state_changed(bob, AgentState.WORKING)
    clock.t += 9 * 60
    assert rem.tick() == []
    assert rem.countdown(ada) == pytest.approx(60)
    assert rem.countdown(bob) is None
    clock.t += 61
    assert rem.tick() == [(1, "Ada")]
    assert sent(fleet)[0][2].startswith("Ada, you have been idle for a while.")
    fleet.store.mark(1, "delivered")
    clock.t += 60 * 60
    assert rem.tick() == []  # still the same idle stretch: once is enough
    rem.state_changed(ada, AgentState.WORKING)
    rem.state_changed(ada, AgentState.IDLE)
    clock.t += 11 * 60
    assert rem.tick() == [(1, "Ada")]


def test_time_of_day_and_role_targets(tmp_path: Path, clock: Clock) -> None:
    fleet = fleet_with(
        tmp_path, '[[reminders]]\nto = "role:judge"\nat = "09:30"\nskill = "extended-time"\n'
    )
    rem = Reminders(fleet, clock)
    rem.seed()
    clock.t += 29 * 60
    assert rem.tick() == []
    clock.t += 60
    assert rem.tick() == [(1, "Bob")]
    (row,) = fleet.store.reminders()
    assert row.next_due == next_time_of_day("09:30", clock.t)
    assert dt.datetime.fromtimestamp(row.next_due).day == 3  # tomorrow


def test_schedules_survive_a_restart(tmp_path: Path, clock: Clock) -> None:
    text = '[[reminders]]\nto = "Ada"\nevery = "1h"\ntext = "hi"\n'
    fleet = fleet_with(tmp_path, text)
    rem = Reminders(fleet, clock)
    rem.seed()
    due = fleet.store.reminders()[0].next_due
    rem.snooze(1, 600)
    fleet.store.close()
    clock.t += 5 * 60  # swarm restarts later: the schedule is the journal's, not a new one
    again = fleet_with(tmp_path, text)
    rem2 = Reminders(again, clock)
    rem2.seed()
    (row,) = again.store.reminders()
    assert row.next_due == due + 600


def test_pause_resume_fire_now_and_bad_targets(tmp_path: Path, clock: Clock) -> None:
    fleet = fleet_with(tmp_path, "")
    rem = Reminders(fleet, clock)
    rid = rem.add(ReminderSpec(to="Ada", every="5m", text="ping"))
    rem.pause(rid, True)
    clock.t += 3600
    assert rem.tick() == []
    assert rem.fire_now(rid) == [(rid, "Ada")]
    rem.pause(rid, False)
    fleet.store.mark(1, "delivered")
    assert rem.tick() == [(rid, "Ada")]
    with pytest.raises(Exception, match="no agent named 'Zed'"):
        rem.add(ReminderSpec(to="Zed", every="5m", text="x"))
    with pytest.raises(Exception, match="no reminder #99"):
        rem.fire_now(99)


def test_reminder_specs_are_checked() -> None:
    with pytest.raises(ValueError, match="exactly one of `every`, `idle`, `at`"):
        ReminderSpec(every="5m", idle="5m", text="x")
    with pytest.raises(ValueError, match="HH:MM"):
        ReminderSpec(at="25:00", text="x")
    with pytest.raises(ValueError, match="not a duration"):
        ReminderSpec(every="soon", text="x")


def test_a_scheduled_fresh_start(tmp_path: Path, clock: Clock, monkeypatch) -> None:
    fleet = fleet_with(tmp_path, '[[reminders]]\nto = "Ada"\nevery = "4h"\naction = "fresh"\n')
    started: list[str] = []
    monkeypatch.setattr(fleet, "fresh", lambda name, handoff=True: started.append(name))
    rem = Reminders(fleet, clock)
    rem.seed()
    clock.t += 4 * 3600
    assert rem.tick() == [(1, "Ada")]
    assert started == ["Ada"] and sent(fleet) == []


def test_a_link_outage_does_not_end_an_idle_stretch(tmp_path: Path) -> None:
    """Idle, unreachable for a while, idle again: the same stall. Its queued reminder is
    not cancelled as if the agent had worked, and the outage does not use up its one
    reminder per stretch (it fires once the agent is back)."""
    clock = Clock(time.time())  # messages are stamped with the wall clock
    fleet = fleet_with(tmp_path, '[[reminders]]\nto = "Ada"\nidle = "10m"\nskill = "stall"\n')
    rem = Reminders(fleet, clock)
    rem.seed()
    ada = fleet.agents["Ada"]
    rem.state_changed(ada, AgentState.IDLE)
    clock.t += 11 * 60
    assert rem.tick() == [(1, "Ada")]
    (stall,) = fleet.store.messages()
    rem.state_changed(ada, AgentState.UNREACHABLE)
    clock.t += 60
    rem.state_changed(ada, AgentState.IDLE)
    assert rem.obsolete(ada, stall) == ""

    # a second stretch that goes unreachable before its reminder is due
    fleet.store.mark(stall.id, "delivered")
    rem.state_changed(ada, AgentState.WORKING)
    rem.state_changed(ada, AgentState.IDLE)
    clock.t += 5 * 60
    rem.state_changed(ada, AgentState.UNREACHABLE)
    ada.tracker.state = AgentState.UNREACHABLE
    clock.t += 6 * 60
    assert rem.tick() == []  # not typed into a host that is down, and not used up
    ada.tracker.state = AgentState.IDLE
    rem.state_changed(ada, AgentState.IDLE)
    assert rem.tick() == [(1, "Ada")]
