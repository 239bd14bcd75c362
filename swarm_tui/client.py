"""Talk to the running swarm over its Unix socket: `send`, `ls`, `focus`, `messages`.

Stdlib only: this file is also copied to remote nodes as their `swarm` command, where the
engine's socket is reverse-forwarded over SSH.

The socket is `$SWARM_SOCKET` (set in every agent's environment), or the one for `--fleet`,
or the only fleet running under the state directory.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import socket
import struct
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

MAX_MESSAGE_BYTES = 3 * 1024 * 1024  # a message's text, as UTF-8
MAX_REQUEST_BYTES = 4 * 1024 * 1024  # one request line, encoded: what the socket takes
ANSWER_GRACE = 5.0  # seconds a client waits past a request's expiry for the answer
CONNECT_RETRY = 2.0  # seconds a client keeps trying an engine whose connection queue is full
PENDING = ("queued", "sending")  # not delivered yet, and still going to be
EXIT_STILL_QUEUED = 3  # `send --wait`: not delivered in time, but it will be (not failed: 1)
BUILT_IN_VARS = ("agent", "focus", "task")  # swarm fills these in for every recipient


def fleet_slug(name: str) -> str:
    """The file name a fleet's socket uses (the same rule as swarm_tui.paths)."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)[:40] or "fleet"


class ClientError(Exception):
    """One line for the user: no swarm running, or the swarm refused the request."""


class NoEngine(ClientError):
    """No engine is running (no socket, or a stale one)."""


class Refused(ClientError):
    """The swarm answered, and said no."""


class GrepTrouble(ClientError):
    """`swarm grep` could not search: exit 2, as grep does (1 is "nothing found")."""

    exit_code = 2


def find_socket(fleet: str | None, run_dir: Path) -> Path:
    if fleet:
        path = run_dir / f"{fleet_slug(fleet)}.sock"
        if not path.exists():
            raise NoEngine(
                f"no engine runs fleet {fleet!r} here (`swarm ps` lists the running "
                "ones; `swarm up LAYOUT` starts one)"
            )
        return path
    env = os.environ.get("SWARM_SOCKET")
    if env:
        return Path(env)
    socks = sorted(run_dir.glob("*.sock")) if run_dir.is_dir() else []
    if not socks:
        raise NoEngine("no swarm is running (start one: swarm demo, or swarm up LAYOUT)")
    if len(socks) > 1:
        names = ", ".join(s.stem for s in socks)
        raise ClientError(f"several fleets are running ({names}): choose one with --fleet NAME")
    return socks[0]


def _gone(path: Path, why: str) -> str:
    return (
        f"swarm on {path} went away before answering ({why}): the request may or may not "
        "have been carried out; `swarm messages` shows what was sent (check before "
        "sending again)"
    )


def _connect(path: Path, timeout: float) -> socket.socket:
    """A connection to the engine. While its queue of connections is full (it is busy, or
    flooded), the kernel holds the connect until there is room, for up to CONNECT_RETRY
    seconds: a client waits in line instead of polling for a free place."""
    deadline = time.monotonic() + CONNECT_RETRY
    while True:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        left = max(0.01, deadline - time.monotonic())
        try:  # a blocking connect waits for room as long as the send timeout says
            sock.setsockopt(
                socket.SOL_SOCKET,
                socket.SO_SNDTIMEO,
                struct.pack("ll", int(left), int(left % 1 * 1e6)),
            )
        except (OSError, struct.error):  # not this platform's timeval: poll below instead
            sock.settimeout(0)
        try:
            sock.connect(str(path))
            sock.settimeout(timeout + ANSWER_GRACE)
            return sock
        except (FileNotFoundError, ConnectionRefusedError):
            sock.close()
            raise NoEngine(
                f"no swarm is running on {path} (start one: swarm demo, or swarm up LAYOUT)"
            ) from None
        except OSError as exc:  # EAGAIN: its queue stayed full
            sock.close()
            if time.monotonic() >= deadline:
                raise ClientError(
                    f"swarm on {path} did not take the connection within "
                    f"{CONNECT_RETRY:.0f} s ({exc.strerror or 'timed out'}): "
                    "nothing was sent; try again"
                ) from None
            time.sleep(0.01)  # a retry interval (a signal or no kernel wait), not a sync


