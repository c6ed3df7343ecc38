"""Real Redis, PostgreSQL and HAProxy servers on loopback, for tests, benchmarks and trying
things out.

``LocalRedis`` and ``LocalPostgres`` start the Debian binaries (``redis-server``; PostgreSQL's
``initdb`` and ``postgres`` from ``/usr/lib/postgresql/*/bin``) on 127.0.0.1 with a free port
in a temporary folder, wait until they answer, and stop them and delete the folder on exit::

    with LocalRedis() as redis_server, LocalPostgres() as postgres_server:
        sessions = RedisSessionStore(redis_server.url)
        catalog_store = PostgresCatalogStore(postgres_server.dsn)

``LocalPrometheus`` runs ``prometheus`` scraping gateway replicas' ``/metrics`` and answers
PromQL (``apt-get install prometheus``; ``TOOLMGMT_PROMETHEUS`` names another binary).

``LocalHAProxy`` runs ``haproxy`` in front of gateway replicas, from the configuration template
that ships beside it (``haproxy.cfg``, :data:`HAPROXY_TEMPLATE`; ``python -m toolmgmt_deploy
haproxy-config`` prints it filled in)::

    with LocalHAProxy(["127.0.0.1:8001", "127.0.0.1:8002"]) as balancer:
        client = mcp.Client(balancer.url + "/mcp")

Install them with ``apt-get install redis-server postgresql haproxy``. Other locations can be
named with ``TOOLMGMT_REDIS_SERVER`` (the ``redis-server`` binary), ``TOOLMGMT_PG_BINDIR`` (the
folder holding ``initdb`` and ``postgres``) and ``TOOLMGMT_HAPROXY`` (the ``haproxy`` binary).

Each server is a child process of this one; ``stop`` and ``start`` restart it on the same port
and data (to test what happens while it is down). Started from the main thread, it is also
told to stop if this process dies without cleaning up (``PR_SET_PDEATHSIG`` on Linux), so a
killed test run leaves no server behind. PostgreSQL refuses to run as root: as root, it runs as
the ``postgres`` system user in a folder that user owns. The data is disposable: PostgreSQL
runs without fsync by default (``durable=True`` turns it back on).

One module a server: ``process.py`` (what they share: a child process in a temporary folder),
``redis_server.py``, ``postgres_server.py``, ``haproxy.py``, ``prometheus.py``; ``replica.py``
runs a gateway replica and ``launch.py`` the whole topology (``python -m toolmgmt_deploy up``).
"""

from __future__ import annotations

from toolmgmt_deploy.haproxy import (
    HAPROXY_TEMPLATE,
    LocalHAProxy,
    find_haproxy,
    render_haproxy_config,
)
from toolmgmt_deploy.postgres_server import LocalPostgres, find_postgres_bindir
from toolmgmt_deploy.process import die_with_parent, free_port, stop_process
from toolmgmt_deploy.prometheus import LocalPrometheus, find_prometheus
from toolmgmt_deploy.redis_server import LocalRedis, find_redis_server

__all__ = [
    "HAPROXY_TEMPLATE",
    "LocalHAProxy",
    "LocalPostgres",
    "LocalPrometheus",
    "LocalRedis",
    "die_with_parent",
    "find_haproxy",
    "find_postgres_bindir",
    "find_prometheus",
    "find_redis_server",
    "free_port",
    "render_haproxy_config",
    "stop_process",
]
