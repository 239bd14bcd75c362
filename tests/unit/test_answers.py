"""What each adapter types to answer its CLI's dialog, read off real captured screens
(tests/fixtures/screens; the keys themselves are tested against the real CLIs in
tests/agents/test_answer_real.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from swarm_tui.agents.answers import CannotAnswer, numbered, pick, shortcut
from swarm_tui.agents.base import AgentState, Reading, plain
from swarm_tui.agents.registry import adapter_for
from swarm_tui.fleet.answer import same_dialog

SCREENS = Path(__file__).resolve().parents[1] / "fixtures" / "screens"


def reading(cli: str, name: str) -> Reading:
    """The adapter's reading of a captured screen, colours and all, as the engine reads it
    before it answers."""
    raw = (SCREENS / f"{cli}-{name}.txt").read_text(encoding="utf-8").splitlines()
    adapter = adapter_for(cli)
    return adapter.with_colours(raw, adapter.read([plain(ln) for ln in raw]))


def answer_keys(cli: str, screen: Reading, choice: str) -> list[str]:
    """The keys the engine types (swarm_tui/fleet/answer.py): the option `choice` means,
    then the adapter's keys for it."""
    return adapter_for(cli).option_keys(screen, pick(cli, screen, choice))


def keys(cli: str, name: str, choice: str) -> list[str]:
    return answer_keys(cli, reading(cli, name), choice)


@pytest.mark.parametrize(
    ("cli", "screen", "yes", "no", "numbers"),
    [
        # the number picks the option at once
        ("claude", "permission", ["1"], ["3"], {"2": ["2"]}),
        ("gemini", "permission", ["1"], ["3"], {"2": ["2"]}),
        ("mock", "permission", ["1"], ["2"], {"2": ["2"]}),
        # keys the options name: (y), (p), (esc)
        ("codex", "permission", ["y"], ["Escape"], {"2": ["p"], "3": ["Escape"]}),
        # the number, or the key a text-field option names (Esc to stop): never Enter
        ("copilot", "permission", ["1"], ["Escape"], {"2": ["2"], "3": ["Escape"]}),
        ("copilot", "trust", ["1"], ["Escape"], {"2": ["2"]}),
        # the letter on aider's question line, then Enter
        ("aider", "permission-file", ["y", "Enter"], ["n", "Enter"], {"3": ["d", "Enter"]}),
        ("aider", "permission-create", ["y", "Enter"], ["n", "Enter"], {}),
        # no numbers: the arrows from the ❯ (on "No, exit" / "No (recommended)"), then Enter
        ("claude", "trust-dialog", ["Down", "Enter"], ["Enter"], {"1": ["Enter"]}),
        ("claude", "api-key-dialog", ["Up", "Enter"], ["Enter"], {"2": ["Enter"]}),
        # a row of options: left / right from the one its colours mark, then Enter
        (
            "opencode",
            "permission-ansi",
            ["Enter"],
            ["Right", "Right", "Enter"],
            {"2": ["Right", "Enter"]},
        ),
        (
            "opencode",
            "permission-moved-ansi",
            ["Left", "Enter"],
            ["Right", "Enter"],
            {"2": ["Enter"]},
        ),
        # its Confirm allows always: only its number picks it
        ("opencode", "always-allow-ansi", None, ["Right", "Enter"], {"1": ["Enter"]}),
    ],
)
def test_keys_for_yes_no_and_numbers_on_real_screens(cli, screen, yes, no, numbers) -> None:
    assert reading(cli, screen).state is AgentState.NEEDS_PERMISSION
    if yes is not None:
        assert keys(cli, screen, "yes") == yes
    assert keys(cli, screen, "no") == no
    for number, expected in numbers.items():
        assert keys(cli, screen, number) == expected