def request(path: Path, payload: dict[str, Any], timeout: float = 30.0) -> dict[str, Any]:
    """One request, one answer. A request carries when it expires: the engine refuses one
    that reaches it later, so a request this client gave up on is never carried out."""
    token = os.environ.get("SWARM_TOKEN")
    if token and "token" not in payload:
        payload = {**payload, "token": token}
    payload = {**payload, "expires": time.time() + timeout}
    line = json.dumps(payload, ensure_ascii=False).encode("utf-8", "replace") + b"\n"
    if len(line) > MAX_REQUEST_BYTES:
        raise ClientError(
            f"the request is {len(line)} bytes once encoded; the limit is "
            f"{MAX_REQUEST_BYTES} bytes (send a path to a file instead)"
        )
    sock = _connect(path, timeout)
    try:
        try:
            sock.sendall(line)
        except OSError:  # it hung up first, maybe with a refusal we can still read
            pass
        data = b""
        while not data.endswith(b"\n"):
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
    except TimeoutError:
        raise ClientError(
            f"swarm on {path} did not answer within {timeout:.0f} s; it "
            "refuses a request that reaches it later, so most likely nothing "
            "was done (`swarm messages` shows what was sent)"
        ) from None
    except OSError as exc:
        raise ClientError(_gone(path, exc.strerror or str(exc))) from None
    finally:
        sock.close()
    if not data:
        raise ClientError(_gone(path, "it closed the connection without an answer"))
    reply: dict[str, Any] = json.loads(data)
    if not reply.get("ok"):
        raise Refused(str(reply.get("error", "request refused")))
    return reply


