"""Keys: one binding per key on every screen, and the palette and the help built from the
bindings, on the real app attached to a real engine running a tmux fleet of mock agents."""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

from rich.console import Console
from textual.binding import Binding
from textual.dom import DOMNode
from textual.screen import Screen
from textual.widgets import Input, TextArea

import swarm_tui.ui
from swarm_tui.fleet.store import NewTask
from swarm_tui.protocol.models import DiffView, MessageView
from swarm_tui.ui.app import SwarmApp
from swarm_tui.ui.confirm import ConfirmScreen
from swarm_tui.ui.diff import CommentBox, DiffScreen, MergeQuestion
from swarm_tui.ui.diffparse import Anchor
from swarm_tui.ui.help import HelpScreen
from swarm_tui.ui.history import HistoryScreen
from swarm_tui.ui.keys import for_help, key_text
from swarm_tui.ui.messages import MessageScreen
from swarm_tui.ui.prompt import PromptScreen
from swarm_tui.ui.task_editor import TaskScreen
from tests.ui.conftest import Live, burst, shown, text_of, until


def binding(binding_id: str) -> Binding:
    """The app's binding with this id (tests press what the bindings say, not a copy)."""
    return next(b for b in SwarmApp.BINDINGS if isinstance(b, Binding) and b.id == binding_id)


def first_key(binding_id: str) -> str:
    return binding(binding_id).key.split(",")[0]


def our_screens() -> set[type[Screen[object]]]:
    """Every screen class the UI package defines (new ones are checked without a test edit)."""
    for info in pkgutil.iter_modules(swarm_tui.ui.__path__):
        importlib.import_module(f"swarm_tui.ui.{info.name}")
    out: set[type[Screen[object]]] = set()
    todo: list[type[Screen[object]]] = [Screen]
    while todo:
        cls = todo.pop()
        for sub in cls.__subclasses__():
            todo.append(sub)
            if sub.__module__.startswith("swarm_tui.ui."):
                out.add(sub)
    return out


def declared_keys(cls: type[DOMNode]) -> set[str]:
    if not cls.__module__.startswith("swarm_tui."):
        return set()
    return {
        k.strip()
        for b in cls.__dict__.get("BINDINGS", [])
        if isinstance(b, Binding)
        for k in b.key.split(",")
    }


def double_bound(screen: Screen[object]) -> list[str]:
    """Keys of this screen's live binding chain (focused widget up to the app, stopping at
    a modal) bound twice where one of them is ours. A priority binding of ours may take a
    key from a widget of Textual's (that is what priority is for); nothing else may."""
    problems = []
    where: dict[str, list[tuple[str, bool, bool]]] = {}  # key -> (who, ours, priority)
    for node, bindings in screen._modal_binding_chain:
        ours = declared_keys(type(node))
        for key, bound in bindings.key_to_bindings.items():
            if len(bound) > 1:
                problems.append(f"{type(node).__name__}: {key} -> {[b.action for b in bound]}")
            where.setdefault(key, []).append(
                (f"{type(node).__name__}:{bound[0].action}", key in ours, bound[0].priority)
            )
    for key, nodes in where.items():
        mine = [n for n in nodes if n[1]]
        if len(nodes) > 1 and (len(mine) > 1 or (mine and not mine[0][2])):
            problems.append(f"{key} -> {[n[0] for n in nodes]}")
    return problems


def test_no_class_binds_a_key_twice() -> None:
    classes: list[type[DOMNode]] = [SwarmApp, *our_screens()]
    for cls in classes:
        merged = cls._merge_bindings()
        twice = {k: [b.action for b in v] for k, v in merged.key_to_bindings.items() if len(v) > 1}
        assert not twice, f"{cls.__name__} binds a key twice: {twice}"


