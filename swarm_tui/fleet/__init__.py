"""The engine, free of any UI: agents, state, injection queue, messages, journal, socket."""
