"""Tasks and the judge loop: a worker's claim of done is checked by someone else.

A task belongs to one agent; its queue runs in order. A task is in progress from the moment
its prompt was delivered (typed and submitted), not from when it was queued: nothing reviews
work that was never asked for. A review starts when the worker runs `swarm done`, when the
worker has stayed idle with the task open and its screen changed since the last such review
(unless the task says not to), or on demand. `verify` runs first on the agent's host:
failing means incomplete without asking a model. Then the judge — an interactive agent of
the fleet, or a headless command — gets the review prompt (skills/judge.md) and must answer
with a strict verdict line carrying the review's number. Incomplete sends the worker back
with the reasons (skills/reprompt.md); complete starts the next task. Loop limits stop
runaway loops and tell the human. Every verdict is kept.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import shlex
import time
from pathlib import Path
from typing import TYPE_CHECKING

from swarm_tui.agents.base import AgentState
from swarm_tui.config.notify import verdict_text
from swarm_tui.config.skills import skill_text
from swarm_tui.errors import AgentNotFound, SwarmError
from swarm_tui.fleet.fresh import settled
from swarm_tui.fleet.store import (
    CANCELLED,
    DELIVERED,
    FAILED,
    OPEN_TASK,
    UNCERTAIN,
    Message,
    NewTask,
    Task,
    TaskStatus,
)
from swarm_tui.fleet.verdict import Verdict, parse_answer, parse_screen, review_number

if TYPE_CHECKING:
    from swarm_tui.config.work import TaskSpec
    from swarm_tui.fleet.agent import Agent
    from swarm_tui.fleet.ports import TaskHost

PENDING, IN_PROGRESS, CLAIMED, JUDGING = (
    TaskStatus.PENDING,
    TaskStatus.IN_PROGRESS,
    TaskStatus.CLAIMED,
    TaskStatus.JUDGING,
)
INCOMPLETE, COMPLETE, STOPPED, NO_VERDICT = (
    TaskStatus.INCOMPLETE,
    TaskStatus.COMPLETE,
    TaskStatus.STOPPED,
    TaskStatus.NO_VERDICT,
)
# no literal verdict line in here: the judge's CLI echoes it, and only its answer counts
ASK_AGAIN = (
    "Review number: {review}\nYour answer did not end with a verdict line for this "
    "review. End your answer with exactly one line, in one of these two forms, where "
    "<review number> is {review}:\nVERDICT <review number>: COMPLETE\n"
    "VERDICT <review number>: INCOMPLETE: <the concrete things that are missing>"
)
JUDGE_TURN = 20 * 60  # seconds a judge may take for one review
TICK = 1.0  # seconds between looks at idle workers and undelivered task prompts
PROMPT_TRIES = 3  # a task whose prompt fails this often stops and tells the human


def new_task(spec: TaskSpec, base: Path) -> NewTask:
    """A layout's task as the journal takes it (spec files read now)."""
    text = spec.spec
    if spec.spec_file:
        path = (base / spec.spec_file).resolve()
        try:
            text = path.read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise SwarmError(f"{path}: cannot read the task's spec_file: {exc}") from None
    return NewTask(
        spec=text,
        verify=spec.verify,
        verify_timeout=spec.verify_timeout,
        judge=spec.judge,
        judge_command=spec.judge_command,
        max_rounds=spec.max_rounds,
        max_minutes=spec.max_minutes,
        review_on_idle=spec.review_on_idle,
    )


def headline(spec: str) -> str:
    first = next((ln.strip() for ln in spec.splitlines() if ln.strip()), "")
    return first[:100]


