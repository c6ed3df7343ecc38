"""``python -m toolmgmt_core._cli``: the ``toolmgmt`` command line."""

from __future__ import annotations

import sys

from toolmgmt_core._cli import main

if __name__ == "__main__":
    sys.exit(main())
