"""Token counting that works offline.

tiktoken's wheel ships no encodings and downloads them on first use. toolmgmt looks for the BPE
file, without the network, in this order:

1. the folder named by ``TOOLMGMT_TIKTOKEN_DIR``;
2. tiktoken's own cache folder, ``TIKTOKEN_CACHE_DIR`` (or ``DATA_GYM_CACHE_DIR``);
3. the encodings bundled inside the ``litellm`` wheel (found without importing litellm).

Files are named as tiktoken's cache names them (the SHA-1 of the download address). When no file
is found, ``count_tokens`` falls back to :class:`ApproxEncoding`, a documented estimate (about one
token per word piece of at most four characters, and one per punctuation mark) that never
undercounts ASCII text by much and is consistent with itself, which is what budgets and truncation
need. ``get_encoding(name, fallback=False)`` raises instead, naming where it looked.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import threading
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Protocol

import regex

from toolmgmt_core.errors import TokenizerUnavailableError

__all__ = [
    "DEFAULT_ENCODING",
    "ApproxEncoding",
    "Encoding",
    "count_tokens",
    "get_encoding",
]

DEFAULT_ENCODING = "o200k_base"
"""The encoding used when none is named: GPT-4o's, a fair proxy for current models."""

_LOCK = threading.Lock()
_LOAD_LOCK = threading.Lock()  # one thread loads an encoding; the others wait for it


class Encoding(Protocol):
    """What toolmgmt needs of a tokenizer (tiktoken's ``Encoding`` satisfies it)."""

    name: str

    def encode_ordinary(self, text: str) -> list[int]: ...

    def decode(self, tokens: Sequence[int]) -> str: ...


class ApproxEncoding:
    """A tokenizer-free estimate used when no tiktoken encoding can be loaded.

    Text is cut into word pieces of at most four characters, runs of digits of at most three,
    single punctuation marks and whitespace runs attached to the next piece. Each piece counts
    as one token. ``encode_ordinary`` returns piece indices into an internal table so that
    ``decode(encode_ordinary(text)) == text`` holds, like a real tokenizer.
    """

    _PIECE = regex.compile(r"\s*(?:\p{L}{1,4}|\p{N}{1,3}|[^\s\p{L}\p{N}])|\s+")

    def __init__(self, name: str = "approx") -> None:
        self.name = name
        self._pieces: dict[str, int] = {}
        self._by_id: list[str] = []

    def encode_ordinary(self, text: str) -> list[int]:
        ids = []
        for piece in self._PIECE.findall(text):
            index = self._pieces.get(piece)
            if index is None:
                with _LOCK:
                    index = self._pieces.setdefault(piece, len(self._by_id))
                    if index == len(self._by_id):
                        self._by_id.append(piece)
            ids.append(index)
        return ids

    def decode(self, tokens: Sequence[int]) -> str:
        return "".join(self._by_id[t] for t in tokens)

    def count(self, text: str) -> int:
        return len(self._PIECE.findall(text))


def _candidate_dirs() -> list[Path]:
    dirs = []
    for var in ("TOOLMGMT_TIKTOKEN_DIR", "TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR"):
        if os.environ.get(var):
            dirs.append(Path(os.environ[var]))
    spec = importlib.util.find_spec("litellm")
    if spec is not None and spec.submodule_search_locations:
        for location in spec.submodule_search_locations:
            dirs.append(Path(location) / "litellm_core_utils" / "tokenizers")
    return dirs


def _load_tiktoken(name: str) -> Encoding:
    try:
        import tiktoken
        import tiktoken.load
        from tiktoken_ext import openai_public
    except ImportError as exc:  # pragma: no cover - tiktoken is a core dependency
        raise TokenizerUnavailableError(f"tiktoken is not installed: {exc}") from exc

    constructor = openai_public.ENCODING_CONSTRUCTORS.get(name)
    if constructor is None:
        known = ", ".join(sorted(openai_public.ENCODING_CONSTRUCTORS))
        raise TokenizerUnavailableError(f"Unknown encoding {name!r}. Known: {known}.")
    dirs = _candidate_dirs()
    real_loader = tiktoken.load.load_tiktoken_bpe

    def local_loader(blobpath: str, expected_hash: str | None = None) -> dict[bytes, int]:
        key = hashlib.sha1(blobpath.encode()).hexdigest()
        for folder in dirs:
            path = folder / key
            if path.is_file():
                return real_loader(str(path), expected_hash)
        searched = ", ".join(str(d) for d in dirs) or "no folder (none configured)"
        raise TokenizerUnavailableError(
            f"The {name} encoding file ({key}) is not in {searched}. Set TOOLMGMT_TIKTOKEN_DIR to "
            'a folder holding it, or install litellm ("toolmgmt[litellm]"), which bundles it.'
        )

    with _LOCK:
        original = openai_public.load_tiktoken_bpe
        openai_public.load_tiktoken_bpe = local_loader  # type: ignore[assignment]
        try:
            params = constructor()
        finally:
            openai_public.load_tiktoken_bpe = original  # type: ignore[assignment]
    return tiktoken.Encoding(**params)


@lru_cache(maxsize=8)
def _cached_encoding(name: str, fallback: bool) -> Encoding:
    try:
        return _load_tiktoken(name)
    except TokenizerUnavailableError:
        if not fallback:
            raise
        return ApproxEncoding(f"approx:{name}")


def get_encoding(name: str = DEFAULT_ENCODING, *, fallback: bool = True) -> Encoding:
    """The tokenizer named ``name``, loaded without the network.

    Args:
        name: a tiktoken encoding name (``o200k_base``, ``cl100k_base``, ...).
        fallback: return an :class:`ApproxEncoding` when the encoding file cannot be found;
            with ``False``, raise :class:`TokenizerUnavailableError` saying where it looked.
    """
    with _LOAD_LOCK:
        return _cached_encoding(name, fallback)


def count_tokens(text: str, encoding: str | Encoding = DEFAULT_ENCODING) -> int:
    """How many tokens ``text`` takes in ``encoding`` (a name or an encoding object)."""
    if not text:
        return 0
    enc = get_encoding(encoding) if isinstance(encoding, str) else encoding
    if isinstance(enc, ApproxEncoding):
        return enc.count(text)
    return len(enc.encode_ordinary(text))
