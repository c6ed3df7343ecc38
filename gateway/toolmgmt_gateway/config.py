"""The gateway's configuration: its upstream MCP servers, its policy and how it is served.

Frozen dataclasses, read from a TOML or JSON file by :mod:`toolmgmt_gateway.config_file`
(:func:`~toolmgmt_gateway.config_file.load_config`,
:func:`~toolmgmt_gateway.config_file.parse_config`). An upstream's own table is the MCP
adapter's :class:`~toolmgmt_mcp.UpstreamConfig`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from toolmgmt_mcp import UpstreamConfig as AdapterUpstreamConfig

from toolmgmt_core import Approval, Callers, ConfigError, Execution, ResultBudget
from toolmgmt_core.integration import DEFAULT_SESSION_TTL, StoreTimeout

__all__ = [
    "ClientConfig",
    "GatewayConfig",
    "GatewaySettings",
    "PolicyConfig",
    "SearchConfig",
    "StoreConfig",
    "UpstreamConfig",
]


@dataclass(frozen=True)
class PolicyConfig:
    """Allow and deny patterns (globs such as ``notes_delete_*``); deny wins."""

    allow: tuple[str, ...] = ()
    """When not empty, only matching tools pass."""
    deny: tuple[str, ...] = ()
    """Matching tools are removed."""
    quarantine: bool = False
    """Keep tools whose text addresses the model (prompt injection) out of discovery and
    calls until ``trusted`` names them (``[policy]`` only)."""
    trusted: tuple[str, ...] = ()
    """Patterns of tools the quarantine lets through (an operator read them)."""
    quarantine_shadowing: bool = False
    """Keep tools that shadow another upstream's tool (a name containing its name, or its
    description near-identical) out of discovery and calls until ``trusted`` names them."""

    def __bool__(self) -> bool:
        return bool(self.allow or self.deny or self.quarantine or self.quarantine_shadowing)


@dataclass(frozen=True)
class UpstreamConfig(AdapterUpstreamConfig):
    """One upstream MCP server of the gateway: the MCP adapter's settings (how to reach it, how
    its tools enter the catalog) and what the gateway decides about its tools."""

    policy: PolicyConfig = field(default_factory=PolicyConfig)
    """Globs on the upstream's own tool names (``delete_*``): a policy step that matches them
    with the upstream's prefix (the names as exposed) and decides about this domain only."""
    accept_changes: bool = False
    """Take a change of a pinned tool's definition at once (logged and counted) instead of
    quarantining it until ``toolmgmt catalog trust NAME``; a change that lowers a guard
    (destructive to not, to read-only or idempotent) is quarantined all the same."""
    allow_secret_questions: bool = False
    """Relay this upstream's questions to the user that ask for a password, a token, an API
    key or a secret; by default such a question is refused (the call fails, saying why)."""
    stderr: Literal["log", "drop"] = "log"
    """A stdio upstream's stderr: ``log`` passes each line to the gateway's stderr after the
    upstream's name (``upstream notes: ...``); ``drop`` discards it (it may echo arguments)."""


@dataclass(frozen=True)
class ClientConfig:
    """One client of a shared gateway (``[gateway.clients.NAME]``): its token, what it sees."""

    name: str
    """The client's name: in logs, in metrics (a label; ``Gateway(client_listeners=...)``), and
    what its conversations are keyed by."""
    token: str = field(repr=False)
    """The bearer token it sends (``token_env``: from the environment)."""
    profile: str | None = None
    """Its profile (``readonly``, ``full``...); None: the gateway's ``profile``."""
    deny: tuple[str, ...] = ()
    """Patterns on tool names as exposed that this client may not see or run, beside
    ``[policy]`` (which applies to every client)."""
    max_requests: int | None = None
    """Requests of this client one replica serves at once (beyond: 503 with ``Retry-After``),
    so that it cannot take the whole of a replica; None: half the replica's ``max_requests``
    when the gateway has two clients or more (:func:`~toolmgmt_gateway.admission.client_shares`)."""
    max_sessions: int | None = None
    """2025 sessions (standalone streams) of this client one replica holds at once (beyond:
    503 with ``Retry-After``); None: an equal share of the replica's ``max_sessions`` when the
    gateway has two clients or more."""
    metrics: bool = False
    """This client's token may read ``GET /metrics`` (other clients' tokens get 403)."""
    max_active: int | None = None
    """This client's share of a replica's work: its requests worked on at once (not waiting
    on an upstream); beyond, a request waits for one of its own, at most ``Retry-After``
    seconds, then 503; while another client's request is being worked on, one at a time.
    None: ``max_requests // 32`` (at least 2) when the gateway has two clients or more
    (:func:`~toolmgmt_gateway.admission.work_shares`)."""


