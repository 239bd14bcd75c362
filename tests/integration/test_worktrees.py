"""A git worktree per agent, on real git repositories and real tmux: made before the windows,
re-attached, read as a diff (renames, binary and untracked files), handed to the judge,
merged home (clean, conflicting, into a dirty checkout), cleaned by `swarm down --clean`;
and bad input refused before any agent starts."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from swarm_tui.fleet.store import NewTask
from swarm_tui.protocol.client import FleetClient, Refused
from swarm_tui.testing import async_wait_until, mock_agent

pytestmark = pytest.mark.integration


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True
    ).stdout


def make_repo(path: Path) -> Path:
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "user.email", "dev@example.invalid")
    git(path, "config", "user.name", "Dev")
    (path / "app.py").write_text("def answer():\n    return 41\n")
    (path / "notes.txt").write_text("".join(f"note {i}\n" for i in range(30)))
    git(path, "add", ".")
    git(path, "commit", "-q", "-m", "start")
    return path


def commit_all(wt: Path, message: str) -> None:
    git(wt, "add", "-A")
    git(wt, "commit", "-q", "-m", message)


def worker(name: str, repo: Path, *args: str, **fields: object) -> dict[str, object]:
    return mock_agent(name, *args, worktree=True, repo=str(repo), **fields)


async def test_worktrees_made_then_reattached_and_base_untouched(sandbox, start_fleet, tmp_path):
    repo = make_repo(tmp_path / "repo")
    (repo / "app.py").write_text("dirty and uncommitted\n")  # the user's own work in progress
    layout = sandbox.layout("wt1", worker("Gauss", repo), worker("Noether", repo))
    run = await start_fleet(layout)
    agents = run.fleet.agents
    for name in ("Gauss", "Noether"):
        wt = Path(agents[name].workdir)
        assert wt.is_relative_to(sandbox.home), "worktrees live in swarm's state, not the repo"
        assert git(wt, "symbolic-ref", "--short", "HEAD").strip() == f"swarm/wt1/{name}"
        assert (wt / "app.py").read_text() == "def answer():\n    return 41\n"
        shown = sandbox.tmux("wt1").run(
            "display-message", "-p", "-t", agents[name].pane, "#{pane_current_path}"
        )
        assert shown.stdout.strip() == str(wt)
    assert (repo / "app.py").read_text() == "dirty and uncommitted\n"  # never touched
    assert git(repo, "symbolic-ref", "--short", "HEAD").strip() == "main"
    first = agents["Gauss"].workdir
    (Path(first) / "work.txt").write_text("in progress\n")
    await run.stop()
    again = await start_fleet(layout)  # re-attach: same windows, same worktrees, work kept
    assert again.fleet.created == []
    assert again.fleet.agents["Gauss"].workdir == first
    assert (Path(first) / "work.txt").read_text() == "in progress\n"


async def test_diff_shows_commits_renames_binary_and_untracked(sandbox, start_fleet, tmp_path):
    repo = make_repo(tmp_path / "repo")
    run = await start_fleet(sandbox.layout("wt2", worker("Gauss", repo)))
    gauss = run.fleet.agents["Gauss"]
    wt = Path(gauss.workdir)
    (wt / "app.py").write_text("def answer():\n    return 42\n\n\ndef more():\n    pass\n")
    git(wt, "mv", "notes.txt", "docs.txt")
    (wt / "logo.bin").write_bytes(bytes(range(256)) * 4)
    commit_all(wt, "the answer, renamed notes, a logo")
    (wt / "app.py").write_text("def answer():\n    return 42  # checked\n")
    (wt / "new module.py").write_text("x = 1\ny = 2\n")
    client = FleetClient(sandbox.socket_path("wt2"))
    view = await client.diff("gauss")
    assert view.branch == "swarm/wt2/Gauss" and view.base == "main"
    assert [c.split(" ", 1)[1] for c in view.commits] == ["the answer, renamed notes, a logo"]
    by = {(f.path, f.part): f for f in view.files}
    assert by[("app.py", "committed")].added == 5 and by[("app.py", "committed")].deleted == 1
    assert by[("docs.txt", "committed")].old_path == "notes.txt"
    assert by[("logo.bin", "committed")].binary
    assert (by[("app.py", "uncommitted")].added, by[("app.py", "uncommitted")].deleted) == (1, 5)
    new = by[("new module.py", "uncommitted")]
    assert new.untracked and new.added == 2
    assert "+    return 42\n" in view.committed and "rename from notes.txt" in view.committed
    assert "Binary files /dev/null and b/logo.bin differ" in view.committed
    assert "+    return 42  # checked" in view.uncommitted and "+y = 2" in view.uncommitted
    assert view.conflicts == []
    assert git(wt, "status", "--porcelain").splitlines() == [
        " M app.py",
        '?? "new module.py"',
    ] or git(wt, "status", "--porcelain").splitlines() == [" M app.py", "?? new module.py"]
    # the sidebar's size is read when the agent goes idle: a message makes it work, then idle
    run.fleet.send(["Gauss"], "carry on")
    await async_wait_until(
        lambda: gauss.changes is not None and gauss.changes.added == 3,
        15,
        "the change size after the agent went idle",
        run.screens,
    )
    assert (gauss.changes.deleted, gauss.changes.files, gauss.changes.conflicts) == (1, 4, False)


async def test_agent_without_worktree_has_no_diff(sandbox, start_fleet):
    await start_fleet(sandbox.layout("wt2b", mock_agent("Plain")))
    with pytest.raises(Refused, match="Plain has no worktree"):
        await FleetClient(sandbox.socket_path("wt2b")).diff("Plain")


async def test_judge_reads_the_diff_not_the_claim(sandbox, start_fleet, tmp_path):
    repo = make_repo(tmp_path / "repo")
    layout = sandbox.layout(
        "wt3",
        worker(
            "Wes",
            repo,
            "--claims-done",
            judge_diff=4000,
            tasks=[{"spec": "Make answer() return 42", "review_on_idle": False}],
        ),
        mock_agent("Jude", "--work", "0.3", role="judge"),
    )
    run = await start_fleet(layout)
    wt = Path(run.fleet.agents["Wes"].workdir)
    (wt / "app.py").write_text("def answer():\n    return 42\n")
    (wt / "big.txt").write_text("".join(f"line {i} of a long file\n" for i in range(2000)))
    await async_wait_until(
        lambda: any("The worker's change" in t for t in sandbox.received("Jude")),
        30,
        "a review prompt for the judge",
        run.screens,
    )
    prompt = next(t for t in sandbox.received("Jude") if "The worker's change" in t)
    assert "app.py  +1 -1  (untracked)" not in prompt  # tracked: an uncommitted change
    assert "app.py  +1 -1  (uncommitted)" in prompt
    assert "big.txt  +2000 -0  (untracked)" in prompt
    assert "+    return 42" in prompt and "-    return 41" in prompt
    assert "left out of this prompt to keep it under 4000 characters" in prompt
    assert "line 1999 of a long file" not in prompt  # trimmed, and said so


async def test_merge_clean_conflict_dirty_and_task_gate(sandbox, start_fleet, tmp_path):
    repo = make_repo(tmp_path / "repo")
    run = await start_fleet(sandbox.layout("wt4", worker("Gauss", repo), worker("Noether", repo)))
    client = FleetClient(sandbox.socket_path("wt4"))
    g_wt = Path(run.fleet.agents["Gauss"].workdir)
    n_wt = Path(run.fleet.agents["Noether"].workdir)
    (g_wt / "app.py").write_text("def answer():\n    return 42\n")
    commit_all(g_wt, "Gauss: 42")
    (n_wt / "app.py").write_text("def answer():\n    return 43\n")
    commit_all(n_wt, "Noether: 43")
    base = git(repo, "rev-parse", "main").strip()
    with pytest.raises(Refused, match="no task a judge found complete"):
        await client.merge("Gauss")
    tid = run.fleet.tasks.add("Gauss", NewTask(spec="Make it 42"), origin="test")
    run.store.update_task(tid, status="complete")  # as a judge's verdict leaves it
    (g_wt / "scratch.txt").write_text("not committed\n")
    with pytest.raises(Refused, match="1 uncommitted file"):
        await client.merge("Gauss")
    (g_wt / "scratch.txt").unlink()
    (repo / "app.py").write_text("the user's edit\n")  # a dirty base checkout
    with pytest.raises(Refused, match="uncommitted changes"):
        await client.merge("Gauss")
    assert (repo / "app.py").read_text() == "the user's edit\n"
    git(repo, "checkout", "-q", "--", "app.py")
    done = await client.merge("Gauss")
    assert done.startswith("merged swarm/wt4/Gauss into main")
    assert (repo / "app.py").read_text() == "def answer():\n    return 42\n"  # moved forward
    assert git(repo, "rev-parse", "main^1").strip() == base
    merged = git(repo, "rev-parse", "main").strip()
    noether = run.fleet.agents["Noether"]  # the base moved: its conflict shows, unasked
    await async_wait_until(
        lambda: noether.changes is not None and noether.changes.conflicts,
        10,
        "Noether's conflict with the new main",
        run.screens,
    )
    with pytest.raises(Refused, match=r"conflicts with main in app\.py"):
        await client.merge("Noether", force=True)
    assert git(repo, "rev-parse", "main").strip() == merged  # untouched
    assert git(repo, "status", "--porcelain") == ""
    assert "nothing to merge" in await client.merge("Gauss")


def test_bad_worktree_input_starts_nothing(sandbox, tmp_path):
    repo = make_repo(tmp_path / "repo")
    git(repo, "branch", "swarm/wt5/Taken")  # a branch of the user's with swarm's name
    plain = tmp_path / "plain"
    plain.mkdir()
    cases = [
        (worker("Gauss", plain), "agent 'Gauss' on local: repo ", "is not a git repository"),
        (
            worker("Gauss", repo, base="nope"),
            "agent 'Gauss' on local: base nope does not exist",
            "set base to an existing branch",
        ),
        (
            worker("Taken", repo),
            "agent 'Taken' on local: branch swarm/wt5/Taken exists",
            "swarm did not make it",
        ),
    ]
    for spec, start, end in cases:
        layout = sandbox.layout("wt5", worker("Fine", repo), spec)
        done = sandbox.swarm("up", str(layout), "--headless", timeout=60)
        assert done.returncode == 2, done.stderr
        lines = [ln for ln in done.stderr.splitlines() if "worktree" in ln]
        assert len(lines) == 1 and start in lines[0] and end in lines[0], done.stderr
        assert not sandbox.tmux("wt5").has_session("wt5")  # no agent started half-way
        assert not sandbox.db_path("wt5").exists()  # nor a journal of a fleet never run
        assert git(repo, "branch", "--list", "swarm/wt5/Fine").strip() == ""


async def test_down_clean_removes_merged_keeps_the_rest(sandbox, start_fleet, tmp_path):
    repo = make_repo(tmp_path / "repo")
    layout = sandbox.layout(
        "wt6", worker("Gauss", repo), worker("Noether", repo), worker("Hilbert", repo)
    )
    run = await start_fleet(layout)
    agents = run.fleet.agents
    g_wt, n_wt, h_wt = (Path(agents[n].workdir) for n in ("Gauss", "Noether", "Hilbert"))
    (g_wt / "done.txt").write_text("finished\n")
    commit_all(g_wt, "finished")
    await FleetClient(sandbox.socket_path("wt6")).merge("Gauss", force=True)
    (n_wt / "half.txt").write_text("half\n")
    commit_all(n_wt, "half way")
    (h_wt / "loose.txt").write_text("never committed\n")
    await run.stop()
    done = await sandbox.aswarm("down", str(layout), "--clean", timeout=60)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "Gauss on local: worktree removed" in out and not g_wt.exists()
    assert git(repo, "branch", "--list", "swarm/wt6/Gauss").strip() == ""
    assert "Noether on local: worktree kept: swarm/wt6/Noether has 1 commit(s) not merged" in out
    assert n_wt.exists() and git(repo, "branch", "--list", "swarm/wt6/Noether").strip()
    assert "Hilbert on local: worktree kept: 1 uncommitted file(s)" in out
    assert (h_wt / "loose.txt").read_text() == "never committed\n"


async def test_diff_and_merge_from_a_shell(sandbox, start_fleet, tmp_path):
    repo = make_repo(tmp_path / "repo")
    layout = sandbox.layout("wt7", worker("Gauss", repo))
    run = await start_fleet(layout)
    wt = Path(run.fleet.agents["Gauss"].workdir)
    (wt / "app.py").write_text("def answer():\n    return 42\n")
    commit_all(wt, "the answer")
    shown = await sandbox.aswarm("diff", "gauss")
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith("diff --git a/app.py b/app.py\n")  # the patch alone
    assert "swarm: Gauss: swarm/wt7/Gauss against main" in shown.stderr
    elsewhere = make_repo(tmp_path / "elsewhere")
    subprocess.run(["git", "apply"], input=shown.stdout, text=True, cwd=elsewhere, check=True)
    assert (elsewhere / "app.py").read_text() == "def answer():\n    return 42\n"
    stat = await sandbox.aswarm("diff", "Gauss", "--stat")
    assert stat.stdout.split() == ["+1", "-1", "app.py", "(committed)"]
    (wt / "draft.txt").write_text("never committed\n")  # no merge takes it: said each time
    refused = await sandbox.aswarm("merge", "Gauss")
    assert refused.returncode == 1 and "no task a judge found complete" in refused.stderr
    assert (
        "(forced, it would merge 1 commit(s) of swarm/wt7/Gauss into main; 1 "
        "uncommitted file(s) stay in Gauss's worktree" in refused.stderr
    )
    unknown = await sandbox.aswarm("merge", "Nobody")
    assert unknown.returncode == 2 and "no agent named 'Nobody'" in unknown.stderr
    before = git(repo, "rev-parse", "main")
    checked = await sandbox.aswarm("merge", "Gauss", "--force", "--check")
    assert checked.returncode == 0 and "would merge 1 commit(s)" in checked.stdout
    assert git(repo, "rev-parse", "main") == before  # a check changes nothing
    merged = await sandbox.aswarm("merge", "Gauss", "--force", "--squash")
    assert merged.returncode == 0, merged.stderr
    assert "merged swarm/wt7/Gauss into main (squashed, commit" in merged.stdout
    assert "1 uncommitted file(s) stay in Gauss's worktree" in merged.stdout
    assert "ask Gauss to merge main into it" in merged.stdout
    assert git(repo, "rev-list", "--parents", "-n", "1", "main").count(" ") == 1  # one parent
    assert (repo / "app.py").read_text() == "def answer():\n    return 42\n"
    again = await sandbox.aswarm("merge", "Gauss", "--force")  # squashed: its content is in
    assert again.returncode == 0 and "nothing to merge" in again.stdout, again.stderr
    (wt / "draft.txt").unlink()
    await run.stop()
    done = await sandbox.aswarm("down", str(layout), "--clean", timeout=60)
    assert "Gauss on local: worktree removed" in done.stdout, done.stdout + done.stderr
    assert "branch swarm/wt7/Gauss kept (its content is in main" in done.stdout
    assert git(repo, "branch", "--list", "swarm/wt7/Gauss").strip()  # never deleted by force


def test_doctor_checks_worktrees(sandbox, tmp_path):
    repo = make_repo(tmp_path / "repo")
    good = sandbox.layout("wt8", worker("Gauss", repo))
    done = sandbox.swarm("doctor", str(good), timeout=60)
    assert done.returncode == 0 and "worktrees: 1 ok" in done.stdout, done.stdout
    bad = sandbox.layout("wt8", worker("Gauss", repo, base="release"))
    done = sandbox.swarm("doctor", str(bad), timeout=60)
    assert done.returncode == 1
    assert "agent 'Gauss' on local: base release does not exist" in done.stdout
    assert git(repo, "branch", "--list", "swarm/*").strip() == ""  # a check makes nothing


async def test_no_cwd_means_the_worktree_top_not_the_layouts_folder(sandbox, start_fleet, tmp_path):
    repo = make_repo(tmp_path / "repo")  # the layout lives outside the repo's commits
    layout = repo / "layouts" / "team.toml"
    layout.parent.mkdir()
    layout.write_text(sandbox.layout("wt9", worker("Gauss", Path(".."))).read_text())
    run = await start_fleet(layout)
    gauss = run.fleet.agents["Gauss"]
    shown = sandbox.tmux("wt9").run(
        "display-message", "-p", "-t", gauss.pane, "#{pane_current_path}"
    )
    assert shown.stdout.strip() == gauss.workdir  # never the user's checkout


async def test_stat_counts_commits_too(sandbox, start_fleet, tmp_path):
    repo = make_repo(tmp_path / "repo")
    run = await start_fleet(sandbox.layout("wt10", worker("Gauss", repo)))
    wt = Path(run.fleet.agents["Gauss"].workdir)
    (wt / "app.py").write_text("def answer():\n    return 42\n")
    commit_all(wt, "the answer")
    stat = await sandbox.aswarm("diff", "Gauss", "--stat")
    assert "; 1 commit(s)" in stat.stderr, stat.stderr
