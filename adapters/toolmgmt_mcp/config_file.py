"""The gateway's configuration file: upstream MCP servers, policy and how to serve.

TOML (``.toml``) or JSON (any other suffix)::

    [gateway]
    name = "toolmgmt-gateway"      # server name shown to clients
    transport = "stdio"            # or "http"
    host = "127.0.0.1"             # http only; loopback unless told otherwise
    port = 8765
    token_env = "GATEWAY_TOKEN"    # or token = "..." (a bearer token every HTTP request must carry)
    max_result_tokens = 4000       # default budget for one tool result
    profile = "full"               # a toolmgmt profile (built-in: minimal, readonly, full)
    always_on = ["notes_search_*"] # tools listed directly beside the three meta-tools
    media = "describe"             # or "pass": upstream images/audio/resources passed on too
    direct_answers = false         # [store] sessions: true skips the SDK's transport (see docs)
    state_key_env = "STATE_KEY"    # or state_key = "...": seals relayed questions' state (2026);
                                   # "new,old" rotates; default: per process, or kept in [store]
    list_ttl = 60                  # seconds a 2026 client may cache tools/list
    metrics = true                 # http only: GET /metrics in Prometheus text (toolmgmt[metrics])

    [policy]                       # patterns on tool names as exposed (with their prefix);
    allow = []                     # a deny pattern that can match no exposed name is an error
    deny = ["notes_delete_*"]
    quarantine = true              # tools whose text addresses the model (prompt injection)
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

Errors are :class:`~toolmgmt_core.ConfigError` naming the file, the line when known, and
what is wrong.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from toolmgmt_core.calls.budget import ResultBudget
from toolmgmt_core.embeddings.named import check_embedder_spec
from toolmgmt_core.model.errors import ConfigError
from toolmgmt_core.policy.profiles import may_match, parse_pattern
from toolmgmt_core.policy.steps import Approval
from toolmgmt_core.session.options import Execution
from toolmgmt_core.stores import DEFAULT_SESSION_TTL, StoreTimeout
from toolmgmt_mcp.config import (
    GatewayConfig,
    GatewaySettings,
    PolicyConfig,
    SearchConfig,
    StoreConfig,
    UpstreamConfig,
)

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

__all__ = [
    "load_config",
    "parse_config",
]

_REDIS_SCHEMES = ("redis://", "rediss://", "unix://")
_POSTGRES_SCHEMES = ("postgresql://", "postgres://")
_MIN_STATE_KEY = 32
"""Shortest request-state key accepted (the SDK's AES-256-GCM codec needs 32 bytes)."""
_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,63}$")
_PREFIX = re.compile(r"^[A-Za-z0-9_-]{0,64}$")


def load_config(path: str | os.PathLike[str]) -> GatewayConfig:
    """Read a gateway configuration from a TOML (``.toml``) or JSON file.

    Raises:
        ConfigError: the file is missing, does not parse, or holds a bad value; the message names
            the file, the line when known, and the problem.
    """
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(
            f"{file}: cannot read the gateway config: {exc.strerror or exc}."
        ) from exc
    return parse_config(text, source=str(file), fmt="toml" if file.suffix == ".toml" else "json")


def parse_config(
    text: str, *, source: str = "<config>", fmt: Literal["toml", "json"] = "toml"
) -> GatewayConfig:
    """Parse configuration text; relative ``cwd`` values resolve against ``source``'s folder.

    Raises:
        ConfigError: naming ``source``, the line when known, and the problem.
    """
    if fmt == "toml":
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{source}: invalid TOML: {exc}.") from exc
    else:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ConfigError(
                f"{source}:{exc.lineno}: invalid JSON: {exc.msg} (column {exc.colno})."
            ) from exc
    return _Reader(text, source).read(data)


