"""Sends racing a restart: a client keeps sending while the engine stops (Ctrl-C, or
`swarm down`), while no engine runs, and while `swarm up --headless` starts again, from before
its socket exists until after it is ready.

Every send the engine accepted is typed exactly once, after the messages the journal already
held (the backlog a stopped engine left queued goes first); a send it refused has no journal
row. After `swarm down` the backlog is cancelled, as `swarm down` says (and says how many):
a cancelled message is never typed into the next run's agents.
"""

from __future__ import annotations

import re
import threading
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import pytest

from swarm_tui.testing import Headless, Sandbox, mock_agent, wait_until
from tests.faults.ledger import Ledger, account
from tests.faults.wire import journal_of, raw_request, summary

pytestmark = pytest.mark.integration

FLEET = "rw"
AGENTS = ["R0", "R1", "R2"]
BACKLOG = 3  # per agent, queued before the restart
OPEN = ("queued", "sending")
READY_LINE = "running headless"
# (phase: seconds between sends, most sends accepted in it): slow against a running engine,
# as fast as it goes while the engine stops, is absent or starts
PACE = {
    "running": (0.2, 3),
    "stopping": (0.005, 6),
    "stopped": (0.01, 0),
    "starting": (0.003, 9),
    "ready": (0.2, 3),
}


def journal(sandbox: Sandbox) -> list[dict[str, Any]]:
    return journal_of(sandbox, FLEET)


@dataclass
class Attempt:
    agent: str
    text: str
    phase: str
    accepted: bool
    error: str


@dataclass
class Racer:
    """Sends round-robin to the agents from its own thread, never the same text twice; what
    phase of the restart each send met is the phase the test set (or, once the new engine is
    started, whether it has said it is ready)."""

    sandbox: Sandbox
    phase: str = "running"
    owner: Headless | None = None  # the new engine, once started
    attempts: list[Attempt] = field(default_factory=list)
    error: BaseException | None = None
    stop: threading.Event = field(default_factory=threading.Event)
    finished: threading.Event = field(default_factory=threading.Event)

    def count(self, phase: str, accepted: bool = True) -> int:
        return sum(1 for a in list(self.attempts) if a.phase == phase and a.accepted == accepted)

    def current(self) -> str:
        if self.owner is not None:
            return "ready" if READY_LINE in self.owner.stdout() else "starting"
        return self.phase

    def start(self) -> threading.Thread:
        thread = threading.Thread(target=self._run, name="racer", daemon=True)
        thread.start()
        return thread

    def _run(self) -> None:
        n = 0
        try:
            while not self.stop.is_set():
                phase = self.current()
                pause, most = PACE[phase]
                if phase == "ready" and self.count("ready") >= most:
                    return  # done: the last sends met a ready engine
                if most and self.count(phase) >= most:
                    self.stop.wait(0.02)  # enough sends in this phase: wait for the next
                    continue
                agent = AGENTS[n % len(AGENTS)]
                text = f"new-{agent}-{n:03d}"
                n += 1
                reply, error = raw_request(
                    self.sandbox.socket_path(FLEET), {"op": "send", "to": [agent], "text": text}
                )
                ok = bool(reply and reply.get("ok"))
                if reply is not None and not ok:
                    error = str(reply.get("error"))
                self.attempts.append(Attempt(agent, text, phase, ok, error))
                self.stop.wait(pause)  # pacing of the loop, not a synchronisation
        except BaseException as exc:  # noqa: BLE001 - re-raised in the test's thread
            self.error = exc
        finally:
            self.finished.set()


