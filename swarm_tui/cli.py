"""`swarm`: start a fleet and watch it, or talk to the running one.

Verbs that need the running swarm (`send`, `ls`, `focus`, `messages`) go through its Unix
socket; they work from any shell, including an agent's own pane, where the agent's name and
token in the environment make it the sender.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from swarm_tui import client as client_module
from swarm_tui import daemon, paths
from swarm_tui.client import (
    CLIENT_VERBS,
    ClientError,
    NoEngine,
    Refused,
    add_client_verbs,
    find_socket,
    parse_args,
    request,
)
from swarm_tui.errors import SwarmError
from swarm_tui.gitverbs import add_verbs, cmd_diff, cmd_merge

ROOT = Path(__file__).resolve().parent.parent


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="swarm", description="Watch and drive fleets of AI coding agents running in tmux."
    )
    sub = p.add_subparsers(dest="verb", required=True, metavar="VERB")

    fresh_help = (
        "start from a clean journal: the old one (queued messages, tasks, "
        "verdicts) is kept aside, renamed with the time, in the state directory"
    )
    headless_help = (
        "run the engine in this process, without the UI (for a service "
        "manager or a script); Ctrl-C stops it, agents keep running"
    )
    demo = sub.add_parser("demo", help="start the built-in demo fleet of mock agents")
    demo.add_argument("--headless", action="store_true", help=headless_help)
    demo.add_argument("--fresh", action="store_true", help=fresh_help)
    demo.add_argument("--log", help=argparse.SUPPRESS)

    up = sub.add_parser(
        "up",
        help="start a fleet's engine in the background (or find it "
        "running) and watch it; `q` leaves the engine running",
    )
    up.add_argument(
        "layout",
        nargs="?",
        default="",
        help="a layout file, or a name in layouts/ (none: choose from the list)",
    )
    up.add_argument("--headless", action="store_true", help=headless_help)
    up.add_argument("--fresh", action="store_true", help=fresh_help)
    up.add_argument("--log", help=argparse.SUPPRESS)  # the background engine's own log file

    ui = sub.add_parser("ui", help="watch a running fleet (another terminal may watch too)")
    ui.add_argument("fleet", nargs="?", default=None)
    ui.add_argument(
        "--ssh",
        metavar="HOST",
        help="watch the engine running on HOST (a head "
        "node), through its socket forwarded over SSH",
    )
    ui.add_argument(
        "--remote-home",
        default="",
        metavar="DIR",
        help="swarm's state directory on HOST, if not the default there",
    )

    serve = sub.add_parser("serve", help="serve the view to a browser (a token in the URL)")
    serve.add_argument("fleet", nargs="?", default=None)
    serve.add_argument("--port", type=int, default=8765)
    serve.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to bind (default: 127.0.0.1; reach it from elsewhere through an SSH tunnel)",
    )

    sub.add_parser("ps", help="list the running engines: fleet, pid, uptime, agents, watchers")

    stop = sub.add_parser("stop", help="stop a fleet's engine; its agents keep running")
    stop.add_argument("fleet", nargs="?", default=None)

    logs = sub.add_parser("logs", help="show a fleet engine's log")
    logs.add_argument("fleet", nargs="?", default=None)
    logs.add_argument("-f", "--follow", action="store_true", help="keep printing new lines")
    logs.add_argument("-n", "--lines", type=int, default=50, help="how many lines (default 50)")

    sub.add_parser("layouts", help="list saved layouts (project and user) with a summary")

    down = sub.add_parser("down", help="stop every agent of a fleet")
    down.add_argument(
        "layout",
        nargs="?",
        help="its layout (a path or a name from `swarm layouts`); default: the one fleet running",
    )
    down.add_argument(
        "--clean",
        action="store_true",
        help="then remove the agents' "
        "worktrees whose branches are merged into their base (the rest are "
        "kept and listed)",
    )

    add_verbs(sub)

    add_client_verbs(sub)

    att = sub.add_parser("attach", help="attach your terminal to an agent's tmux window")
    att.add_argument("name")
    att.add_argument("--fleet")

    doc = sub.add_parser(
        "doctor",
        help="check every host of a layout: reachable, host key, tmux, Python, agent CLIs, GPUs",
    )
    doc.add_argument("layout")

    answer = sub.add_parser(
        "answer",
        help="answer an agent's permission prompt: y, n or "
        "an option's number, as the view's keys do",
        description="swarm answer AGENT CHOICE (y, n or an option's "
        "number 1-9). Exit 0 answered, 1 refused (one line says why; "
        "nothing more was typed), 2 bad input or no engine.",
    )
    answer.add_argument("agent")
    answer.add_argument("choice")
    answer.add_argument("--fleet")

    sub.add_parser("schema", help="print the layout file's JSON Schema")
    return p


def parse(argv: list[str]) -> argparse.Namespace:
    return parse_args(_parser(), argv)


def _offline(fleet: str | None, payload: dict[str, Any]) -> dict[str, Any] | None:
    from swarm_tui.fleet.readonly import answer

    return answer(fleet, payload)


def main(argv: list[str] | None = None) -> None:
    args = parse(list(sys.argv[1:] if argv is None else argv))
    client_module.offline = _offline  # read-only verbs work with no engine running
    try:
        verb = VERBS.get(args.verb)
        code = verb(args) if verb else CLIENT_VERBS[args.verb](args, paths.run_dir())
    except (SwarmError, ClientError) as exc:
        for line in str(exc).splitlines() or [""]:  # e.g. one per problem in a layout
            print(f"swarm: {line}", file=sys.stderr)
        code = getattr(exc, "exit_code", 1)
    except KeyboardInterrupt:
        code = 130
    except BrokenPipeError:  # `swarm messages | head`: the reader left, nothing to say
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        code = 0
    sys.exit(code)


# ---------------------------------------------------------------------------- fleet owner
def cmd_demo(args: argparse.Namespace) -> int:
    from swarm_tui.up import up

    return up(str(ROOT / "layouts" / "demo.toml"), args.headless, args.fresh, args.log)


def cmd_up(args: argparse.Namespace) -> int:
    from swarm_tui.up import up

    layout = args.layout or _choose_layout()
    return up(layout, args.headless, args.fresh, args.log)


def _layouts() -> list[tuple[str, str, Path]]:
    """(name, one-line summary, path) of every layout in the layout directories."""
    from swarm_tui.config.catalog import fleet_size
    from swarm_tui.config.layout import layout_dirs, load_layout

    seen: dict[str, tuple[str, str, Path]] = {}
    for d in layout_dirs():
        for path in sorted(d.glob("*.toml")) if d.is_dir() else []:
            if path.stem in seen:
                continue
            try:
                loaded = load_layout(path)
                summary = fleet_size(loaded)
                if loaded.layout.description:
                    summary += f" — {loaded.layout.description}"
            except SwarmError as exc:
                summary = f"INVALID: {str(exc).splitlines()[0]}"
            seen[path.stem] = (path.stem, summary, path)
    return list(seen.values())


def cmd_layouts(args: argparse.Namespace) -> int:
    rows = _layouts()
    width = max((len(n) for n, _, _ in rows), default=0)
    for name, summary, path in rows:
        print(f"{name.ljust(width)}  {summary}  ({path})")
    return 0


def _choose_layout() -> str:
    rows = _layouts()
    if not rows:
        raise SwarmError("no layouts found: write one (see README), or run `swarm demo`")
    for i, (name, summary, _) in enumerate(rows, 1):
        print(f"{i:>3}  {name}  {summary}")
    if not sys.stdin.isatty():
        raise SwarmError("name the layout: swarm up NAME (the list is above)")
    answer = input("layout (number or name): ").strip()
    if answer.isdigit() and 1 <= int(answer) <= len(rows):
        return str(rows[int(answer) - 1][2])
    return answer


def cmd_ui(args: argparse.Namespace) -> int:
    from swarm_tui.up import watch

    if args.ssh:
        from swarm_tui.tunnel import Tunnel

        return watch(None, Tunnel(args.ssh, args.fleet, args.remote_home))
    return watch(find_socket(args.fleet, paths.run_dir()))


def cmd_serve(args: argparse.Namespace) -> int:
    sock = find_socket(args.fleet, paths.run_dir())
    reply = daemon.ping(sock)
    if reply is None:
        raise NoEngine(f"no engine answers on {sock} (start it: swarm up LAYOUT)")
    from swarm_tui.ui.serve import serve

    return serve(str(reply["fleet"]), args.host, args.port)


def cmd_ps(args: argparse.Namespace) -> int:
    rows = daemon.running()
    if not rows:
        print("no engine is running")
        return 0
    for sock, reply in rows:
        if reply is None:
            print(
                f"{sock.stem}: not answering (a stale socket: its engine died; `swarm up` "
                "starts it again)"
            )
            continue
        watchers = int(reply.get("watchers", 0))
        print(
            f"{reply['fleet']}: pid {reply['pid']}, up "
            f"{daemon.uptime(time.time() - float(reply.get('started', time.time())))}, "
            f"{reply.get('agents', '?')} agents, {watchers} "
            f"watcher{'s' * (watchers != 1)}" + ("" if reply.get("ready") else ", starting")
        )
    return 0


def cmd_stop(args: argparse.Namespace) -> int:
    print(f"swarm: {daemon.stop(args.fleet)}")
    return 0


def cmd_logs(args: argparse.Namespace) -> int:
    fleet = args.fleet
    if not fleet:
        try:
            fleet = find_socket(None, paths.run_dir()).stem
        except NoEngine:
            from swarm_tui.fleet.readonly import journal_of

            fleet = journal_of(None).stem
    path = daemon.log_path(fleet)
    if not path.exists():
        raise SwarmError(
            f"fleet {fleet!r} has no engine log at {path} (an engine started "
            "with `swarm up` writes one; `--headless` prints to its terminal)"
        )
    return daemon.show_log(path, args.lines, args.follow)


def _running_layout() -> str:
    """The layout of the one fleet whose engine runs here (`swarm down` with no layout)."""
    try:
        sock = find_socket(None, paths.run_dir())
    except NoEngine:
        raise SwarmError(
            "no engine is running here to ask which fleet: name its layout "
            "(`swarm down LAYOUT`; `swarm layouts` lists them)"
        ) from None
    except ClientError:  # several fleets
        names = ", ".join(s.stem for s in sorted(paths.run_dir().glob("*.sock")))
        raise SwarmError(
            f"several fleets are running here ({names}): name the layout of the one to "
            "stop (`swarm down LAYOUT`)"
        ) from None
    reply = daemon.ping(sock)
    if reply is None or not reply.get("layout"):
        raise SwarmError(
            f"the engine on {sock} does not answer: name the fleet's layout (`swarm down LAYOUT`)"
        )
    return str(reply["layout"])


def cmd_down(args: argparse.Namespace) -> int:
    import asyncio

    from swarm_tui.config.layout import load_layout, resolve_layout
    from swarm_tui.fleet.worktrees import clean
    from swarm_tui.hosts import slurm
    from swarm_tui.hosts.registry import make_hosts

    loaded = load_layout(resolve_layout(args.layout or _running_layout()))
    sock = paths.socket_path(loaded.fleet)
    if sock.exists():
        try:  # tell the owner first, so it exits instead of reconnecting
            request(sock, {"op": "down"}, timeout=10)
        except Refused as exc:  # e.g. asked from an agent's pane: nothing is stopped
            print(f"swarm: {exc}", file=sys.stderr)
            return 1
        except ClientError:
            pass  # no owner running: nothing to tell
    loaded = slurm.resolved(loaded)  # a Slurm entry: the nodes its job holds
    hosts = make_hosts(loaded)

    specs = loaded.agents()
    cleaned: list[str] = []

    async def down() -> list[str]:
        async def one(host: Any) -> str:
            try:
                await host.connect()
                existed = await host.session_exists()
                await host.kill_server()
                if args.clean:
                    cleaned.extend(
                        await clean(host, loaded.fleet, [s for s in specs if s.host == host.name])
                    )
                return f"{host.name}: stopped" if existed else f"{host.name}: was not running"
            except SwarmError as exc:
                return f"{host.name}: {exc}"
            finally:
                await host.close()

        return await asyncio.gather(*(one(h) for h in hosts.values()))

    lines = asyncio.run(down())
    failed = [ln for ln in lines if not ln.endswith(("stopped", "was not running"))]
    for line in lines:
        print(f"swarm: fleet {loaded.fleet!r} on {line}")
    for line in cleaned:
        print(f"swarm: {line}")
    if not args.clean and any(s.worktree for s in specs):
        print(
            "swarm: the agents' worktrees are kept (`swarm down --clean` removes those "
            "whose branches are merged)"
        )
    if failed:
        return 1  # agents still run there: what is queued for them may yet be delivered
    for line in asyncio.run(slurm.release(loaded.fleet)):
        print(f"swarm: fleet {loaded.fleet!r}: {line}")
    settled = _settle_journal(loaded.fleet)
    if settled:
        print(f"swarm: fleet {loaded.fleet!r}: {settled}")
    return 0


def _settle_journal(fleet: str, timeout: float = 15.0) -> str:
    """After `swarm down`: nothing queued is typed into the next run's new agents. Waits for
    the fleet's engine (told to stop) to let go of the journal; says what was settled."""
    import time

    from swarm_tui.errors import FleetBusy
    from swarm_tui.fleet.lock import FleetLock
    from swarm_tui.fleet.store import Store

    if not paths.db_path(fleet).exists():
        return ""
    lock = FleetLock(paths.lock_path(fleet), fleet)
    deadline = time.monotonic() + timeout
    while True:
        try:
            lock.acquire()
            break
        except FleetBusy:
            if time.monotonic() > deadline:
                from swarm_tui.up import owner_pid

                return (
                    f"the journal is not settled: swarm pid {owner_pid(fleet)} still runs "
                    "the fleet (its queued messages stay queued)"
                )
            time.sleep(0.1)  # the engine is on its way out
    try:
        store = Store(paths.db_path(fleet))
        try:
            cancelled, reset = store.settle_down(
                "the fleet was stopped (swarm down) before it was typed"
            )
            store.forget_sessions()  # the next start begins new conversations
        finally:
            store.close()
    finally:
        lock.release()
    parts = [f"{cancelled} queued message{'s' * (cancelled != 1)} cancelled"] if cancelled else []
    if reset:
        parts.append(f"{reset} open task{'s' * (reset != 1)} back to pending")
    return "; ".join(parts)


