"""Messages typed into real mock agents on a real tmux server arrive exactly as sent.

swarm strips C0 controls other than tab and newline (and DEL) and turns CR/CRLF into LF;
everything else — shell and tmux syntax, key names, non-ASCII, 100 KB — must reach the agent's
input byte for byte, in order, and the journal must say `delivered`.
"""

from __future__ import annotations

import pytest

from swarm_tui.testing import async_wait_until, mock_agent

pytestmark = pytest.mark.integration

BIG = "".join(
    f"{i:05d} the quick brown fox jumps over the lazy dog; 'q' \"qq\" $x #{{y}}\n"
    for i in range(1600)
)[: 100 * 1024]


def cases(canary: str) -> dict[str, list[tuple[str, str]]]:
    """Per agent, in order: (text sent, text the agent must receive)."""
    return {
        "Ada": [
            ("-rf / starts with a dash", "-rf / starts with a dash"),
            ("ends with a semicolon;", "ends with a semicolon;"),
            (
                "single ' and double \" quotes, a \\ backslash",
                "single ' and double \" quotes, a \\ backslash",
            ),
        ],
        "Bo": [
            (
                f"$(whoami) `id` ${{HOME}} $HOME $(touch {canary}-shell)",
                f"$(whoami) `id` ${{HOME}} $HOME $(touch {canary}-shell)",
            ),
            (
                f"#{{pane_id}} #S ## #(touch {canary}-tmux)",
                f"#{{pane_id}} #S ## #(touch {canary}-tmux)",
            ),
            ("Enter", "Enter"),
        ],
        "Cy": [
            ("C-c", "C-c"),
            ("red \x1b[31mRED\x1b[0m plain", "red [31mRED[0m plain"),
            ("paste end \x1b[201~ then more", "paste end [201~ then more"),
        ],
        "Di": [
            (
                "nul\x00byte, bell\x07, backspace\x08, del\x7f, tab\tkept",
                "nulbyte, bell, backspace, del, tab\tkept",
            ),
            ("café é 中文 emoji 🚀🧪 — done", "café é 中文 emoji 🚀🧪 — done"),
            (
                "line one\nline two\n\tindented three\nline four",
                "line one\nline two\n\tindented three\nline four",
            ),
        ],
        "Ed": [
            (BIG, BIG),
            ("crlf\r\nand a lone cr\rend", "crlf\nand a lone cr\nend"),
            ("just\ntwo lines", "just\ntwo lines"),
        ],
    }


async def test_every_kind_of_text_arrives_exactly_and_in_order(sandbox, start_fleet):
    canary = str(sandbox.files / "pwned")
    plan = cases(canary)
    layout = sandbox.layout("inject", *(mock_agent(name) for name in plan))
    run = await start_fleet(layout)
    await run.wait_states("idle")

    sent = {
        name: [run.fleet.send([name], text)[0] for text, _ in items] for name, items in plan.items()
    }
    ids = [m.id for ms in sent.values() for m in ms]

    def all_closed() -> bool:
        return all(run.store.message(i).status not in ("queued", "sending") for i in ids)

    await async_wait_until(all_closed, 20, "every message to be delivered", run.screens)

    for name, items in plan.items():
        expected = [want for _, want in items]
        got = sandbox.received(name)
        assert len(got) == len(expected), f"{name} received {len(got)} messages: {got!r:.300}"
        for i, (g, w) in enumerate(zip(got, expected, strict=True)):
            assert g == w, f"{name} message {i}: got {g!r:.200}, want {w!r:.200}"
    assert len(sandbox.received("Ed")[0]) == 100 * 1024

    rows = {r["id"]: r for r in sandbox.journal("inject")}
    for name, messages in sent.items():
        for message, (_, want) in zip(messages, plan[name], strict=True):
            row = rows[message.id]
            assert (row["recipient"], row["sender"], row["status"]) == (
                name,
                "human",
                "delivered",
            ), row
            assert row["text"] == want
    # nothing was ever interpreted by a shell or by tmux's format expander
    assert not list(sandbox.files.glob("pwned*"))


async def test_cli_send_keeps_dash_semicolon_and_stdin_text(sandbox, start_fleet):
    layout = sandbox.layout("clisend", mock_agent("Ada"))
    run = await start_fleet(layout)
    await run.wait_states("idle")

    first = await sandbox.aswarm("send", "Ada", "--wait", "15", "--", "-n dash first;")
    assert first.returncode == 0, first.stderr
    assert first.stdout.strip().endswith("to Ada: delivered"), first.stdout
    piped = "from stdin\x00 with \x1b[201~ and\nsecond line ü"
    second = await sandbox.aswarm("send", "Ada", "-", "--wait", "15", input=piped)
    assert second.returncode == 0, second.stderr
    assert "to Ada: delivered" in second.stdout, second.stdout

    assert sandbox.received("Ada") == ["-n dash first;", "from stdin with [201~ and\nsecond line ü"]
    assert [r["status"] for r in sandbox.journal("clisend")] == ["delivered", "delivered"]
