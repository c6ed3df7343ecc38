"""Helpers shared by the tests (on the path through pytest's ``pythonpath``)."""