def cmd_doctor(args: argparse.Namespace) -> int:
    import asyncio

    from swarm_tui.config.layout import load_layout, resolve_layout
    from swarm_tui.fleet.doctor import doctor

    loaded = load_layout(resolve_layout(args.layout))
    reports = asyncio.run(doctor(loaded))
    table = loaded.layout.host_table()
    width = max(len(r.host) for r in reports)
    for r in reports:
        tried = f"{_ssh_target(table[r.host].ssh)}: " if not r.ok and r.host in table else ""
        print(f"{r.host.ljust(width)}  {'ok  ' if r.ok else 'FAIL'}  {tried}{r.line}")
    return 0 if all(r.ok for r in reports) else 1


def _ssh_target(destination: str) -> str:
    """What swarm tried for an SSH host: the layout's destination and, read through the SSH
    config as asyncssh reads it, user@address:port (and the jump host)."""
    import asyncssh

    from swarm_tui.config.hosts import parse_destination
    from swarm_tui.hosts.ssh import ssh_config_paths

    user, address, port = parse_destination(destination)
    given: dict[str, Any] = {"port": port} if port else {}
    if user:
        given["username"] = user
    try:
        opts = asyncssh.SSHClientConnectionOptions(config=ssh_config_paths(), host=address, **given)
    except (OSError, ValueError, asyncssh.Error):
        return f"ssh {destination}"
    host = f"[{opts.host}]" if ":" in opts.host else opts.host
    via = f" via {opts.tunnel}" if isinstance(opts.tunnel, str) and opts.tunnel else ""
    return f"ssh {destination} ({opts.username}@{host}:{opts.port}{via})"


