"""The official MCP conformance suite against the gateway: both requirement sets of the suite
(``2025-11-25``, run over the initialize handshake, and ``2026-07-28``, stateless) in both
deployments (in memory, and with conversations in Redis: ``[store] sessions``).

    bench/conformance.sh                      # installs the suite, then runs this
    python bench/conformance.py --node NODE --suite INDEX_JS [--json OUT]

Each deployment is one gateway process (``toolmgmt serve --http``) serving
``tests/adapters/mcp/servers/conformance_upstream.py`` (the tools the suite calls) with
``prefix = ""`` and ``always_on``, so the suite reaches them by their own names and every call
goes through the gateway's conversation handling and upstream connection. A Redis is started on
loopback for the Redis deployment.

Every scenario a requirement set runs is either one that applies to a tools gateway (it must
pass: exit 1 otherwise) or listed below with the reason it does not apply; so is each check that
does not apply inside a scenario that does (a scenario covering prompts and resources beside
tools). A scenario in neither list fails the run too, so a new suite version is looked at.
The table gives, per requirement set and deployment, the applicable scenarios passed and the
suite's own count of checks passed and failed over the whole set.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))  # _results
UPSTREAM = ROOT / "tests" / "adapters" / "mcp" / "servers" / "conformance_upstream.py"

REQUIREMENTS = ("2025-11-25", "2026-07-28")
DEPLOYMENTS = ("memory", "redis")

_TOOLS = (
    "tools-list",
    "tools-call-simple-text",
    "tools-call-error",
    "tools-call-image",
    "tools-call-audio",
    "tools-call-embedded-resource",
    "tools-call-mixed-content",
    "tools-call-with-progress",
    "json-schema-2020-12",
    "server-sse-multiple-streams",
    "dns-rebinding-protection",
)
APPLIES: dict[str, tuple[str, ...]] = {
    "2025-11-25": (
        "server-initialize",
        "ping",
        *_TOOLS,
        "tools-call-sampling",
        "tools-call-elicitation",
        "elicitation-sep1034-defaults",
        "elicitation-sep1330-enums",
        "server-session-lifecycle",
    ),
    "2026-07-28": (
        "server-stateless",
        *_TOOLS,
        "caching",
        "http-header-validation",
        "http-custom-header-server-validation",
        "input-required-result-basic-elicitation",
        "input-required-result-basic-sampling",
        "input-required-result-basic-list-roots",
        "input-required-result-request-state",
        "input-required-result-multiple-input-requests",
        "input-required-result-multi-round",
        "input-required-result-missing-input-response",
        "input-required-result-result-type",
        "input-required-result-unsupported-methods",
        "input-required-result-tampered-state",
        "input-required-result-capability-check",
        "input-required-result-ignore-extra-params",
        "input-required-result-validate-input",
    ),
}
"""The scenarios that apply to a tools gateway, per requirement set: each must pass."""

_TOOLS_ONLY = "the gateway serves tools only (no resources or prompts capability)"
NOT_APPLICABLE: dict[str, str] = {
    "logging-set-level": "the gateway has no logging capability (deprecated in the 2026 spec)",
    "tools-call-with-logging": "upstream log messages are not relayed (logging is deprecated in "
    "the 2026 spec; progress is relayed)",
    "completion-complete": "completions belong to prompts and resources; " + _TOOLS_ONLY,
    "server-sse-polling": "needs a tool that closes its own SSE stream mid-call (a transport "
    "test of one server; pending in the suite)",
    "resources-*": _TOOLS_ONLY,
    "prompts-*": _TOOLS_ONLY,
    "sep-2164-resource-not-found": _TOOLS_ONLY,
    "input-required-result-non-tool-request": "input-required on prompts/get: " + _TOOLS_ONLY,
    "tasks-*": "the tasks extension (SEP-2663, optional, not scored): the gateway runs no tasks",
}
"""Scenarios that do not apply to a tools gateway, with the reason (a trailing ``*`` globs)."""

CHECKS_NOT_APPLICABLE: dict[str, str] = {
    "caching/sep-2549-prompts-list-caching-hints": _TOOLS_ONLY,
    "caching/sep-2549-resources-list-caching-hints": _TOOLS_ONLY,
    "caching/sep-2549-resources-templates-list-caching-hints": _TOOLS_ONLY,
    "caching/sep-2549-resources-read-caching-hints": _TOOLS_ONLY,
}
"""Checks that do not apply inside a scenario that does (``scenario/check id``)."""

_RESULT_DIR = re.compile(r"^server-(?P<scenario>.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$")


@dataclass
class Run:
    """One requirement set run against one deployment."""

    requirements: str
    deployment: str
    checks: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    """Scenario -> its checks (the suite's ``checks.json``)."""

    def count(self, status: str) -> int:
        """Checks of ``status`` over the whole set (the suite's own total)."""
        return sum(c["status"] == status for cs in self.checks.values() for c in cs)

    def failures(self, scenario: str) -> list[dict[str, Any]]:
        """The failed checks of ``scenario`` that apply."""
        return [
            c
            for c in self.checks.get(scenario, [])
            if c["status"] == "FAILURE" and f"{scenario}/{c['id']}" not in CHECKS_NOT_APPLICABLE
        ]

    def problems(self) -> list[str]:
        """What makes the run fail: an applicable scenario failed or did not run, or a scenario
        ran that is in no list."""
        out = []
        applies = APPLIES[self.requirements]
        for scenario in applies:
            if scenario not in self.checks:
                out.append(f"{scenario}: did not run")
            elif bad := self.failures(scenario):
                reasons = "; ".join(f"{c['id']}: {c.get('errorMessage')}" for c in bad)
                out.append(f"{scenario}: {reasons[:400]}")
        for scenario in self.checks:
            if scenario not in applies and not_applicable(scenario) is None:
                out.append(f"{scenario}: in neither APPLIES nor NOT_APPLICABLE (look at it)")
        return out

    def summary(self) -> dict[str, Any]:
        applies = APPLIES[self.requirements]
        passed = [s for s in applies if s in self.checks and not self.failures(s)]
        return {
            "requirements": self.requirements,
            "deployment": self.deployment,
            "applicable_passed": len(passed),
            "applicable": len(applies),
            "checks_passed": self.count("SUCCESS"),
            "checks_failed": self.count("FAILURE"),
            "checks_warning": self.count("WARNING"),
            "problems": self.problems(),
        }


def not_applicable(scenario: str) -> str | None:
    """Why ``scenario`` does not apply, or None."""
    for pattern, reason in NOT_APPLICABLE.items():
        if scenario == pattern or (pattern.endswith("*") and scenario.startswith(pattern[:-1])):
            return reason
    return None


def read_results(folder: Path) -> dict[str, list[dict[str, Any]]]:
    """Scenario -> checks, from the suite's output folder (the last run of each)."""
    out: dict[str, list[dict[str, Any]]] = {}
    for checks in sorted(folder.glob("server-*/checks.json")):
        match = _RESULT_DIR.match(checks.parent.name)
        if match:
            out[match.group("scenario")] = json.loads(checks.read_text())
    return out


def gateway_config(folder: Path, redis_url: str | None) -> Path:
    """The gateway config of one deployment."""
    lines = [
        "[gateway]",
        'transport = "http"',
        "port = 0",
        'always_on = ["test_*", "json_schema_*"]',
        'media = "pass"',
        "",
        "[upstreams.conformance]",
        f"command = {json.dumps(sys.executable)}",
        f"args = [{json.dumps(str(UPSTREAM))}]",
        'prefix = ""',
    ]
    if redis_url:
        lines += ["", "[store]", f"sessions = {json.dumps(redis_url)}"]
    path = folder / "gateway.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


@contextmanager
def deployment(name: str, folder: Path) -> Iterator[str]:
    """The gateway of deployment ``name`` (and its Redis), serving; its URL."""
    from toolmgmt_deploy import LocalRedis
    from toolmgmt_deploy.replica import LocalGateway

    redis = LocalRedis().start() if name == "redis" else None
    try:
        config = gateway_config(folder, redis.url if redis else None)
        with LocalGateway(config) as gateway:
            assert gateway.url is not None
            yield gateway.url
    finally:
        if redis is not None:
            redis.close()


def run_suite(node: str, suite: str, url: str, requirements: str, out: Path) -> None:
    """Run one requirement set against ``url``; its results in ``out``."""
    command = [node, suite, "server", "--url", url, "--requirements", requirements, "-o", str(out)]
    with open(out.with_suffix(".log"), "w") as log:
        subprocess.run(command, stdout=log, stderr=subprocess.STDOUT, timeout=900, check=False)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--node", required=True, help="the node binary (22 or later)")
    parser.add_argument("--suite", required=True, help="the suite's dist/index.js")
    parser.add_argument("--requirements", choices=REQUIREMENTS, action="append")
    parser.add_argument("--deployment", choices=DEPLOYMENTS, action="append")
    parser.add_argument("--json", type=Path, help="write the figures here (bench/_results.py)")
    parser.add_argument("--keep", type=Path, help="keep the suite's results in this folder")
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="toolmgmt-conformance-"))
    runs: list[Run] = []
    try:
        for name in args.deployment or DEPLOYMENTS:
            folder = work / name
            folder.mkdir()
            with deployment(name, folder) as url:
                for requirements in args.requirements or REQUIREMENTS:
                    out = folder / requirements
                    run_suite(args.node, args.suite, url, requirements, out)
                    runs.append(Run(requirements, name, read_results(out)))
        if args.keep:
            shutil.copytree(work, args.keep, dirs_exist_ok=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    summaries = [run.summary() for run in runs]
    _print(summaries)
    if args.json:
        from _results import write_results

        figures = {f"{s['requirements']} {s['deployment']}": s for s in summaries}
        write_results(args.json, "conformance", figures)
    return 1 if any(s["problems"] for s in summaries) else 0


def _print(summaries: list[dict[str, Any]]) -> None:
    print(f"\n{'requirements':13} {'deployment':10} {'applicable passed':>18} {'checks':>16}")
    for s in summaries:
        applicable = f"{s['applicable_passed']}/{s['applicable']}"
        checks = f"{s['checks_passed']} ok, {s['checks_failed']} failed"
        print(f"{s['requirements']:13} {s['deployment']:10} {applicable:>18} {checks:>16}")
    for s in summaries:
        for problem in s["problems"]:
            print(f"FAIL {s['requirements']} {s['deployment']}: {problem}")
    print("\nchecks failed above are those of scenarios that do not apply (a tools gateway):")
    for pattern, reason in NOT_APPLICABLE.items():
        print(f"  {pattern:40} {reason}")
    for check, reason in CHECKS_NOT_APPLICABLE.items():
        print(f"  {check:40} {reason}")


if __name__ == "__main__":
    sys.exit(main())
