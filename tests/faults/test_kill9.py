"""kill -9 of the engine at random points of a burst: every message the engine journaled is
typed into its agent exactly once and in order; one caught mid-typing is `uncertain` and never
typed again; a send the engine did not journal fails, and says so.

Budget (measured on the 2-core box): a headless engine types about one message every 2 s
into each mock agent however fast the mock is (an agent off screen is re-read once a second,
and the mock's idle must hold 0.8 s), and every restart costs each agent ~1.5 s before it is
ready again. 500 messages per seed would be ~200 s a seed, over half an hour for 10 seeds;
even 500 spread over the seeds (50 a seed, 10 per agent) measured ~21 s a seed, ~215 s for the
file. So each seed sends 35 messages (7 to each of 5 agents; 350 over the 10 seeds) and kills
the engine 3 times at random points (while a message is being typed, or anywhere after a
random number of deliveries), and after a kill, 3 times in 10, once more while the new engine
starts. Measured: 14-18 s a seed, ~170 s for the whole file.
"""

from __future__ import annotations

import os
import random
import re
import signal
import subprocess
import threading
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from swarm_tui.testing import Headless, Sandbox, holds, mock_agent, swarm_argv, wait_until
from tests.faults.ledger import Ledger, account
from tests.faults.wire import journal_of, raw_request, summary

pytestmark = pytest.mark.integration

SEEDS = range(10)
AGENTS = [f"K{i}" for i in range(5)]
PER_AGENT = 7  # per seed: 35 messages a seed, 350 over the 10 seeds
KILLS = 3  # per seed
CLI_EVERY = 5  # every 5th send goes through the `swarm send` CLI, the rest on a raw socket
FLEET = "k9"
OPEN = ("queued", "sending")
# an error that tells the sender its message was not recorded (it may resend it)
NOT_RECORDED = re.compile(
    r"no swarm is running|nothing was (done|recorded|sent)|not (been )?"
    r"(recorded|journaled|queued|sent)"
)
# an error for a send the engine may or may not have journaled before it died
MAYBE_RECORDED = re.compile(
    r"may (or may not )?have been (recorded|journaled|queued|sent)|"
    r"`swarm messages`"
)


# ---------------------------------------------------------------------------- helpers


def engine_answers(sandbox: Sandbox) -> bool:
    reply, _ = raw_request(sandbox.socket_path(FLEET), {"op": "ping"}, timeout=2)
    return bool(reply and reply.get("ok"))


def state(sandbox: Sandbox, agent: str) -> str | None:
    reply, _ = raw_request(sandbox.socket_path(FLEET), {"op": "ls"}, timeout=5)
    if not reply or not reply.get("ok"):
        return None
    return next((a["state"] for a in reply["agents"] if a["name"] == agent), None)


def journal(sandbox: Sandbox) -> list[dict[str, Any]]:
    return journal_of(sandbox, FLEET)


@dataclass
class Failed:
    agent: str
    text: str
    via: str  # "cli" or "raw"
    error: str


@dataclass
class Sender:
    """Sends the burst from its own thread: per agent in order, texts unique; a send that
    fails is recorded (never retried: its text is not sent again) and the sender waits for
    the engine to answer again before it goes on."""

    sandbox: Sandbox
    plan: list[tuple[str, str, float]]  # (agent, text, pause before it)
    sent: dict[str, list[str]] = field(default_factory=lambda: {a: [] for a in AGENTS})
    failed: list[Failed] = field(default_factory=list)
    error: BaseException | None = None
    stop: threading.Event = field(default_factory=threading.Event)
    done: threading.Event = field(default_factory=threading.Event)

    def start(self) -> threading.Thread:
        thread = threading.Thread(target=self._run, name="burst", daemon=True)
        thread.start()
        return thread

    def _run(self) -> None:
        try:
            for n, (agent, text, pause) in enumerate(self.plan):
                if pause and self.stop.wait(pause):  # pacing of the burst, not a sync
                    return
                self.sent[agent].append(text)
                if n % CLI_EVERY == 0:
                    result = self.sandbox.swarm("send", "--fleet", FLEET, agent, "--", text)
                    ok, via = result.returncode == 0, "cli"
                    error = (result.stderr or result.stdout).strip()
                    ok = ok and "queued" in result.stdout
                else:
                    reply, error = raw_request(
                        self.sandbox.socket_path(FLEET), {"op": "send", "to": [agent], "text": text}
                    )
                    via = "raw"
                    ok = bool(reply and reply.get("ok"))
                    if reply is not None and not ok:
                        error = str(reply.get("error"))
                if not ok:
                    self.failed.append(Failed(agent, text, via, error))
                    wait_until(
                        lambda: self.stop.is_set() or engine_answers(self.sandbox),
                        60,
                        "the engine to answer again after a failed send",
                    )
        except BaseException as exc:  # noqa: BLE001 - re-raised in the test's thread
            self.error = exc
        finally:
            self.done.set()