class AnswerTrouble(SwarmError):
    """`swarm answer` was asked something it cannot do (bad input, no such agent, no
    engine): exit 2; a refusal of the answer itself is exit 1."""

    exit_code = 2


CHOICES = {
    "y": "yes",
    "yes": "yes",
    "n": "no",
    "no": "no",
    **{str(n): str(n) for n in range(1, 10)},
}


def cmd_answer(args: argparse.Namespace) -> int:
    import asyncio

    from swarm_tui.protocol.client import FleetClient, Unreachable
    from swarm_tui.protocol.client import Refused as NotDone

    choice = CHOICES.get(args.choice.strip().lower())
    if choice is None:
        raise AnswerTrouble(
            f"answer: {args.choice!r} is not an answer: give y, n or an option's number 1-9"
        )
    try:
        client = FleetClient(find_socket(args.fleet, paths.run_dir()))
    except ClientError as exc:
        raise AnswerTrouble(str(exc)) from None

    async def run() -> dict[str, Any]:
        agents = (await client.request({"op": "ls"}))["agents"]
        agent = next((a for a in agents if a["name"].casefold() == args.agent.casefold()), None)
        if agent is None:
            names = ", ".join(a["name"] for a in agents)
            raise AnswerTrouble(f"answer: no agent named {args.agent!r} in this fleet ({names})")
        asking = agent["state"] == "needs-permission"
        # the dialog as the engine last read it: one that changed before the keys go is
        # refused, as one that changed under a view's eyes
        return await client.answer(
            agent["name"],
            choice,
            agent["question"] if asking else None,
            [tuple(o) for o in agent["options"]] if asking else None,
        )

    try:
        reply = asyncio.run(run())
    except Unreachable as exc:
        raise AnswerTrouble(str(exc)) from None
    except NotDone as exc:
        raise SwarmError(" ".join(str(exc).split())) from None  # exit 1, one line
    asks = f"; it asks again: {reply['asks']}" if reply.get("asks") else ""
    print(f"{reply['agent']}: answered {reply['option']}{asks}")
    return 0


