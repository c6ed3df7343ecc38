"""What happens to one call, and what comes back: which tool a name means (``resolution``),
argument repair and validation (``nulls``, ``validation``), running handlers (``execution``,
``sync``), a framework's control flow (``control``), result budgets and records (``budget``,
``records``), truncation (``truncation``) and the result or error the model gets (``results``).

The package exports nothing itself: import from its modules.
"""

__all__: list[str] = []