@dataclass(frozen=True)
class GatewaySettings:
    """How the gateway itself is served."""

    name: str = "toolmgmt-gateway"
    """The server name shown to MCP clients."""
    transport: Literal["stdio", "http"] = "stdio"
    """``stdio`` or ``http`` (streamable HTTP)."""
    host: str = "127.0.0.1"
    """Address to bind for HTTP; loopback by default."""
    port: int = 8765
    """Port for HTTP (0 picks a free one)."""
    path: str = "/mcp"
    """URL path of the MCP endpoint."""
    token: str | None = field(default=None, repr=False)
    """Bearer token every HTTP request must carry; None accepts any request."""
    results: ResultBudget = field(default_factory=ResultBudget)
    """Result budgets (``max_result_tokens``: one result; ``session_result_budget``: the results
    one conversation may hold before later ones are cut harder), the core's own object."""
    execution: Execution = field(default_factory=Execution)
    """How calls run (``default_timeout``: seconds a call may take when its upstream sets no
    timeout), the core's own object."""
    approval: Approval = field(default_factory=Approval)
    """Which calls need approval (``approve_destructive = false`` leaves destructive tools to
    the policy's ``require_approval`` alone); with no approver, such calls are refused."""
    profile: str | None = None
    """The core profile every client session starts with (``readonly``, ``full``...)."""
    always_on: tuple[str, ...] = ()
    """Globs of gateway tool names listed directly beside the three meta-tools."""
    media: Literal["describe", "pass"] = "describe"
    """Upstream images, audio and resources: described in the text result (``describe``), or
    also passed on as MCP content blocks after it (``pass``; they bypass the token budget)."""
    direct_answers: bool = False
    """With ``[store] sessions``, answer a conversation's plain requests (no progress token) in
    their own task (:mod:`toolmgmt_gateway.exchange`: less CPU per call) instead of through the
    SDK's stateless transport. Off by default: behind HAProxy, a replica killed while it holds
    requests unread leaves their clients without any response more often this way, and the
    SDK's ``mcp.Client`` does not survive that (docs/deploy.md)."""
    state_keys: tuple[str, ...] = field(default=(), repr=False)
    """Secrets sealing the request state that an upstream's questions travel with to a 2026
    client and back (at least 32 characters each): the first seals, every one opens, so a key
    is rotated by adding the new one first. Empty: a key made by this process, or, with
    ``[store] sessions``, one kept in that store for every replica (docs/deploy.md)."""
    list_ttl: float = 60.0
    """Seconds a 2026 client may reuse the gateway's ``tools/list`` answer (the ``ttlMs``
    caching hint, with ``cacheScope`` private); 0: always ask again."""
    clients: tuple[ClientConfig, ...] = ()
    """The clients of a shared gateway, each with its own token (``[gateway.clients.NAME]``);
    empty: ``token`` (or none) for everyone."""
    header_timeout: float = 10.0
    """Seconds an HTTP client has to send a request's headers (from its connection, or from
    the first byte of its next request on a kept-alive one); past them the connection is
    closed, so slow-header connections are not held."""
    max_requests: int = 64
    """HTTP requests this replica serves at once (a standalone stream not counted); beyond, a
    request is answered 503 with ``Retry-After`` at once, before anything of it runs (behind
    HAProxy, another replica takes it); 0: no limit."""
    max_sessions: int = 10_000
    """2025 sessions this replica keeps in memory without ``[store] sessions`` (each holds a
    standalone stream); beyond, opening one is answered 503 with ``Retry-After``."""
    metrics: bool = False
    """Serve ``GET /metrics`` over HTTP: the core's metrics (tool calls, searches, denials,
    approvals, truncated tokens, tokens saved), each upstream's health, open sessions and store
    errors, in Prometheus text (needs ``toolmgmt[metrics]``). Its own credential: a client
    marked ``metrics = true`` or :attr:`metrics_token`; any other token gets 403."""
    mode: Literal["gateway", "code"] = "gateway"
    """How clients reach the tools: ``gateway`` (``discover_tools``, ``get_tool_schema``,
    ``execute_tool``) or ``code`` (``tool_search`` and ``run_code``: a program calling every
    upstream's tools in a sandbox, needs ``toolmgmt[code]``)."""
    callers: Callers = field(default_factory=Callers)
    """In code mode, which tools clients call directly, which only from a program, which both
    (``[gateway.callers]``: ``direct``, ``code``, ``both`` pattern lists), the core's own
    object; the default: ``always_on`` tools both, the rest from a program only."""
    metrics_token: str | None = field(default=None, repr=False)
    """The bearer token that reads ``/metrics`` (``[gateway.metrics] token``), and only it."""
    provenance: bool = True
    """End each upstream result with a short text block naming its upstream (``[from upstream
    'notes': ...]``); the upstream is named in the result's ``_meta`` either way."""
    pins_file: str | None = None
    """Without ``[store] catalog``: a JSON file keeping the upstream tools' pins across
    restarts, where ``toolmgmt catalog trust`` accepts a change. A config read from a file
    (:func:`~toolmgmt_gateway.load_config`, ``toolmgmt serve``) has ``NAME.pins.json`` beside it
    unless ``pins_file = false``; None: pins in this process."""
    shutdown_grace: float = 30.0
    """Seconds the requests in flight (a long call, a ``run_code`` program) have to finish
    after SIGTERM, while new ones get 503 and ``/readyz`` 503 (HTTP); then the server, its
    upstreams and its stores stop (:mod:`toolmgmt_gateway.lifecycle`)."""
    log_level: Literal["debug", "info", "warning", "error"] = "info"
    """The gateway's log level (``toolmgmt serve --log-level`` overrides it)."""
    log_format: Literal["text", "json"] = "text"
    """``text``: a timestamp, the level, the logger and the message on each line; ``json``: one
    JSON object per line (``--log-format`` overrides it)."""
    access_log: bool = True
    """One line per MCP request (client, method, tool, outcome, duration) at INFO, on the
    ``toolmgmt_gateway.access`` logger."""
    access_log_content: bool = False
    """Add the call's arguments and its result's text to each access line (cut at 1,000
    characters each): they may hold personal data or secrets, so only when opted in."""


