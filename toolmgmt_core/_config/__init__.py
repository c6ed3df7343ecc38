"""Reading configuration: TOML and JSON files read one way, with typed values and one error
format (``document``), the line that sets each key (``lines``), and the object a
``module:attribute`` string names (``objects``).

The package exports nothing itself: import from its modules.
"""

__all__: list[str] = []
