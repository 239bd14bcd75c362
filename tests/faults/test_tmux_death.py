"""The fleet's tmux server dies (`tmux kill-server`) in the middle of a burst.

What should happen, and what these tests hold the product to:
- the headless engine exits non-zero, in words that say tmux died, not the words of a
  deliberate `swarm down` (which exits 0 and says so: the control test below);
- nothing queued is silently lost: every row the dead engine left is `delivered` only if it
  arrived (once), else still open (queued / sending) or `uncertain` in the journal;
- the next `swarm up` starts new agents (their conversations died with tmux): each new
  agent's initial prompt (`prompt = "..."` in the layout) is typed before any of the old
  backlog, or the backlog is settled (cancelled) and the engine says so; nothing delivered is
  typed again, and nothing arrives twice or out of order.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

import pytest

from swarm_tui.testing import Headless, Sandbox, mock_agent, wait_until
from tests.faults.ledger import Ledger, account
from tests.faults.wire import journal_of, raw_request, summary

pytestmark = pytest.mark.integration

FLEET = "td"
AGENTS = ["T0", "T1", "T2"]
BURST = 6  # per agent
OPEN = ("queued", "sending")
DOWN_WORDS = "stopped by `swarm down`"
TMUX_DIED = re.compile(
    r"tmux( server)?\b[^\n]{0,60}\b(died|dead|exited|was killed|crashed|"
    r"went away|is gone|gone|stopped unexpectedly)",
    re.I,
)
SERVER_DIED = re.compile(
    r"tmux server\b[^\n]{0,60}\b(died|dead|exited|was killed|crashed|"
    r"went away|is gone|gone)",
    re.I,
)


def prompt_of(agent: str) -> str:
    return f"You are {agent}: begin."


def journal(sandbox: Sandbox) -> list[dict[str, Any]]:
    return journal_of(sandbox, FLEET)


def rows_table(rows: list[dict[str, Any]]) -> str:
    return "\n".join(
        f"  #{r['id']} {r['sender']}→{r['recipient']} {r['status']:<9} "
        f"{r['text']!r} {r['detail']!r}"
        for r in rows
    )


def numbered(texts: list[str], prompt: str) -> list[str]:
    """The prompt is the same text in both runs: number its copies (prompt#1, prompt#2) so
    that every text the ledger sees is unique."""
    out, n = [], 0
    for text in texts:
        if text == prompt:
            n += 1
            text = f"{prompt}#{n}"
        out.append(text)
    return out


def test_tmux_server_death_mid_burst(sandbox: Sandbox, ledger: Ledger) -> None:
    layout = sandbox.layout(
        FLEET,
        *[mock_agent(a, "--work", "0", "--startup", "0.2", prompt=prompt_of(a)) for a in AGENTS],
    )
    tmux = sandbox.tmux(FLEET)
    first = sandbox.start_headless(layout)
    first.wait_ready(30)
    owners: list[Headless] = [first]

    def detail() -> str:
        return f"journal:\n{rows_table(journal(sandbox))}\n" + "\n".join(
            f"engine {i} (exit {o.proc.poll()}):\n{o.output()[-3000:]}"
            for i, o in enumerate(owners)
        )

    burst = {a: [f"burst-{a}-{i}" for i in range(BURST)] for a in AGENTS}
    for i in range(BURST):
        for agent in AGENTS:
            reply, error = raw_request(
                sandbox.socket_path(FLEET), {"op": "send", "to": [agent], "text": burst[agent][i]}
            )
            assert reply and reply["ok"], (reply, error)
    # mid-burst: some delivered, one being typed, the rest queued
    wait_until(
        lambda: (
            (rows := journal(sandbox))
            and sum(r["status"] == "delivered" and r["text"].startswith("burst") for r in rows) >= 3
            and all(r["status"] == "delivered" for r in rows if r["sender"] == "swarm")
            and any(r["status"] == "sending" for r in rows)
        ),
        60,
        "the burst to be under way, a message being typed",
        detail,
        interval=0.01,
    )
    tmux.run("kill-server")

    problems: list[str] = []

    def check(name: str, ok: bool, problem: str) -> None:
        ledger.probe(name, ok)
        if not ok:
            problems.append(problem)

    # ---- the engine: exits, non-zero, and says tmux died
    try:
        code: int | None = first.wait(20)
    except AssertionError:
        code = None
    check(
        "engine exits when its tmux server dies",
        code is not None,
        "the engine did not exit within 20 s of its tmux server's death",
    )
    if code is None:
        first.kill9()
    out = first.output()
    at_death = {r["id"]: r["status"] for r in journal(sandbox)}  # as the dead engine left it
    check(
        "engine exit code is non-zero when tmux dies",
        code not in (0, None),
        f"the engine exited {code} (as for a deliberate stop) when tmux died",
    )
    says = (
        TMUX_DIED.search(out) is not None
        and SERVER_DIED.search(out) is not None
        and DOWN_WORDS not in out
    )
    last = [ln for ln in out.splitlines() if ln.startswith(("swarm:", "Traceback"))][-1:]
    check(
        "engine exit wording on tmux death says the tmux server died",
        says,
        f"the engine's words do not say its tmux server died: {last}",
    )

    # ---- the journal the dead engine left: nothing delivered that did not arrive
    rows = journal(sandbox)
    received_old = {a: sandbox.received(a) for a in AGENTS}
    counts = Counter(t for got in received_old.values() for t in got)
    told_cancel = "cancel" in out.lower()
    for r in rows:
        arrived = counts[r["text"]] if not r["text"].startswith("You are") else None
        if r["status"] == "delivered" and arrived is not None and arrived != 1:
            problems.append(f"#{r['id']} {r['text']!r} is delivered but arrived {arrived} times")
        if r["status"] in ("failed",) or (r["status"] == "cancelled" and not told_cancel):
            problems.append(
                f"#{r['id']} {r['text']!r} was settled {r['status']} at tmux's "
                f"death without a word to the user ({r['detail']!r})"
            )
    still_open = [r for r in rows if r["status"] in OPEN + ("uncertain",)]
    queued_left = sum(r["status"] == "queued" for r in rows)
    said = re.search(
        r"\b(\d+) (queued )?messages?\b[^\n]*(not typed|not delivered|queued|left)", "\n".join(last)
    )
    check(
        "engine's last words say how many messages tmux's death left untyped",
        said is not None and queued_left <= int(said.group(1)) <= len(still_open),
        f"the engine's last words do not say that {queued_left}..{len(still_open)} messages "
        f"were left untyped: {last}",
    )

    # ---- the next `swarm up`: new agents, prompt first (or the backlog settled, and told)
    assert not tmux.alive()
    second = sandbox.start_headless(layout)
    owners.append(second)
    ready = second.wait_ready(30)
    check(
        "all agents are new after tmux died",
        "re-attached 0" in ready,
        f"after tmux died the engine re-attached some agents: {ready!r}",
    )
    try:
        wait_until(
            lambda: (
                (r := journal(sandbox))
                and not any(m["status"] in OPEN for m in r)
                and sum(m["text"].startswith("You are") for m in r) >= 2 * len(AGENTS)
            ),
            90,
            "every message to be settled after the restart",
            detail,
        )
    except AssertionError as exc:
        problems.append(f"the journal did not settle: {str(exc).splitlines()[0]}")
    rows = journal(sandbox)
    out2 = second.output()
    old_ids = set(at_death)
    for agent in AGENTS:
        settled = [
            r
            for r in rows
            if r["id"] in old_ids and r["recipient"] == agent and r["status"] == "cancelled"
        ]
        if settled:
            n = len(settled)
            told = re.search(rf"\b{agent}\b[^\n]*\b{n} messages?\b[^\n]*cancel", out2)
            check(
                f"{agent}: the old backlog settled at the restart is told to the user",
                told is not None,
                f"{agent}: {n} old messages were cancelled at the restart "
                f"without saying so: {[r['id'] for r in settled]}",
            )

        unsure = [
            r
            for r in rows
            if r["id"] in old_ids and r["recipient"] == agent and r["status"] == "uncertain"
        ]
        if unsure:  # caught mid-typing by tmux's death: maybe typed, maybe not; say which
            shown = any(
                re.search(rf"#{r['id']}\b[^\n]*uncertain", out + out2) for r in unsure
            ) or bool(re.search(rf"\b{agent}\b[^\n]*\b{len(unsure)} [^\n]*uncertain", out + out2))
            check(
                f"{agent}: a message tmux's death caught mid-typing is shown as uncertain",
                shown,
                f"{agent}: {[r['id'] for r in unsure]} are uncertain (maybe typed "
                "into the dead agent, maybe not) and no output says so",
            )

    received = {a: sandbox.received(a) for a in AGENTS}
    for agent in AGENTS:
        new_run = received[agent][len(received_old[agent]) :]
        prompt = prompt_of(agent)
        if prompt not in new_run:
            problems.append(f"{agent}: the new agent never got its prompt: {new_run}")
            continue
        before = new_run[: new_run.index(prompt)]
        check(
            f"{agent}: initial prompt before the old backlog after tmux died",
            not before,
            f"{agent}: old backlog typed into the new agent before its prompt: {before}",
        )

    # ---- the books: each agent was sent prompt#1, the burst, and prompt#2 before whatever of
    # the burst was still queued when tmux died
    sent: dict[str, list[str]] = {}
    uncertain: set[str] = set()
    journaled: set[str] = set()
    for agent in AGENTS:
        prompt = prompt_of(agent)
        mine = [r for r in rows if r["recipient"] == agent]
        texts = numbered([r["text"] for r in mine], prompt)
        early = [
            t
            for r, t in zip(mine, texts, strict=True)
            if r["id"] in old_ids and at_death[r["id"]] != "queued"
        ]
        late = [
            t
            for r, t in zip(mine, texts, strict=True)
            if r["id"] in old_ids and at_death[r["id"]] == "queued"
        ]
        sent[agent] = [*early, f"{prompt}#2", *late]
        for r, t in zip(mine, texts, strict=True):
            if r["status"] == "uncertain":
                uncertain.add(t)
            if r["status"] != "cancelled":
                journaled.add(t)
        received[agent] = numbered(received[agent], prompt)
    run = ledger.add(account(sent, received, uncertain=uncertain, journaled=journaled))
    if run.lost or run.duplicated or run.reordered or run.problems:
        problems.append(
            f"ledger: lost {run.lost}, duplicated {run.duplicated}, reordered "
            f"{run.reordered}: {run.problems}"
        )

    where = (
        f"at tmux's death: {summary([{'status': s} for s in at_death.values()])}; "
        f"{len(still_open)} rows left open/uncertain by the dead engine; now "
        f"{summary(rows)}"
    )
    print(where)
    assert not problems, f"{where}\n" + "\n".join(f"- {p}" for p in problems) + "\n" + detail()


def test_a_deliberate_down_exits_0_with_its_own_words(sandbox: Sandbox, ledger: Ledger) -> None:
    """The control: what `swarm down` makes the engine say, which tmux's death must not."""
    layout = sandbox.layout(FLEET, mock_agent("T0"))
    owner = sandbox.start_headless(layout)
    owner.wait_ready(30)
    down = sandbox.swarm("down", str(layout), timeout=60)
    assert down.returncode == 0, (down.stdout, down.stderr)
    code = owner.wait(20)
    ok = code == 0 and DOWN_WORDS in owner.stdout() and not SERVER_DIED.search(owner.output())
    ledger.probe("engine exit on a deliberate swarm down: 0, with the down wording", ok)
    assert ok, f"exit {code}\n{owner.output()}"
