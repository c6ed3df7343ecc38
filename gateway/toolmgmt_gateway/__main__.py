"""``python -m toolmgmt_gateway --config FILE ...``: run the MCP gateway (as ``toolmgmt serve``)."""

from __future__ import annotations

import sys

from toolmgmt_gateway.cli import main

if __name__ == "__main__":
    sys.exit(main())
