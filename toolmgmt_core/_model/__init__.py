"""The shapes everything else speaks: ``Tool`` and its annotations, tools from foreign shapes
(``schema``), what a tool schema may hold (``schema_guard``) and the validator arguments are
checked with, tool names and their folding, token counts, and the error tree (``errors``).

The package exports nothing itself: import from its modules.
"""

__all__: list[str] = []
