"""Learning from use, off by default: what a catalog learns and within which bounds
(``requests``), how the learned field moves a search (``ranking``, through the search package's
:class:`~toolmgmt_core._search.boost.LearnedBoost`), turning it on and checking what is taught
(``teaching``), secrets and personal data removed first (``redaction``), where it is kept
(``store``; PostgreSQL's is :mod:`toolmgmt_core._stores.postgres_learned`), and the pairs a
conversation teaches (``feedback``, fed by ``from_use``'s :class:`UseLearner`). A catalog's
``learn``, ``forget``, ``learned`` and ``explain_search`` are
:mod:`toolmgmt_core._catalog.learned_api`'s.

The package exports nothing itself: import from its modules.
"""

__all__: list[str] = []