def cmd_schema(args: argparse.Namespace) -> int:
    from swarm_tui.config.layout import json_schema

    print(json_schema())
    return 0


def cmd_attach(args: argparse.Namespace) -> int:
    from swarm_tui.hosts.local import LocalHost, check_tmux

    check_tmux()
    fleet = args.fleet or os.environ.get("SWARM_FLEET")
    if not fleet:
        try:
            fleet = find_socket(None, paths.run_dir()).stem
        except NoEngine:  # no engine: the agents may still run; the journal names the fleet
            from swarm_tui.fleet.readonly import journal_of

            fleet = journal_of(None).stem
    host = LocalHost(paths.tmux_socket_name(fleet), fleet)
    windows = subprocess.run(
        host.argv("list-windows", "-t", f"={fleet}", "-F", "#{window_name}"),
        capture_output=True,
        text=True,
    )
    name = next(
        (w for w in windows.stdout.split("\n") if w.casefold() == args.name.casefold()), None
    )
    if name is None:
        raise SwarmError(
            f"fleet {fleet!r} has no window for agent {args.name!r} on this "
            "machine (see `swarm ls`; a stopped fleet starts with `swarm up`)"
        )
    argv = host.attach_argv(f"={fleet}:{name}")
    os.execvp(argv[0], argv)


VERBS = {
    "demo": cmd_demo,
    "up": cmd_up,
    "down": cmd_down,
    "attach": cmd_attach,
    "doctor": cmd_doctor,
    "schema": cmd_schema,
    "layouts": cmd_layouts,
    "ui": cmd_ui,
    "ps": cmd_ps,
    "stop": cmd_stop,
    "logs": cmd_logs,
    "serve": cmd_serve,
    "answer": cmd_answer,
    "diff": cmd_diff,
    "merge": cmd_merge,
}

if __name__ == "__main__":
    main()
