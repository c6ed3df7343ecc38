"""The gateway's configuration file: upstream MCP servers, policy and how to serve.

TOML (``.toml``) or JSON (any other suffix)::

    [gateway]
    name = "toolmgmt-gateway"      # server name shown to clients
    transport = "stdio"            # or "http"
    host = "127.0.0.1"             # http only; loopback unless told otherwise
    port = 8765
    token_env = "GATEWAY_TOKEN"    # or token = "..." (a bearer token every HTTP request must carry)
    header_timeout = 10            # seconds a client has to send a request's headers
    max_requests = 64              # requests one replica serves at once; beyond: 503, Retry-After
    max_sessions = 10000           # 2025 sessions kept in memory (without [store] sessions)
    max_result_tokens = 4000       # default budget for one tool result
    profile = "full"               # a toolmgmt profile (built-in: minimal, readonly, full)
    always_on = ["notes_search_*"] # tools listed directly beside the three meta-tools
    media = "describe"             # or "pass": upstream images/audio/resources passed on too
    direct_answers = false         # [store] sessions: true skips the SDK's transport (see docs)
    state_key_env = "STATE_KEY"    # or state_key = "...": seals relayed questions' state (2026);
                                   # "new,old" rotates; default: per process, or kept in [store]
    list_ttl = 60                  # seconds a 2026 client may cache tools/list
    metrics = true                 # http only: GET /metrics in Prometheus text (toolmgmt[metrics]),
                                   # read by a client with metrics = true, or:
    # [gateway.metrics]            # instead of metrics = true: /metrics with its own token
    # token_env = "METRICS_TOKEN"  # or token = "..."; other tokens get 403, none 401
    provenance = true              # upstream results end with "[from upstream 'notes': ...]"
    pins_file = "pins.json"        # without [store] catalog: upstream tools' pins kept here
                                   # (default: gateway.pins.json beside this file; false: memory)
    shutdown_grace = 30            # seconds requests in flight have after SIGTERM (a drain)
    log_level = "info"             # debug, info, warning, error (--log-level)
    log_format = "text"            # or "json": one object per line (--log-format)
    access_log = true              # one line per MCP request: client, method, tool, outcome
    access_log_content = false     # true: arguments and result text in the access log too
    mode = "code"                  # tool_search + run_code (toolmgmt[code]); default "gateway"

    [gateway.callers]              # code mode: who calls which tool (patterns, as in [policy])
    direct = ["destructive"]       # only clients' direct calls: refused from a program
    code = ["notes_export_*"]      # only programs: never listed, a direct call refused
    both = ["notes_search_*"]      # listed and callable from a program

    [gateway.clients.support]      # a shared gateway: one token per client (instead of token)
    token_env = "SUPPORT_TOKEN"    # or token = "..." (at least 16 characters)
    profile = "readonly"           # default: [gateway] profile
    deny = ["notes_delete_*"]      # beside [policy], for this client only
    max_requests = 32              # its share of a replica (default: half the replica's)
    max_sessions = 1000            # its 2025 sessions on a replica (default: an equal share)
    max_active = 4                 # its requests worked on at once, not waiting on an upstream
                                   # (default: max_requests // 32, at least 2); beyond: wait
    metrics = false                # true: its token reads GET /metrics

    [policy]                       # patterns on tool names as exposed (with their prefix);
    allow = []                     # a deny pattern that can match no exposed name is an error
    deny = ["notes_delete_*"]
    quarantine = true              # tools whose text addresses the model (prompt injection)
    quarantine_shadowing = true    # tools nearly duplicating another upstream's (name, description)
    trusted = ["notes_get_note"]   # stay hidden until an operator, having read them, trusts them

    [upstreams.notes]              # the table name is the domain
    command = "python"
    args = ["notes_server.py"]     # relative to cwd, which defaults to this file's folder
    env = { NOTES_DIR = "/tmp/notes" }
    timeout = 10                   # seconds per call
    groups = { write = ["create_*", "delete_*"] }   # else grouped by name prefix
    profile = "notes"
    policy = { deny = ["purge_*"] }                 # globs on the upstream's own tool names,
                                                    # for this domain only
    max_result_tokens = 1000
    truncation = "smart"                            # or "head" / "tail"
    # prefix = ""                  # tool names without "notes_" (default: "<name>_")
    accept_changes = false         # true: a changed tool is taken (logged, counted) instead of
                                   # quarantined until `toolmgmt catalog trust NAME`; a change
                                   # lowering a guard is quarantined all the same
    allow_secret_questions = false # true: relay its questions asking for a password, token, key

    [upstreams.search]
    url = "http://127.0.0.1:8765/mcp"
    headers = { Authorization = "Bearer ..." }

    [store]                        # run as one of several replicas (docs/deploy.md)
    sessions = "redis://127.0.0.1:6379/0"   # or sessions_env = "TOOLMGMT_SESSIONS_URL" (a password)
    session_ttl = 86400            # seconds a conversation lives after its last request
    catalog = "postgresql://toolmgmt@db/toolmgmt"   # or catalog_env = "TOOLMGMT_CATALOG_DSN"
    timeout = 2                    # seconds to connect to a store, and for each reply
    events = "redis://127.0.0.1:6379/1"     # or events_env: a usage log (toolmgmt usage --store)

    [search]
    embedder = "onnx:models/minilm-onnx"   # hybrid search; or static:<model>,
                                           # sentence-transformers:<model>, module:attribute;
                                           # vectors cached in [store] catalog when set

    [learning]                     # search learns from the clients' calls (off by default)
    enabled = true                 # a term moves a tool once min_principals clients taught it
    companion_principals = 3       # clients that used two tools together before one is
                                   # suggested beside the other (default: min_principals)
    store = "learned.sqlite"       # or a PostgreSQL DSN (store_env); default: [store] catalog
    key_env = "LEARNING_KEY"       # the key of its digests, never in the store (PostgreSQL needs
                                   # it, or [gateway] state_key_env; a file keeps its own beside)

Errors are :class:`~toolmgmt_core.ConfigError` in the one format of configuration files
(:mod:`toolmgmt_core._config.document`): ``file:line: key.path: problem``.
"""

