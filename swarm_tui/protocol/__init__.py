"""The engine's wire protocol and a watcher's client for it (see models.py)."""
