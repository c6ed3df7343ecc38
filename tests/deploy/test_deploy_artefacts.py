"""The deploy artefacts (deploy/container, deploy/compose, deploy/kubernetes), checked offline: no
image registry is reachable here, so no image is built. The Kubernetes manifests against
Kubernetes' published schemas (kubernetes-validate, strict), the compose file and the
Containerfile against what they must hold, and the image's entrypoint run as a plain process
with the image's own command: a real gateway on Redis and PostgreSQL, its token from a file,
called through a real MCP client, then drained by SIGTERM."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

yaml = pytest.importorskip("yaml")
pytest.importorskip("mcp")

from toolmgmt_deploy import HAPROXY_TEMPLATE, render_haproxy_config  # noqa: E402
from toolmgmt_gateway import parse_config  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
COMPOSE = DEPLOY / "compose"
KUBERNETES = DEPLOY / "kubernetes"
CONTAINERFILE = DEPLOY / "container" / "Containerfile"
ENV = {
    "AGENTS_TOKEN": "a" * 24,
    "METRICS_TOKEN": "m" * 24,
    "TOOLMGMT_SESSIONS_URL": "redis://127.0.0.1:1/0",
    "TOOLMGMT_CATALOG_DSN": "postgresql://u@127.0.0.1:1/db",
}


def _manifests() -> dict[str, dict[str, Any]]:
    """The Kubernetes manifests by kind."""
    found = {}
    for path in sorted(KUBERNETES.glob("*.yaml")):
        for document in yaml.safe_load_all(path.read_text()):
            found[document["kind"]] = document
    return found


def _gateway_config(text: str, source: str) -> Any:
    saved = {k: os.environ.get(k) for k in ENV}
    os.environ.update(ENV)
    try:
        return parse_config(text, source=source)
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def test_kubernetes_manifests_pass_the_published_schemas_strictly() -> None:
    validate = pytest.importorskip("kubernetes_validate")
    manifests = _manifests()
    assert {"ConfigMap", "Secret", "Deployment", "Service", "Kustomization"} <= set(manifests)
    for kind, document in manifests.items():
        if kind != "Kustomization":  # kustomize's own file, not a resource
            validate.validate(document, "1.30.0", strict=True)
    broken = json.loads(json.dumps(manifests["Deployment"]))
    broken["spec"]["template"]["spec"]["containers"][0]["readynessProbe"] = {}
    with pytest.raises(validate.ValidationError):  # strict: a misspelt field fails
        validate.validate(broken, "1.30.0", strict=True)


def test_the_deployment_probes_the_drain_and_waits_longer_than_it() -> None:
    manifests = _manifests()
    config = _gateway_config(manifests["ConfigMap"]["data"]["gateway.toml"], "configmap")
    pod = manifests["Deployment"]["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    port = config.gateway.port
    assert container["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "mcp"}
    assert container["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "mcp"}
    assert container["ports"] == [{"name": "mcp", "containerPort": port}]
    pause = container["lifecycle"]["preStop"]["sleep"]["seconds"]
    assert pod["terminationGracePeriodSeconds"] >= pause + config.gateway.shutdown_grace + 5
    assert pod["securityContext"]["runAsNonRoot"] and pod["securityContext"]["runAsUser"] != 0
    # Every variable the config reads comes from the Secret, under a key the Secret has.
    secret = manifests["Secret"]["stringData"]
    given = {e["name"]: e["valueFrom"]["secretKeyRef"]["key"] for e in container["env"]}
    assert set(given) == set(ENV) and set(given.values()) <= set(secret)
    service = manifests["Service"]["spec"]
    labels = manifests["Deployment"]["spec"]["template"]["metadata"]["labels"]
    assert service["selector"].items() <= labels.items()
    assert service["ports"][0]["targetPort"] == "mcp"
    # The same config as compose's, and the image's command.
    compose = _gateway_config((COMPOSE / "gateway.toml").read_text(), "compose")
    assert dataclasses.replace(config, source="") == dataclasses.replace(compose, source="")
    assert container["args"] == _instruction("CMD")


def _instruction(name: str) -> Any:
    """A Containerfile instruction's JSON argument (ENTRYPOINT, CMD)."""
    (line,) = [ln for ln in CONTAINERFILE.read_text().splitlines() if ln.startswith(f"{name} ")]
    return json.loads(line.split(" ", 1)[1])


