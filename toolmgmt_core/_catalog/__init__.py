"""Which tools exist: :class:`~toolmgmt_core.ToolCatalog` (``tool_catalog``), the records it
hands back (``entries``) and catalogs loaded from files, modules and plugins (``sources``).
Search lives in :mod:`toolmgmt_core._search`, embedders in :mod:`toolmgmt_core._embeddings`.

The package exports nothing itself: import from its modules.
"""

__all__: list[str] = []