@dataclass(frozen=True)
class StoreConfig:
    """Shared stores, for running several gateway replicas (``[store]``; docs/deploy.md)."""

    sessions: str | None = field(default=None, repr=False)
    """Redis URL of the session store; conversations then live there, and any replica serves
    any of them. None: conversations live in this process (one per client connection)."""
    session_ttl: float = DEFAULT_SESSION_TTL
    """Seconds a conversation is kept after its last request."""
    session_prefix: str | None = None
    """What the Redis keys of this gateway's conversations start with; None: the store's
    default (``toolmgmt:session:``)."""
    catalog: str | None = field(default=None, repr=False)
    """PostgreSQL DSN of a catalog store whose tools every replica serves beside its
    upstreams' own (``toolmgmt catalog push``); also its embedding cache. None: none."""
    timeout: float = StoreTimeout.read
    """Seconds a request waits on a store (Redis sessions, the embedding cache) to connect, and
    for each reply; past it the store counts as unavailable (HTTP 503), so a slow store costs a
    request these seconds, not a hang."""
    events: str | None = field(default=None, repr=False)
    """A Redis URL or PostgreSQL DSN where every replica writes its usage log (no argument,
    result or query text), for ``toolmgmt usage --store``; None: none."""

    def __bool__(self) -> bool:
        return bool(self.sessions or self.catalog)


@dataclass(frozen=True)
class SearchConfig:
    """How the gateway's catalog is searched (``[search]``)."""

    embedder: str | None = None
    """An embedder making search hybrid (BM25 and vectors), named as
    :func:`~toolmgmt_core._embeddings.embedder_from_spec` takes it (``onnx:<folder>``,
    ``module:attribute``...); its vectors are cached in the catalog store when there is one.
    None: BM25 alone."""


@dataclass(frozen=True)
class LearningConfig:
    """Search learning from the gateway's own traffic (``[learning]``; off by default). The
    principals are the clients' names (``[gateway.clients]``); without clients, every request
    counts for one principal, which alone never moves a tool."""

    enabled: bool = False
    """Whether the catalog learns from use."""
    store: str | None = None
    """Where: a SQLite file, or a PostgreSQL DSN shared by replicas; None: ``[store] catalog``
    when set, else this process's memory."""
    min_principals: int = 3
    """Clients that must have taught a term before it moves a tool."""
    destructive: bool = False
    """Whether destructive tools may learn."""
    outbound: bool = False
    """Whether tools that can send data out (open-world, share, send, export...) may learn."""
    key: str | None = field(default=None, repr=False)
    """The key of the learned store's digests (``key_env``), kept outside the store; None: the
    first ``[gateway] state_key``, else a SQLite file's own key file (a PostgreSQL store needs
    one of the two)."""
    companion_principals: int | None = None
    """Clients that must have used two tools in one conversation before one is suggested
    beside the other in a search's answer ("often used with"); None: :attr:`min_principals`."""


@dataclass(frozen=True)
class GatewayConfig:
    """A whole gateway configuration."""

    upstreams: tuple[UpstreamConfig, ...]
    """The upstream servers, in file order."""
    gateway: GatewaySettings = field(default_factory=GatewaySettings)
    """How to serve."""
    policy: PolicyConfig = field(default_factory=PolicyConfig)
    """The gateway-wide policy on gateway tool names (``<domain>_<tool>``)."""
    source: str = "<config>"
    """Where the configuration came from (a path), for messages."""
    store: StoreConfig = field(default_factory=StoreConfig)
    """Shared stores (``[store]``); empty by default: everything in this process."""
    search: SearchConfig = field(default_factory=SearchConfig)
    """How the catalog is searched (``[search]``); BM25 alone by default."""
    learning: LearningConfig = field(default_factory=LearningConfig)
    """Search learning from the gateway's traffic (``[learning]``); off by default."""

    def upstream(self, name: str) -> UpstreamConfig:
        """The upstream named ``name``.

        Raises:
            ConfigError: listing the configured names.
        """
        for upstream in self.upstreams:
            if upstream.name == name:
                return upstream
        names = ", ".join(u.name for u in self.upstreams) or "(none)"
        raise ConfigError(f"No upstream named {name!r}; configured upstreams: {names}.")