# ---------------------------------------------------------------------------- parsing
def add_client_verbs(sub: Any) -> None:
    """Add the socket verbs to a sub-parser set (shared by the full and the node CLI)."""
    send = sub.add_parser(
        "send",
        help="inject a message into agents as real user input",
        description="swarm send NAME [NAME...] MESSAGE | --all MESSAGE | "
        "--role ROLE MESSAGE. MESSAGE '-' reads standard input; put `--` "
        "before a message that starts with '-'.",
    )
    send.add_argument("args", nargs="*", metavar="NAME... MESSAGE")
    send.add_argument("--all", action="store_true", help="every agent but the sender")
    send.add_argument("--role", help="every agent with this role")
    send.add_argument(
        "--skill",
        default="",
        help="inject this skill (rendered for each "
        "recipient); a MESSAGE is then optional and appended",
    )
    send.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a skill parameter (repeatable)",
    )
    send.add_argument(
        "--wait",
        type=float,
        default=0.0,
        metavar="SECS",
        help="wait up to SECS for delivery and report it",
    )
    send.add_argument("--fleet", help="which running fleet (default: the only one)")

    ls = sub.add_parser("ls", help="list the agents of the running fleet")
    ls.add_argument("--json", action="store_true")
    ls.add_argument("--fleet")

    focus = sub.add_parser("focus", help="set an agent's focus label (your own from its pane)")
    focus.add_argument("args", nargs="*", metavar="[NAME] LABEL")
    focus.add_argument("--fleet")

    fresh = sub.add_parser(
        "fresh",
        help="fresh start: the agent writes a handoff note, "
        "starts a new conversation, and gets its focus and the note back",
    )
    fresh.add_argument("name")
    fresh.add_argument("--no-handoff", action="store_true", help="skip the handoff note")
    fresh.add_argument("--fleet")

    task = sub.add_parser("task", help="give an agent a task (queued after its open ones)")
    task.add_argument("name")
    src = task.add_mutually_exclusive_group(required=True)
    src.add_argument("--spec", help="what done means, in words")
    src.add_argument("--spec-file", help="a file holding the spec")
    task.add_argument(
        "--verify",
        default="",
        help="a command that must pass (run in the agent's directory on its host)",
    )
    task.add_argument("--judge", default="", help="the judge agent's name")
    task.add_argument("--judge-command", default="", help="a headless judge command")
    task.add_argument(
        "--no-review-on-idle",
        action="store_true",
        help="review only when the agent says done (or `swarm judge`), never "
        "because it sat idle with the task open",
    )
    task.add_argument(
        "--max-rounds",
        type=_rounds,
        default=5,
        help="reviews before the task stops and a human is asked (default 5)",
    )
    task.add_argument("--fleet")

    done = sub.add_parser(
        "done", help="(from an agent's pane) claim your task is done: a judge will check it"
    )
    done.add_argument("--note", default="", help="what you did and how you checked it")
    done.add_argument("--fleet")

    judge = sub.add_parser("judge", help="review an agent's current task now")
    judge.add_argument("name")
    judge.add_argument("--fleet")

    tasks = sub.add_parser("tasks", help="every task, its status and its verdicts")
    tasks.add_argument("--json", action="store_true")
    tasks.add_argument("--fleet")

    remind = sub.add_parser(
        "remind",
        help="reminder timers: list, add, pause, resume, snooze, fire, rm, edit",
        description="swarm remind add --to NAME|role:R|all (--every 30m | "
        "--idle 10m | --at HH:MM) (--text T | --skill S); swarm remind "
        "pause|resume|fire|rm ID; snooze ID --minutes M; edit ID --text T",
    )
    remind.add_argument(
        "action", choices=["list", "add", "pause", "resume", "snooze", "fire", "rm", "edit"]
    )
    remind.add_argument("id", nargs="?", type=int, default=0)
    remind.add_argument("--to", default="all")
    remind.add_argument("--every", default="")
    remind.add_argument("--idle", default="")
    remind.add_argument("--at", default="")
    remind.add_argument("--text", default="")
    remind.add_argument("--skill", default="")
    remind.add_argument(
        "--fresh", action="store_true", help="a scheduled fresh start instead of a message"
    )
    remind.add_argument("--minutes", type=float, default=10)
    remind.add_argument("--json", action="store_true")
    remind.add_argument("--fleet")

    skills = sub.add_parser("skills", help="the skills library: list, or `show NAME`")
    skills.add_argument("show", nargs="?", choices=["show"], help=argparse.SUPPRESS)
    skills.add_argument("name", nargs="?", default="")
    skills.add_argument("--json", action="store_true")
    skills.add_argument("--fleet")

    save = sub.add_parser("save", help="save the running fleet as a layout NAME")
    save.add_argument("name")
    save.add_argument("--force", action="store_true", help="overwrite an existing file")
    save.add_argument("--fleet")

    hook = sub.add_parser(
        "hook",
        help="(for agent CLIs' hooks) report a CLI event read "
        "as JSON from stdin, or from the last argument",
    )
    hook.add_argument("cli")
    hook.add_argument("json", nargs="?", help="the event JSON (default: read stdin)")
    hook.add_argument("--fleet")

    grep = sub.add_parser(
        "grep",
        help="search every agent's history (tmux scrollback) "
        "for a Python regular expression; prints agent:line: text",
        description="swarm grep PATTERN [--agent NAME] [-C N] [-i]. Exit "
        "status as grep's: 0 found, 1 nothing found, 2 trouble. From an "
        "agent's pane: the agents it may message (talks_to), and itself.",
    )
    grep.add_argument("args", nargs="*", metavar="PATTERN")
    grep.add_argument("--agent", help="search only this agent's history")
    grep.add_argument(
        "-C",
        "--context",
        type=int,
        default=0,
        metavar="N",
        help="N lines of context either side of each match",
    )
    grep.add_argument("-i", "--ignore-case", action="store_true")
    grep.add_argument("--fleet")

    msgs = sub.add_parser("messages", help="the message journal: who said what to whom")
    msgs.add_argument("--json", action="store_true")
    msgs.add_argument("--limit", type=int, default=50)
    msgs.add_argument("--fleet")


