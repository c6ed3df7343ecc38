"""``python -m toolmgmt_core.demo``: print the demo schemas as JSON."""

from toolmgmt_core.demo import _main

_main()