from __future__ import annotations

import dataclasses
import functools
import hmac
import os
import re
from pathlib import Path
from typing import Any, Literal

from toolmgmt_core import Approval, Callers, ConfigError, Execution, ResultBudget
from toolmgmt_core.integration import (
    DEFAULT_MAX_RESULT_TOKENS,
    DEFAULT_SESSION_TTL,
    MIN_RESULT_TOKENS,
    ConfigDocument,
    ConfigTable,
    PinFile,
    StoreTimeout,
    check_embedder_spec,
    get_profile,
    may_match,
    parse_pattern,
)
from toolmgmt_gateway.config import (
    ClientConfig,
    GatewayConfig,
    GatewaySettings,
    LearningConfig,
    PolicyConfig,
    SearchConfig,
    StoreConfig,
    UpstreamConfig,
)

__all__ = [
    "LOG_FORMATS",
    "LOG_LEVELS",
    "load_config",
    "parse_config",
]

_REDIS_SCHEMES = ("redis://", "rediss://", "unix://")
_POSTGRES_SCHEMES = ("postgresql://", "postgres://")
_MIN_STATE_KEY = 32
"""Shortest request-state key accepted (the SDK's AES-256-GCM codec needs 32 bytes)."""
_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,63}$")
_PREFIX = re.compile(r"^[A-Za-z0-9_-]{0,64}$")
_TRANSPORTS: tuple[Literal["stdio", "http"], ...] = ("stdio", "http")
_MEDIA: tuple[Literal["describe", "pass"], ...] = ("describe", "pass")
_TRUNCATIONS: tuple[Literal["head", "tail", "smart"], ...] = ("head", "tail", "smart")
_MODES: tuple[Literal["auto", "legacy"], ...] = ("auto", "legacy")
LOG_LEVELS: tuple[Literal["debug", "info", "warning", "error"], ...] = (
    "debug",
    "info",
    "warning",
    "error",
)
LOG_FORMATS: tuple[Literal["text", "json"], ...] = ("text", "json")
_SECTIONS = ("gateway", "learning", "policy", "search", "store", "upstreams")
_GATEWAY_KEYS = sorted(
    {"name", "transport", "host", "port", "path", "token", "token_env", "max_result_tokens"}
    | {"default_timeout", "profile", "always_on", "media", "session_result_budget"}
    | {"direct_answers", "state_key", "state_key_env", "list_ttl", "approve_destructive"}
    | {"clients", "header_timeout", "max_requests", "max_sessions", "metrics", "mode"}
    | {"provenance", "pins_file", "shutdown_grace", "log_level", "log_format", "access_log"}
    | {"access_log_content", "callers"}
)
_CLIENT_KEYS = (
    "deny",
    "max_active",
    "max_requests",
    "max_sessions",
    "metrics",
    "profile",
    "token",
    "token_env",
)
_METRICS_KEYS = ("token", "token_env")
_MIN_CLIENT_TOKEN = 16
"""Shortest client token accepted: a shared gateway's tokens are its only lock."""
_STORE_KEYS = sorted(
    {"sessions", "sessions_env", "session_ttl", "session_prefix", "catalog", "catalog_env"}
    | {"timeout", "events", "events_env"}
)
_UPSTREAM_KEYS = sorted(
    {"command", "args", "env", "cwd", "url", "headers", "timeout", "connect_timeout"}
    | {"reconnect_delay", "groups", "group_by", "profile", "profiles", "policy"}
    | {"max_result_tokens", "truncation", "mode", "prefix", "accept_changes"}
    | {"allow_secret_questions"}
    | {"stderr"}
)


