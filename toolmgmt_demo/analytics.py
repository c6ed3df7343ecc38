"""Product analytics tools: events, reports, dashboards and user segments."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from datetime import timedelta
from functools import lru_cache
from typing import Any

from toolmgmt_core import Tool
from toolmgmt_demo._common import (
    CREATE,
    DELETE,
    EPOCH,
    READ,
    SEND,
    Store,
    array,
    boolean,
    enum,
    integer,
    iso,
    number,
    obj,
    page,
    rng,
    string,
)

__all__ = ["DOMAIN", "build_tools"]

DOMAIN = "analytics"

EVENT_TYPES = [
    "page_view",
    "signup",
    "login",
    "add_to_cart",
    "checkout_started",
    "purchase",
    "feature_used",
    "invite_sent",
]
METRICS = ["active_users", "new_signups", "revenue", "sessions", "conversion_rate", "churn_rate"]
INTERVALS = ["hour", "day", "week", "month"]
_COUNTRIES = ["US", "DE", "FR", "GB", "BR", "IN", "JP"]
_PAGES = ["/", "/pricing", "/docs", "/blog/launch", "/signup", "/checkout", "/settings"]
_FILTER = obj(
    {
        "property": enum(["country", "device", "plan", "page", "utm_source"], "Event property."),
        "operator": enum(["equals", "not_equals", "contains", "in"], "Comparison."),
        "value": {
            "anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}],
            "description": "Value, or a list of values for 'in'.",
        },
    },
    ["property", "operator", "value"],
    description="A condition on an event property.",
)


_DEVICES = ["desktop", "mobile", "tablet"]
_PLANS = ["free", "team", "business"]
_SOURCES = ["google", "newsletter", "direct", "twitter"]
_STREAM_SIZE = 20_000
_STREAM_MINUTES = 30 * 24 * 60 / _STREAM_SIZE


@lru_cache(maxsize=1)
def _stream() -> tuple[tuple[int, ...], ...]:
    """The synthetic event stream as compact tuples, shared read-only by every backend."""
    r = rng("event-stream")
    rows: list[tuple[int, ...]] = []
    for _ in range(_STREAM_SIZE):
        rows.append(
            (
                r.randrange(len(EVENT_TYPES)),
                r.randint(1, 3000),
                r.randrange(len(_COUNTRIES)),
                r.randrange(len(_DEVICES)),
                r.randrange(len(_PLANS)),
                r.randrange(len(_PAGES)),
                r.randrange(len(_SOURCES)),
                r.randint(900, 49900),
            )
        )
    return tuple(rows)


@lru_cache(maxsize=1)
def _timestamps() -> tuple[str, ...]:
    """The stream's timestamps, formatted once (formatting dominates reading the stream)."""
    return tuple(iso(days=-30, minutes=n * _STREAM_MINUTES) for n in range(_STREAM_SIZE))


def _event(n: int, row: tuple[int, ...]) -> dict[str, Any]:
    """The n-th event of the stream as the dict a real analytics API returns."""
    kind, user, country, device, plan, page_, source, cents = row
    event: dict[str, Any] = {
        "event_id": f"ev_{n:07d}",
        "event": EVENT_TYPES[kind],
        "user_id": f"u_{user:05d}",
        "timestamp": _timestamps()[n],
        "properties": {
            "country": _COUNTRIES[country],
            "device": _DEVICES[device],
            "plan": _PLANS[plan],
            "page": _PAGES[page_],
            "utm_source": _SOURCES[source],
        },
    }
    if event["event"] == "purchase":
        event["properties"]["revenue"] = cents / 100
    return event


def _keep(event: dict[str, Any], filters: list[dict[str, Any]] | None) -> bool:
    for f in filters or []:
        actual = str(event["properties"].get(f["property"], ""))
        value = f["value"]
        op = f["operator"]
        if op == "equals" and actual != value:
            return False
        if op == "not_equals" and actual == value:
            return False
        if op == "contains" and str(value) not in actual:
            return False
        if op == "in" and actual not in (value if isinstance(value, list) else [value]):
            return False
    return True


