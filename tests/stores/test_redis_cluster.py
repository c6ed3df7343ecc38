"""Sessions on a real Redis Cluster: a session's two keys (state and version counter) share one
hash tag, so the save script, which touches both, runs in one slot."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from toolmgmt_core._model.errors import SessionConflictError
from toolmgmt_core._stores import StoredSession, update_session

redis = pytest.importorskip("redis")
from redis.cluster import RedisCluster  # noqa: E402
from toolmgmt_deploy import LocalRedis, free_port  # noqa: E402

from toolmgmt_core._stores.redis import RedisSessionStore, hash_tag  # noqa: E402

# Ids whose braces would end a hash tag early (or leave it empty), and look-alikes of their
# escaped forms: each must still be one session of its own, its keys in one slot.
IDS = ["conversation-1", "mcp-3f9a", "}starts-with-a-brace", "{", "%7B", "a{b}c", "%"]


class _LocalRedisCluster(LocalRedis):
    """A one-node Redis Cluster holding every slot (enough for the slot rules: a command whose
    keys are in two slots fails with CROSSSLOT on one node as on many)."""

    def _command(self) -> list[str]:
        # The cluster bus listens on its own port (by default the client port + 10,000, which
        # fails for a random port above 55,535): a free one of its own.
        bus = str(free_port())
        return [*super()._command(), "--cluster-enabled", "yes", "--cluster-port", bus]

    def start(self) -> _LocalRedisCluster:
        super().start()
        with redis.Redis(host="127.0.0.1", port=self.port) as client:
            client.execute_command("CLUSTER", "ADDSLOTSRANGE", 0, 16383)
            deadline = time.monotonic() + 30
            while client.cluster("info")["cluster_state"] != "ok":
                assert time.monotonic() < deadline, "the cluster did not come up"
                time.sleep(0.05)
        return self


@pytest.fixture(scope="module")
def cluster(redis_server: Any) -> Iterator[_LocalRedisCluster]:
    # ``redis_server`` only for its check that redis-server is installed (skip or fail).
    with _LocalRedisCluster(redis_server.binary) as server:
        yield server


@pytest.fixture
def store(cluster: _LocalRedisCluster) -> Iterator[RedisSessionStore]:
    client = RedisCluster(host="127.0.0.1", port=cluster.port)
    client.flushall()
    with RedisSessionStore(client=client, ttl=60) as store:
        yield store


def test_a_sessions_keys_share_one_slot(store: RedisSessionStore) -> None:
    client = store._client
    keys = {session_id: store.key(session_id) for session_id in IDS}
    assert len(set(keys.values())) == len(IDS)  # the escaping keeps ids apart
    for session_id, key in keys.items():
        assert key == f"toolmgmt:session:{{{hash_tag(session_id)}}}"
        assert client.keyslot(key) == client.keyslot(key + ":versions"), session_id


@pytest.mark.parametrize("session_id", IDS)
def test_sessions_save_update_conflict_and_delete_on_a_cluster(
    store: RedisSessionStore, session_id: str
) -> None:
    first = store.save(session_id, {"loaded": ["a"]}, version=0)
    assert store.load(session_id) == StoredSession({"loaded": ["a"]}, first)
    assert store.version(session_id) == first
    with pytest.raises(SessionConflictError):
        store.save(session_id, {"loaded": ["stale"]}, version=0)

    def add_b(state: dict[str, Any] | None) -> dict[str, Any]:
        return {"loaded": [*(state or {}).get("loaded", []), "b"]}

    second = update_session(store, session_id, add_b)
    assert second.state == {"loaded": ["a", "b"]} and second.version > first
    store.delete(session_id)
    assert store.load(session_id) is None and store.version(session_id) == 0
    again = store.save(session_id, {}, version=0)
    assert again > second.version  # the counter outlived the state: no version reused