def burst_plan(rng: random.Random, seed: int) -> list[tuple[str, str, float]]:
    """Half the messages at once (a backlog in every queue), the rest paced over the time
    the kills happen in, so that some sends meet a dead or starting engine."""
    texts = [(a, f"s{seed}-{a}-{i:03d}") for i in range(PER_AGENT) for a in AGENTS]
    rng.shuffle(texts)  # per agent the order is the order sent, not the order planned
    half = len(texts) // 2
    return [(a, t, 0.0 if n < half else rng.uniform(0.0, 0.6)) for n, (a, t) in enumerate(texts)]


# ---------------------------------------------------------------------------- the test
@pytest.mark.parametrize("seed", SEEDS)
def test_kill9_at_random_points_of_a_burst(sandbox: Sandbox, ledger: Ledger, seed: int) -> None:
    rng = random.Random(seed)
    layout = sandbox.layout(
        FLEET, *[mock_agent(a, "--work", "0", "--startup", "0.2") for a in AGENTS]
    )
    owners: list[Headless] = [sandbox.start_headless(layout)]
    owners[0].wait_ready(30)

    def outputs() -> str:
        rows = journal(sandbox)
        return f"journal: {summary(rows)}\n" + "\n".join(
            f"engine {i} (exit {o.proc.poll()}):\n{o.output()[-3000:]}"
            for i, o in enumerate(owners)
        )

    sender = Sender(sandbox, burst_plan(rng, seed))
    thread = sender.start()
    total = len(AGENTS) * PER_AGENT
    thresholds = sorted(rng.sample(range(1, int(total * 0.8)), KILLS))
    kills: list[str] = []

    def kill(mode: str) -> None:
        assert owners[-1].proc.poll() is None, "an engine died by itself\n" + outputs()
        kills.append(f"{mode}@{summary(journal(sandbox))}")
        owners[-1].kill9()
        owners.append(sandbox.start_headless(layout))

    def alive() -> bool:
        return owners[-1].proc.poll() is None

    def delivered() -> int:
        return sum(r["status"] == "delivered" for r in journal(sandbox))

    try:
        for threshold in thresholds:
            wait_until(
                lambda: delivered() >= threshold,  # noqa: B023 - used at once
                90,
                f"{threshold} messages delivered",
                outputs,
            )
            if rng.random() < 0.5:  # the moment a message is being typed
                wait_until(
                    lambda: (
                        any(r["status"] == "sending" for r in journal(sandbox))
                        or (
                            sender.done.is_set()
                            and not any(r["status"] in OPEN for r in journal(sandbox))
                        )
                    ),
                    60,
                    "a message being typed",
                    outputs,
                    interval=0.01,
                )
                kill("typing")
            else:  # anywhere: waiting for a ready box, pasting, verifying, idle
                holds(alive, rng.uniform(0.0, 1.5), "the engine to keep running", outputs)
                kill("anywhere")
            if rng.random() < 0.3:  # and again while it starts, re-attaches, resumes
                holds(alive, rng.uniform(0.0, 0.8), "the engine to keep running", outputs)
                kill("starting")
        owners[-1].wait_ready(30)
        wait_until(sender.done.is_set, 120, "the burst to be sent", outputs)
        thread.join(10)
        if sender.error is not None:
            raise sender.error
        mine = {t for texts in sender.sent.values() for t in texts}
        wait_until(
            lambda: not any(r["status"] in OPEN for r in journal(sandbox) if r["text"] in mine),
            150,
            "every journaled message to be settled",
            outputs,
        )
        assert owners[-1].proc.poll() is None, "the last engine died by itself\n" + outputs()
    finally:
        sender.stop.set()

    rows = [r for r in journal(sandbox) if r["text"] in mine]
    received = {a: sandbox.received(a) for a in AGENTS}
    uncertain = {r["text"] for r in rows if r["status"] == "uncertain"}
    run = ledger.add(
        account(sender.sent, received, uncertain=uncertain, journaled={r["text"] for r in rows})
    )
    where = (
        f"seed {seed}, kills {kills}, {len(sender.failed)} sends failed, journal {summary(rows)}"
    )
    assert run.lost == run.duplicated == run.reordered == 0 and not run.problems, (
        f"{where}: {run.problems}\n{outputs()}"
    )

    problems = []
    counts = Counter(t for got in received.values() for t in got)
    by_text = {r["text"]: r for r in rows}
    odd = [
        (r["id"], r["status"], r["detail"])
        for r in rows
        if r["status"] not in ("delivered", "uncertain")
    ]
    if odd:
        problems.append(f"rows neither delivered nor uncertain: {odd}")
    for r in rows:
        if r["status"] == "delivered" and counts[r["text"]] != 1:
            problems.append(
                f"#{r['id']} {r['text']!r} is delivered but arrived {counts[r['text']]} times"
            )
    for f in sender.failed:
        row = by_text.get(f.text)
        if row is None:
            # an engine killed after reading the request and before answering: the client
            # cannot know, and must say that it may not have been recorded
            if f.via == "cli" and not (
                NOT_RECORDED.search(f.error) or MAYBE_RECORDED.search(f.error)
            ):
                problems.append(
                    f"{f.via} send of {f.text!r} was not journaled, and its error "
                    f"says neither that nor that it may not be: {f.error!r}"
                )
        else:
            if counts[f.text] != 1 and row["status"] != "uncertain":
                problems.append(
                    f"{f.via} send of {f.text!r} failed ({f.error!r}) but was "
                    f"journaled (#{row['id']} {row['status']}) and arrived "
                    f"{counts[f.text]} times"
                )
            if f.via == "cli" and NOT_RECORDED.search(f.error):
                problems.append(
                    f"{f.via} send of {f.text!r} was journaled (#{row['id']}), but "
                    f"its error says it was not: {f.error!r}"
                )
    ledger.probe(f"kill -9 seed {seed}: failed sends unjournaled or delivered once", not problems)
    shown = "\n".join(o.output() for o in owners)
    unshown = [
        r["id"]
        for r in rows
        if r["status"] == "uncertain" and not re.search(rf"#{r['id']}\b.*uncertain", shown)
    ]
    ledger.probe(
        f"kill -9 seed {seed}: uncertain messages shown in the engine's output", not unshown
    )
    print(where, [(f.via, f.text in by_text, f.error) for f in sender.failed])
    assert not problems, f"{where}:\n" + "\n".join(problems)


