"""Shared fixtures."""

from __future__ import annotations

import os
import tempfile

# Never let litellm fetch its price map during tests.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

# Token counts come from the files the project can find on a fresh machine (litellm's bundle),
# never from a tiktoken cache that happens to sit in the temporary folder, and tests never
# download: an empty cache folder of their own, and downloading off.
os.environ["TIKTOKEN_CACHE_DIR"] = tempfile.mkdtemp(prefix="toolmgmt-tiktoken-")
os.environ["TOOLMGMT_TIKTOKEN_OFFLINE"] = "1"
