"""Shared fixtures."""

from __future__ import annotations

import os

# Never let litellm fetch its price map during tests.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
