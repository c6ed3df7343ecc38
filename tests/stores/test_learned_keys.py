"""A copy of the learned store, attacked with a dictionary (issue 41): the key of its digests
lives outside the database, so no secret word, PIN, diagnosis, name, e-mail part, principal or
conversation id comes back. Real PostgreSQL."""

from __future__ import annotations

import hashlib
import hmac
import logging

import pytest

from toolmgmt_core._catalog.tool_catalog import ToolCatalog
from toolmgmt_core._learning.teaching import LearningOptions
from toolmgmt_demo import demo_tools

psycopg = pytest.importorskip("psycopg")
from toolmgmt_core._stores.postgres_learned import PostgresLearnedStore  # noqa: E402

KEY = "the replicas' learning key, never in the database"
TOOL = "payments_list_refunds"
TOOLS = [TOOL, "payments_get_charge", "payments_get_invoice", "crm_list_deals", "files_read_file"]
PRINCIPALS = ["alice.martin@example.com", "bob.okafor@clinic.org"]
CONVERSATIONS = [f"conv-{i}" for i in range(1, 16)]
REQUESTS = [
    "my secret word is marmalade, the parcel never arrived",
    "refund the charge, my pin is 4921 and backup pin fourninetwoone",
    "refund the chlamydia test and the depression consultation",
    "refund okonkwo and delacroix for the parcel",
    "refund the order placed by amartin at fastmail",
]
WORDS = ["marmalade", "4921", "fourninetwoone", "chlamydia", "depression", "consultation"]
WORDS += ["okonkwo", "delacroix", "amartin", "fastmail", "parcel", "refund", "charge"]
DICTIONARY = WORDS + PRINCIPALS + CONVERSATIONS + [f"conv-{i}" for i in range(100)]


def _copy(dsn: str) -> tuple[set[str], list[bytes]]:
    """Every text token and every binary value of every table of the database, as an attacker
    holding a copy reads it."""
    tokens: set[str] = set()
    blobs: list[bytes] = []
    with psycopg.connect(dsn) as conn:
        tables = [
            row[0]
            for row in conn.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"
            )
        ]
        for table in tables:
            for row in conn.execute(f'SELECT * FROM "{table}"'):
                for value in row:
                    if isinstance(value, bytes | memoryview):
                        blobs.append(bytes(value))
                    elif isinstance(value, str):
                        tokens.update(value.replace(".", " ").split())
                        tokens.add(value)
    return tokens, blobs


def _guesses(word: str, keys: list[bytes]) -> set[str]:
    """What an attacker computes for one dictionary word: each digest scheme, under every key
    the copy holds (and none)."""
    out = {word, word.lower()}
    for text in (word, f"principal:{word}"):
        out.add(hashlib.sha256(text.encode()).hexdigest()[:16])
    for key in [*keys, b""]:
        out.add("#" + hmac.new(key, word.encode(), hashlib.sha256).hexdigest()[:16])
    return out


def test_a_dictionary_over_a_copied_store_recovers_nothing(pg_dsn: str) -> None:
    store = PostgresLearnedStore(pg_dsn)
    store.forget()
    catalog = ToolCatalog(demo_tools(), learning=LearningOptions(store=store, key=KEY))
    pairs = [
        (request, TOOLS[i], CONVERSATIONS[i * 3 + j], PRINCIPALS[(i + j) % 2])
        for i, request in enumerate(REQUESTS)
        for j in range(3)
    ]
    assert catalog.learn(pairs, source="use").learned  # two principals: digests only
    tokens, blobs = _copy(pg_dsn)
    assert any(t.startswith("#") for t in tokens)  # the copy holds the digests
    recovered = [word for word in DICTIONARY if _guesses(word, blobs) & tokens]
    assert recovered == []
    # the operator, who holds the key, still forgets a principal's and a conversation's
    assert catalog.forget(conversation=CONVERSATIONS[0]) == 1
    assert catalog.forget(principal=PRINCIPALS[0]) > 0


def test_a_replica_with_another_key_ignores_the_rows_and_says_so(
    pg_dsn: str, caplog: pytest.LogCaptureFixture
) -> None:
    store = PostgresLearnedStore(pg_dsn)
    store.forget()
    teacher = ToolCatalog(demo_tools(), learning=LearningOptions(store=store, key=KEY))
    teacher.learn([("the parcel never arrived", TOOL, f"c{i}", f"p{i}") for i in range(3)])
    assert teacher.learned_terms(TOOL)
    with caplog.at_level(logging.WARNING):
        other = LearningOptions(store=PostgresLearnedStore(pg_dsn), key="another key")
        stranger = ToolCatalog(demo_tools(), learning=other)
    assert stranger.learned() == [] and "under another key" in caplog.text
    assert len(PostgresLearnedStore(pg_dsn).load()) == 3  # ignored, not deleted


def test_a_shared_store_without_a_key_is_refused(pg_dsn: str) -> None:
    from toolmgmt_core._model.errors import ConfigError

    with pytest.raises(ConfigError, match=r"LearningOptions\(key="):
        ToolCatalog(learning=LearningOptions(store=PostgresLearnedStore(pg_dsn)))


def test_rows_kept_under_the_stores_own_salt_are_dropped(
    pg_dsn: str, caplog: pytest.LogCaptureFixture
) -> None:
    store = PostgresLearnedStore(pg_dsn)
    store.forget()
    with psycopg.connect(pg_dsn) as conn:  # a row as the salt-era code kept it
        conn.execute(
            "INSERT INTO toolmgmt_learned (tool, text, conversation, at, source, principal) "
            "VALUES (%s, '#0011223344556677 parcel', '8899aabbccddeeff', 1.0, 'use', "
            "'0123456789abcdef')",
            [TOOL],
        )
    with caplog.at_level(logging.WARNING):
        ToolCatalog(demo_tools(), learning=LearningOptions(store=store, key=KEY))
    assert store.load() == [] and "dropped 1 learned requests" in caplog.text
