"""What the core does at run time for whoever runs it: which exceptions are a framework's
control flow and pass through every broad ``except`` (``control``).

The package exports nothing itself: import from its modules.
"""

__all__: list[str] = []