@pytest.mark.parametrize("how", ["sigint", "down"])
def test_sends_racing_a_restart_are_typed_once_after_the_backlog(
    sandbox: Sandbox, ledger: Ledger, how: str
) -> None:
    layout = sandbox.layout(
        FLEET, *[mock_agent(a, "--work", "0", "--startup", "0.2") for a in AGENTS]
    )
    first = sandbox.start_headless(layout)
    first.wait_ready(30)
    owners = [first]

    def detail() -> str:
        return f"journal: {summary(journal(sandbox))}\n" + "\n".join(
            f"engine {i} (exit {o.proc.poll()}):\n{o.output()[-3000:]}"
            for i, o in enumerate(owners)
        )

    backlog = {a: [f"old-{a}-{i}" for i in range(BACKLOG)] for a in AGENTS}
    for i in range(BACKLOG):
        for agent in AGENTS:
            reply, error = raw_request(
                sandbox.socket_path(FLEET), {"op": "send", "to": [agent], "text": backlog[agent][i]}
            )
            assert reply and reply["ok"], (reply, error)
    wait_until(
        lambda: sum(r["status"] == "delivered" for r in journal(sandbox)) >= 2,
        30,
        "the backlog's delivery to begin",
        detail,
    )

    racer = Racer(sandbox)
    thread = racer.start()
    down = None
    try:
        wait_until(
            lambda: racer.count("running") >= PACE["running"][1],
            30,
            "sends to the running engine",
            detail,
        )
        racer.phase = "stopping"
        if how == "sigint":
            first.interrupt()
            code = first.wait(30)
        else:
            down = sandbox.swarm("down", str(layout), timeout=90)
            assert down.returncode == 0, (down.stdout, down.stderr)
            code = first.wait(30)
        assert code == 0, f"the engine exited {code} on {how}\n{detail()}"
        left = [r for r in journal(sandbox) if r["status"] in OPEN]
        if how == "sigint":  # the backlog the restart must type first
            assert left, f"nothing was left queued for the restart\n{detail()}"
        racer.phase = "stopped"
        wait_until(
            lambda: racer.count("stopped", accepted=False) >= 3,
            30,
            "sends to find no engine",
            detail,
        )
        again = sandbox.start_headless(layout)
        owners.append(again)
        racer.owner = again
        again.wait_ready(30)
        wait_until(racer.finished.is_set, 60, "the racing sends to end", detail)
        thread.join(10)
        if racer.error is not None:
            raise racer.error
        texts = {t for ts in backlog.values() for t in ts} | {a.text for a in racer.attempts}
        wait_until(
            lambda: not any(r["status"] in OPEN for r in journal(sandbox) if r["text"] in texts),
            120,
            "every journaled message to be settled",
            detail,
        )
    finally:
        racer.stop.set()

    rows = [r for r in journal(sandbox) if r["text"] in texts]
    by_text = {r["text"]: r for r in rows}
    received = {a: sandbox.received(a) for a in AGENTS}
    counts = Counter(t for got in received.values() for t in got)
    sent = {a: list(backlog[a]) for a in AGENTS}
    for attempt in racer.attempts:
        sent[attempt.agent].append(attempt.text)
    cancelled = {r["text"] for r in rows if r["status"] == "cancelled"}
    uncertain = {r["text"] for r in rows if r["status"] == "uncertain"}
    run = ledger.add(
        account(
            sent, received, uncertain=uncertain, journaled={r["text"] for r in rows} - cancelled
        )
    )
    phases = Counter((a.phase, a.accepted) for a in racer.attempts)
    where = (
        f"{how}: {len(left)} left queued by the stop, journal {summary(rows)}, "
        f"sends {dict(phases)}, "
        f"swarm down said {down.stdout.strip() if down else None!r}"
    )
    assert run.lost == run.duplicated == run.reordered == 0 and not run.problems, (
        f"{where}: {run.problems}\n{detail()}"
    )

    problems = []
    if racer.count("starting") < 1:
        problems.append("no send met the engine while it started (the race was not run)")
    for a in racer.attempts:
        row = by_text.get(a.text)
        if a.accepted and row is None:
            problems.append(f"{a.text!r} was accepted ({a.phase}) but has no journal row")
        if not a.accepted and row is not None:
            problems.append(
                f"{a.text!r} was refused ({a.phase}: {a.error}) but journaled as "
                f"#{row['id']} {row['status']}"
            )
        if (
            a.phase in ("starting", "ready")
            and row is not None
            and row["status"] not in ("delivered", "uncertain")
        ):
            problems.append(
                f"{a.text!r}, accepted by the new engine, is {row['status']} ({row['detail']})"
            )
    odd = [
        (r["id"], r["status"])
        for r in rows
        if r["status"] not in ("delivered", "uncertain", "cancelled")
    ]
    if odd:
        problems.append(f"rows neither delivered, uncertain nor cancelled: {odd}")
    if how == "sigint" and cancelled:
        problems.append(f"Ctrl-C cancelled messages: {sorted(cancelled)}")
    for text in cancelled:
        if counts[text]:
            problems.append(f"{text!r} is cancelled but arrived {counts[text]} times")
    if down is not None:
        said = re.search(r"(\d+) queued messages? cancelled", down.stdout)
        told = (int(said.group(1)) if said else 0) == len(cancelled)
        ledger.probe("swarm down says how many queued messages it cancelled", told)
        if not told:
            problems.append(
                f"swarm down cancelled {len(cancelled)} messages and said {down.stdout.strip()!r}"
            )
    print(where)
    assert not problems, f"{where}:\n" + "\n".join(problems) + "\n" + detail()
