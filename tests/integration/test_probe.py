import time
from swarm_tui.testing import mock_agent, async_wait_until

async def test_probe(sandbox, start_fleet):
    layout = sandbox.layout("probe", mock_agent("A"))
    t0 = time.monotonic()
    run = await start_fleet(layout)
    await run.wait_states("idle")
    print("idle after", time.monotonic() - t0)
    msgs = run.fleet.send(["A"], "first") + run.fleet.send(["A"], "second") + run.fleet.send(["A"], "third")
    def done():
        rows = [run.store.message(m.id) for m in msgs]
        return all(r.status not in ("queued", "sending") for r in rows)
    await async_wait_until(done, 15, "delivery", run.screens)
    print("done after", time.monotonic() - t0)
    for m in msgs:
        print(run.store.message(m.id))
    print(sandbox.received_at("A"))
