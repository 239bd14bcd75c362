"""`python3 -m swarm_tui ...`: bootstrap the project's virtual environment, then run.

`python3 -m swarm_tui demo` runs swarm on its demo fleet; `python3 -m swarm_tui test` runs the
whole test suite. Both create `.venv/` beside the checkout on first use (stdlib only here).
"""

from swarm_tui.bootstrap import main

if __name__ == "__main__":
    main()
