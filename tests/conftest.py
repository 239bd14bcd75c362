pytest_plugins = ["swarm_tui.testing.fixtures"]