class TaskBoard:
    """Every agent's task queue, the reviews in flight, and the judge pane's log."""

    review_settle = 15.0  # seconds a worker must stay idle before its turn is reviewed

    def __init__(self, fleet: TaskHost):
        self.fleet = fleet
        self.store = fleet.store
        self._reviews: dict[int, asyncio.Task[None]] = {}
        self.judge_log: list[str] = []  # what the judge pane shows of headless runs
        self._idle_since: dict[str, float] = {}  # agent -> monotonic time it went idle
        self._reviewed: dict[int, str] = {}  # task -> digest of the screen last reviewed idle
        self._prompt_failures: dict[int, int] = {}

    # ------------------------------------------------------------------ setup
    def seed(self) -> None:
        """Tasks from the layout, once: a restart keeps the journaled state."""
        base = self.fleet.loaded.path.parent
        for agent in self.fleet.agents.values():
            known = self.store.tasks(agent.name)
            seeded = any(t.origin == "layout" for t in known)
            have = {(t.id, t.spec) for t in known}
            for spec in agent.spec.tasks:
                task = new_task(spec, base)
                if spec.journal_id and (spec.journal_id, task.spec) in have:
                    continue  # written by `swarm save` from this journal: it is here
                if not seeded:
                    self.store.add_task(agent.name, task, "layout")
        for agent in self.fleet.agents.values():
            self._focus_follows(agent)
        self.warn_same_family()

    def add(self, agent_name: str, task: NewTask, origin: str) -> int:
        (agent,) = self.fleet.resolve([agent_name])
        tid = self.store.add_task(agent.name, task, origin)
        self.kick(agent)
        return tid

    # ------------------------------------------------------------------ queries
    def current(self, agent: str) -> Task | None:
        return next((t for t in self.store.tasks(agent) if t.status in OPEN_TASK), None)

    def judge_for(self, task: Task) -> Agent | None:
        name = task.judge
        if name:
            try:
                return self.fleet.resolve([name])[0]
            except AgentNotFound:
                return None
        if task.judge_command:
            return None
        return next((a for a in self.fleet.agents.values() if a.role == "judge"), None)

    def warn_same_family(self) -> list[str]:
        """A judge of the worker's own model family shares its blind spots: say so."""
        warnings = []
        for agent in self.fleet.agents.values():
            for task in self.store.tasks(agent.name):
                judge = self.judge_for(task)
                fam = family(agent)
                if judge is not None and judge is not agent and fam and fam == family(judge):
                    warnings.append(
                        f"judge {judge.name} reviews {agent.name} and both are "
                        f"{fam} models: their mistakes correlate; prefer a judge "
                        "of another family"
                    )
        for w in dict.fromkeys(warnings):
            self.fleet.listener.notice(w)
        return list(dict.fromkeys(warnings))

    # ------------------------------------------------------------------ events
    def kick(self, agent: Agent, task: Task | None = None) -> None:
        """Queue the agent's current task's prompt (or `task`'s, when the caller just read
        it) if it is pending and not on its way. The task stays pending until the prompt is
        delivered (`message_settled`)."""
        task = task or self.current(agent.name)
        if task is None or task.status != PENDING or task.prompt:
            return
        tid = task.id
        text = (
            f"Your task:\n{task.spec}\n\nWhen it is really done, run "
            '`swarm done --note "what you did and how you checked it"`.'
        )
        (msg,) = self.fleet.send([agent.name], text, sender="swarm", task=tid)
        self.store.update_task(tid, prompt=msg.id)
        self._focus_follows(agent)
        self.fleet.listener.agent_changed(agent)

    def message_settled(self, agent: Agent, message: Message) -> None:
        """A message about a task was delivered, failed or dropped."""
        task = self.store.task(message.task)
        if task is None or task.prompt != message.id or task.status != PENDING:
            return
        tid = task.id
        if message.status in (DELIVERED, UNCERTAIN):  # uncertain: most likely typed
            self.store.update_task(tid, status=IN_PROGRESS, started=time.time())
            self._prompt_failures.pop(tid, None)
        elif message.status in (FAILED, CANCELLED):
            tries = self._prompt_failures[tid] = self._prompt_failures.get(tid, 0) + 1
            if message.status == FAILED and tries >= PROMPT_TRIES:
                self.store.update_task(
                    tid,
                    status=STOPPED,
                    prompt=0,
                    reasons=(f"its prompt could not be delivered {tries} times: {message.detail}"),
                )
                self.fleet.listener.notice(
                    f"{agent.name}'s task #{tid} stopped: its prompt "
                    f"failed {tries} times ({message.detail})"
                )
                self.kick(agent)
            else:
                self.store.update_task(tid, prompt=0)  # sent again when the agent is idle
        else:
            return
        self._focus_follows(agent)
        self.fleet.listener.agent_changed(agent)

    def obsolete(self, agent: Agent, message: Message) -> str:
        """Why a message about a task should not be typed any more ("" to type it)."""
        if not message.task:
            return ""
        task = self.store.task(message.task)
        if task is None:
            return f"task #{message.task} no longer exists"
        if task.prompt == message.id:
            return "" if task.status == PENDING else f"task #{message.task} is {task.status}"
        if task.status in (COMPLETE, STOPPED):
            return f"task #{message.task} is already {task.status}"
        return ""

    def state_changed(self, agent: Agent, old: AgentState, new: AgentState) -> None:
        if new is AgentState.IDLE:
            self._idle_since.setdefault(agent.name, time.monotonic())
            self.kick(agent)
        else:
            self._idle_since.pop(agent.name, None)

    def tick(self, now: float | None = None) -> None:
        """What must not wait for an event: a pending task's prompt for an idle worker (its
        last one failed), and the review of a worker that has stayed idle with its task open
        (a settled idle, and a screen that changed since the last review of this kind)."""
        now = time.monotonic() if now is None else now
        current = self.store.current_tasks() if self._idle_since else {}  # one query a tick
        for name, since in list(self._idle_since.items()):
            agent = self.fleet.agents.get(name)
            if agent is None or agent.state is not AgentState.IDLE:
                self._idle_since.pop(name, None)
                continue
            task = current.get(name)
            if task is None:
                continue  # no open task: nothing to prompt, nothing to review
            self.kick(agent, task)
            if now - since < self.review_settle or agent.pending:
                continue
            if task.status not in (IN_PROGRESS, INCOMPLETE) or not task.review_on_idle:
                continue
            tid = task.id
            running = self._reviews.get(tid)
            if running is not None and not running.done():
                continue
            digest = hashlib.sha1("\n".join(agent.plain_screen()).encode()).hexdigest()
            if self._reviewed.get(tid) == digest:
                continue  # nothing new on its screen since the last review: wait for news
            self._reviewed[tid] = digest
            self.review(
                name, claim="(the agent has been idle with its task open; it did not say done)"
            )

    async def run(self) -> None:
        while True:
            self.tick()
            await asyncio.sleep(TICK)

    def done(self, agent_name: str, note: str) -> Task:
        (agent,) = self.fleet.resolve([agent_name])
        task = self.current(agent.name)
        if task is None:
            raise SwarmError(f"{agent.name} has no open task to claim done")
        if task.status == PENDING:
            raise SwarmError(
                f"{agent.name}'s task #{task.id} has not been delivered to it "
                "yet (its prompt is queued): nothing to claim"
            )
        self.store.update_task(task.id, status=CLAIMED)
        self.review(agent.name, claim=note or "(no note)")
        return task

    def review(self, agent_name: str, claim: str = "(review asked for by a human)") -> int:
        """Start a review of the agent's current task (once at a time per task)."""
        (agent,) = self.fleet.resolve([agent_name])
        task = self.current(agent.name)
        if task is None:
            raise SwarmError(f"{agent.name} has no open task to review")
        tid = task.id
        if task.status == PENDING:
            raise SwarmError(
                f"{agent.name}'s task #{tid} has not been delivered to it yet "
                "(its prompt is queued): nothing to review"
            )
        running = self._reviews.get(tid)
        if running is not None and not running.done():
            return tid
        self._reviews[tid] = asyncio.create_task(
            self._review(agent, tid, claim), name=f"review-{agent.name}"
        )
        return tid

    async def stop(self) -> None:
        for task in self._reviews.values():
            task.cancel()
        await asyncio.gather(*self._reviews.values(), return_exceptions=True)

    # ------------------------------------------------------------------ the loop
    async def _review(self, agent: Agent, tid: int, claim: str) -> None:
        try:
            await self._review_once(agent, tid, claim)
        except SwarmError as exc:
            self.store.update_task(tid, status=NO_VERDICT, reasons=str(exc))
            self.fleet.listener.notice(f"review of {agent.name}'s task failed: {exc}")
        self._focus_follows(agent)
        self.fleet.listener.agent_changed(agent)

    async def _review_once(self, agent: Agent, tid: int, claim: str) -> None:
        task = self.store.task(tid)
        assert task is not None
        self.store.update_task(tid, status=JUDGING)
        self.fleet.listener.agent_changed(agent)
        verify_result = "(no verify command)"
        if task.verify:
            ok, output = await self._verify(agent, task)
            if not ok:
                self._record(
                    agent,
                    task,
                    "verify",
                    Verdict(False, "the verify command failed: " + output),
                    output,
                )
                return
            verify_result = "passed: " + output
        review = review_number()
        prompt = skill_text(
            "judge",
            {
                "review": review,
                "agent": agent.name,
                "spec": task.spec,
                "verify": task.verify or "(none)",
                "verify_result": verify_result,
                "claim": claim,
                "change": await self.fleet.change_for_judge(agent),
                "screen": "\n".join(
                    [ln.rstrip() for ln in agent.plain_screen() if ln.strip()][-40:]
                ),
            },
        )
        judge = self.judge_for(task)
        if task.judge_command:
            who = judge_name(task.judge_command)
            verdict, raw = await self._headless(task.judge_command, prompt, review)
        elif judge is not None:
            verdict, raw = await self._interactive(judge, prompt, review)
            who = judge.name
        else:
            raise SwarmError(
                "no judge: give the task a `judge` or `judge_command`, or add an "
                "agent with role 'judge'"
            )
        if verdict is None:
            self._verdict(agent, task, who, "none", "no verdict line, twice", raw)
            self.store.update_task(tid, status=NO_VERDICT, reasons="the judge gave no verdict")
            self.fleet.listener.notice(
                f"{who} gave no verdict on {agent.name}'s task (asked twice): a human should look"
            )
            return
        self._record(agent, task, who, verdict, raw)

    async def _verify(self, agent: Agent, task: Task) -> tuple[bool, str]:
        host = self.fleet.link_of(agent).host
        cwd = agent.cwd or "."
        rc, out = await host.shell(
            f"cd {shlex.quote(cwd)} && {task.verify}", timeout=task.verify_timeout
        )
        tail = "\n".join(out.strip().splitlines()[-15:])
        return rc == 0, f"exit {rc}" + (f"\n{tail}" if tail else "")

    async def _interactive(
        self, judge: Agent, prompt: str, review: str
    ) -> tuple[Verdict | None, str]:
        """Ask an agent of the fleet. Its screen shows the prompt it was sent (real CLIs
        echo it) and its older answers: only a line with this review's number that is not
        part of what it was sent is its verdict."""
        sent = prompt
        for text in (prompt, ASK_AGAIN.format(review=review)):
            sent += "\n" + text
            (msg,) = self.fleet.send([judge.name], text, sender="swarm")
            await settled(self.store, judge, msg.id, JUDGE_TURN, what="review")
            screen = await self.fleet.capture(judge)
            verdict = parse_screen(screen, review, sent)
            if verdict is not None:
                return verdict, "\n".join(screen)
        return None, "\n".join(judge.plain_screen())

    async def _headless(self, command: str, prompt: str, review: str) -> tuple[Verdict | None, str]:
        raw = ""
        for text in (prompt, prompt + "\n\n" + ASK_AGAIN.format(review=review)):
            self.judge_log.append(f"$ {command}")
            proc = await asyncio.create_subprocess_shell(
                command,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
            )
            try:
                out, _ = await asyncio.wait_for(proc.communicate(text.encode()), JUDGE_TURN)
            except TimeoutError:
                proc.kill()
                await proc.wait()
                out = b"(timed out)"
            raw = out.decode("utf-8", "replace")
            self.judge_log.extend(raw.splitlines()[-200:])
            del self.judge_log[:-1000]
            verdict = parse_answer(raw, review)
            if verdict is not None:
                return verdict, raw
        return None, raw

    def _record(self, agent: Agent, task: Task, who: str, verdict: Verdict, raw: str) -> None:
        tid = task.id
        word = "complete" if verdict.complete else "incomplete"
        self._verdict(agent, task, who, word, verdict.reasons, raw)
        if verdict.complete:
            self.store.update_task(tid, status=COMPLETE, reasons="")
            self.kick(agent)  # the next task, if any
            return
        rounds = task.rounds + 1
        started = task.started or time.time()
        over_time = time.time() - started > task.max_minutes * 60
        if rounds >= task.max_rounds or over_time:
            why = f"{rounds} reviews" if not over_time else "its time limit"
            self.store.update_task(tid, status=STOPPED, rounds=rounds, reasons=verdict.reasons)
            self.fleet.listener.notice(
                f"{agent.name}'s task stopped after {why}, still "
                f"incomplete: {verdict.reasons} — a human should look"
            )
            self.kick(agent)  # the next task, if any: a stopped task does not block the queue
            return
        self.store.update_task(tid, status=INCOMPLETE, rounds=rounds, reasons=verdict.reasons)
        text = skill_text(
            "reprompt",
            {"agent": agent.name, "reasons": verdict.reasons, "task": headline(task.spec)},
        )
        self.fleet.send([agent.name], text, sender="swarm", task=tid)

    def _verdict(
        self, agent: Agent, task: Task, who: str, word: str, reasons: str, raw: str
    ) -> None:
        """Keep a verdict and tell the human (`[notify]` kind "verdict")."""
        self.store.add_verdict(task.id, who, word, reasons, raw[-4000:])
        self.fleet.notifier.alert(
            "verdict", agent.name, verdict_text(agent.name, task.id, task.spec, word, who, reasons)
        )

    def _focus_follows(self, agent: Agent) -> None:
        """An agent's focus label follows its current task."""
        task = self.current(agent.name)
        if task is not None:
            label = headline(task.spec)
            if label and label != agent.focus:
                agent.focus = label
                self.store.set_focus(agent.name, label, "task")


def judge_name(command: str) -> str:
    """What a headless judge is called in verdicts: its program's name, past `env`, its
    VAR=value settings and its options (`env A=1 claude -p` is `claude`)."""
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    for word in words:
        if word == "env" or word.startswith("-") or ("=" in word and "/" not in word.split("=")[0]):
            continue
        return os.path.basename(word) or word
    return command.strip()[:40] or "headless judge"


def family(agent: Agent) -> str:
    if agent.spec.family:
        return agent.spec.family
    model = agent.spec.model.lower()
    for key, fam in (
        ("claude", "anthropic"),
        ("gpt", "openai"),
        ("o3", "openai"),
        ("gemini", "google"),
        ("mock", "mock"),
    ):
        if key in model:
            return fam
    return agent.adapter.family or ("mock" if agent.spec.cli == "mock" else "")
