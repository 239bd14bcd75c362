"""Slurm host entries in a layout: what is valid, the holder job swarm would submit, and the
layout once the allocation's nodes are known (plain SSH hosts, groups spread over them)."""

from __future__ import annotations

from pathlib import Path

import pytest

from swarm_tui.config.allocation import place_nodes
from swarm_tui.config.layout import parse_layout
from swarm_tui.errors import ConfigError
from swarm_tui.hosts.slurm import _fields, _gpus, sbatch_argv

LAYOUT = """
name = "night"
[hosts.gpu]
slurm = { partition = "gpu", nodes = 2, gpus_per_node = 8, time = "24:00:00", account = "ml" }
[[agents]]
name = "Planner"
[[agents]]
name = "Lone"
host = "gpu"
[[groups]]
hosts = ["gpu"]
per_host = 3
names = "mathematicians"
gpus_per_agent = 2
"""


def test_a_slurm_entry_becomes_its_nodes(tmp_path: Path) -> None:
    loaded = parse_layout(tmp_path / "night.toml", LAYOUT)
    layout = place_nodes(loaded.layout, "gpu", ["gpu07", "gpu09"], gpus=8)
    assert {k: (v.ssh, v.gpus, v.slurm) for k, v in layout.hosts.items()} == {
        "gpu07": ("gpu07", 8, None),
        "gpu09": ("gpu09", 8, None),
    }
    agents = layout.resolved(tmp_path)
    by_host: dict[str, list[str]] = {}
    for a in agents:
        by_host.setdefault(a.host, []).append(a.env.get("CUDA_VISIBLE_DEVICES", ""))
    assert by_host == {
        "local": [""],
        "gpu07": ["", "0,1", "2,3", "4,5"],
        "gpu09": ["0,1", "2,3", "4,5"],
    }


def test_ssh_pattern_and_clashes(tmp_path: Path) -> None:
    text = LAYOUT.replace("[hosts.gpu]\n", '[hosts.gpu]\nssh = "me@{}.cluster:2222"\n')
    layout = parse_layout(tmp_path / "night.toml", text).layout
    assert place_nodes(layout, "gpu", ["n1"]).hosts["n1"].ssh == "me@n1.cluster:2222"
    with pytest.raises(ConfigError, match="node 'local' of the Slurm job cannot be a host"):
        place_nodes(layout, "gpu", ["local"])


@pytest.mark.parametrize(
    "slurm, problem",
    [
        ('{ partition = "gpu" }', "set job = ID (a job you hold) or nodes = N"),
        ("{ job = 12, nodes = 2 }", "either job (one you hold) or nodes"),
        ('{ nodes = 2, partition = "gpu; rm -rf ~" }', "one word, as sbatch takes it"),
    ],
)
def test_bad_slurm_entries_say_what_to_do(tmp_path: Path, slurm: str, problem: str) -> None:
    text = LAYOUT.replace(LAYOUT.split("\n")[3], f"slurm = {slurm}")
    with pytest.raises(ConfigError, match=problem.replace("(", r"\(").replace(")", r"\)")):
        parse_layout(tmp_path / "night.toml", text)


def test_the_holder_job_asks_for_what_the_layout_says(tmp_path: Path) -> None:
    spec = parse_layout(tmp_path / "night.toml", LAYOUT).layout.hosts["gpu"].slurm
    assert spec is not None
    argv = sbatch_argv("night", "gpu", spec)
    assert argv[:2] == ["sbatch", "--parsable"] and argv[-2:] == ["--wrap", "exec sleep infinity"]
    for flag in (
        "--job-name=swarm-night-gpu",
        "--nodes=2",
        "--partition=gpu",
        "--time=24:00:00",
        "--account=ml",
        "--gpus-per-node=8",
    ):
        assert flag in argv


def test_scontrol_fields_and_gpus() -> None:
    info = _fields(
        "JobId=41 JobName=x JobState=PENDING Reason=Resources NodeList=(null) "
        "TresPerNode=gres/gpu:8 EndTime=Unknown"
    )
    assert info["JobState"] == "PENDING" and info["Reason"] == "Resources"
    assert _gpus(info) == 8 and _gpus({"TresPerNode": "gres:gpu:4"}) == 4 and _gpus({}) == 0