def test_a_message_caught_mid_typing_is_uncertain_shown_and_never_retyped(
    sandbox: Sandbox, ledger: Ledger
) -> None:
    """kill -9 exactly while a message is `sending`: after the restart it is uncertain, the
    user is told (the engine's output names it), and it is never typed again."""
    layout = sandbox.layout(FLEET, mock_agent("K0", "--work", "0", "--startup", "0.2"))
    owner = sandbox.start_headless(layout)
    owner.wait_ready(30)
    texts = [f"mid-{i}" for i in range(4)]
    for text in texts:
        reply, error = raw_request(
            sandbox.socket_path(FLEET), {"op": "send", "to": ["K0"], "text": text}
        )
        assert reply and reply["ok"], (reply, error)
    row = wait_until(
        lambda: next((r for r in journal(sandbox) if r["status"] == "sending"), None),
        30,
        "a message being typed",
        owner.output,
        interval=0.005,
    )
    assert row is not None
    owner.kill9()
    caught = next(r for r in journal(sandbox) if r["id"] == row["id"])
    assert caught["status"] == "sending", f"the kill came too late: {caught}"
    again = sandbox.start_headless(layout)
    again.wait_ready(30)
    wait_until(
        lambda: all(r["status"] not in OPEN for r in journal(sandbox)),
        60,
        "every message to be settled",
        again.output,
    )
    rows = {r["id"]: r for r in journal(sandbox)}
    got = sandbox.received("K0")
    run = ledger.add(
        account(
            {"K0": texts},
            {"K0": got},
            uncertain={r["text"] for r in rows.values() if r["status"] == "uncertain"},
        )
    )
    assert run.lost == run.duplicated == run.reordered == 0 and not run.problems, run.problems
    assert rows[row["id"]]["status"] == "uncertain", rows[row["id"]]
    assert got.count(row["text"]) <= 1, got
    # and it stays settled: the agent is ready again and nothing more is typed
    wait_until(lambda: state(sandbox, "K0") == "idle", 10, "K0 to be idle again", again.output)
    holds(lambda: sandbox.received("K0") == got, 1.0, "nothing more to be typed", again.output)
    out = again.output()
    shown = re.search(rf"#{row['id']}\b.*uncertain", out) is not None
    ledger.probe("uncertain after kill -9 shown in the restarted engine's output", shown)
    assert shown, (
        f"message #{row['id']} is uncertain in the journal, but the restarted "
        f"engine never told the user:\n{out}"
    )


