"""Web search tools: searching the web, reading pages, and quick factual answers.

Every tool here reaches the open world, so each is annotated ``open_world=True``. Results are
generated from the query (deterministically), never fetched.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any
from urllib.parse import quote_plus, urlparse

from toolmgmt_core import Tool
from toolmgmt_demo._common import (
    READ_OPEN,
    array,
    boolean,
    enum,
    integer,
    iso,
    number,
    obj,
    rng,
    string,
)

__all__ = ["DOMAIN", "build_tools"]

DOMAIN = "web_search"

_SITES = [
    "en.wikipedia.org",
    "docs.python.org",
    "developer.mozilla.org",
    "www.nytimes.com",
    "arxiv.org",
    "stackoverflow.com",
    "github.com",
    "www.bbc.co.uk",
    "medium.com",
    "news.ycombinator.com",
]
_FILLER = (
    "The topic has a long history and many practical applications. Experts disagree on the "
    "details, but most agree on the fundamentals described below. Recent work has refined the "
    "picture considerably, with new measurements, open datasets and reproducible studies."
).split()
_LANGS = ["en", "de", "fr", "es", "ja"]
_PAPER_KINDS = ["a survey", "new bounds", "an empirical study"]
_FRESHNESS = ["any", "day", "week", "month", "year"]


def _words(query: str) -> list[str]:
    return re.findall(r"\w+", query.lower()) or ["topic"]


def _result(query: str, n: int, site: str | None = None) -> dict[str, Any]:
    r = rng("serp", query, n, site)
    words = _words(query)
    host = site or r.choice(_SITES)
    slug = "-".join(r.sample(words, min(len(words), 3)))
    title = " ".join(w.capitalize() for w in words[:6])
    return {
        "rank": n + 1,
        "title": f"{title}: {r.choice(['a complete guide', 'what to know', 'explained', 'FAQ'])}",
        "url": f"https://{host}/{slug}-{r.randint(10, 9999)}",
        "snippet": f"{' '.join(words)} — " + " ".join(r.sample(_FILLER, 14)) + ".",
        "published": iso(days=-r.randint(0, 900))[:10],
    }


def _check_url(url: str) -> str:
    parsed = urlparse(url)
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        raise ValueError(
            f"{url!r} is not an http(s) URL; give a full URL such as 'https://example.com/page'."
        )
    return parsed.netloc


class WebSearchBackend:
    """A fake search engine and web: results and pages are derived from the request."""

    # -- search ---------------------------------------------------------------------------

    async def search_web(
        self,
        query: str,
        num_results: int = 10,
        freshness: str = "any",
        language: str = "en",
        safe_search: bool = True,
        exclude_sites: list[str] | None = None,
    ) -> dict[str, Any]:
        await asyncio.sleep(0)  # a real engine answers over the network
        results: list[dict[str, Any]] = []
        n = 0
        while len(results) < num_results and n < num_results * 3:
            hit = _result(query, n)
            if not any(site in hit["url"] for site in exclude_sites or []):
                results.append(hit)
            n += 1
        return {
            "query": query,
            "freshness": freshness,
            "language": language,
            "safe_search": safe_search,
            "results": results,
        }

    def search_news(
        self,
        query: str,
        num_results: int = 10,
        since: str | None = None,
        sort: str = "relevance",
    ) -> dict[str, Any]:
        items = []
        for n in range(num_results):
            hit = _result(query, n, rng("news", query, n).choice(_SITES[3:8]))
            hit["source"] = urlparse(hit["url"]).netloc
            hit["published"] = iso(days=-n * 0.5)
            if since and hit["published"] < since:
                continue
            items.append(hit)
        if sort == "date":
            items.sort(key=lambda h: h["published"], reverse=True)
        return {"query": query, "articles": items}

    def search_images(
        self, query: str, num_results: int = 10, size: str = "any", license: str = "any"
    ) -> dict[str, Any]:
        r = rng("images", query, size, license)
        images = []
        for n in range(num_results):
            width = {"small": 320, "medium": 1024, "large": 2560}.get(size, r.choice([640, 1920]))
            images.append(
                {
                    "title": f"{query} #{n + 1}",
                    "image_url": f"https://images.example.org/{quote_plus(query)}/{n}.jpg",
                    "page_url": _result(query, n)["url"],
                    "width": width,
                    "height": int(width * 0.66),
                    "license": license if license != "any" else r.choice(["cc-by", "all-rights"]),
                }
            )
        return {"query": query, "images": images}

    def search_videos(
        self, query: str, num_results: int = 10, max_duration_minutes: int | None = None
    ) -> dict[str, Any]:
        r = rng("videos", query)
        videos = []
        for n in range(num_results):
            minutes = r.randint(1, 90)
            if max_duration_minutes and minutes > max_duration_minutes:
                continue
            videos.append(
                {
                    "title": f"{query} — part {n + 1}",
                    "duration_minutes": minutes,
                    "url": f"https://video.example.org/watch?v={r.getrandbits(40):x}",
                    "channel": r.choice(["TechTalks", "Explained", "DailyNews"]),
                }
            )
        return {"query": query, "videos": videos}

    def search_academic_papers(
        self,
        query: str,
        num_results: int = 10,
        year_from: int | None = None,
        open_access_only: bool = False,
    ) -> dict[str, Any]:
        r = rng("papers", query)
        papers = []
        for _ in range(num_results * 2):
            year = r.randint(2005, 2026)
            oa = r.random() < 0.6
            if (year_from and year < year_from) or (open_access_only and not oa):
                continue
            authors = [
                f"{r.choice('ABCDEFGHJKLM')}. {r.choice(['Smith', 'Li', 'Müller', 'Rao'])}"
                for _ in range(r.randint(1, 5))
            ]
            papers.append(
                {
                    "title": f"On {' '.join(_words(query))}: {r.choice(_PAPER_KINDS)}",
                    "authors": authors,
                    "year": year,
                    "venue": r.choice(["NeurIPS", "ACL", "Nature", "arXiv", "ICML"]),
                    "citations": r.randint(0, 4000),
                    "open_access": oa,
                    "doi": f"10.{r.randint(1000, 9999)}/{r.getrandbits(32):x}",
                }
            )
        return {"query": query, "papers": papers[:num_results]}

    def search_site(self, site: str, query: str, num_results: int = 10) -> dict[str, Any]:
        host = site.removeprefix("https://").removeprefix("http://").strip("/")
        return {
            "site": host,
            "query": query,
            "results": [_result(query, n, host) for n in range(num_results)],
        }

    # -- pages ----------------------------------------------------------------------------

    async def fetch_page(
        self, url: str, format: str = "markdown", include_links: bool = False
    ) -> dict[str, Any]:
        await asyncio.sleep(0)
        host = _check_url(url)
        r = rng("page", url)
        topic = " ".join(_words(urlparse(url).path.replace("-", " ")) or ["home"])
        parts = [f"# {topic.title()}", f"_{host} — updated {iso(days=-r.randint(1, 300))[:10]}_"]
        for section in range(r.randint(25, 40)):
            parts.append(f"## Section {section + 1}: {r.choice(_FILLER)} {topic}")
            for _ in range(r.randint(3, 6)):
                sentence = " ".join(r.choices(_FILLER, k=r.randint(40, 70)))
                parts.append(sentence.capitalize() + ".")
        text = "\n\n".join(parts)
        if format == "text":
            text = re.sub(r"[#_]", "", text)
        elif format == "html":
            text = "<html><body>" + "".join(f"<p>{p}</p>" for p in parts) + "</body></html>"
        page: dict[str, Any] = {
            "url": url,
            "status": 200,
            "title": topic.title(),
            "format": format,
            "content": text,
        }
        if include_links:
            page["links"] = [_result(topic, n)["url"] for n in range(40)]
        return page

    def extract_links(self, url: str, same_domain_only: bool = False) -> dict[str, Any]:
        host = _check_url(url)
        r = rng("links", url)
        links = []
        for n in range(60):
            target = host if (same_domain_only or r.random() < 0.5) else r.choice(_SITES)
            links.append(
                {
                    "text": " ".join(r.sample(_FILLER, 3)),
                    "url": f"https://{target}/{r.choice(_FILLER).lower()}-{n}",
                }
            )
        return {"url": url, "links": links}

    def get_page_metadata(self, url: str) -> dict[str, Any]:
        host = _check_url(url)
        r = rng("meta", url)
        return {
            "url": url,
            "title": f"{host} page",
            "description": " ".join(r.sample(_FILLER, 12)),
            "language": r.choice(_LANGS),
            "author": r.choice([None, "Editorial team"]),
            "published": iso(days=-r.randint(1, 2000))[:10],
            "og_image": f"https://{host}/og.png",
            "canonical_url": url.split("?")[0],
        }

    def check_url_status(self, urls: list[str]) -> dict[str, Any]:
        statuses = []
        for url in urls:
            _check_url(url)
            code = rng("status", url).choice([200, 200, 200, 301, 404, 503])
            statuses.append({"url": url, "status": code, "ok": code < 400})
        return {"results": statuses}

    def get_cached_page(self, url: str, date: str | None = None) -> dict[str, Any]:
        _check_url(url)
        snapshot = date or iso(days=-rng("cache", url).randint(1, 200))[:10]
        return {
            "url": url,
            "snapshot_date": snapshot,
            "archive_url": f"https://archive.example.org/{snapshot.replace('-', '')}/{url}",
            "content": " ".join(rng("cached", url).choices(_FILLER, k=400)),
        }

    def find_similar_pages(self, url: str, num_results: int = 10) -> dict[str, Any]:
        _check_url(url)
        topic = urlparse(url).path.replace("-", " ").replace("/", " ")
        return {"url": url, "similar": [_result(topic or url, n) for n in range(num_results)]}

    # -- answers --------------------------------------------------------------------------

    def get_weather_forecast(
        self, location: str, days: int = 3, units: str = "metric"
    ) -> dict[str, Any]:
        r = rng("weather", location.lower())
        forecast = []
        for day in range(days):
            high = r.uniform(4, 31)
            if units == "imperial":
                high = high * 9 / 5 + 32
            forecast.append(
                {
                    "date": iso(days=day)[:10],
                    "high": round(high, 1),
                    "low": round(high - r.uniform(4, 11), 1),
                    "condition": r.choice(["sunny", "cloudy", "rain", "showers", "snow"]),
                    "precipitation_chance": r.randint(0, 100),
                }
            )
        return {"location": location, "units": units, "forecast": forecast}

    def convert_currency(
        self, amount: float, from_currency: str, to_currency: str
    ) -> dict[str, Any]:
        per_usd = {"USD": 1.0, "EUR": 0.92, "GBP": 0.79, "JPY": 151.2, "CHF": 0.88, "INR": 83.1}
        for code in (from_currency, to_currency):
            if code not in per_usd:
                raise ValueError(f"Unknown currency {code!r}. Known: {', '.join(per_usd)}.")
        rate = per_usd[to_currency] / per_usd[from_currency]
        return {
            "amount": amount,
            "from": from_currency,
            "to": to_currency,
            "rate": round(rate, 6),
            "result": round(amount * rate, 2),
            "as_of": iso(),
        }

    def get_stock_quote(self, symbol: str) -> dict[str, Any]:
        if not re.fullmatch(r"[A-Z.]{1,6}", symbol):
            raise ValueError(
                f"{symbol!r} is not a ticker symbol (1-6 capital letters, e.g. 'AAPL')."
            )
        r = rng("quote", symbol)
        price = r.uniform(5, 900)
        return {
            "symbol": symbol,
            "price": round(price, 2),
            "currency": "USD",
            "change_pct": round(r.uniform(-4, 4), 2),
            "market_cap_billions": round(price * r.uniform(0.1, 9), 1),
            "as_of": iso(),
        }


def build_tools() -> list[Tool]:
    """The web search tools (stateless, but built per catalog like the others)."""
    b = WebSearchBackend()
    query = string("What to search for, in natural words.", minLength=1, maxLength=400)
    count = integer("Number of results.", minimum=1, maximum=50, default=10)
    url = string("Full URL, e.g. 'https://example.com/page'.", format="uri")
    return [
        Tool(
            name="web_search_search_web",
            description=(
                "Search the public web and return ranked results (title, URL, snippet). Use it "
                "for current facts, documentation, release notes, prices or anything outside "
                "the user's own data."
            ),
            parameters=obj(
                {
                    "query": query,
                    "num_results": count,
                    "freshness": enum(_FRESHNESS, "Only pages this recent.", default="any"),
                    "language": enum(_LANGS, "Result language.", default="en"),
                    "safe_search": boolean("Filter explicit results.", True),
                    "exclude_sites": array(string("Host name."), "Leave out these sites."),
                },
                ["query"],
            ),
            handler=b.search_web,
            domain=DOMAIN,
            group="search",
            keywords=(
                "google",
                "bing",
                "internet",
                "online",
                "look up",
                "research",
                "find information",
            ),
            annotations=READ_OPEN,
            defer_loading=False,
            input_examples=({"query": "python 3.13 release notes", "num_results": 5},),
        ),
        Tool(
            name="web_search_search_news",
            description=(
                "Search recent news articles and headlines, by relevance or date. Use it for "
                "recent events; use web_search_search_web for general questions."
            ),
            parameters=obj(
                {
                    "query": query,
                    "num_results": count,
                    "since": string("Only articles after.", format="date-time"),
                    "sort": enum(["relevance", "date"], "Order.", default="relevance"),
                },
                ["query"],
            ),
            handler=b.search_news,
            domain=DOMAIN,
            group="search",
            keywords=("headlines", "current events", "press"),
            annotations=READ_OPEN,
        ),
        Tool(
            name="web_search_search_images",
            description=(
                "Search the web for images by size and license. Use it when the user wants "
                "pictures."
            ),
            parameters=obj(
                {
                    "query": query,
                    "num_results": count,
                    "size": enum(["any", "small", "medium", "large"], "Size.", default="any"),
                    "license": enum(
                        ["any", "cc-by", "cc0", "commercial"], "Usage rights.", default="any"
                    ),
                },
                ["query"],
            ),
            handler=b.search_images,
            domain=DOMAIN,
            group="search",
            keywords=("pictures", "photos"),
            annotations=READ_OPEN,
        ),
        Tool(
            name="web_search_search_videos",
            description=(
                "Search online videos, optionally capped by duration. Use it when the user wants "
                "video tutorials or talks."
            ),
            parameters=obj(
                {
                    "query": query,
                    "num_results": count,
                    "max_duration_minutes": integer("Longest video.", minimum=1),
                },
                ["query"],
            ),
            handler=b.search_videos,
            domain=DOMAIN,
            group="search",
            keywords=("youtube", "tutorial video"),
            annotations=READ_OPEN,
        ),
        Tool(
            name="web_search_search_academic_papers",
            description=(
                "Search scholarly papers with authors, venue, year and citation counts. Use it "
                "for research literature rather than web pages."
            ),
            parameters=obj(
                {
                    "query": query,
                    "num_results": count,
                    "year_from": integer("Only papers from this year on.", minimum=1900),
                    "open_access_only": boolean("Only freely readable papers.", False),
                },
                ["query"],
            ),
            handler=b.search_academic_papers,
            domain=DOMAIN,
            group="search",
            keywords=("scholar", "research", "citations", "arxiv", "literature"),
            annotations=READ_OPEN,
        ),
        Tool(
            name="web_search_search_site",
            description="Search within one website only (like 'site:docs.python.org').",
            parameters=obj(
                {
                    "site": string("Host name, e.g. 'docs.python.org'.", format="hostname"),
                    "query": query,
                    "num_results": count,
                },
                ["site", "query"],
            ),
            handler=b.search_site,
            domain=DOMAIN,
            group="search",
            keywords=("site search", "documentation"),
            annotations=READ_OPEN,
        ),
        Tool(
            name="web_search_fetch_page",
            description=(
                "Download a web page and return its readable content as markdown, text or HTML. "
                "Pages can be long (tens of KB). Use it after a search, when snippets are not "
                "enough."
            ),
            parameters=obj(
                {
                    "url": url,
                    "format": enum(["markdown", "text", "html"], "Output.", default="markdown"),
                    "include_links": boolean("Also list the page's links.", False),
                },
                ["url"],
            ),
            handler=b.fetch_page,
            domain=DOMAIN,
            group="pages",
            keywords=("read url", "scrape", "browse", "open link"),
            annotations=READ_OPEN,
            truncation="smart",
            input_examples=({"url": "https://en.wikipedia.org/wiki/solar-power"},),
            output_schema=obj(
                {
                    "url": string("The URL."),
                    "status": integer("HTTP status."),
                    "title": string("Page title."),
                    "format": string("Content format."),
                    "content": string("The page's content."),
                    "links": array(string("URL."), "Links, when asked for."),
                },
                ["url", "status", "content"],
            ),
        ),
        Tool(
            name="web_search_extract_links",
            description="List the links on a web page, optionally only same-site ones.",
            parameters=obj(
                {"url": url, "same_domain_only": boolean("Only links to the same site.", False)},
                ["url"],
            ),
            handler=b.extract_links,
            domain=DOMAIN,
            group="pages",
            keywords=("crawl", "hrefs"),
            annotations=READ_OPEN,
        ),
        Tool(
            name="web_search_get_page_metadata",
            description=(
                "Get a page's title, description, language, author and preview image. Use it to "
                "preview a link without reading the whole page."
            ),
            parameters=obj({"url": url}, ["url"]),
            handler=b.get_page_metadata,
            domain=DOMAIN,
            group="pages",
            keywords=("open graph", "seo", "preview"),
            annotations=READ_OPEN,
        ),
        Tool(
            name="web_search_check_url_status",
            description=(
                "Check whether URLs are reachable (HTTP status, broken links). Use it to find "
                "broken links."
            ),
            parameters=obj(
                {"urls": array(url, "URLs to check.", minItems=1, maxItems=50)}, ["urls"]
            ),
            handler=b.check_url_status,
            domain=DOMAIN,
            group="pages",
            keywords=("dead link", "uptime", "404"),
            annotations=READ_OPEN,
        ),
        Tool(
            name="web_search_get_cached_page",
            description="Get an archived snapshot of a page (when it is down or changed).",
            parameters=obj(
                {"url": url, "date": string("Snapshot nearest this date.", format="date")},
                ["url"],
            ),
            handler=b.get_cached_page,
            domain=DOMAIN,
            group="pages",
            keywords=("wayback", "archive", "old version"),
            annotations=READ_OPEN,
        ),
        Tool(
            name="web_search_find_similar_pages",
            description=(
                "Find pages similar to a given page. Use it to find alternatives to a page you "
                "already have."
            ),
            parameters=obj({"url": url, "num_results": count}, ["url"]),
            handler=b.find_similar_pages,
            domain=DOMAIN,
            group="pages",
            keywords=("related", "alternatives"),
            annotations=READ_OPEN,
        ),
        Tool(
            name="web_search_get_weather_forecast",
            description=(
                "Weather forecast for a place for the next days. Use it when the user asks about "
                "the weather."
            ),
            parameters=obj(
                {
                    "location": string("City or 'lat,lon', e.g. 'Lisbon, PT'."),
                    "days": integer("Days ahead.", minimum=1, maximum=14, default=3),
                    "units": enum(["metric", "imperial"], "Units.", default="metric"),
                },
                ["location"],
            ),
            handler=b.get_weather_forecast,
            domain=DOMAIN,
            group="answers",
            keywords=("temperature", "rain", "climate"),
            annotations=READ_OPEN,
        ),
        Tool(
            name="web_search_convert_currency",
            description=(
                "Convert an amount between currencies at today's exchange rate. Use it for prices"
                " in another currency."
            ),
            parameters=obj(
                {
                    "amount": number("Amount to convert.", minimum=0),
                    "from_currency": string("ISO code, e.g. 'EUR'.", pattern="^[A-Z]{3}$"),
                    "to_currency": string("ISO code, e.g. 'USD'.", pattern="^[A-Z]{3}$"),
                },
                ["amount", "from_currency", "to_currency"],
            ),
            handler=b.convert_currency,
            domain=DOMAIN,
            group="answers",
            keywords=("exchange rate", "fx", "money"),
            annotations=READ_OPEN,
        ),
        Tool(
            name="web_search_get_stock_quote",
            description=(
                "Latest stock price, daily change and market cap for a ticker symbol. Use it when"
                " asked about a company's share price."
            ),
            parameters=obj(
                {"symbol": string("Ticker, e.g. 'AAPL'.", pattern="^[A-Z.]{1,6}$")}, ["symbol"]
            ),
            handler=b.get_stock_quote,
            domain=DOMAIN,
            group="answers",
            keywords=("share price", "market", "ticker"),
            annotations=READ_OPEN,
        ),
    ]