def test_the_containerfile_is_slim_non_root_and_runs_the_gateway() -> None:
    text = CONTAINERFILE.read_text()
    assert re.search(r"^ARG BASE=python:3\.\d+-slim$", text, re.M) and "FROM ${BASE}" in text
    (user,) = re.findall(r"^USER (\S+)$", text, re.M)
    assert user not in ("0", "root")
    assert _instruction("ENTRYPOINT") == ["toolmgmt-entrypoint"]
    assert "STOPSIGNAL SIGTERM" in text
    for source in re.findall(r"^COPY (\S+) ", text, re.M):
        assert (ROOT / source).exists(), source
    extras = re.search(r'pip install "\.\[([\w,-]+)\]"', text)
    assert extras is not None
    pyproject = (ROOT / "pyproject.toml").read_text()
    for extra in extras.group(1).split(","):
        assert re.search(rf"^{extra} = \[", pyproject, re.M), extra


def test_compose_runs_two_replicas_behind_haproxy_with_the_stores_and_prometheus() -> None:
    compose = yaml.safe_load((COMPOSE / "compose.yaml").read_text())
    services = compose["services"]
    assert {"redis", "postgres", "haproxy", "prometheus"} <= set(services)
    gateways = sorted(n for n, s in services.items() if "build" in s)
    assert gateways == ["gateway-1", "gateway-2"]
    config = _gateway_config((COMPOSE / "gateway.toml").read_text(), "compose")
    for name in gateways:
        service = services[name]
        assert (
            ROOT
            / "deploy"
            / "compose"
            / service["build"]["context"]
            / service["build"]["dockerfile"]
        ).resolve() == CONTAINERFILE
        assert int(service["stop_grace_period"].removesuffix("s")) > config.gateway.shutdown_grace
        assert set(service["secrets"]) <= set(compose["secrets"])
        named = {k.removesuffix("_FILE") for k in service["environment"]}
        assert named == set(ENV)
    # HAProxy's config is the packaged template, filled for these replicas.
    port = config.gateway.port
    expected = render_haproxy_config(
        HAPROXY_TEMPLATE.read_text(),
        bind="0.0.0.0:8080",
        servers=[f"{name}:{port}" for name in gateways],
    )
    assert (COMPOSE / "haproxy.cfg").read_text() == expected
    prometheus = yaml.safe_load((COMPOSE / "prometheus.yml").read_text())
    (job,) = prometheus["scrape_configs"]
    assert job["static_configs"][0]["targets"] == [f"{name}:{port}" for name in gateways]
    assert job["authorization"]["credentials_file"] == "/run/secrets/metrics_token"


@pytest.mark.timeout(120)
def test_the_images_entrypoint_serves_with_its_token_from_a_file(
    tmp_path: Path, redis_url: str, postgres_server: Any
) -> None:
    """The image's ENTRYPOINT with its CMD (on loopback and a free port here), the config the
    image runs, the agents token from a file (AGENTS_TOKEN_FILE), stores the test started."""
    import anyio
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    toolmgmt = shutil.which("toolmgmt", path=str(Path(sys.executable).parent))
    assert toolmgmt is not None
    token_file = tmp_path / "agents_token"
    token_file.write_text("t" * 32 + "\n")
    config = tmp_path / "gateway.toml"
    config.write_text((COMPOSE / "gateway.toml").read_text())
    command = _instruction("CMD")
    command[command.index("--config") + 1] = str(config)
    command[command.index("--host") + 1] = "127.0.0.1"
    command[command.index("--port") + 1] = "0"
    env = {
        **os.environ,
        "PATH": f"{Path(toolmgmt).parent}:{os.environ['PATH']}",
        "AGENTS_TOKEN_FILE": str(token_file),
        "TOOLMGMT_SECRETS_DIR": str(tmp_path),  # /run/secrets in the image
        "METRICS_TOKEN": "m" * 24,
        "TOOLMGMT_SESSIONS_URL": redis_url,
        "TOOLMGMT_CATALOG_DSN": postgres_server.dsn,
    }
    entrypoint = DEPLOY / "container" / "entrypoint.sh"
    process = subprocess.Popen(
        ["sh", str(entrypoint), *command],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    lines: list[str] = []
    announced = threading.Event()

    def read() -> None:
        assert process.stderr is not None
        for line in process.stderr:
            lines.append(line)
            if "listening on" in line:
                announced.set()
        announced.set()

    threading.Thread(target=read, daemon=True).start()
    try:
        assert announced.wait(60) and process.poll() is None, "".join(lines)
        (url,) = [json.loads(line)["url"] for line in lines if "listening on" in line]

        async def scenario() -> list[str]:
            headers = {"Authorization": "Bearer " + "t" * 32}
            async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
                assert (await http.get(url.replace("/mcp", "/readyz"))).status_code == 200
                async with Client(streamable_http_client(url, http_client=http)) as client:
                    return [t.name for t in (await client.list_tools()).tools]

        assert anyio.run(scenario) == ["discover_tools", "get_tool_schema", "execute_tool"]
        process.send_signal(signal.SIGTERM)
        assert process.wait(30) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert any('"stopped"' in line for line in lines), "".join(lines[-20:])