async def test_no_key_is_bound_twice_on_any_screen(live: Live) -> None:
    openers = {"prompt", "focus_label", "task", "reminders", "messages", "help", "save"}
    app = SwarmApp(live.client)
    visited: set[type[Screen[object]]] = set()
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert double_bound(app.screen) == [], "the fleet view"
        visited.add(type(app.screen))
        for opener in sorted(openers):
            await pilot.press(first_key(opener))
            await until(lambda: len(app.screen_stack) == 2, what=f"{opener} to open a screen")
            screen = app.screen
            visited.add(type(screen))
            assert double_bound(screen) == [], type(screen).__name__
            screen.dismiss(None)
            await until(lambda: len(app.screen_stack) == 1, what="back to the fleet view")
        app.push_screen(ConfirmScreen("Overwrite it?"))  # opened by a save that would overwrite
        await until(lambda: len(app.screen_stack) == 2, what="the question to open")
        visited.add(type(app.screen))
        assert double_bound(app.screen) == [], "ConfirmScreen"
        app.screen.dismiss(None)
        await until(lambda: len(app.screen_stack) == 1, what="back to the fleet view")
        app.push_screen(
            MessageScreen(
                MessageView(  # opened by enter in the messages log
                    id=1,
                    created=0,
                    sender="human",
                    recipient="Gauss",
                    text="hi",
                    status="delivered",
                    updated=0,
                )
            )
        )
        await until(lambda: len(app.screen_stack) == 2, what="the message to open")
        visited.add(type(app.screen))
        assert double_bound(app.screen) == [], "MessageScreen"
        app.screen.dismiss(None)
        await until(lambda: len(app.screen_stack) == 1, what="back to the fleet view")
        app.push_screen(
            DiffScreen(
                live.client,
                DiffView(  # opened by d on a worktree's agent
                    agent="Gauss", worktree="/w", branch="swarm/ui/Gauss", base="main"
                ),
                {},
            )
        )
        await until(lambda: isinstance(app.screen, DiffScreen), what="the diff view")
        diff = app.screen
        visited.add(type(diff))
        assert double_bound(diff) == [], "DiffScreen"
        for box in (
            CommentBox(Anchor("a.py", 1), "", lambda _: None),  # c on a line
            MergeQuestion("Merge?"),
        ):  # M
            app.push_screen(box)
            await until(
                lambda b=box: app.screen is b and b.query("#prompt-help"),
                what=f"{type(box).__name__} to open",
            )
            await pilot.pause()  # (its mount handled before it is dismissed)
            visited.add(type(box))
            assert double_bound(box) == [], type(box).__name__
            box.dismiss(None)
            await until(lambda: app.screen is diff, what="back to the diff view")
        diff.dismiss(None)
        await until(lambda: len(app.screen_stack) == 1, what="back to the fleet view")
        await pilot.press("enter", first_key("page_up"))  # zoomed: the agent's history
        await until(
            lambda: isinstance(app.screen, HistoryScreen) and app.screen.loaded,
            what="the history view",
        )
        visited.add(type(app.screen))
        assert double_bound(app.screen) == [], "HistoryScreen"
    assert visited == our_screens()


async def test_judge_now_has_its_own_key_and_reviews_the_selected_task(live: Live) -> None:
    store = live.store
    app = SwarmApp(live.client)
    async with app.run_test(size=(160, 48)) as pilot:
        tid = live.fleet.tasks.add(
            "Hilbert",
            NewTask(spec="make the tests pass", verify="false", review_on_idle=False),
            origin="test",
        )
        await until(
            lambda: getattr(store.task(tid), "status", None) == "in-progress",
            what="the task delivered to Hilbert",
        )
        await pilot.press("right")
        assert app.current_name() == "Hilbert"
        await pilot.press(first_key("review"))
        assert app.current_name() == "Hilbert", "the judge-now key moved the selection"
        await until(lambda: store.verdicts(tid), what="a verdict from the review")
        assert store.verdicts(tid)[0][1] == "verify"


async def test_palette_runs_what_the_bindings_run(live: Live) -> None:
    app = SwarmApp(live.client)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        commands = {c.title: c.help for c in app.get_system_commands(app.screen)}
        for b in SwarmApp.BINDINGS:
            assert isinstance(b, Binding) and b.id and b.description, b
            if b.id in ("left", "right", "up", "down"):
                continue
            assert b.description in commands, b.id
            assert f"({key_text(b.key)})" in commands[b.description]
        # choose "Next page" in the palette: the same action as its key
        assert app.pages > 1
        await pilot.press("ctrl+p", *binding("next_page").description, "enter")
        await until(lambda: app.page == 1, what="the palette's Next page")


async def test_help_lists_every_binding(live: Live) -> None:
    app = SwarmApp(live.client)
    async with app.run_test(size=(120, 60)) as pilot:
        await pilot.press("question_mark")
        await until(lambda: isinstance(app.screen, HelpScreen), what="the help screen")
        assert isinstance(app.screen, HelpScreen)
        console = Console(width=120, force_terminal=False)  # all of it, not what is in view
        with console.capture() as out:
            console.print(app.screen.body())
        text = out.get()
        for b in for_help(SwarmApp.BINDINGS):  # the option numbers 1-9 are one row
            assert isinstance(b, Binding)
            assert f"{key_text(b.key)} " in text and b.description in text, b.id
        assert "1-9 Answer 1-9" in text
        for b in PromptScreen.BINDINGS:
            assert isinstance(b, Binding) and b.description in text, b
        await pilot.press("escape")
        await until(lambda: len(app.screen_stack) == 1, what="help closed")


