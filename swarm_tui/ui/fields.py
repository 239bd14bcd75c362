"""Keys typed fast reach text fields in order.

The app hands each key to the widget focused at the moment it reads the key, and the widget
handles it later, from its own queue. A priority binding (Tab to the next field, Enter to
send, ctrl+s to save) runs at once, in the app. So an action that reads the fields runs
after the keys already on their way to them, and a move of focus happens before the next
key is handed on.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from textual.dom import DOMNode
from textual.widget import Widget


def after_typed(fields: Sequence[Widget], then: Callable[[], object]) -> None:
    """Call `then` once every field has handled the keys already sent to it. A key a field
    does not take itself (backspace, ctrl+u: its bindings) bubbles up through each parent's
    queue to the app, which runs the binding: the wait follows the same way up, so a burst
    of backspace and Enter saves the text after the backspace, not before."""
    hops = [node for field in fields for node in field.ancestors_with_self]
    _hop(hops, then)


def _hop(hops: list[DOMNode], then: Callable[[], object]) -> None:
    if not hops:
        then()
        return
    first, *rest = hops
    first.call_later(_hop, rest, then)