_TAKES_VALUE = ("--role", "--skill", "--param", "--wait", "--fleet")


def _flag_after_words(words: list[str]) -> str:
    """`--all` or `--role` written after a name or message (`swarm send E1 --all`): the
    user may have meant the text "--all", so it is refused rather than broadcast."""
    seen_word, skip = False, False
    for word in words:
        if skip:
            skip = False
        elif word in _TAKES_VALUE:
            skip = True
            if word == "--role" and seen_word:
                return word
        elif word == "--all" or word.startswith("--role="):
            if seen_word:
                return word.partition("=")[0]
        elif not word.startswith("-"):
            seen_word = True
    return ""


def parse_args(parser: argparse.ArgumentParser, argv: list[str]) -> argparse.Namespace:
    """Parse a command line; options may come between names and message (intermixed), and
    everything after `--` is message text, even words that start with '-'."""
    subs = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    if not argv or argv[0] not in subs.choices:
        return parser.parse_args(argv)  # prints usage or the verb list
    verb, rest = argv[0], argv[1:]
    tail: list[str] = []
    if "--" in rest:
        cut = rest.index("--")
        rest, tail = rest[:cut], rest[cut + 1 :]
    args: argparse.Namespace = subs.choices[verb].parse_intermixed_args(rest)
    args.verb = verb
    if verb == "send":
        args.late_flag = _flag_after_words(rest)
    if tail:
        args.args = [*(getattr(args, "args", None) or []), *tail]
    return args


# ---------------------------------------------------------------------------- verbs
# The full CLI reads what needs no engine (the journal, the skills) itself when none runs;
# the node CLI, copied alone to remote nodes, has no such fallback.
offline: Callable[[str | None, dict[str, Any]], dict[str, Any] | None] | None = None


def _ask(
    args: argparse.Namespace, run_dir: Path, payload: dict[str, Any], timeout: float = 30.0
) -> Any:
    try:
        return request(find_socket(args.fleet, run_dir), payload, timeout)
    except NoEngine:
        reply = offline(args.fleet, payload) if offline is not None else None
        if reply is None:
            raise
        return reply


def cmd_send(args: argparse.Namespace, run_dir: Path) -> int:
    words: list[str] = args.args
    if getattr(args, "late_flag", ""):
        flag = args.late_flag
        raise ClientError(
            f"{flag} after a name or message is ambiguous: to send to every "
            f'agent put it first (swarm send {flag} ... "message"); to send '
            f"the text {flag!r}, write it after `--` (swarm send NAME -- {flag})"
        )
    if args.all or args.role:
        if len(words) > 1 or (not words and not args.skill):
            raise ClientError("with --all or --role, give just the message (quote it)")
        names, text = [], (words[0] if words else "")
    elif args.skill:
        if not words:
            raise ClientError('usage: swarm send NAME [NAME...] --skill SKILL ["message"]')
        names, text = words, ""
    else:
        if len(words) < 2:
            raise ClientError('usage: swarm send NAME [NAME...] "message" (or --all / --role)')
        names, text = words[:-1], words[-1]
    if text == "-":
        text = sys.stdin.read()
    if not text.strip() and not args.skill:
        raise ClientError("empty message: nothing to send")
    params = {}
    for p in args.param:
        key, eq, value = p.partition("=")
        if not eq or not key:
            raise ClientError(f"--param {p!r}: write NAME=VALUE")
        params[key] = value
    if params and not args.skill:
        raise ClientError("--param fills in a skill's parameters: give the skill with --skill")
    size = len(text.encode("utf-8", "replace"))
    if size > MAX_MESSAGE_BYTES:
        raise ClientError(
            f"message is {size} bytes; the limit is {MAX_MESSAGE_BYTES} bytes "
            "(send a path to a file instead)"
        )
    if args.skill:
        _check_skill(args, run_dir, args.skill, params)
    reply = _ask(
        args,
        run_dir,
        {
            "op": "send",
            "to": names,
            "all": args.all,
            "role": args.role,
            "text": text,
            "skill": args.skill,
            "params": params,
            "wait": args.wait,
        },
        timeout=args.wait + 30,
    )
    failed, waiting = 0, []
    for m in reply["messages"]:
        detail = f" ({m['detail']})" if m["detail"] else ""
        if args.wait and m["status"] in PENDING:
            print(
                f"#{m['id']} to {m['to']}: still {m['status']} after {args.wait:g} s: it "
                f"stays in {m['to']}'s queue and will be delivered when {m['to']} is ready"
            )
            waiting.append(f"#{m['id']}")
        else:
            print(f"#{m['id']} to {m['to']}: {m['status']}{detail}")
        failed += m["status"] in ("failed", "uncertain")
    if failed:
        return 1
    if waiting:
        one = len(waiting) == 1
        print(
            f"swarm: not delivered within {args.wait:g} s: {', '.join(waiting)} still "
            f"queued; {'it' if one else 'they'} will be delivered, do not send "
            f"{'it' if one else 'them'} again (`swarm messages` shows when)",
            file=sys.stderr,
        )
        return EXIT_STILL_QUEUED
    return 0


