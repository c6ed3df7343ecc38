"""Token counting: one definition count everywhere, exact wherever tiktoken can get its encoding,
and a close estimate offline."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.bfcl import bfcl_dir, bfcl_missing

import toolmgmt_core._model.tokens as tokens_module
import toolmgmt_demo
from toolmgmt_core import ToolCatalog, ToolManager
from toolmgmt_core._model.errors import TokenizerUnavailableError
from toolmgmt_core._model.tokens import (
    ApproxEncoding,
    count_tokens,
    definition_text,
    definition_tokens,
    get_encoding,
)
from toolmgmt_core._model.tool import Tool
from toolmgmt_core._session.report import report_tables

O200K_URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"

GERMAN = Tool(
    name="wetter_vorhersage",
    description="Gibt die Wettervorhersage für eine Stadt zurück: Temperatur in Grad Celsius, "
    "Niederschlagswahrscheinlichkeit und Windgeschwindigkeit für die nächsten Tage.",
    parameters={
        "type": "object",
        "properties": {"stadt": {"type": "string", "description": "Name der Stadt, z. B. München"}},
        "required": ["stadt"],
    },
)
JAPANESE = Tool(
    name="tenki_yohou",
    description="指定した都市の天気予報を返します。気温、降水確率、風速を含みます。",
    parameters={
        "type": "object",
        "properties": {"city": {"type": "string", "description": "都市名（例：東京）"}},
    },
)


def _bundle() -> Path:
    """litellm's bundled o200k_base file (a dev dependency), as tiktoken's cache names it."""
    spec = importlib.util.find_spec("litellm")
    assert spec is not None and spec.submodule_search_locations
    key = hashlib.sha1(O200K_URL.encode()).hexdigest()
    path = Path(spec.submodule_search_locations[0]) / "litellm_core_utils" / "tokenizers" / key
    assert path.is_file()
    return path


BUNDLE = _bundle()


@pytest.fixture
def fresh_encodings() -> Iterator[None]:
    """Forget loaded encodings before and after (a test below changes where they come from)."""
    tokens_module._cached_encoding.cache_clear()
    tokens_module._text_tokens.cache_clear()
    yield
    tokens_module._cached_encoding.cache_clear()
    tokens_module._text_tokens.cache_clear()


@pytest.fixture
def core_only(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, fresh_encodings: None) -> Path:
    """A core-only install: no litellm to find, an empty tiktoken cache folder (returned)."""
    monkeypatch.setitem(sys.modules, "litellm", None)  # find_spec("litellm") is None
    monkeypatch.delenv("TOOLMGMT_TIKTOKEN_DIR", raising=False)
    cache = tmp_path / "tiktoken-cache"
    cache.mkdir()
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(cache))
    return cache


def test_a_definition_counts_the_same_everywhere_also_when_not_ascii() -> None:
    catalog = ToolCatalog([GERMAN, JAPANESE, *toolmgmt_demo.demo_tools()[:5]])
    manager = ToolManager(catalog, mode="search")
    one_by_one = sum(definition_tokens([t]) for t in catalog)
    report = {t.key: t for t in report_tables(catalog)}["summary"].to_json()
    assert isinstance(report, dict)
    assert (
        catalog.definition_tokens()
        == manager.definition_tokens(catalog)
        == manager.session().usage().flat_tokens
        == report["definition tokens (all tools, flat)"]
        == one_by_one
    )
    # Non-ASCII text is counted as sent (UTF-8), not as \\u escapes, which cost far more.
    for tool in (GERMAN, JAPANESE):
        text = definition_text(tool)
        assert "\\u" not in text
        escaped = json.dumps(tool.to_dict(full=False), separators=(",", ":"))
        assert definition_tokens([tool]) == count_tokens(text) < count_tokens(escaped)


def test_tiktokens_own_cache_folder_gives_exact_counts(core_only: Path) -> None:
    shutil.copy(BUNDLE, core_only / BUNDLE.name)
    encoding = get_encoding("o200k_base", fallback=False)
    assert not isinstance(encoding, ApproxEncoding)
    assert count_tokens(definition_text(GERMAN)) == len(
        encoding.encode_ordinary(definition_text(GERMAN))
    )


def test_the_folder_named_by_toolmgmt_tiktoken_dir_is_read_first(
    core_only: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "encodings"
    folder.mkdir()
    monkeypatch.setenv("TOOLMGMT_TIKTOKEN_DIR", str(folder))
    monkeypatch.setenv("TOOLMGMT_TIKTOKEN_OFFLINE", "1")
    with pytest.raises(TokenizerUnavailableError) as raised:  # empty: named first, then the rest
        get_encoding("o200k_base", fallback=False)
    assert f"none of these folders: {folder}, {core_only}" in str(raised.value)
    shutil.copy(BUNDLE, folder / BUNDLE.name)  # offline, no litellm, an empty tiktoken cache
    encoding = get_encoding("o200k_base", fallback=False)
    assert not isinstance(encoding, ApproxEncoding)
    text = definition_text(JAPANESE)
    assert count_tokens(text) == len(encoding.encode_ordinary(text)) != ApproxEncoding().count(text)


def test_tiktokens_own_loading_is_used_when_nothing_is_local(
    core_only: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tiktoken.load

    fetched: list[str] = []
    bundle = BUNDLE.read_bytes()

    def network_edge(blobpath: str) -> bytes:  # what tiktoken downloads, served locally
        fetched.append(blobpath)
        return bundle

    monkeypatch.setenv("TOOLMGMT_TIKTOKEN_OFFLINE", "0")
    monkeypatch.setattr(tiktoken.load, "read_file", network_edge)
    encoding = get_encoding("o200k_base", fallback=False)
    assert fetched == [O200K_URL]
    assert not isinstance(encoding, ApproxEncoding)
    assert len(encoding.encode_ordinary("hello world")) == 2
    # tiktoken cached it in its own folder, where the next process finds it offline
    assert list(core_only.iterdir())


def test_offline_without_any_file_falls_back_with_a_sentence(
    core_only: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with pytest.raises(Exception) as raised:
        get_encoding("o200k_base", fallback=False)
    message = str(raised.value)
    assert "is in none of these folders" in message and str(core_only) in message
    assert "downloading is off" in message and "TOOLMGMT_TIKTOKEN_DIR" in message
    with caplog.at_level("WARNING", logger="toolmgmt"):
        encoding = get_encoding("o200k_base")
    assert isinstance(encoding, ApproxEncoding)
    assert "estimate" in caplog.text


def _definitions_texts(tools: list[Tool]) -> list[str]:
    return [definition_text(t) for t in tools]


def _within(texts: list[str], share: float) -> tuple[int, int]:
    exact = get_encoding("o200k_base", fallback=False)
    approx = ApproxEncoding()
    real = sum(len(exact.encode_ordinary(t)) for t in texts)
    estimate = sum(approx.count(t) for t in texts)
    assert abs(estimate - real) <= share * real, (estimate, real)
    return estimate, real


def test_the_estimate_is_within_ten_percent_on_the_demo_catalog() -> None:
    estimate, real = _within(_definitions_texts(toolmgmt_demo.demo_tools()), 0.10)
    assert real == ToolCatalog(toolmgmt_demo.demo_tools()).definition_tokens()


@pytest.mark.skipif(bfcl_missing("dev") is not None, reason=str(bfcl_missing("dev")))
def test_the_estimate_is_within_ten_percent_on_the_bfcl_dev_pool() -> None:
    pool = json.loads((bfcl_dir("dev") / "bfcl_pool.json").read_text(encoding="utf-8"))["tools"]
    catalog = ToolCatalog()
    catalog.add_schemas(pool, on_error="skip")
    _within(_definitions_texts(list(catalog)), 0.10)


@pytest.mark.parametrize(
    "text",
    [
        "Die Förderung für erneuerbare Energien wird ausgeweitet. Überschüssiger Strom",
        "指定した都市の天気予報を返します。気温、降水確率、風速を含みます。",
        '{"rows":[[1.2345,987654321],[2.469,1975308642]],"next":"cursor_0002"}',
        "def shorten(name: str) -> str:\n    return name[:64]  # provider limit\n",
    ],
)
def test_the_estimate_is_a_tokenizer(text: str) -> None:
    approx = ApproxEncoding()
    ids = approx.encode_ordinary(text)
    assert approx.decode(ids) == text
    assert len(ids) == approx.count(text) == count_tokens(text, approx)
    real = len(get_encoding("o200k_base", fallback=False).encode_ordinary(text))
    assert 0.6 * real <= approx.count(text) <= 1.6 * real


def test_offline_without_any_file_warns_in_one_short_line_once(tmp_path: Path) -> None:
    """A single-extra install offline: one short line naming the fix, not a paragraph, and not
    once per encoding or per count (issue 34)."""
    script = (
        "import sys; sys.modules['litellm'] = None\n"
        "from toolmgmt_core._model.tokens import count_tokens\n"
        "print(count_tokens('hello world'), count_tokens('again', 'cl100k_base'))\n"
    )
    env = {
        **os.environ,
        "TIKTOKEN_CACHE_DIR": str(tmp_path),
        "TOOLMGMT_TIKTOKEN_OFFLINE": "1",
    }
    env.pop("TOOLMGMT_TIKTOKEN_DIR", None)
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert len(lines[0]) <= 200, lines[0]
    assert "estimate" in lines[0] and "TOOLMGMT_TIKTOKEN_DIR" in lines[0]
