"""``python -m toolmgmt_deploy up|haproxy-config``: see :mod:`toolmgmt_deploy.launch`."""

from __future__ import annotations

from toolmgmt_deploy.launch import run

run()