def _check_skill(
    args: argparse.Namespace, run_dir: Path, name: str, params: dict[str, str]
) -> None:
    """Refuse an unknown skill, or a parameter the skill does not take, before anything is
    queued: one line naming the skills there are, or the skill's parameters."""
    listing = _ask(args, run_dir, {"op": "skills", "show": ""})
    skills = {s["name"]: s for s in listing["skills"]}
    if name not in skills:
        raise ClientError(f"unknown skill {name!r} (skills: {', '.join(sorted(skills))})")
    declared: dict[str, str | None] = skills[name]["params"]
    unknown = [k for k in params if k not in declared and k not in BUILT_IN_VARS]
    if unknown:  # a variable the body uses without declaring it is a parameter too
        body = _ask(args, run_dir, {"op": "skills", "show": name})["body"]
        unknown = [k for k in unknown if "{" + k + "}" not in body]
    if unknown:
        takes = ", ".join(k if v is None else f"{k}={v}" for k, v in declared.items())
        raise ClientError(
            f"skill {name!r} has no parameter {unknown[0]!r} ("
            + (f"its parameters: {takes})" if takes else "it takes none)")
        )


def _rounds(text: str) -> int:
    """--max-rounds: a whole number of reviews, 1 to 100."""
    if not text.isdigit() or not 1 <= int(text) <= 100:
        raise argparse.ArgumentTypeError(f"{text!r}: give a number of reviews from 1 to 100")
    return int(text)


def _duration(secs: float) -> str:
    """45s, 1m30s, 10m, 1h30m, 1d4h: the format layouts accept (stdlib-only here, as this
    client is copied to remote nodes; swarm_tui.config.work.format_duration is the same)."""
    units = (("d", 86400), ("h", 3600), ("m", 60), ("s", 1))
    left = max(0, int(secs))
    for i, (unit, size) in enumerate(units):
        if left >= size or unit == "s":
            big, rest = divmod(left, size)
            small = units[i + 1] if i + 1 < len(units) else None
            tail = f"{rest // small[1]}{small[0]}" if small and rest // small[1] else ""
            return f"{big}{unit}{tail}"
    return "0s"


# states whose clock counts from when they began (the sidebar's too): waiting on a prompt,
# unreachable, idle or exited since then; a working agent's counts its quiet screen
SINCE_STATE = ("needs-permission", "unreachable", "idle", "exited")


def _age(ts: float) -> str:
    return _duration(time.time() - ts)


