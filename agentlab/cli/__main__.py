"""``python -m agentlab.cli``: the ``agentlab`` command without the console script."""

from agentlab.cli import main

main()