@pytest.mark.parametrize(
    ("cli", "screen", "choice", "why"),
    [
        ("codex", "permission", "4", "codex: no option 4 in this dialog (it has 1-3); attach"),
        ("mock", "permission", "3", "mock: no option 3 in this dialog (it has 1-2)"),
        ("aider", "permission-create", "3", "aider: no option 3 in this dialog (it has 1-2)"),
        # the model choice has no yes or no: only its numbers answer it
        (
            "codex",
            "model-choice",
            "yes",
            "codex: this dialog has no plain yes (1. Try new "
            "model / 2. Use existing model); press an option's",
        ),
        ("codex", "model-choice", "no", "this dialog has no plain no"),
        # no dialog: never a key
        ("claude", "idle", "yes", "claude: no dialog on its screen now"),
        ("codex", "working", "1", "codex: no dialog on its screen now"),
        ("mock", "idle-echo-question", "yes", "mock: no dialog on its screen now"),
        # which option is selected only colours say: the plain capture cannot
        ("opencode", "permission", "yes", "opencode: which option is selected cannot be told"),
        ("claude", "permission", "maybe", "'maybe' is not an answer"),
        # y never allows always, wherever the dialog lists it
        (
            "opencode",
            "always-allow-ansi",
            "yes",
            "opencode: its only yes grants more than this once (1. Confirm: allow always / "
            "2. Cancel); y never picks that: press its number",
        ),
    ],
)
def test_what_cannot_be_mapped_is_refused_with_a_reason(cli, screen, choice, why) -> None:
    with pytest.raises(CannotAnswer, match=why.replace("(", r"\(").replace(")", r"\)")):
        keys(cli, screen, choice)


def test_model_choice_numbers_walk_the_arrows() -> None:
    assert keys("codex", "model-choice", "1") == ["Enter"]
    assert keys("codex", "model-choice", "2") == ["Down", "Enter"]


def test_clis_whose_keys_are_untested_refuse_every_answer() -> None:
    asking = Reading(
        AgentState.NEEDS_PERMISSION,
        None,
        "Run this command?",
        None,
        (("1", "Run (once) (y)"), ("2", "Skip (esc or n)")),
    )
    for cli in ("cursor", "generic"):
        with pytest.raises(CannotAnswer, match=f"{cli}: swarm does not answer this CLI's"):
            answer_keys(cli, asking, "yes")


def test_yes_is_the_first_yes_never_the_always_option() -> None:
    asking = Reading(
        AgentState.NEEDS_PERMISSION,
        None,
        "?",
        None,
        (("1", "Yes, and don't ask again"), ("2", "Yes"), ("3", "No")),
    )
    assert pick("x", asking, "yes") == 1  # the first yes that is for this once only
    assert pick("x", asking, "no") == 2
    for always in (
        "Allow always",
        "Yes, and always allow access to src/",
        "Yes, and do not ask again for this command",
    ):
        only = Reading(AgentState.NEEDS_PERMISSION, None, "?", None, (("1", always), ("2", "No")))
        with pytest.raises(CannotAnswer, match="y never picks that: press its number"):
            pick("x", only, "yes")
        assert pick("x", only, "1") == 0
    assert pick("x", asking, "2") == 1
    with pytest.raises(CannotAnswer, match="its dialog's options cannot be read"):
        pick("x", Reading(AgentState.NEEDS_PERMISSION, None, "?"), "yes")


def test_numbered_options_join_wrapped_labels_and_stop_at_a_blank_line() -> None:
    lines = [
        "❯ 1. Yes",
        "  2. Yes, and always allow access to /a/very/long/path",
        "     from this project",
        "  3. No",
        "",
        "  4. not an option",
    ]
    assert numbered(lines) == (
        (
            ("1", "Yes"),
            ("2", "Yes, and always allow access to /a/very/long/path from this project"),
            ("3", "No"),
        ),
        0,
    )


def test_the_key_an_option_names() -> None:
    assert shortcut("Yes, proceed (y)") == "y"
    assert shortcut("No, and tell Codex what to do differently (esc)") == "Escape"
    assert shortcut("No, and tell Copilot what to do differently (Esc to stop)") == "Escape"
    assert shortcut("No (recommended)") is None
    assert shortcut("Yes") is None


def test_a_dialog_is_the_same_while_its_question_and_options_are() -> None:
    before = reading("opencode", "permission-ansi")
    moved = reading("opencode", "permission-moved-ansi")
    assert moved.cursor != before.cursor and same_dialog(moved, before)  # the mark moved
    assert not same_dialog(reading("opencode", "always-allow-ansi"), before)  # asks again
    assert not same_dialog(reading("opencode", "idle"), before)
