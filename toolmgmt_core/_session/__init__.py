"""What the model sees now: :class:`~toolmgmt_core.ToolManager` (``manager``) and the
:class:`~toolmgmt_core.ToolSession` it makes (``session``), the tool list of a step
(``layout``), the meta-tools and their answers (``meta_tools``, ``meta_calls``), a session's
state and where it is kept (``state``, ``conversation``), loads rebuilt from a transcript
(``history``) and what a catalog costs per mode (``report``).

The package exports nothing itself: import from its modules.
"""

__all__: list[str] = []
