"""``python -m toolmgmt_demo``: print the demo schemas as JSON."""

from toolmgmt_demo import _main

_main()
