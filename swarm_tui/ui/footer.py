"""The footer: as many of the fleet view's keys as its width holds, the most used first, each
whole (never cut mid-word); `?` lists every key, the palette (ctrl+p) runs any action."""

from __future__ import annotations

from collections.abc import Mapping

from rich.cells import cell_len
from textual import events
from textual.app import ComposeResult
from textual.widget import Widget
from textual.widgets import Footer
from textual.widgets._footer import FooterKey  # the footer's key widget: not exported

KEY_PADDING = 3  # cells around a key and its description: " key " and " " after it
PALETTE_EDGE = 2  # the palette key's border and right padding (Footer's stylesheet)


def cells(key: FooterKey) -> int:
    """The cells a key takes in a footer that is not compact."""
    edge = PALETTE_EDGE if key.has_class("-command-palette") else 0
    return cell_len(key.key_display) + cell_len(key.description) + KEY_PADDING + edge


class FleetFooter(Footer):
    """A footer that drops the keys that do not fit, the highest rank first (`ranks`: by
    action; an action not ranked goes before any that is), and the keys that can do nothing
    in this fleet (`hide`: `d` where no agent has a worktree; `?` still lists them)."""

    def __init__(self, ranks: Mapping[str, int]) -> None:
        super().__init__()
        self.ranks = dict(ranks)
        self._width = 0  # the width the keys were chosen for
        self.hidden: frozenset[str] = frozenset()  # actions not shown

    def hide(self, actions: set[str]) -> None:
        """Show every key but those of these actions (the footer is built again when that
        changes)."""
        if actions != self.hidden:
            self.hidden = frozenset(actions)
            if self.is_mounted:
                self.call_later(self.recompose)  # (in the footer's own context: it binds data)

    def compose(self) -> ComposeResult:
        widgets: list[Widget] = [
            w
            for w in super().compose()
            if not (isinstance(w, FooterKey) and w.action in self.hidden)
        ]
        self._width = width = self.size.width
        keys = [
            w for w in widgets if isinstance(w, FooterKey) and not w.has_class("-command-palette")
        ]
        used = sum(cells(w) for w in widgets if isinstance(w, FooterKey))
        worst_first = sorted(
            keys, key=lambda k: self.ranks.get(k.action, len(self.ranks)), reverse=True
        )
        for key in worst_first:
            if not width or used <= width:
                break
            widgets.remove(key)
            used -= cells(key)
        yield from widgets

    def on_resize(self, event: events.Resize) -> None:
        if event.size.width != self._width:
            self._width = event.size.width
            self.call_after_refresh(self.recompose)
