"""Helpers shared by the tests (on the path through pytest's ``pythonpath``) and the benchmarks
(``bench/`` scripts put ``tests/`` on ``sys.path`` and import ``support.*`` the same way)."""
