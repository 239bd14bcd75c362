"""GPUs whose values nvidia-smi gives as `[N/A]` or `[Not Supported]` (MIG partitions, some
cards' utilisation) stay listed: their lines were skipped, so a node of MIG GPUs showed none.
The sidebar draws `?` for what they do not say and averages what the others say."""

from __future__ import annotations

from swarm_tui.fleet.link import UNKNOWN, GpuStat, parse_gpus
from swarm_tui.ui.sidebar import gpu_memory, gpu_summary

MIG = """0, [N/A], 20480, 81920
1, 50, 40960, 81920
2, [Not Supported], [N/A], [N/A]
garbage line
3, 12, notanumber, 81920
"""


def test_unknown_values_keep_the_gpu() -> None:
    assert parse_gpus(MIG) == [
        GpuStat(0, UNKNOWN, 20480, 81920),
        GpuStat(1, 50, 40960, 81920),
        GpuStat(2, UNKNOWN, UNKNOWN, UNKNOWN),
    ]


def test_the_sidebar_says_what_it_knows() -> None:
    gpus = parse_gpus(MIG)
    assert gpu_summary(gpus) == "?▄? 50% 60/160G"
    assert gpu_memory(gpus) == "▂▄?"
    assert gpu_summary(parse_gpus("0, [N/A], [N/A], [N/A]\n")) == "? ?%"
    assert gpu_summary(parse_gpus("0, 100, 1024, 2048\n")) == "█ 100% 1/2G"