class _Reader:
    """Validates the parsed data, pointing errors at the line of the offending key."""

    def __init__(self, text: str, source: str) -> None:
        self.lines = text.splitlines()
        self.source = source
        base = Path(source).parent if source != "<config>" else Path.cwd()
        self.base = base.resolve()

    def fail(self, where: tuple[str, ...], problem: str) -> ConfigError:
        line = self._line_of(where)
        place = f"{self.source}:{line}" if line else self.source
        key = ".".join(where)
        return ConfigError(f"{place}: {key}: {problem}" if key else f"{place}: {problem}")

    def _line_of(self, where: tuple[str, ...]) -> int | None:
        """The 1-based line that sets ``where`` (best effort for TOML and JSON)."""
        if not where:
            return None
        start = 0
        # Walk down the path: a TOML table header, a dotted key, or a JSON key.
        for depth, part in enumerate(where):
            quoted = re.escape(part)
            header = re.compile(
                r"^\s*\[+\s*"
                + r"\s*\.\s*".join(re.escape(p) for p in where[: depth + 1])
                + r"\s*[.\]]"
            )
            key = re.compile(r'(^|[\s{,])"?' + quoted + r'"?\s*[=:]')
            for number in range(start, len(self.lines)):
                if header.search(self.lines[number]) or key.search(self.lines[number]):
                    start = number
                    break
            else:
                return start + 1 if depth else None
        return start + 1

    def read(self, data: Any) -> GatewayConfig:
        if not isinstance(data, Mapping):
            raise self.fail((), "the top level must be a table/object.")
        known = {"upstreams", "gateway", "policy", "store", "search"}
        for key in data:
            if key not in known:
                raise self.fail(
                    (key,), f"unknown section; valid sections: {', '.join(sorted(known))}."
                )
        upstreams_data = data.get("upstreams", {})
        if not isinstance(upstreams_data, Mapping) or not upstreams_data:
            raise self.fail(
                ("upstreams",),
                'at least one upstream is needed, e.g. [upstreams.notes] with command = "python" '
                'and args = ["notes_server.py"], or url = "http://127.0.0.1:8765/mcp".',
            )
        upstreams = tuple(self._upstream(str(name), body) for name, body in upstreams_data.items())
        gateway = self._gateway(data.get("gateway", {}))
        policy = self._policy(("policy",), data.get("policy", {}))
        self._check_deny(policy, upstreams)
        store = self._store(data.get("store", {}))
        search = self._search(data.get("search", {}))
        return GatewayConfig(upstreams, gateway, policy, self.source, store=store, search=search)

    def _check_deny(self, policy: PolicyConfig, upstreams: tuple[UpstreamConfig, ...]) -> None:
        """A ``[policy]`` deny pattern that can match no tool name as exposed is an error: it
        would deny nothing while the tool it meant runs (a custom ``prefix`` renames tools)."""
        for text in policy.deny:
            try:
                pattern = parse_pattern(text)
            except ConfigError as exc:
                raise self.fail(("policy", "deny"), str(exc)) from exc
            if any(
                may_match(pattern, u.name, name_prefix=u.tool_prefix, profiles=u.profiles)
                is not False
                for u in upstreams
            ):
                continue
            exposed = ", ".join(f"{u.tool_prefix}<tool> ({u.name})" for u in upstreams)
            raise self.fail(
                ("policy", "deny"),
                f"{text!r} can match no tool: [policy] patterns apply to tool names as the "
                f"gateway exposes them, which are {exposed}; write the pattern on those names "
                "(or put a glob on the upstream's own names in its policy table).",
            )

    # -- sections -------------------------------------------------------------------------

    def _policy(
        self, where: tuple[str, ...], body: Any, *, globs_only: bool = False
    ) -> PolicyConfig:
        keys = {"allow", "deny"} | (set() if globs_only else {"quarantine", "trusted"})
        body = self._table(where, body, keys)
        quarantine = body.get("quarantine", False)
        if not isinstance(quarantine, bool):
            raise self.fail(where + ("quarantine",), f"must be true or false, got {quarantine!r}.")
        policy = PolicyConfig(
            allow=self._strings(where + ("allow",), body.get("allow", [])),
            deny=self._strings(where + ("deny",), body.get("deny", [])),
            quarantine=quarantine,
            trusted=self._strings(where + ("trusted",), body.get("trusted", [])),
        )
        for key in ("allow", "deny"):
            for pattern in getattr(policy, key) if globs_only else ():
                if ":" in pattern:
                    raise self.fail(
                        where + (key,),
                        f"{pattern!r}: an upstream's policy takes globs on its own tool names "
                        "(such as 'delete_*'); put domain:/group:/keyword: patterns in [policy].",
                    )
        return policy

    def _gateway(self, body: Any) -> GatewaySettings:
        where = ("gateway",)
        keys = {"name", "transport", "host", "port", "path", "token", "token_env"}
        keys |= {"max_result_tokens", "default_timeout", "profile", "always_on", "media"}
        keys |= {"session_result_budget", "direct_answers", "state_key", "state_key_env"}
        keys |= {"list_ttl", "approve_destructive", "metrics"}
        body = self._table(where, body, keys)
        transport = body.get("transport", "stdio")
        if transport not in ("stdio", "http"):
            raise self.fail(
                where + ("transport",), f"must be 'stdio' or 'http', got {transport!r}."
            )
        media = body.get("media", "describe")
        if media not in ("describe", "pass"):
            raise self.fail(where + ("media",), f"must be 'describe' or 'pass', got {media!r}.")
        direct_answers = self._bool(where, body, "direct_answers", False)
        metrics = self._bool(where, body, "metrics", False)
        destructive = self._bool(where, body, "approve_destructive", True)
        token = body.get("token")
        if "token_env" in body:
            var = self._string(where + ("token_env",), body["token_env"])
            token = os.environ.get(var)
            if not token:
                raise self.fail(
                    where + ("token_env",), f"environment variable {var!r} is not set or empty."
                )
        elif token is not None:
            token = self._string(where + ("token",), token)
        state_keys = self._state_keys(where, body)
        path = self._string(where + ("path",), body.get("path", "/mcp"))
        if not path.startswith("/"):
            raise self.fail(where + ("path",), f"must start with '/', got {path!r}.")
        return GatewaySettings(
            name=self._string(where + ("name",), body.get("name", "toolmgmt-gateway")),
            transport=transport,
            host=self._string(where + ("host",), body.get("host", "127.0.0.1")),
            port=self._int(where + ("port",), body.get("port", 8765), low=0, high=65535),
            path=path,
            token=token,
            results=self._results(where, body),
            execution=Execution(
                timeout=self._seconds(
                    where + ("default_timeout",), body.get("default_timeout", 30.0)
                )
            ),
            approval=Approval(destructive=destructive),
            profile=self._string(where + ("profile",), body["profile"])
            if "profile" in body
            else None,
            always_on=self._strings(where + ("always_on",), body.get("always_on", [])),
            media=media,
            direct_answers=direct_answers,
            state_keys=state_keys,
            list_ttl=self._seconds(
                where + ("list_ttl",), body.get("list_ttl", 60.0), allow_zero=True
            ),
            metrics=metrics,
        )

    def _results(self, where: tuple[str, ...], body: Mapping[str, Any]) -> ResultBudget:
        """``max_result_tokens`` and ``session_result_budget`` as the core's ResultBudget."""
        options: dict[str, Any] = {}
        limit = self._optional_tokens(where, body)
        if limit is not None:
            options["max_result_tokens"] = limit
        if body.get("session_result_budget") is not None:
            options["session_tokens"] = self._int(
                where + ("session_result_budget",),
                body["session_result_budget"],
                low=1,
                high=100_000_000,
            )
        return ResultBudget(**options)

    def _bool(
        self, where: tuple[str, ...], body: Mapping[str, Any], key: str, default: bool
    ) -> bool:
        value = body.get(key, default)
        if not isinstance(value, bool):
            raise self.fail(where + (key,), f"must be true or false, got {value!r}.")
        return value

    def _state_keys(self, where: tuple[str, ...], body: Mapping[str, Any]) -> tuple[str, ...]:
        """``state_key`` (or the variable ``state_key_env`` names): one key, or several
        separated by commas, the first sealing; each at least :data:`_MIN_STATE_KEY` long."""
        text = self._secret(where, body, "state_key")
        if text is None:
            return ()
        keys = tuple(k.strip() for k in text.split(",") if k.strip())
        key = "state_key_env" if "state_key_env" in body else "state_key"
        if not keys:
            raise self.fail(where + (key,), "holds no key.")
        for number, value in enumerate(keys, 1):
            if len(value) < _MIN_STATE_KEY:
                raise self.fail(
                    where + (key,),
                    f"key {number} is {len(value)} characters; a key needs at least "
                    f"{_MIN_STATE_KEY} characters of secret randomness (make one with: python -c "
                    '"import secrets; print(secrets.token_hex(32))").',
                )
        return keys

    def _store(self, body: Any) -> StoreConfig:
        where = ("store",)
        keys = {"sessions", "sessions_env", "session_ttl", "session_prefix"}
        keys |= {"catalog", "catalog_env", "timeout", "events", "events_env"}
        body = self._table(where, body, keys)
        sessions = self._secret(where, body, "sessions")
        if sessions is not None and not sessions.startswith(_REDIS_SCHEMES):
            raise self.fail(
                where + ("sessions",),
                "must be a Redis URL: redis://[[user]:password@]host[:port][/db], rediss://... "
                "(TLS) or unix:///path/to/redis.sock.",
            )
        catalog = self._secret(where, body, "catalog")
        if catalog is not None and not (catalog.startswith(_POSTGRES_SCHEMES) or "=" in catalog):
            raise self.fail(
                where + ("catalog",),
                "must be a PostgreSQL DSN: postgresql://user[:password]@host[:port]/dbname or "
                "'host=... dbname=... user=...'.",
            )
        events = self._secret(where, body, "events")
        if events is not None and not events.startswith(_REDIS_SCHEMES + _POSTGRES_SCHEMES):
            raise self.fail(
                where + ("events",),
                "must be a Redis URL (redis://...) or a PostgreSQL DSN (postgresql://...).",
            )
        for key in ("session_ttl", "session_prefix"):
            if key in body and sessions is None:
                raise self.fail(where + (key,), "only applies with sessions (a Redis URL).")
        prefix = body.get("session_prefix")
        if prefix is not None:
            prefix = self._string(where + ("session_prefix",), prefix)
        return StoreConfig(
            sessions=sessions,
            session_ttl=self._seconds(
                where + ("session_ttl",), body.get("session_ttl", DEFAULT_SESSION_TTL)
            ),
            session_prefix=prefix,
            catalog=catalog,
            timeout=self._seconds(where + ("timeout",), body.get("timeout", StoreTimeout.read)),
            events=events,
        )

    def _search(self, body: Any) -> SearchConfig:
        where = ("search",)
        body = self._table(where, body, {"embedder"})
        if "embedder" not in body:
            return SearchConfig()
        try:
            embedder = check_embedder_spec(body["embedder"], base=self.base)
        except ConfigError as exc:
            raise self.fail(where + ("embedder",), str(exc)) from None
        return SearchConfig(embedder=embedder)

    def _secret(self, where: tuple[str, ...], body: Mapping[str, Any], key: str) -> str | None:
        """``key``'s value, or the environment variable ``<key>_env`` names (for secrets)."""
        env_key = f"{key}_env"
        if key in body and env_key in body:
            raise self.fail(where + (env_key,), f"set {key} or {env_key}, not both.")
        if env_key in body:
            var = self._string(where + (env_key,), body[env_key])
            value = os.environ.get(var)
            if not value:
                raise self.fail(
                    where + (env_key,), f"environment variable {var!r} is not set or empty."
                )
            return value
        if key in body:
            return self._string(where + (key,), body[key])
        return None

    def _upstream(self, name: str, body: Any) -> UpstreamConfig:
        where = ("upstreams", name)
        if not _NAME.match(name):
            raise self.fail(
                where,
                "an upstream name is the domain of its tools: a letter, then letters, digits, "
                "'_' or '-' (at most 64).",
            )
        keys = {"command", "args", "env", "cwd", "url", "headers", "timeout", "connect_timeout"}
        keys |= {"reconnect_delay", "groups", "group_by", "profile", "profiles", "policy"}
        keys |= {"max_result_tokens", "truncation", "mode", "prefix"}
        body = self._table(where, body, keys)
        command, url = body.get("command"), body.get("url")
        if (command is None) == (url is None):
            raise self.fail(
                where,
                'set exactly one of command (a stdio server, e.g. command = "python") or url '
                '(streamable HTTP, e.g. url = "http://127.0.0.1:8765/mcp").',
            )
        if command is not None:
            command = self._string(where + ("command",), command)
            for key in ("url", "headers"):
                if key in body:
                    raise self.fail(where + (key,), "only applies to an upstream with url.")
        else:
            url = self._string(where + ("url",), url)
            if not re.match(r"^https?://", url):
                raise self.fail(
                    where + ("url",), f"must be an http:// or https:// URL, got {url!r}."
                )
            for key in ("args", "env", "cwd"):
                if key in body:
                    raise self.fail(where + (key,), "only applies to an upstream with command.")
        cwd = body.get("cwd")
        if command is not None:
            cwd_path = Path(self._string(where + ("cwd",), cwd)) if cwd is not None else self.base
            cwd = str(cwd_path if cwd_path.is_absolute() else (self.base / cwd_path).resolve())
        groups_data = self._table(where + ("groups",), body.get("groups", {}), None)
        groups = {
            str(group): self._strings(where + ("groups", str(group)), patterns)
            for group, patterns in groups_data.items()
        }
        group_by = body.get("group_by", "prefix")
        if group_by not in ("prefix", "none"):
            raise self.fail(where + ("group_by",), f"must be 'prefix' or 'none', got {group_by!r}.")
        profiles = body.get("profiles", body.get("profile", []))
        if isinstance(profiles, str):
            profiles = [profiles]
        mode = body.get("mode", "auto")
        if mode not in ("auto", "legacy"):
            raise self.fail(where + ("mode",), f"must be 'auto' or 'legacy', got {mode!r}.")
        truncation = body.get("truncation")
        if truncation not in (None, "head", "tail", "smart"):
            raise self.fail(
                where + ("truncation",), f"must be 'head', 'tail' or 'smart', got {truncation!r}."
            )
        prefix = body.get("prefix")
        if prefix is not None and (not isinstance(prefix, str) or not _PREFIX.match(prefix)):
            raise self.fail(
                where + ("prefix",),
                f"must be letters, digits, '_' or '-' (possibly empty), got {prefix!r}.",
            )
        return UpstreamConfig(
            name=name,
            prefix=prefix,
            command=command,
            args=self._strings(where + ("args",), body.get("args", [])),
            env=self._string_map(where + ("env",), body.get("env", {})),
            cwd=cwd,
            url=url,
            headers=self._string_map(where + ("headers",), body.get("headers", {})),
            timeout=self._seconds(where + ("timeout",), body.get("timeout", 30.0)),
            connect_timeout=self._seconds(
                where + ("connect_timeout",), body.get("connect_timeout", 15.0)
            ),
            reconnect_delay=self._seconds(
                where + ("reconnect_delay",), body.get("reconnect_delay", 1.0), allow_zero=True
            ),
            groups=groups,
            group_by_prefix=group_by == "prefix",
            profiles=self._strings(where + ("profile",), profiles),
            policy=self._policy(where + ("policy",), body.get("policy", {}), globs_only=True),
            max_result_tokens=self._optional_tokens(where, body),
            truncation=truncation,
            mode=mode,
        )

    # -- values ---------------------------------------------------------------------------

    def _table(self, where: tuple[str, ...], body: Any, keys: set[str] | None) -> Mapping[str, Any]:
        if not isinstance(body, Mapping):
            raise self.fail(where, f"must be a table/object, got {type(body).__name__}.")
        if keys is not None:
            for key in body:
                if key not in keys:
                    raise self.fail(
                        where + (str(key),), f"unknown key; valid keys: {', '.join(sorted(keys))}."
                    )
        return body

    def _string(self, where: tuple[str, ...], value: Any) -> str:
        if not isinstance(value, str) or not value:
            raise self.fail(where, f"must be a non-empty string, got {value!r}.")
        return value

    def _strings(self, where: tuple[str, ...], value: Any) -> tuple[str, ...]:
        if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
            raise self.fail(where, f"must be a list of strings, got {value!r}.")
        return tuple(value)

    def _string_map(self, where: tuple[str, ...], value: Any) -> dict[str, str]:
        body = self._table(where, value, None)
        out = {}
        for key, item in body.items():
            if not isinstance(item, str):
                raise self.fail(where + (str(key),), f"must be a string, got {item!r}.")
            out[str(key)] = item
        return out

    def _int(self, where: tuple[str, ...], value: Any, *, low: int, high: int) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise self.fail(where, f"must be a whole number from {low} to {high}, got {value!r}.")
        return value

    def _seconds(self, where: tuple[str, ...], value: Any, *, allow_zero: bool = False) -> float:
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        if not ok or value < 0 or (value == 0 and not allow_zero):
            floor = "0 or more" if allow_zero else "more than 0"
            raise self.fail(where, f"must be a number of seconds, {floor}, got {value!r}.")
        return float(value)

    def _optional_tokens(self, where: tuple[str, ...], body: Mapping[str, Any]) -> int | None:
        value = body.get("max_result_tokens")
        if value is None:
            return None
        return self._int(where + ("max_result_tokens",), value, low=1, high=10_000_000)