def cmd_ls(args: argparse.Namespace, run_dir: Path) -> int:
    reply = _ask(args, run_dir, {"op": "ls"})
    if args.json:
        print(json.dumps(reply["agents"], indent=2))
        return 0
    rows = [("NAME", "ROLE", "CLI", "STATE", "QUIET", "CTX", "QUEUED", "FOCUS")]
    for a in reply["agents"]:
        ctx = f"{a['context_left']}%" if a["context_left"] is not None else "-"
        queued = str(a["queued"])
        if a.get("oldest_queued"):  # how long the oldest of them has waited
            queued += f" ({_age(a['oldest_queued'])})"
        # as the sidebar: how long it has been what STATE says, or (working) how long its
        # screen has been quiet
        waited = a.get("state_since") if a["state"] in SINCE_STATE else None
        rows.append(
            (
                a["name"],
                a["role"],
                a["cli"],
                a["state"],
                _age(waited or a["last_output"]),
                ctx,
                queued,
                a["focus"],
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=False)) + "  " + r[-1])
    return 0


def cmd_focus(args: argparse.Namespace, run_dir: Path) -> int:
    words: list[str] = args.args
    if len(words) == 1:
        if not os.environ.get("SWARM_TOKEN"):
            raise ClientError(
                'usage: swarm focus NAME "label" (or just "label" from an agent\'s own pane)'
            )
        name, label = None, words[0]
    else:
        name, label = words[0], " ".join(words[1:])
    reply = _ask(args, run_dir, {"op": "focus", "agent": name, "label": label})
    print(f"{reply['agent']}: {reply['focus']}")
    return 0


def cmd_messages(args: argparse.Namespace, run_dir: Path) -> int:
    reply = _ask(args, run_dir, {"op": "messages", "limit": args.limit})
    if args.json:
        print(json.dumps(reply, indent=2))
        return 0
    for m in reply["messages"]:
        stamp = time.strftime("%H:%M:%S", time.localtime(m["created"]))
        text = m["text"].replace("\n", " ⏎ ")
        print(f"{stamp} #{m['id']} {m['sender']} → {m['recipient']} [{m['status']}] {text[:100]}")
    if reply["graph"]:
        print("\nwho talks to whom:")
        for sender, recipient, n in reply["graph"]:
            print(f"  {sender} → {recipient}: {n}")
    return 0


def cmd_fresh(args: argparse.Namespace, run_dir: Path) -> int:
    reply = _ask(args, run_dir, {"op": "fresh", "agent": args.name, "handoff": not args.no_handoff})
    if args.no_handoff:
        print(
            f"{reply['agent']}: fresh start begun (no handoff note: new conversation, then "
            "its focus re-injected)"
        )
    else:
        print(
            f"{reply['agent']}: fresh start begun (handoff note, new conversation, then its "
            "focus and the note re-injected)"
        )
    return 0


def cmd_task(args: argparse.Namespace, run_dir: Path) -> int:
    spec = args.spec
    if args.spec_file:
        try:
            spec = Path(args.spec_file).read_text(encoding="utf-8")
        except OSError as exc:
            raise ClientError(f"{args.spec_file}: cannot read the spec: {exc.strerror}") from None
    if not (spec or "").strip():
        raise ClientError("the task's spec is empty")
    reply = _ask(
        args,
        run_dir,
        {
            "op": "task",
            "agent": args.name,
            "spec": spec,
            "verify": args.verify,
            "judge": args.judge,
            "judge_command": args.judge_command,
            "review_on_idle": not args.no_review_on_idle,
            "max_rounds": args.max_rounds,
        },
    )
    print(f"task #{reply['task']} queued for {args.name}")
    return 0


def cmd_done(args: argparse.Namespace, run_dir: Path) -> int:
    reply = _ask(args, run_dir, {"op": "done", "note": args.note})
    print(f"{reply['agent']}: task #{reply['task']} claimed done; a judge will review it")
    return 0


def cmd_judge(args: argparse.Namespace, run_dir: Path) -> int:
    reply = _ask(args, run_dir, {"op": "judge", "agent": args.name})
    print(f"review of task #{reply['task']} started")
    return 0