class AnalyticsBackend:
    """A product's event stream (20,000 events over 30 days) and its dashboards."""

    def __init__(self) -> None:
        self.tracked: list[dict[str, Any]] = []
        self.dashboards = Store("dashboard", "dsh", "analytics_list_dashboards")
        self.segments = Store("segment", "seg", "analytics_list_segments")
        self.schedules = Store("schedule", "sch", "analytics_list_dashboards")
        for name in ("Growth", "Revenue", "Product usage"):
            self.dashboards.add({"name": name, "charts": [], "owner": "alex@example.com"})

    def _events(self) -> Iterator[dict[str, Any]]:
        for n, row in enumerate(_stream()):
            yield _event(n, row)
        yield from self.tracked

    # -- events ---------------------------------------------------------------------------

    def track_event(
        self,
        event: str,
        user_id: str,
        properties: dict[str, Any] | None = None,
        timestamp: str | None = None,
    ) -> dict[str, Any]:
        record: dict[str, Any] = {"event_id": f"ev_t{len(self.tracked) + 1:06d}", "event": event}
        record.update(user_id=user_id, timestamp=timestamp or iso(), properties=properties or {})
        self.tracked.append(record)
        return {"accepted": True, "event_id": record["event_id"]}

    def query_events(
        self,
        event: str | None = None,
        user_id: str | None = None,
        filters: list[dict[str, Any]] | None = None,
        limit: int = 50,
    ) -> dict[str, Any]:
        rows = []
        for e in self._events():
            if (event is None or e["event"] == event) and (
                user_id is None or e["user_id"] == user_id
            ):
                if _keep(e, filters):
                    rows.append(e)
                    if len(rows) >= limit:
                        break
        return {"events": rows, "count": len(rows)}

    async def export_events(
        self,
        start_date: str | None = None,
        end_date: str | None = None,
        events: list[str] | None = None,
        format: str = "json",
        max_rows: int = 4000,
    ) -> dict[str, Any] | str:
        await asyncio.sleep(0)  # a real export streams from the warehouse
        low = start_date or iso(days=-30)[:10]
        high = end_date or iso(days=1)[:10]
        rows = []
        for e in self._events():
            if low <= e["timestamp"][:10] <= high and (not events or e["event"] in events):
                rows.append(e)
                if len(rows) >= max_rows:
                    break
        if format == "csv":
            lines = ["event_id,event,user_id,timestamp,country,device,plan,page"]
            for e in rows:
                p = e["properties"]
                lines.append(
                    f"{e['event_id']},{e['event']},{e['user_id']},{e['timestamp']},"
                    f"{p.get('country')},{p.get('device')},{p.get('plan')},{p.get('page')}"
                )
            return "\n".join(lines)
        return {"start_date": low, "end_date": high, "row_count": len(rows), "rows": rows}

    def count_events(
        self,
        event: str,
        group_by: str | None = None,
        start_date: str | None = None,
        end_date: str | None = None,
        unique_users: bool = False,
    ) -> dict[str, Any]:
        low, high = start_date or "0000", end_date or "9999"
        counts: dict[str, Any] = {}
        for e in self._events():
            if e["event"] != event or not low <= e["timestamp"][:10] <= high:
                continue
            key = str(e["properties"].get(group_by)) if group_by else "total"
            counts.setdefault(key, set() if unique_users else 0)
            if unique_users:
                counts[key].add(e["user_id"])
            else:
                counts[key] += 1
        result = {k: (len(v) if unique_users else v) for k, v in sorted(counts.items())}
        return {
            "event": event,
            "group_by": group_by,
            "unique_users": unique_users,
            "counts": result,
        }

    def list_event_types(self) -> dict[str, Any]:
        return {
            "event_types": [
                {"name": name, "properties": ["country", "device", "plan", "page"]}
                for name in EVENT_TYPES
            ]
        }

    def get_user_profile(self, user_id: str, recent_events: int = 10) -> dict[str, Any]:
        if not re.fullmatch(r"u_\d{5}", user_id):
            raise KeyError(f"No user {user_id!r}; user ids look like 'u_00042'.")
        r = rng("profile", user_id)
        history = [e for e in self._events() if e["user_id"] == user_id]
        return {
            "user_id": user_id,
            "first_seen": iso(days=-r.randint(30, 400)),
            "plan": r.choice(["free", "team", "business"]),
            "country": r.choice(_COUNTRIES),
            "event_count": len(history),
            "recent_events": history[-recent_events:],
        }

    # -- reports --------------------------------------------------------------------------

    def get_funnel(
        self, steps: list[str], window_days: int = 7, breakdown: str | None = None
    ) -> dict[str, Any]:
        r = rng("funnel", steps, window_days, breakdown)
        users = 10_000
        rows: list[dict[str, Any]] = []
        for step in steps:
            rows.append({"step": step, "users": users})
            users = int(users * r.uniform(0.25, 0.8))
        first = rows[0]["users"]
        for row in rows:
            row["conversion_from_start"] = round(row["users"] / first, 4)
        return {"steps": rows, "window_days": window_days, "breakdown": breakdown}

    def get_retention(
        self,
        cohort_event: str = "signup",
        return_event: str = "login",
        periods: int = 8,
        interval: str = "week",
    ) -> dict[str, Any]:
        r = rng("retention", cohort_event, return_event, periods, interval)
        cohorts = []
        for c in range(periods):
            size = r.randint(300, 900)
            curve, rate = [], 1.0
            for _ in range(periods - c):
                curve.append(round(rate, 3))
                rate *= r.uniform(0.55, 0.92)
            cohorts.append(
                {"cohort": iso(days=-7 * (periods - c))[:10], "size": size, "retention": curve}
            )
        return {
            "cohort_event": cohort_event,
            "return_event": return_event,
            "interval": interval,
            "cohorts": cohorts,
        }

    def get_metric_timeseries(
        self,
        metric: str,
        start_date: str,
        end_date: str,
        interval: str = "day",
        filters: list[dict[str, Any]] | None = None,
    ) -> dict[str, Any]:
        r = rng("metric", metric, start_date, end_date, interval, filters)
        step = {
            "hour": timedelta(hours=1),
            "day": timedelta(days=1),
            "week": timedelta(weeks=1),
            "month": timedelta(days=30),
        }[interval]
        points: list[dict[str, Any]] = []
        moment = EPOCH - timedelta(days=30)
        base = {"revenue": 12000.0, "conversion_rate": 0.034, "churn_rate": 0.021}.get(metric, 800)
        while len(points) < 400 and iso(moment)[:10] <= end_date:
            if iso(moment)[:10] >= start_date:
                points.append({"t": iso(moment), "value": round(base * r.uniform(0.85, 1.2), 4)})
            moment += step
        return {"metric": metric, "interval": interval, "points": points}

    def compare_periods(
        self,
        metric: str,
        current_start: str,
        current_end: str,
        previous_start: str,
        previous_end: str,
    ) -> dict[str, Any]:
        now = rng("cmp", metric, current_start, current_end).uniform(800, 1200)
        before = rng("cmp", metric, previous_start, previous_end).uniform(800, 1200)
        return {
            "metric": metric,
            "current": round(now, 2),
            "previous": round(before, 2),
            "change_pct": round((now - before) / before * 100, 2),
        }

    async def run_sql_query(self, sql: str, max_rows: int = 100) -> dict[str, Any]:
        await asyncio.sleep(0)
        if not re.match(r"\s*(select|with)\b", sql, re.IGNORECASE):
            raise ValueError("Only read-only SELECT (or WITH ... SELECT) queries are allowed.")
        match = re.search(r"\bfrom\s+(\w+)", sql, re.IGNORECASE)
        table = match.group(1) if match else None
        if table not in ("events", "users", "sessions"):
            raise ValueError(f"Unknown table {table!r}. Tables: events, users, sessions.")
        r = rng("sql", sql)
        rows = [{"day": iso(days=-d)[:10], "value": r.randint(100, 5000)} for d in range(max_rows)]
        return {
            "columns": ["day", "value"],
            "rows": rows,
            "row_count": len(rows),
            "elapsed_ms": r.randint(40, 900),
        }

    # -- dashboards and segments ----------------------------------------------------------

    def list_dashboards(self) -> dict[str, Any]:
        return self.dashboards.select(limit=100)

    def create_dashboard(self, name: str, description: str = "", shared: bool = False) -> dict:
        record = {"name": name, "description": description, "shared": shared, "charts": []}
        return self.dashboards.add({**record, "owner": "alex@example.com"})

    def add_chart(self, dashboard_id: str, chart: dict[str, Any]) -> dict[str, Any]:
        dashboard = self.dashboards.get(dashboard_id)
        chart = {"id": f"chart_{len(dashboard['charts']) + 1}", **chart}
        dashboard["charts"].append(chart)
        return {"dashboard_id": dashboard_id, "chart": chart}

    def delete_dashboard(self, dashboard_id: str) -> dict[str, Any]:
        removed = self.dashboards.delete(dashboard_id)
        return {"deleted": dashboard_id, "name": removed["name"]}

    def schedule_report(
        self,
        dashboard_id: str,
        recipients: list[str],
        frequency: str = "weekly",
        format: str = "pdf",
    ) -> dict[str, Any]:
        self.dashboards.get(dashboard_id)
        schedule: dict[str, Any] = {"dashboard_id": dashboard_id, "recipients": recipients}
        schedule.update(frequency=frequency, format=format, next_run=iso(days=7))
        return self.schedules.add(schedule)

    def create_segment(
        self, name: str, filters: list[dict[str, Any]], description: str = ""
    ) -> dict[str, Any]:
        matched = len({e["user_id"] for e in self._events() if _keep(e, filters)})
        record = {"name": name, "description": description, "filters": filters}
        return self.segments.add({**record, "estimated_users": matched})

    def list_segments(self) -> dict[str, Any]:
        return self.segments.select(limit=100)