def load_config(path: str | os.PathLike[str]) -> GatewayConfig:
    """Read a gateway configuration from a TOML (``.toml``) or JSON file (any other suffix).

    Raises:
        ConfigError: the file is missing, does not parse, or holds a bad value; the message is
            ``file:line: key.path: problem``.
    """
    file = Path(path)
    fmt: Literal["toml", "json"] = "toml" if file.suffix == ".toml" else "json"
    return _read(ConfigDocument.read(file, what="gateway config", fmt=fmt), file)


def parse_config(
    text: str, *, source: str = "<config>", fmt: Literal["toml", "json"] = "toml"
) -> GatewayConfig:
    """Parse configuration text; relative ``cwd`` values resolve against ``source``'s folder.

    Raises:
        ConfigError: ``source:line: key.path: problem``.
    """
    return _read(ConfigDocument.parse(text, source=source, fmt=fmt))


def _read(document: ConfigDocument, file: Path | None = None) -> GatewayConfig:
    """``file``: the config's own file (its pins are kept beside it by default)."""
    base = Path(document.source).parent if document.source != "<config>" else Path.cwd()
    return _Reader(document, base.resolve(), file).read()


class _Reader:
    """Builds the configuration's objects from the document's checked values."""

    def __init__(self, document: ConfigDocument, base: Path, file: Path | None = None) -> None:
        self.document = document
        self.base = base
        self.file = file

    def read(self) -> GatewayConfig:
        # Every problem of the file in one error: each upstream and section is checked even
        # when one before it is wrong.
        with self.document.collecting():
            config = self._read()
        if config is None:  # pragma: no cover - collecting() raised the problems it noted
            raise self.document.error_type(f"{self.document.source}: not a gateway config.")
        return config

    def _read(self) -> GatewayConfig | None:
        root = self.document.root()
        for key in root:
            if key not in _SECTIONS:
                error = root.fail(key, f"unknown section; valid sections: {', '.join(_SECTIONS)}.")
                if not self.document.note(error):
                    raise error
        upstreams_table = root.table("upstreams")
        if not upstreams_table:
            raise root.fail(
                "upstreams",
                'at least one upstream is needed, e.g. [upstreams.notes] with command = "python" '
                'and args = ["notes_server.py"], or url = "http://127.0.0.1:8765/mcp".',
            )
        read = self.document.section
        upstreams = tuple(
            upstream
            for name in upstreams_table
            if (
                upstream := read(
                    functools.partial(self._upstream, upstreams_table, str(name)), None
                )
            )
        )
        gateway_table = root.table("gateway", _GATEWAY_KEYS)
        gateway = self._gateway(gateway_table)
        policy_table = root.table(
            "policy", ("allow", "deny", "quarantine", "quarantine_shadowing", "trusted")
        )
        policy = self._policy(policy_table)
        # Deny patterns are checked against every upstream: only when each was read. The
        # sections after are checked whatever came before, so one error says every problem.
        all_read = not self.document.has_problems
        if all_read:
            read(functools.partial(self._check_deny, policy_table, policy.deny, upstreams), None)
        clients_table = gateway_table.table("clients")
        none: tuple[ClientConfig, ...] = ()
        clients = read(functools.partial(self._clients, clients_table, upstreams, all_read), none)
        if clients and gateway.token is not None:
            key = "token_env" if "token_env" in gateway_table else "token"
            raise gateway_table.fail(
                key, "set token (one for everyone) or clients (one each), not both."
            )
        gateway = dataclasses.replace(gateway, clients=clients)
        read(functools.partial(self._check_metrics, gateway_table, gateway), None)
        store = read(functools.partial(self._store, root.table("store", _STORE_KEYS)), None)
        search = read(
            functools.partial(self._search, root.table("search", ("embedder",))), SearchConfig()
        )
        source = self.document.source
        learning = root.table(
            "learning",
            ("companion_principals", "destructive", "enabled", "key", "key_env", "min_principals")
            + ("outbound", "store", "store_env"),
        )
        learned = learning.secret("store")
        if learned is not None and not learned.startswith(_POSTGRES_SCHEMES):
            learned = str(self.base / Path(learned).expanduser())  # a file beside the config
        if store is None or self.document.has_problems:
            return None  # collecting() raises every problem noted
        learned_key = learning.secret("key") or next(iter(gateway.state_keys), None)
        shared = (learned or store.catalog or "").startswith(_POSTGRES_SCHEMES)
        if learning.boolean("enabled", False) and shared and learned_key is None:
            raise learning.fail(
                "enabled",
                "learning into PostgreSQL needs the key of its digests, kept outside the "
                "database: set key_env (a variable holding a secret, the same on every "
                "replica), or [gateway] state_key_env.",
            )
        learning_config = LearningConfig(
            learning.boolean("enabled", False),
            learned,
            learning.integer("min_principals", 3, low=1, high=1000),
            learning.boolean("destructive", False),
            learning.boolean("outbound", False),
            learned_key,
            companion_principals=learning.integer("companion_principals", 3, low=1, high=1000)
            if "companion_principals" in learning
            else None,
        )
        return GatewayConfig(
            upstreams, gateway, policy, source, store=store, search=search, learning=learning_config
        )

    def _check_deny(
        self, table: ConfigTable, deny: tuple[str, ...], upstreams: tuple[UpstreamConfig, ...]
    ) -> None:
        """A deny pattern (``[policy]``, a client's) that can match no tool name as exposed is
        an error: it would deny nothing while the tool it meant runs (a custom ``prefix``
        renames tools)."""
        for text in deny:
            try:
                pattern = parse_pattern(text)
            except ConfigError as exc:
                raise table.fail("deny", str(exc)) from exc
            if any(
                may_match(pattern, u.name, name_prefix=u.tool_prefix, profiles=u.profiles)
                is not False
                for u in upstreams
            ):
                continue
            exposed = ", ".join(f"{u.tool_prefix}<tool> ({u.name})" for u in upstreams)
            raise table.fail(
                "deny",
                f"{text!r} can match no tool: [policy] patterns apply to tool names as the "
                f"gateway exposes them, which are {exposed}; write the pattern on those names "
                "(or put a glob on the upstream's own names in its policy table).",
            )

    @staticmethod
    def _check_metrics(table: ConfigTable, gateway: GatewaySettings) -> None:
        """A gateway behind tokens serves ``/metrics`` to its own credential only: one must be
        named (no client's ordinary token reads every client's series)."""
        if gateway.metrics_token and any(
            hmac.compare_digest(gateway.metrics_token, other)
            for other in [gateway.token or "", *(c.token for c in gateway.clients)]
        ):
            raise table.fail("metrics", "its token is an MCP token too; give /metrics its own.")
        if not gateway.metrics or not (gateway.token or gateway.clients):
            return
        if gateway.metrics_token or any(c.metrics for c in gateway.clients):
            return
        raise table.fail(
            "metrics",
            "/metrics needs its own credential on a gateway with tokens: a [gateway.metrics] "
            'table with token_env = "VARIABLE" (or token), or metrics = true in the '
            "[gateway.clients.NAME] that may read it (other tokens get 403).",
        )

    def _metrics(self, table: ConfigTable) -> tuple[bool, str | None]:
        """``metrics = true``, or a ``[gateway.metrics]`` table with its token."""
        if not isinstance(table.get("metrics"), dict):
            return table.boolean("metrics", False), None
        metrics = table.table("metrics", _METRICS_KEYS)
        token = metrics.secret("token")
        if token is None:
            raise metrics.fail(None, 'needs its token: token_env = "VARIABLE" (or token).')
        if len(token) < _MIN_CLIENT_TOKEN:
            key = "token_env" if "token_env" in metrics else "token"
            raise metrics.fail(
                key, f"the token is {len(token)} characters; it needs at least {_MIN_CLIENT_TOKEN}."
            )
        return True, token

    # -- sections -------------------------------------------------------------------------

    def _clients(
        self, table: ConfigTable, upstreams: tuple[UpstreamConfig, ...], check_deny: bool = True
    ) -> tuple[ClientConfig, ...]:
        """``[gateway.clients.NAME]``: each a token of its own (no two alike), a profile, a
        deny list and a share of a replica."""
        clients: list[ClientConfig] = []
        for name in table:
            if not _NAME.match(name):
                raise table.fail(
                    name,
                    "a client's name is a letter, then letters, digits, '_' or '-' (at most 64).",
                )
            client = table.table(name, _CLIENT_KEYS)
            token = client.secret("token")
            key = "token_env" if "token_env" in client else "token"
            if token is None:
                raise client.fail(None, 'needs its token: token_env = "VARIABLE" (or token).')
            if len(token) < _MIN_CLIENT_TOKEN:
                raise client.fail(
                    key,
                    f"the token is {len(token)} characters; a client's token needs at least "
                    f'{_MIN_CLIENT_TOKEN} (make one with: python -c "import secrets; '
                    'print(secrets.token_urlsafe(32))").',
                )
            for other in clients:
                if hmac.compare_digest(other.token, token):
                    raise client.fail(
                        key, f"the same token as client {other.name!r}; each needs its own."
                    )
            profile = client.string("profile", None)
            if profile is not None:
                try:
                    get_profile(profile)
                except ConfigError as exc:
                    raise client.fail("profile", str(exc)) from None
            deny = client.strings("deny")
            if check_deny:
                self._check_deny(client, deny, upstreams)
            limit = sessions = None
            if "max_requests" in client:
                limit = client.integer("max_requests", 0, low=1, high=1_000_000)
            if "max_sessions" in client:
                sessions = client.integer("max_sessions", 0, low=1, high=10_000_000)
            metrics = client.boolean("metrics", False)
            active = None
            if "max_active" in client:
                active = client.integer("max_active", 0, low=1, high=1_000_000)
            clients.append(
                ClientConfig(name, token, profile, deny, limit, sessions, metrics, active)
            )
        return tuple(clients)

    def _policy(self, table: ConfigTable, *, globs_only: bool = False) -> PolicyConfig:
        policy = PolicyConfig(
            allow=table.strings("allow"),
            deny=table.strings("deny"),
            quarantine=table.boolean("quarantine", False),
            quarantine_shadowing=table.boolean("quarantine_shadowing", False),
            trusted=table.strings("trusted"),
        )
        for key in ("allow", "deny"):
            for pattern in getattr(policy, key) if globs_only else ():
                if ":" in pattern:
                    raise table.fail(
                        key,
                        f"{pattern!r}: an upstream's policy takes globs on its own tool names "
                        "(such as 'delete_*'); put domain:/group:/keyword: patterns in [policy].",
                    )
        return policy

    def _gateway(self, table: ConfigTable) -> GatewaySettings:
        path = table.string("path", "/mcp")
        if not path.startswith("/"):
            raise table.fail("path", f"must start with '/', got {path!r}.")
        metrics, metrics_token = self._metrics(table)
        in_memory = table.body.get("pins_file") is False  # pins_file = false: this process
        pins_file = None if in_memory else table.string("pins_file", None)
        if pins_file is not None:
            pins_file = str((self.base / pins_file).resolve())
        elif self.file is not None and not in_memory:  # kept beside the config by default
            pins_file = str(PinFile.beside(self.file).path)
        return GatewaySettings(
            name=table.string("name", "toolmgmt-gateway"),
            transport=table.choice("transport", _TRANSPORTS, "stdio"),
            host=table.string("host", "127.0.0.1"),
            port=table.integer("port", 8765, low=0, high=65535),
            path=path,
            token=table.secret("token"),
            results=self._results(table),
            execution=Execution(timeout=table.seconds("default_timeout", 30.0)),
            approval=Approval(destructive=table.boolean("approve_destructive", True)),
            profile=table.string("profile", None),
            always_on=table.strings("always_on"),
            media=table.choice("media", _MEDIA, "describe"),
            direct_answers=table.boolean("direct_answers", False),
            state_keys=self._state_keys(table),
            list_ttl=table.seconds("list_ttl", 60.0, allow_zero=True),
            header_timeout=table.seconds("header_timeout", 10.0),
            max_requests=table.integer("max_requests", 64, low=0, high=1_000_000),
            max_sessions=table.integer("max_sessions", 10_000, low=1, high=10_000_000),
            metrics=metrics,
            metrics_token=metrics_token,
            provenance=table.boolean("provenance", True),
            pins_file=pins_file,
            mode=table.choice("mode", ("gateway", "code"), "gateway"),
            callers=self._callers(table),
            shutdown_grace=table.seconds("shutdown_grace", 30.0, allow_zero=True),
            log_level=table.choice("log_level", LOG_LEVELS, "info"),
            log_format=table.choice("log_format", LOG_FORMATS, "text"),
            access_log=table.boolean("access_log", True),
            access_log_content=table.boolean("access_log_content", False),
        )

    def _callers(self, table: ConfigTable) -> Callers:
        """``[gateway.callers]``: code mode's choice of who calls which tool."""
        if table.get("callers") is None:
            return Callers()
        if table.get("mode") != "code":
            raise table.fail("callers", 'applies to code mode: add mode = "code".')
        callers = table.table("callers", ("direct", "code", "both"))
        lists = {key: callers.strings(key) for key in ("direct", "code", "both")}
        try:
            return Callers(**lists)
        except ConfigError as exc:
            raise callers.fail(None, str(exc)) from exc

    def _results(self, table: ConfigTable) -> ResultBudget:
        """``max_result_tokens`` and ``session_result_budget`` as the core's ResultBudget."""
        options: dict[str, Any] = {}
        limit = _optional_tokens(table)
        if limit is not None:
            options["max_result_tokens"] = limit
        if table.get("session_result_budget") is not None:
            options["session_tokens"] = table.integer(
                "session_result_budget", MIN_RESULT_TOKENS, low=MIN_RESULT_TOKENS, high=100_000_000
            )
        return ResultBudget(**options)

    def _state_keys(self, table: ConfigTable) -> tuple[str, ...]:
        """``state_key`` (or the variable ``state_key_env`` names): one key, or several
        separated by commas, the first sealing; each at least :data:`_MIN_STATE_KEY` long."""
        text = table.secret("state_key")
        if text is None:
            return ()
        keys = tuple(k.strip() for k in text.split(",") if k.strip())
        key = "state_key_env" if "state_key_env" in table else "state_key"
        if not keys:
            raise table.fail(key, "holds no key.")
        for number, value in enumerate(keys, 1):
            if len(value) < _MIN_STATE_KEY:
                raise table.fail(
                    key,
                    f"key {number} is {len(value)} characters; a key needs at least "
                    f"{_MIN_STATE_KEY} characters of secret randomness (make one with: python -c "
                    '"import secrets; print(secrets.token_hex(32))").',
                )
        return keys

    def _store(self, table: ConfigTable) -> StoreConfig:
        sessions = table.secret("sessions")
        if sessions is not None and not sessions.startswith(_REDIS_SCHEMES):
            raise table.fail(
                "sessions",
                "must be a Redis URL: redis://[[user]:password@]host[:port][/db], rediss://... "
                "(TLS) or unix:///path/to/redis.sock.",
            )
        catalog = table.secret("catalog")
        if catalog is not None and not (catalog.startswith(_POSTGRES_SCHEMES) or "=" in catalog):
            raise table.fail(
                "catalog",
                "must be a PostgreSQL DSN: postgresql://user[:password]@host[:port]/dbname or "
                "'host=... dbname=... user=...'.",
            )
        events = table.secret("events")
        if events is not None and not events.startswith(_REDIS_SCHEMES + _POSTGRES_SCHEMES):
            raise table.fail(
                "events",
                "must be a Redis URL (redis://...) or a PostgreSQL DSN (postgresql://...).",
            )
        for key in ("session_ttl", "session_prefix"):
            if key in table and sessions is None:
                raise table.fail(key, "only applies with sessions (a Redis URL).")
        return StoreConfig(
            sessions=sessions,
            session_ttl=table.seconds("session_ttl", DEFAULT_SESSION_TTL),
            session_prefix=table.string("session_prefix", None),
            catalog=catalog,
            timeout=table.seconds("timeout", StoreTimeout.read),
            events=events,
        )

    def _search(self, table: ConfigTable) -> SearchConfig:
        if "embedder" not in table:
            return SearchConfig()
        try:
            embedder = check_embedder_spec(table["embedder"], base=self.base)
        except ConfigError as exc:
            raise table.fail("embedder", str(exc)) from None
        return SearchConfig(embedder=embedder)

    def _upstream(self, upstreams: ConfigTable, name: str) -> UpstreamConfig:
        if not _NAME.match(name):
            raise upstreams.fail(
                name,
                "an upstream name is the domain of its tools: a letter, then letters, digits, "
                "'_' or '-' (at most 64).",
            )
        table = upstreams.table(name, _UPSTREAM_KEYS)
        command, url = table.get("command"), table.get("url")
        if (command is None) == (url is None):
            raise table.fail(
                None,
                'set exactly one of command (a stdio server, e.g. command = "python") or url '
                '(streamable HTTP, e.g. url = "http://127.0.0.1:8765/mcp").',
            )
        cwd = None
        if command is not None:
            command = table.string("command")
            for key in ("url", "headers"):
                if key in table:
                    raise table.fail(key, "only applies to an upstream with url.")
            cwd_path = Path(table.string("cwd", str(self.base)))
            cwd = str(cwd_path if cwd_path.is_absolute() else (self.base / cwd_path).resolve())
        else:
            url = table.string("url")
            if not re.match(r"^https?://", url):
                raise table.fail("url", f"must be an http:// or https:// URL, got {url!r}.")
            for key in ("args", "env", "cwd", "stderr"):
                if key in table:
                    raise table.fail(key, "only applies to an upstream with command.")
        groups_table = table.table("groups")
        groups = {str(group): groups_table.strings(str(group)) for group in groups_table}
        truncation = table.choice("truncation", _TRUNCATIONS, None)
        prefix = table.get("prefix")
        if prefix is not None and (not isinstance(prefix, str) or not _PREFIX.match(prefix)):
            raise table.fail(
                "prefix", f"must be letters, digits, '_' or '-' (possibly empty), got {prefix!r}."
            )
        policy_table = table.table("policy", ("allow", "deny"))
        return UpstreamConfig(
            name=name,
            prefix=prefix,
            command=command,
            args=table.strings("args"),
            env=table.string_map("env"),
            cwd=cwd,
            url=url,
            headers=table.string_map("headers"),
            timeout=table.seconds("timeout", 30.0),
            connect_timeout=table.seconds("connect_timeout", 15.0),
            reconnect_delay=table.seconds("reconnect_delay", 1.0, allow_zero=True),
            groups=groups,
            group_by_prefix=table.choice("group_by", ("prefix", "none"), "prefix") == "prefix",
            profiles=table.strings("profiles" if "profiles" in table else "profile", single=True),
            policy=self._policy(policy_table, globs_only=True),
            max_result_tokens=_optional_tokens(table),
            truncation=truncation,
            mode=table.choice("mode", _MODES, "auto"),
            accept_changes=table.boolean("accept_changes", False),
            allow_secret_questions=table.boolean("allow_secret_questions", False),
            stderr=table.choice("stderr", ("log", "drop"), "log"),
        )


def _optional_tokens(table: ConfigTable) -> int | None:
    if table.get("max_result_tokens") is None:
        return None
    # The core's floor (ResultBudget's): a value the check passes is one the gateway runs with.
    low = MIN_RESULT_TOKENS
    return table.integer("max_result_tokens", DEFAULT_MAX_RESULT_TOKENS, low=low, high=10_000_000)