def cmd_tasks(args: argparse.Namespace, run_dir: Path) -> int:
    reply = _ask(args, run_dir, {"op": "tasks"})
    if args.json:
        print(json.dumps(reply["tasks"], indent=2))
        return 0
    for t in reply["tasks"]:
        head = next((ln for ln in str(t["spec"]).splitlines() if ln.strip()), "")[:60]
        print(f"#{t['id']} {t['agent']}: {t['status']} (round {t['rounds']}) {head}")
        if t["reasons"]:
            print(f"    reasons: {t['reasons']}")
        for when, who, verdict, reasons in t["verdicts"]:
            stamp = time.strftime("%H:%M:%S", time.localtime(when))
            print(f"    {stamp} {who}: {verdict}" + (f": {reasons}" if reasons else ""))
    return 0


def cmd_remind(args: argparse.Namespace, run_dir: Path) -> int:
    payload: dict[str, Any] = {
        "op": "remind",
        "action": args.action,
        "id": args.id,
        "minutes": args.minutes,
        "text": args.text,
    }
    if args.action == "add":
        payload["spec"] = {
            k: v
            for k, v in {
                "to": args.to,
                "every": args.every,
                "idle": args.idle,
                "at": args.at,
                "text": args.text,
                "skill": args.skill,
                "action": "fresh" if args.fresh else "",
            }.items()
            if v
        }
        if args.skill:
            _check_skill(args, run_dir, args.skill, {})
    elif args.action != "list" and not args.id:
        raise ClientError(
            f"swarm remind {args.action} needs the reminder's ID (see `swarm remind list`)"
        )
    try:
        reply = _ask(args, run_dir, payload)
    except ClientError as exc:
        field = str(exc).split(":", 1)[0]
        if args.action == "add" and field in ("every", "idle", "at"):
            raise ClientError(f"--{exc}") from None  # the flag the user typed
        raise
    if "id" in reply:
        print(f"reminder #{reply['id']} added")
    for rid, agent in reply.get("fired", []):
        print(f"reminder #{rid} queued for {agent}")
    if args.action != "add" and "reminders" in reply:
        if args.json:
            print(json.dumps(reply["reminders"], indent=2))
            return 0
        for r in reply["reminders"]:
            when = {
                "every": f"every {_duration(r['period'])}",
                "idle": f"idle {_duration(r['period'])}",
                "at": f"at {r['at']}",
            }[r["kind"]]
            nxt = (
                ""
                if r["kind"] == "idle"
                else time.strftime(" next %H:%M:%S", time.localtime(r["next_due"]))
            )
            what = (
                "fresh start"
                if r.get("action") == "fresh"
                else f"skill {r['skill']}"
                if r["skill"]
                else repr(r["text"][:50])
            )
            paused = " (paused)" if r["paused"] else ""
            print(f"#{r['id']} to {r['target']} {when}{nxt}{paused}: {what}")
    return 0


def cmd_skills(args: argparse.Namespace, run_dir: Path) -> int:
    if args.show and not args.name:
        raise ClientError("usage: swarm skills show NAME")
    reply = _ask(args, run_dir, {"op": "skills", "show": args.name if args.show else ""})
    if args.json:
        print(json.dumps({k: v for k, v in reply.items() if k != "ok"}, indent=2))
        return 0
    if args.show:
        s = reply["skill"]
        params = ", ".join(k if v is None else f"{k}={v}" for k, v in s["params"].items())
        print(f"# {s['name']}: {s['description']}")
        if s["when"]:
            print(f"when: {s['when']}")
        if params:
            print(f"params: {params}")
        print(f"\n{reply['body']}")
        return 0
    width = max((len(s["name"]) for s in reply["skills"]), default=0)
    for s in sorted(reply["skills"], key=lambda s: s["name"]):
        print(f"{s['name'].ljust(width)}  {s['description']}")
    for problem in reply["problems"]:
        print(f"swarm: skipped a broken skill: {problem}", file=sys.stderr)
    return 0


def cmd_save(args: argparse.Namespace, run_dir: Path) -> int:
    reply = _ask(args, run_dir, {"op": "save", "name": args.name, "force": args.force})
    print(f"saved {reply['path']} (bring it back with: swarm up {args.name})")
    return 0