def test_a_send_to_a_dead_engine_says_nothing_was_recorded(
    sandbox: Sandbox, ledger: Ledger
) -> None:
    """After kill -9 the socket file is left behind: `swarm send` fails in one line that
    says no swarm runs (so nothing was recorded), and the journal has no row for it."""
    layout = sandbox.layout(FLEET, mock_agent("K0"))
    owner = sandbox.start_headless(layout)
    owner.wait_ready(30)
    owner.kill9()
    assert sandbox.socket_path(FLEET).exists(), "kill -9 cannot remove the socket file"
    result = sandbox.swarm("send", "K0", "never recorded")
    said = result.returncode != 0 and NOT_RECORDED.search(result.stderr) is not None
    ledger.probe("send to a kill -9'd engine says nothing was recorded", said)
    assert said, (result.returncode, result.stdout, result.stderr)
    assert [r for r in journal(sandbox) if r["text"] == "never recorded"] == []


def test_a_send_the_engine_died_before_answering_says_what_became_of_it(
    sandbox: Sandbox, ledger: Ledger
) -> None:
    """The engine accepts nothing (stopped), `swarm send` has written its request and waits
    for the answer, then the engine is killed: the CLI fails, the journal has no row, and its
    error must not leave the user guessing whether the message was recorded (one that was
    not may be sent again; one that may have been must be checked first)."""
    layout = sandbox.layout(FLEET, mock_agent("K0"))
    owner = sandbox.start_headless(layout)
    owner.wait_ready(30)
    owner.proc.send_signal(signal.SIGSTOP)
    try:
        cli = subprocess.Popen(
            [*swarm_argv(), "send", "K0", "asked of a dying swarm"],
            env=sandbox.env,
            cwd=sandbox.files,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

        def waiting_for_the_answer() -> bool:
            try:
                fds = [
                    os.readlink(f"/proc/{cli.pid}/fd/{fd}")
                    for fd in os.listdir(f"/proc/{cli.pid}/fd")
                ]
                wchan = Path(f"/proc/{cli.pid}/wchan").read_text()
            except OSError:
                return False
            # blocked on its socket (a timed recv polls): connected, request written
            return any(f.startswith("socket:") for f in fds) and (
                "poll" in wchan or "unix_stream" in wchan
            )

        wait_until(
            waiting_for_the_answer,
            20,
            "`swarm send` to wait for the engine's answer",
            lambda: f"cli exit {cli.poll()}",
        )
        holds(waiting_for_the_answer, 0.3, "`swarm send` to keep waiting for the answer")
    finally:
        owner.kill9()  # SIGKILL ends a stopped process too
    out, err = cli.communicate(timeout=30)
    rows = [r for r in journal(sandbox) if r["text"] == "asked of a dying swarm"]
    assert cli.returncode != 0, (out, err)
    assert rows == [], f"the stopped engine journaled it after all: {rows}"
    said = NOT_RECORDED.search(err) is not None or MAYBE_RECORDED.search(err) is not None
    ledger.probe("send whose engine died before answering says whether it was recorded", said)
    assert said, f"the error does not say whether the message was recorded: {err.strip()!r}"
