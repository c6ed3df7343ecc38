"""A store that cannot be used says why: a refused login, an unknown database and a server that
is not there are three different problems, and none of the first two is "unreachable" (real
PostgreSQL and Redis servers)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from toolmgmt_core._catalog.tool_catalog import ToolCatalog
from toolmgmt_core._cli import main
from toolmgmt_core._model.errors import StoreUnavailableError
from toolmgmt_core._model.tool import Tool

psycopg = pytest.importorskip("psycopg")
redis = pytest.importorskip("redis")
from toolmgmt_core._stores.postgres import PostgresCatalogStore  # noqa: E402
from toolmgmt_core._stores.redis import RedisSessionStore  # noqa: E402

PASSWORD = "right-s3cret"


@pytest.fixture(scope="module")
def password_user(postgres_server: Any) -> Iterator[str]:
    """A role that must log in with a password (scram-sha-256), on the session's server; the
    server's other users keep trust authentication. Yields the role's name."""
    name = "toolmgmt_password_user"
    with psycopg.connect(postgres_server.dsn, autocommit=True) as conn:
        conn.execute(f"DROP ROLE IF EXISTS {name}")
        conn.execute(f"CREATE ROLE {name} LOGIN PASSWORD '{PASSWORD}'")
        hba = Path(conn.execute("SHOW hba_file").fetchone()[0])
        original = hba.read_text(encoding="utf-8")
        rule = f"host all {name} 127.0.0.1/32 scram-sha-256\n"
        hba.write_text(rule + original, encoding="utf-8")  # first match wins
        conn.execute("SELECT pg_reload_conf()")
    time.sleep(0.2)  # the postmaster reloads on SIGHUP, asynchronously
    try:
        yield name
    finally:
        hba.write_text(original, encoding="utf-8")
        with psycopg.connect(postgres_server.dsn, autocommit=True) as conn:
            conn.execute("SELECT pg_reload_conf()")
            conn.execute(f"DROP ROLE IF EXISTS {name}")


def _error(dsn: str) -> str:
    with pytest.raises(StoreUnavailableError) as caught:
        PostgresCatalogStore(dsn, timeout=5).records()
    return str(caught.value)


def test_a_wrong_password_is_a_refused_login_not_an_outage(
    postgres_server: Any, password_user: str
) -> None:
    port = postgres_server.port
    right = f"postgresql://{password_user}:{PASSWORD}@127.0.0.1:{port}/postgres"
    psycopg.connect(right).close()  # the right password works
    message = _error(f"postgresql://{password_user}:wrong-pass@127.0.0.1:{port}/postgres")
    assert f"PostgreSQL at postgresql://{password_user}@127.0.0.1:{port}/postgres" in message
    assert "refused the login" in message and "password authentication failed" in message
    assert "check the DSN's user and password" in message
    assert "unreachable" not in message and "wrong-pass" not in message
    # no password at all, and a role that does not exist: refused logins too
    assert "refused the login" in _error(f"postgresql://{password_user}@127.0.0.1:{port}/postgres")
    assert "refused the login" in _error(f"postgresql://nobody_here@127.0.0.1:{port}/postgres")


def test_an_unknown_database_and_a_closed_port(postgres_server: Any, closed_port: int) -> None:
    message = _error(f"postgresql://postgres@127.0.0.1:{postgres_server.port}/no_such_db")
    assert "has no such database" in message and '"no_such_db" does not exist' in message
    assert "createdb" in message and "unreachable" not in message
    message = _error(f"postgresql://postgres@127.0.0.1:{closed_port}/postgres")
    assert "refused the connection: nothing listens there" in message
    assert "Check that PostgreSQL is running" in message


def test_the_cli_and_a_follower_say_the_same(
    postgres_server: Any,
    password_user: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    dsn = f"postgresql://{password_user}:wrong-pass@127.0.0.1:{postgres_server.port}/postgres"
    assert main(["catalog", "list", "--store", dsn]) == 2
    err = capsys.readouterr().err
    assert "refused the login" in err and "unreachable" not in err and "wrong-pass" not in err
    with pytest.raises(StoreUnavailableError, match="refused the login"):
        PostgresCatalogStore(dsn, timeout=5).follow(ToolCatalog([Tool("kept")]))


def test_a_wrong_redis_password_is_a_refused_login(redis_server: Any, closed_port: int) -> None:
    from toolmgmt_deploy import LocalRedis

    with LocalRedis() as server:
        with redis.Redis.from_url(server.url) as client:
            client.config_set("requirepass", PASSWORD)
        wrong = server.url.replace("redis://", "redis://:wrong-pass@")
        with pytest.raises(StoreUnavailableError) as caught:
            RedisSessionStore(wrong, timeout=2).ping()
        message = str(caught.value)
        assert "refused the login" in message and "unreachable" not in message
        assert "wrong-pass" not in message
        RedisSessionStore(server.url.replace("redis://", f"redis://:{PASSWORD}@")).ping()
    with pytest.raises(StoreUnavailableError, match="is unreachable"):  # nothing there
        RedisSessionStore(f"redis://127.0.0.1:{closed_port}/0", timeout=1).ping()