def cmd_hook(args: argparse.Namespace, run_dir: Path) -> int:
    raw = args.json if args.json is not None else sys.stdin.read()
    try:
        payload = json.loads(raw) if raw.strip() else {}
    except json.JSONDecodeError as exc:
        raise ClientError(f"hook {args.cli}: the event is not JSON ({exc})") from None
    if not isinstance(payload, dict):
        payload = {"value": payload}
    _ask(args, run_dir, {"op": "hook", "cli": args.cli, "payload": payload}, timeout=10)
    return 0


GREP_CONTEXT = 20  # lines of context at most (the engine's MAX_GREP_CONTEXT)
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # never to the user's terminal


def cmd_grep(args: argparse.Namespace, run_dir: Path) -> int:
    if len(args.args) != 1:
        raise GrepTrouble(
            "usage: swarm grep PATTERN [--agent NAME] [-C N] [-i] (one "
            "pattern: quote it; `--` before one that starts with '-')"
        )
    pattern = args.args[0]
    try:
        re.compile(pattern, re.IGNORECASE if args.ignore_case else 0)
    except (re.error, OverflowError, RecursionError) as exc:
        raise GrepTrouble(f"grep: bad pattern {pattern!r}: {exc}") from None
    if not 0 <= args.context <= GREP_CONTEXT:
        raise GrepTrouble(f"-C {args.context}: give 0 to {GREP_CONTEXT} lines of context")
    try:
        found = request(
            find_socket(args.fleet, run_dir),
            {
                "op": "grep",
                "pattern": pattern,
                "agent": args.agent,
                "context": args.context,
                "ignore_case": args.ignore_case,
            },
            timeout=60,
        )
    except ClientError as exc:
        raise GrepTrouble(str(exc)) from None
    for i, run in enumerate(found["hits"]):
        if i and args.context:
            print("--")
        for ln in run["lines"]:
            mark = ":" if ln["match"] else "-"
            text = _CONTROLS.sub("", str(ln["text"]))
            print(f"{run['agent']}{mark}{ln['line']}{mark} {text}".rstrip())
    for line in found.get("skipped", []):
        print(f"swarm: not searched: {line}", file=sys.stderr)
    if found.get("truncated"):
        print(
            f"swarm: grep stopped after {found['matches']} matches: narrow the pattern or "
            "name an agent (--agent)",
            file=sys.stderr,
        )
    return 0 if found["matches"] else 1


CLIENT_VERBS: dict[str, Callable[[argparse.Namespace, Path], int]] = {
    "send": cmd_send,
    "ls": cmd_ls,
    "focus": cmd_focus,
    "messages": cmd_messages,
    "hook": cmd_hook,
    "fresh": cmd_fresh,
    "task": cmd_task,
    "done": cmd_done,
    "judge": cmd_judge,
    "tasks": cmd_tasks,
    "remind": cmd_remind,
    "skills": cmd_skills,
    "save": cmd_save,
    "grep": cmd_grep,
}


def main(argv: list[str] | None = None) -> None:
    """The `swarm` command on a remote node: only the verbs that talk to the socket."""
    parser = argparse.ArgumentParser(prog="swarm", description="Talk to the running swarm.")
    add_client_verbs(parser.add_subparsers(dest="verb", required=True, metavar="VERB"))
    args = parse_args(parser, list(sys.argv[1:] if argv is None else argv))
    home = Path(os.environ.get("SWARM_HOME") or "~/.local/state/swarm").expanduser()
    try:
        code = CLIENT_VERBS[args.verb](args, home / "run")
    except ClientError as exc:
        print(f"swarm: {exc}", file=sys.stderr)
        code = getattr(exc, "exit_code", 1)
    except KeyboardInterrupt:
        code = 130
    except BrokenPipeError:  # `swarm messages | head`: the reader left, nothing to say
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        code = 0
    sys.exit(code)


if __name__ == "__main__":
    main()
