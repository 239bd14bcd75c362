"""`swarm`: start a fleet and watch it, or talk to the running one.

Verbs that need the running swarm (`send`, `ls`, `focus`, `messages`) go through its Unix
socket; they work from any shell, including an agent's own pane, where the agent's name and
token in the environment make it the sender.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

from swarm_tui import paths
from swarm_tui.client import ClientError, find_socket, request
from swarm_tui.errors import SwarmError

ROOT = Path(__file__).resolve().parent.parent


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="swarm", description="Watch and drive fleets of AI "
                                "coding agents running in tmux.")
    sub = p.add_subparsers(dest="verb", required=True, metavar="VERB")

    demo = sub.add_parser("demo", help="start the built-in demo fleet of mock agents")
    demo.add_argument("--headless", action="store_true", help="run the engine without the UI")

    up = sub.add_parser("up", help="start (or re-attach to) a fleet from a layout, and watch it")
    up.add_argument("layout", help="a layout file, or a name in layouts/")
    up.add_argument("--headless", action="store_true", help="run the engine without the UI")

    down = sub.add_parser("down", help="stop every agent of a fleet")
    down.add_argument("layout")

    send = sub.add_parser("send", help="inject a message into agents as real user input",
                          description="swarm send NAME [NAME...] MESSAGE | --all MESSAGE | "
                          "--role ROLE MESSAGE. MESSAGE '-' reads standard input; put `--` "
                          "before a message that starts with '-'.")
    send.add_argument("args", nargs="*", metavar="NAME... MESSAGE")
    send.add_argument("--all", action="store_true", help="every agent but the sender")
    send.add_argument("--role", help="every agent with this role")
    send.add_argument("--wait", type=float, default=0.0, metavar="SECS",
                      help="wait up to SECS for delivery and report it")
    send.add_argument("--fleet", help="which running fleet (default: the only one)")

    ls = sub.add_parser("ls", help="list the agents of the running fleet")
    ls.add_argument("--json", action="store_true")
    ls.add_argument("--fleet")

    focus = sub.add_parser("focus", help="set an agent's focus label (your own from its pane)")
    focus.add_argument("args", nargs="*", metavar="[NAME] LABEL")
    focus.add_argument("--fleet")

    msgs = sub.add_parser("messages", help="the message journal: who said what to whom")
    msgs.add_argument("--json", action="store_true")
    msgs.add_argument("--limit", type=int, default=50)
    msgs.add_argument("--fleet")

    att = sub.add_parser("attach", help="attach your terminal to an agent's tmux window")
    att.add_argument("name")
    att.add_argument("--fleet")

    sub.add_parser("schema", help="print the layout file's JSON Schema")
    return p


def parse(argv: list[str]) -> argparse.Namespace:
    """Parse a command line; options may come between names and message (intermixed)."""
    parser = _parser()
    subs = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    if not argv or argv[0] not in subs.choices:
        return parser.parse_args(argv)  # prints usage or the verb list
    verb, rest = argv[0], argv[1:]
    tail: list[str] = []
    if "--" in rest:
        # everything after `--` is message text, even words that start with '-'
        cut = rest.index("--")
        rest, tail = rest[:cut], rest[cut + 1 :]
    args = subs.choices[verb].parse_intermixed_args(rest)
    args.verb = verb
    if tail:
        args.args = [*(getattr(args, "args", None) or []), *tail]
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse(list(sys.argv[1:] if argv is None else argv))
    try:
        code = VERBS[args.verb](args)
    except (SwarmError, ClientError) as exc:
        print(f"swarm: {exc}", file=sys.stderr)
        code = getattr(exc, "exit_code", 1)
    except KeyboardInterrupt:
        code = 130
    sys.exit(code)


# ---------------------------------------------------------------------------- fleet owner
def cmd_demo(args: argparse.Namespace) -> int:
    return _up(str(ROOT / "layouts" / "demo.toml"), args.headless)


def cmd_up(args: argparse.Namespace) -> int:
    return _up(args.layout, args.headless)


def _up(layout_arg: str, headless: bool) -> int:
    from swarm_tui.config.layout import load_layout, resolve_layout
    from swarm_tui.fleet.lock import FleetLock
    from swarm_tui.fleet.store import Store
    from swarm_tui.hosts.local import check_tmux

    loaded = load_layout(resolve_layout(layout_arg))
    check_tmux()
    lock = FleetLock(paths.lock_path(loaded.fleet), loaded.fleet)
    lock.acquire()
    store = Store(paths.db_path(loaded.fleet))
    try:
        return asyncio.run(_run_fleet(loaded, store, headless))
    finally:
        store.close()
        lock.release()


async def _run_fleet(loaded: Any, store: Any, headless: bool) -> int:
    from swarm_tui.fleet.engine import Fleet
    from swarm_tui.fleet.server import FleetServer

    fleet = Fleet(loaded, store)
    server = FleetServer(fleet, paths.socket_path(fleet.name))
    try:
        await fleet.start()
        await server.start()
        if headless:
            await _headless(fleet)
        else:
            from swarm_tui.ui.app import SwarmApp

            note = await SwarmApp(fleet).run_async()
            if note:
                print(f"swarm: {note}")
    finally:
        await server.stop()
        await fleet.stop()
    return 0


async def _headless(fleet: Any) -> None:
    from swarm_tui.fleet.headless import LogListener

    fleet.listener = LogListener(sys.stdout)
    print(f"swarm: fleet {fleet.name!r} running headless with {len(fleet.agents)} agents "
          f"(re-attached {len(fleet.agents) - len(fleet.created)}); Ctrl-C stops watching, "
          "agents keep running", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    ended = asyncio.create_task(fleet.ended.wait())
    await asyncio.wait([asyncio.create_task(stop.wait()), ended],
                       return_when=asyncio.FIRST_COMPLETED)
    if fleet.ended.is_set():
        print(f"swarm: {fleet.end_reason}", flush=True)


def cmd_down(args: argparse.Namespace) -> int:
    from swarm_tui.config.layout import load_layout, resolve_layout
    from swarm_tui.hosts.local import LocalHost, check_tmux

    loaded = load_layout(resolve_layout(args.layout))
    check_tmux()
    host = LocalHost(paths.tmux_socket_name(loaded.fleet), loaded.fleet)

    async def down() -> bool:
        existed = await host.session_exists()
        await host.kill_server()
        return existed

    if asyncio.run(down()):
        print(f"swarm: stopped fleet {loaded.fleet!r}")
    else:
        print(f"swarm: fleet {loaded.fleet!r} was not running")
    return 0


def cmd_schema(args: argparse.Namespace) -> int:
    from swarm_tui.config.layout import json_schema

    print(json_schema())
    return 0


# ---------------------------------------------------------------------------- socket clients
def _ask(args: argparse.Namespace, payload: dict[str, Any], timeout: float = 30.0) -> Any:
    return request(find_socket(args.fleet, paths.run_dir()), payload, timeout)


def cmd_send(args: argparse.Namespace) -> int:
    words: list[str] = args.args
    if args.all or args.role:
        if len(words) != 1:
            raise ClientError("with --all or --role, give just the message (quote it)")
        names, text = [], words[0]
    else:
        if len(words) < 2:
            raise ClientError('usage: swarm send NAME [NAME...] "message" (or --all / --role)')
        names, text = words[:-1], words[-1]
    if text == "-":
        text = sys.stdin.read()
    if not text.strip():
        raise ClientError("empty message: nothing to send")
    reply = _ask(args, {"op": "send", "to": names, "all": args.all, "role": args.role,
                        "text": text, "wait": args.wait}, timeout=args.wait + 30)
    failed = 0
    for m in reply["messages"]:
        detail = f" ({m['detail']})" if m["detail"] else ""
        print(f"#{m['id']} to {m['to']}: {m['status']}{detail}")
        failed += m["status"] in ("failed", "uncertain")
    return 1 if failed else 0


def _age(ts: float) -> str:
    secs = max(0, int(time.time() - ts))
    if secs < 60:
        return f"{secs}s"
    if secs < 3600:
        return f"{secs // 60}m"
    return f"{secs // 3600}h{secs % 3600 // 60:02d}m"


def cmd_ls(args: argparse.Namespace) -> int:
    reply = _ask(args, {"op": "ls"})
    if args.json:
        print(json.dumps(reply["agents"], indent=2))
        return 0
    rows = [("NAME", "ROLE", "CLI", "STATE", "QUIET", "CTX", "QUEUED", "FOCUS")]
    for a in reply["agents"]:
        ctx = f"{a['context_left']}%" if a["context_left"] is not None else "-"
        rows.append((a["name"], a["role"], a["cli"], a["state"], _age(a["last_output"]), ctx,
                     str(a["queued"]), a["focus"]))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=False)) + "  " + r[-1])
    return 0


def cmd_focus(args: argparse.Namespace) -> int:
    words: list[str] = args.args
    if len(words) == 1:
        if not os.environ.get("SWARM_TOKEN"):
            raise ClientError('usage: swarm focus NAME "label" (or just "label" from an '
                              "agent's own pane)")
        name, label = None, words[0]
    else:
        name, label = words[0], " ".join(words[1:])
    reply = _ask(args, {"op": "focus", "agent": name, "label": label})
    print(f"{reply['agent']}: {reply['focus']}")
    return 0


def cmd_messages(args: argparse.Namespace) -> int:
    reply = _ask(args, {"op": "messages", "limit": args.limit})
    if args.json:
        print(json.dumps(reply, indent=2))
        return 0
    for m in reply["messages"]:
        stamp = time.strftime("%H:%M:%S", time.localtime(m["created"]))
        text = m["text"].replace("\n", " ⏎ ")
        print(f"{stamp} #{m['id']} {m['sender']} → {m['recipient']} [{m['status']}] "
              f"{text[:100]}")
    if reply["graph"]:
        print("\nwho talks to whom:")
        for sender, recipient, n in reply["graph"]:
            print(f"  {sender} → {recipient}: {n}")
    return 0


def cmd_attach(args: argparse.Namespace) -> int:
    from swarm_tui.hosts.local import LocalHost, check_tmux

    check_tmux()
    fleet = args.fleet or os.environ.get("SWARM_FLEET")
    if not fleet:
        fleet = find_socket(None, paths.run_dir()).stem
    host = LocalHost(paths.tmux_socket_name(fleet), fleet)
    argv = host.attach_argv(f"={fleet}:{args.name}")
    os.execvp(argv[0], argv)


VERBS = {
    "demo": cmd_demo, "up": cmd_up, "down": cmd_down, "send": cmd_send, "ls": cmd_ls,
    "focus": cmd_focus, "messages": cmd_messages, "attach": cmd_attach, "schema": cmd_schema,
}

if __name__ == "__main__":
    main()
