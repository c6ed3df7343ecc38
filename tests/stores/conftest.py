"""The store tests' fixtures (``redis_url``, ``pg_dsn``, ``closed_port``) live in
tests/conftest.py: the replicated gateway's tests use them too."""
