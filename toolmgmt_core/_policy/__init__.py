"""Which tools an agent may see and run: patterns and profiles (``profiles``), labelled policy
steps and approval verdicts (``steps``), policy files (``files``) and the
:class:`~toolmgmt_core.PolicyView` over a catalog (``view``).

The package exports nothing itself: import from its modules.
"""

__all__: list[str] = []
