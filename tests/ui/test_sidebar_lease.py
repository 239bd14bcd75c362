"""A node of a Slurm job shows the job and the time it has left under its sidebar header;
yellow in the last half hour; nothing for a node of its own."""

from __future__ import annotations

from swarm_tui.protocol.models import HostView
from swarm_tui.ui.durations import Clock
from swarm_tui.ui.sidebar import host_line

NOW = 1_800_000_000.0


def test_a_leased_node_says_its_job_and_time_left() -> None:
    node = HostView(
        name="gpu01",
        connected=True,
        since=NOW - 5,
        lease="Slurm job 4711",
        lease_ends=NOW + 3 * 3600 + 12 * 60,
    )
    line = host_line(node, 30, Clock(NOW))
    assert line.plain == "■ gpu01  up 5s\n   Slurm job 4711 · 3h12m left"
    assert str(line.spans[-1].style) == "grey62"
    late = host_line(node.model_copy(update={"lease_ends": NOW + 14 * 60}), 30, Clock(NOW))
    assert late.plain.split("\n")[1] == "   Slurm job 4711 · 14m left"
    assert str(late.spans[-1].style) == "yellow"  # its agents are about to be asked
    narrow = host_line(node, 20, Clock(NOW)).plain.split("\n")
    assert [len(x) for x in narrow] == [14, 20] and narrow[1].endswith("…")
    own = host_line(HostView(name="box", connected=True, since=NOW - 5), 60, Clock(NOW))
    assert own.plain == "■ box  up 5s"
