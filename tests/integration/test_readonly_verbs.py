"""What needs no engine works without one: the journal and the skills are files. A fleet whose
engine has stopped (its agents still running) can still be read and attached to."""

from __future__ import annotations

import pytest

from swarm_tui.testing import Sandbox, mock_agent, wait_until

pytestmark = pytest.mark.integration


def test_read_only_verbs_and_attach_work_with_no_engine(sandbox: Sandbox) -> None:
    layout = sandbox.layout(
        "quiet",
        mock_agent("Ada", tasks=[{"spec": "write the parser"}]),
        reminders=[{"to": "Ada", "every": "10m", "text": "keep going"}],
    )
    owner = sandbox.start_headless(layout)
    owner.wait_ready()
    sent = sandbox.swarm("send", "Ada", "remember the milk", "--wait", "20")
    assert sent.returncode == 0, sent.stdout + sent.stderr
    owner.interrupt()  # the engine stops; Ada keeps running in tmux
    assert owner.wait() == 0
    assert "no swarm is running" in sandbox.swarm("ls").stderr

    messages = sandbox.swarm("messages")
    assert messages.returncode == 0, messages.stderr
    assert "human → Ada [delivered] remember the milk" in messages.stdout
    tasks = sandbox.swarm("tasks")
    assert tasks.returncode == 0 and "Ada:" in tasks.stdout and "write the parser" in tasks.stdout
    reminders = sandbox.swarm("remind", "list")
    assert reminders.returncode == 0 and "to Ada every 10m" in reminders.stdout, reminders
    skills = sandbox.swarm("skills")
    assert skills.returncode == 0 and "stall" in skills.stdout
    shown = sandbox.swarm("skills", "show", "stall")
    assert shown.returncode == 0 and shown.stdout.startswith("# stall:")

    # a write still needs the engine, and says so in one line
    refused = sandbox.swarm("send", "Ada", "hello")
    assert refused.returncode == 1 and "no swarm is running" in refused.stderr
    # attach reaches tmux for a detached agent (no terminal here: tmux itself refuses)
    attach = sandbox.swarm("attach", "ada")
    assert "no window" not in attach.stderr and "terminal" in attach.stderr, attach.stderr
    missing = sandbox.swarm("attach", "Nobody")
    assert missing.returncode == 1
    assert "fleet 'quiet' has no window for agent 'Nobody'" in missing.stderr
    wait_until(lambda: sandbox.tmux("quiet").alive(), 5, "the agents to be still running")


def test_no_journal_and_no_engine_is_one_line(sandbox: Sandbox) -> None:
    result = sandbox.swarm("messages")
    assert result.returncode == 1
    assert result.stderr.strip() == (
        "swarm: no swarm is running and no fleet has a journal "
        "here (start one: swarm demo, or swarm up LAYOUT)"
    )