async def test_square_brackets_turn_pages(live: Live) -> None:
    app = SwarmApp(live.client)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert app.pages > 1
        first = shown(app)
        await pilot.press("]")
        await until(lambda: app.page == 1, what="] to show the next page")
        assert shown(app) and not set(shown(app)) & set(first)
        await pilot.press("[")
        await until(lambda: app.page == 0, what="[ to show the previous page")
        assert shown(app) == first


async def fields_once_typed(screen: Screen[object], chars: int) -> tuple[str, str]:
    """The task editor's (spec, verify) once `chars` characters have arrived in them."""
    area, field = screen.query_one(TextArea), screen.query_one(Input)
    await until(lambda: len(area.text) + len(field.value) == chars, what="every key typed")
    return area.text, field.value


async def test_fast_tab_in_the_task_editor_moves_to_the_verify_field(live: Live) -> None:
    app = SwarmApp(live.client)
    async with app.run_test(size=(120, 40)) as pilot:
        for i in range(4):
            await pilot.press("T")
            await until(
                lambda: (
                    isinstance(app.screen, TaskScreen) and isinstance(app.screen.focused, TextArea)
                ),
                what="the task editor",
            )
            screen = app.screen
            spec, verify = f"spec {i}", f"pytest -q {i}"
            if i % 2:
                # as a terminal delivers a fast typist's keys: all at once
                burst(app, *spec, "tab", *verify)
            else:
                await pilot.press(*spec, "tab", *verify)
            typed = await fields_once_typed(screen, len(spec + verify))
            assert typed == (spec, verify)
            burst(app, "shift+tab", *" more", "tab", "ctrl+s")
            await until(lambda: len(app.screen_stack) == 1, what="the task saved")
            await until(
                lambda: len(live.store.tasks("Gauss")) == i + 1,  # noqa: B023
                what=f"task {i} queued by the engine",
            )
        tasks = live.store.tasks("Gauss")
        assert [(t.spec, t.verify) for t in tasks] == [
            (f"spec {i} more", f"pytest -q {i}") for i in range(4)
        ]


async def test_prompt_a_role_starts_at_the_selected_agents_role(live: Live) -> None:
    app = SwarmApp(live.client)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.press("right")  # Hilbert, a worker (Gauss is the planner)
        await pilot.press(first_key("prompt_role"))
        await until(lambda: isinstance(app.screen, PromptScreen), what="the prompt")
        assert text_of(app.screen.query_one("#prompt-target")).startswith("To: role worker (3)")
        await pilot.press("escape")
        await pilot.press("left", first_key("prompt_role"))
        await until(lambda: isinstance(app.screen, PromptScreen), what="the prompt")
        assert text_of(app.screen.query_one("#prompt-target")).startswith("To: role planner (1)")


def test_readme_names_the_keys_the_app_binds() -> None:
    readme = (Path(__file__).parents[2] / "README.md").read_text()
    assert f"| `{first_key('review')}` | judge the selected agent's task now |" in readme
    assert "| `j` | judge" not in readme


async def test_a_resize_retiles_and_keeps_the_selection_on_screen(live: Live) -> None:
    app = SwarmApp(live.client)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("]")
        await until(lambda: app.page == 1, what="the second page")
        name = app.current_name()
        assert name in shown(app) and len(shown(app)) < len(live.fleet.agents)
        await pilot.resize_terminal(200, 55)
        await until(lambda: len(shown(app)) == len(live.fleet.agents), what="every tile")
        assert app.page == 0 and app.current_name() == name
        await pilot.resize_terminal(80, 24)
        await until(lambda: len(shown(app)) < len(live.fleet.agents), what="fewer tiles")
        assert name in shown(app)


async def test_a_fast_backspace_and_enter_in_the_filter_take_effect(tmp_path: Path) -> None:
    """A key a field does not take itself (backspace, ctrl+u: its bindings) reaches it by
    way of the app; an Enter right behind it saved the text from before (`/`, ctrl+u and
    Enter in one burst kept the filter `needs`: seen in a new-user trial)."""
    from tests.ui.conftest import FakeClient, still_fleet

    app = SwarmApp(FakeClient(still_fleet(tmp_path)))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        await pilot.press("slash", *"needs", "enter")
        await until(lambda: app.filter == "needs", 5, "the filter needs")
        await pilot.press("slash")
        await until(lambda: isinstance(app.focused, Input), 5, "the filter's box")
        burst(app, "ctrl+u", "enter")
        await until(lambda: app.filter == "", 5, "no filter", lambda: repr(app.filter))
        await pilot.press("slash", *"needs", "enter")
        await until(lambda: app.filter == "needs", 5, "the filter needs again")
        await pilot.press("slash")
        await until(lambda: isinstance(app.focused, Input), 5, "the filter's box again")
        burst(app, "backspace", "enter")  # (the box opens with its text selected)
        await until(lambda: app.filter == "", 5, "no filter again", lambda: repr(app.filter))
