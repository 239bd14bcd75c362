"""A frame draws each changed area on its own.

Textual renders a frame's changes as the one rectangle around all of them: two tiles that
printed a line in opposite corners of the grid make it render and re-cut every widget on the
screen, for every row the two share with anything. With 25 tiles printing, that is most of
the view's time. `AreaCompositor` splits the changed regions into areas that do not overlap
and renders each one alone (the widgets under it, its rows), then writes them one after the
other. What reaches the terminal is the same cells.

This leans on private parts of Textual 8 (`Screen._compositor`, the compositor's
`_dirty_regions` set and `_get_renders`, and `visible_widgets` ordered front to back);
`tests/ui/test_compositor.py` compares what it writes with Textual's own compositor, cell
by cell, and the fleet screen keeps Textual's compositor if the first two are not there.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import cast

from rich.console import Console, ConsoleOptions, ConsoleRenderable, RenderResult
from textual._compositor import ChopsUpdate, Compositor, CompositorUpdate, LayoutUpdate
from textual.geometry import Region
from textual.screen import Screen
from textual.strip import Strip
from textual.widget import Widget

MAX_AREAS = 12  # more separate areas than this in one frame: draw their rectangle at once


def areas(regions: Iterable[Region]) -> list[Region]:
    """The changed regions grouped into rectangles that do not overlap: each group's
    bounding box, merged again while two boxes overlap (adjacent tiles stay apart)."""
    boxes: list[Region] = []
    for region in regions:
        if not region:
            continue
        box = region
        merged = True
        while merged:
            merged = False
            for other in boxes:
                if box.overlaps(other):
                    boxes.remove(other)
                    box = box.union(other)
                    merged = True
                    break
        boxes.append(box)
    return sorted(boxes, key=lambda r: (r.y, r.x))


class AreaUpdates(CompositorUpdate):
    """Several partial updates written in turn (each moves the cursor where it draws)."""

    def __init__(self, updates: list[CompositorUpdate]) -> None:
        self.updates = updates

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        for update in self.updates:  # each a ChopsUpdate or a LayoutUpdate: renderables
            yield from console.render(cast(ConsoleRenderable, update), options)

    def render_segments(self, console: Console) -> str:
        return "".join(update.render_segments(console) for update in self.updates)


class RowsUpdate(LayoutUpdate):
    """A tile's rows written in place: Textual's `LayoutUpdate` with the cursor moves
    written as text (it makes a Rich `Control` object for each row of every update)."""

    def render_segments(self, console: Console) -> str:
        x, top = self.region.x + 1, self.region.y + 1
        return "\n".join(
            [
                f"\x1b[{y};{x}H" + "".join([strip.render(console) for strip in line])
                for y, line in enumerate(self.strips, top)
            ]
        )


class AreaCompositor(Compositor):
    """Textual's compositor, with a partial update drawn area by area, each from only the
    widgets whose visible part lies under it."""

    def _get_renders(
        self, crop: Region | None = None
    ) -> Iterable[tuple[Region, Region, list[Strip]]]:
        # Textual's picks the widgets whose clip (their container's visible region) meets
        # the crop: every tile of the grid, for a change in any one of them
        if crop is None:
            yield from super()._get_renders(crop)
            return
        for widget, (region, clip) in self.visible_widgets.items():
            shown = region.intersection(clip)
            if shown.overlaps(crop):
                x, y, width, height = shown
                yield (
                    region,
                    clip,
                    widget.render_lines(Region(x - region.x, y - region.y, width, height)),
                )

    def render_partial_update(self) -> ChopsUpdate | None:
        dirty = self._dirty_regions
        if not dirty:
            return None
        screen = self.size.region
        found = areas(r.intersection(screen) for r in dirty)
        if len(found) > MAX_AREAS:
            return super().render_partial_update()
        pending = list(dirty)
        updates: list[CompositorUpdate] = []
        for area in found:
            dirty.clear()
            if (widget := self._alone(area)) is not None:
                # one widget draws the whole area (a tile that printed a line): its rows
                # as they are, with no cutting and joining
                strips = widget.render_lines(Region(0, 0, area.width, area.height))
                updates.append(RowsUpdate([[strip] for strip in strips], area))
                continue
            dirty.update(r for r in pending if area.contains_region(r.intersection(screen)))
            if (update := super().render_partial_update()) is not None:
                updates.append(update)
        dirty.clear()
        if not updates:
            return None
        # Textual only calls render_segments and __rich_console__ on what this returns
        return AreaUpdates(updates)  # type: ignore[return-value]

    _alone_known: tuple[dict[Widget, tuple[Region, Region]], dict[Region, Widget | None]] | None = (
        None
    )

    def _alone(self, area: Region) -> Widget | None:
        """The widget that alone draws `area`: the front-most one there, whose whole region
        is the area, unclipped (widgets behind it are covered; Textual does not blend).
        Known per area until the layout changes (Textual makes a new `visible_widgets`):
        a tile's area comes back at every line it prints."""
        widgets = self.visible_widgets
        known = self._alone_known
        if known is None or known[0] is not widgets:
            known = self._alone_known = (widgets, {})
        if area in known[1]:
            return known[1][area]
        found = None
        for widget, (region, clip) in widgets.items():  # front to back
            shown = region.intersection(clip)
            if shown.overlaps(area):
                found = widget if region == area and shown == region else None
                break
        known[1][area] = found
        return found


class FleetScreen(Screen[None]):
    """The app's main screen, drawn by an `AreaCompositor`, with a short way to redraw a
    tile whose text changed."""

    def __init__(self) -> None:
        super().__init__()
        compositor = getattr(self, "_compositor", None)
        if isinstance(compositor, Compositor) and isinstance(
            getattr(compositor, "_dirty_regions", None), set
        ):
            self._compositor = AreaCompositor()
        # Textual's parts `redraw` leans on (a Textual without them: `refresh` as usual)
        self._short_redraw = (
            isinstance(getattr(self, "_dirty_widgets", None), set)
            and hasattr(Screen, "_update_timer")
            and hasattr(Widget, "_set_dirty")
        )

    def redraw(self, widget: Widget) -> None:
        """`widget`'s content changed, nothing of its size, place or styles (a tile's new
        screen): drawn at the next frame. Textual's `refresh` gets there in a round of four
        messages (Idle to the widget, Update and Idle to the screen) and clears the widget's
        style caches: a fifth of the view's time with 25 tiles printing. This marks it as
        the screen's Update handler does and wakes the frame timer as its Idle handler
        does. Under another screen (a dialog), Textual's own way."""
        app = self.app
        if not (
            self._short_redraw
            and app.screen is self
            and not app._batch_count
            and widget in self._compositor.visible_widgets
        ):
            widget.refresh()
            return
        widget._set_dirty()
        self._dirty_widgets.add(widget)
        self._update_timer.resume()
