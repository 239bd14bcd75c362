"""Keys typed fast reach text fields in order.

The app hands each key to the widget focused at the moment it reads the key, and the widget
handles it later, from its own queue. A priority binding (Tab to the next field, Enter to
send, ctrl+s to save) runs at once, in the app. So an action that reads the fields runs
after the keys already on their way to them, and a move of focus happens before the next
key is handed on.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from textual.widget import Widget


def after_typed(fields: Sequence[Widget], then: Callable[[], object]) -> None:
    """Call `then` once every field has handled the keys already sent to it."""
    if not fields:
        then()
        return
    first, *rest = fields
    first.call_later(after_typed, rest, then)