def build_tools() -> list[Tool]:
    """The analytics tools, bound to a fresh :class:`AnalyticsBackend`."""
    b = AnalyticsBackend()
    event_type = enum(EVENT_TYPES, "Event name.")
    date = string("Date, YYYY-MM-DD.", format="date")
    filters = array(_FILTER, "Conditions that must all hold.")
    metric = enum(METRICS, "The metric.")
    dashboard_id = string("Dashboard id, e.g. 'dsh_0001' (from analytics_list_dashboards).")
    return [
        Tool(
            name="analytics_track_event",
            description=(
                "Record a product analytics event for a user (server-side tracking). Use it to "
                "record something that happened outside the app."
            ),
            parameters=obj(
                {
                    "event": string("Event name, e.g. 'purchase'."),
                    "user_id": string("User id, e.g. 'u_00042'."),
                    "properties": {
                        "type": "object",
                        "description": "Event properties (plan, revenue, page...).",
                        "additionalProperties": {"type": ["string", "number", "boolean"]},
                    },
                    "timestamp": string("When it happened (default now).", format="date-time"),
                },
                ["event", "user_id"],
            ),
            handler=b.track_event,
            domain=DOMAIN,
            group="events",
            keywords=("log event", "instrument", "telemetry"),
            annotations=CREATE,
        ),
        Tool(
            name="analytics_query_events",
            description=(
                "Look up raw events by name, user or property filters. Use it to inspect "
                "individual events; use analytics_count_events for totals."
            ),
            parameters=obj(
                {
                    "event": event_type,
                    "user_id": string("Only this user's events."),
                    "filters": filters,
                    "limit": page(default=50),
                }
            ),
            handler=b.query_events,
            domain=DOMAIN,
            group="events",
            keywords=("raw events", "activity stream"),
            annotations=READ,
        ),
        Tool(
            name="analytics_export_events",
            description=(
                "Export raw events for a date range as JSON rows or CSV, for offline analysis. "
                "Returns thousands of rows (very large); prefer analytics_count_events or a "
                "report when you need a number."
            ),
            parameters=obj(
                {
                    "start_date": date,
                    "end_date": date,
                    "events": array(event_type, "Only these events."),
                    "format": enum(["json", "csv"], "Output format.", default="json"),
                    "max_rows": integer("Row cap.", minimum=1, maximum=20000, default=4000),
                }
            ),
            handler=b.export_events,
            domain=DOMAIN,
            group="events",
            keywords=("download data", "dump", "csv"),
            annotations=READ,
            truncation="smart",
            max_result_tokens=4000,
        ),
        Tool(
            name="analytics_count_events",
            description=(
                "Count events (or unique users doing them), optionally broken down by a property "
                "such as country or device. Use it when the question is how many."
            ),
            parameters=obj(
                {
                    "event": event_type,
                    "group_by": enum(
                        ["country", "device", "plan", "page", "utm_source"], "Breakdown."
                    ),
                    "start_date": date,
                    "end_date": date,
                    "unique_users": boolean("Count distinct users instead of events.", False),
                },
                ["event"],
            ),
            handler=b.count_events,
            domain=DOMAIN,
            group="events",
            keywords=("how many", "total", "breakdown"),
            annotations=READ,
            input_examples=({"event": "signup", "group_by": "country", "unique_users": True},),
        ),
        Tool(
            name="analytics_list_event_types",
            description=(
                "List the tracked event names and their properties. Use it to learn which events "
                "and properties exist before querying."
            ),
            parameters=obj({}),
            handler=b.list_event_types,
            domain=DOMAIN,
            group="events",
            keywords=("schema", "tracking plan"),
            annotations=READ,
        ),
        Tool(
            name="analytics_get_user_profile",
            description=(
                "Get one end user's analytics profile and their recent events. Use it when "
                "investigating one user's behaviour."
            ),
            parameters=obj(
                {
                    "user_id": string("User id, e.g. 'u_00042'.", pattern="^u_\\d{5}$"),
                    "recent_events": integer(
                        "How many recent events.", minimum=0, maximum=100, default=10
                    ),
                },
                ["user_id"],
            ),
            handler=b.get_user_profile,
            domain=DOMAIN,
            group="events",
            keywords=("user journey", "customer activity"),
            annotations=READ,
        ),
        Tool(
            name="analytics_get_funnel",
            description=(
                "Conversion funnel: how many users go through a sequence of events (such as "
                "signup -> checkout_started -> purchase) and where they drop off. Use it to find "
                "where users drop off."
            ),
            parameters=obj(
                {
                    "steps": array(event_type, "Ordered steps.", minItems=2, maxItems=8),
                    "window_days": integer("Days to complete.", minimum=1, maximum=90, default=7),
                    "breakdown": enum(["country", "device", "plan"], "Split by property."),
                },
                ["steps"],
            ),
            handler=b.get_funnel,
            domain=DOMAIN,
            group="reports",
            keywords=("conversion", "drop off"),
            annotations=READ,
            input_examples=({"steps": ["signup", "checkout_started", "purchase"]},),
        ),
        Tool(
            name="analytics_get_retention",
            description=(
                "Cohort retention: of users who did one event, how many come back later. Use it "
                "when asked whether users come back."
            ),
            parameters=obj(
                {
                    "cohort_event": {**event_type, "default": "signup"},
                    "return_event": {**event_type, "default": "login"},
                    "periods": integer("Periods to show.", minimum=2, maximum=24, default=8),
                    "interval": enum(["day", "week", "month"], "Period length.", default="week"),
                }
            ),
            handler=b.get_retention,
            domain=DOMAIN,
            group="reports",
            keywords=("cohort", "churn", "stickiness"),
            annotations=READ,
        ),
        Tool(
            name="analytics_get_metric_timeseries",
            description=(
                "A metric (active users, revenue, signups...) over time, per interval. Use it for"
                " trends and charts."
            ),
            parameters=obj(
                {
                    "metric": metric,
                    "start_date": date,
                    "end_date": date,
                    "interval": enum(INTERVALS, "Bucket size.", default="day"),
                    "filters": filters,
                },
                ["metric", "start_date", "end_date"],
            ),
            handler=b.get_metric_timeseries,
            domain=DOMAIN,
            group="reports",
            keywords=("trend", "chart", "kpi", "dau"),
            annotations=READ,
            output_schema=obj(
                {
                    "metric": string("The metric."),
                    "interval": string("Bucket size."),
                    "points": array(
                        obj({"t": string("Bucket start."), "value": number("Value.")}),
                        "One point per bucket.",
                    ),
                },
                ["metric", "points"],
            ),
        ),
        Tool(
            name="analytics_compare_periods",
            description=(
                "Compare a metric between two periods, such as this month and last month. Use it "
                "when asked whether a metric went up or down."
            ),
            parameters=obj(
                {
                    "metric": metric,
                    "current_start": date,
                    "current_end": date,
                    "previous_start": date,
                    "previous_end": date,
                },
                ["metric", "current_start", "current_end", "previous_start", "previous_end"],
            ),
            handler=b.compare_periods,
            domain=DOMAIN,
            group="reports",
            keywords=("month over month", "growth", "delta"),
            annotations=READ,
        ),
        Tool(
            name="analytics_run_sql_query",
            description=(
                "Run a read-only SQL SELECT on the analytics warehouse (tables events, users, "
                "sessions) for questions the built-in reports cannot answer."
            ),
            parameters=obj(
                {
                    "sql": string("A SELECT statement, e.g. 'SELECT count(*) FROM events'."),
                    "max_rows": integer("Row cap.", minimum=1, maximum=1000, default=100),
                },
                ["sql"],
            ),
            handler=b.run_sql_query,
            domain=DOMAIN,
            group="reports",
            keywords=("warehouse", "custom query", "bigquery", "snowflake"),
            annotations=READ,
            usage_notes="Only SELECT/WITH. Tables: events(event_id, event, user_id, timestamp, "
            "properties JSON), users(user_id, plan, country, first_seen), sessions(session_id, "
            "user_id, started_at, duration_s).",
        ),
        Tool(
            name="analytics_list_dashboards",
            description=(
                "List analytics dashboards and their charts. Use it to find a dashboard id."
            ),
            parameters=obj({}),
            handler=b.list_dashboards,
            domain=DOMAIN,
            group="dashboards",
            keywords=("reports", "charts"),
            annotations=READ,
        ),
        Tool(
            name="analytics_create_dashboard",
            description=(
                "Create an empty analytics dashboard. Use it before adding charts to a new "
                "dashboard."
            ),
            parameters=obj(
                {
                    "name": string("Dashboard name."),
                    "description": string("What it tracks.", default=""),
                    "shared": boolean("Visible to the whole team.", False),
                },
                ["name"],
            ),
            handler=b.create_dashboard,
            domain=DOMAIN,
            group="dashboards",
            keywords=("new dashboard", "report"),
            annotations=CREATE,
        ),
        Tool(
            name="analytics_add_chart",
            description=(
                "Add a chart of a metric or event to a dashboard. Use it to put a metric on a "
                "dashboard."
            ),
            parameters=obj(
                {
                    "dashboard_id": dashboard_id,
                    "chart": obj(
                        {
                            "title": string("Chart title."),
                            "type": enum(
                                ["line", "bar", "number", "table", "funnel"], "Chart type."
                            ),
                            "metric": metric,
                            "interval": enum(INTERVALS, "Bucket size.", default="day"),
                            "filters": filters,
                        },
                        ["title", "type", "metric"],
                        description="What the chart shows and how.",
                    ),
                },
                ["dashboard_id", "chart"],
            ),
            handler=b.add_chart,
            domain=DOMAIN,
            group="dashboards",
            keywords=("visualize", "graph", "widget"),
            annotations=CREATE,
        ),
        Tool(
            name="analytics_delete_dashboard",
            description=("Delete a dashboard and its charts. Use it only on an explicit request."),
            parameters=obj({"dashboard_id": dashboard_id}, ["dashboard_id"]),
            handler=b.delete_dashboard,
            domain=DOMAIN,
            group="dashboards",
            keywords=("remove dashboard",),
            annotations=DELETE,
        ),
        Tool(
            name="analytics_schedule_report",
            description=(
                "Email a dashboard to people on a schedule (daily, weekly, monthly). Use it when "
                "people want regular updates by email."
            ),
            parameters=obj(
                {
                    "dashboard_id": dashboard_id,
                    "recipients": array(
                        string("Email.", format="email"), "Who receives it.", minItems=1
                    ),
                    "frequency": enum(
                        ["daily", "weekly", "monthly"], "How often.", default="weekly"
                    ),
                    "format": enum(["pdf", "png", "csv"], "Attachment format.", default="pdf"),
                },
                ["dashboard_id", "recipients"],
            ),
            handler=b.schedule_report,
            domain=DOMAIN,
            group="dashboards",
            keywords=("subscribe", "weekly email", "digest"),
            annotations=SEND,
        ),
        Tool(
            name="analytics_create_segment",
            description=(
                "Save a user segment (cohort) defined by property filters. Use it when the same "
                "group of users will be analysed again."
            ),
            parameters=obj(
                {
                    "name": string("Segment name."),
                    "filters": {**filters, "minItems": 1},
                    "description": string("What the segment is.", default=""),
                },
                ["name", "filters"],
            ),
            handler=b.create_segment,
            domain=DOMAIN,
            group="segments",
            keywords=("audience", "cohort", "group of users"),
            annotations=CREATE,
            input_examples=(
                {
                    "name": "German mobile users",
                    "filters": [
                        {"property": "country", "operator": "equals", "value": "DE"},
                        {"property": "device", "operator": "equals", "value": "mobile"},
                    ],
                },
            ),
        ),
        Tool(
            name="analytics_list_segments",
            description=("List saved user segments. Use it to reuse a saved audience."),
            parameters=obj({}),
            handler=b.list_segments,
            domain=DOMAIN,
            group="segments",
            keywords=("audiences", "cohorts"),
            annotations=READ,
        ),
    ]
