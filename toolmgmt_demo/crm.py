"""CRM tools: the contacts, companies, deals and activities of a sales team."""

from __future__ import annotations

from typing import Any

from toolmgmt_core import Tool
from toolmgmt_demo._common import (
    COMPANY_WORDS,
    CREATE,
    DELETE,
    FIRST_NAMES,
    LAST_NAMES,
    READ,
    UPDATE,
    Store,
    array,
    boolean,
    enum,
    integer,
    iso,
    matches,
    number,
    obj,
    page,
    rng,
    string,
)

__all__ = ["DOMAIN", "build_tools"]

DOMAIN = "crm"

LIFECYCLE = ["lead", "marketing_qualified", "sales_qualified", "opportunity", "customer", "churned"]
STAGES = ["prospecting", "qualification", "proposal", "negotiation", "closed_won", "closed_lost"]
ACTIVITY_TYPES = ["call", "email", "meeting", "note", "demo"]
INDUSTRIES = ["software", "retail", "healthcare", "finance", "manufacturing", "education"]

_ADDRESS = obj(
    {
        "street": string("Street and number."),
        "city": string("City."),
        "postal_code": string("Postal or ZIP code."),
        "country": string("ISO 3166-1 alpha-2 country code, e.g. 'DE'.", pattern="^[A-Z]{2}$"),
    },
    description="Postal address.",
)


class CrmBackend:
    """An in-memory CRM seeded with 400 contacts, 40 companies and 120 deals."""

    def __init__(self) -> None:
        r = rng("crm-seed")
        self.companies = Store("company", "cmp", "crm_list_companies")
        self.contacts = Store("contact", "con", "crm_search_contacts")
        self.deals = Store("deal", "deal", "crm_list_deals")
        self.activities = Store("activity", "act", "crm_list_activities")
        self.tasks = Store("task", "tsk", "crm_list_activities")
        for n in range(40):
            name = (
                f"{COMPANY_WORDS[n % len(COMPANY_WORDS)]} {['Labs', 'Inc', 'GmbH', 'Ltd'][n % 4]}"
            )
            self.companies.add(
                {
                    "name": name,
                    "domain": name.split()[0].lower() + ".example.com",
                    "industry": r.choice(INDUSTRIES),
                    "employees": r.choice([12, 48, 150, 900, 4200]),
                    "created_at": iso(days=-r.randint(30, 900)),
                }
            )
        company_ids = list(self.companies.records)
        for _ in range(400):
            first, last = r.choice(FIRST_NAMES), r.choice(LAST_NAMES)
            company_id = r.choice(company_ids)
            domain = self.companies.records[company_id]["domain"]
            self.contacts.add(
                {
                    "first_name": first,
                    "last_name": last,
                    "email": f"{first}.{last}@{domain}".lower(),
                    "phone": f"+1-555-{r.randint(100, 999)}-{r.randint(1000, 9999)}",
                    "title": r.choice(["CTO", "VP Sales", "Engineer", "Buyer", "CFO", "Founder"]),
                    "company_id": company_id,
                    "lifecycle_stage": r.choice(LIFECYCLE),
                    "tags": r.sample(["vip", "newsletter", "trial", "partner", "event-2025"], 2),
                    "owner": r.choice(["ana@sales.example.com", "raj@sales.example.com"]),
                    "created_at": iso(days=-r.randint(1, 700)),
                }
            )
        contact_ids = list(self.contacts.records)
        for n in range(120):
            self.deals.add(
                {
                    "title": f"{r.choice(['Platform', 'Renewal', 'Expansion', 'Pilot'])} #{n + 1}",
                    "company_id": r.choice(company_ids),
                    "contact_id": r.choice(contact_ids),
                    "amount": round(r.uniform(2_000, 250_000), 2),
                    "currency": "USD",
                    "stage": r.choice(STAGES),
                    "close_date": iso(days=r.randint(-60, 120))[:10],
                }
            )

    # -- contacts -------------------------------------------------------------------------

    def search_contacts(
        self,
        query: str = "",
        lifecycle_stage: str | None = None,
        company_id: str | None = None,
        tag: str | None = None,
        limit: int = 20,
        offset: int = 0,
    ) -> dict[str, Any]:
        def keep(c: dict[str, Any]) -> bool:
            text = f"{c['first_name']} {c['last_name']} {c['email']} {c['title']}"
            return (
                matches(text, query)
                and (lifecycle_stage is None or c["lifecycle_stage"] == lifecycle_stage)
                and (company_id is None or c["company_id"] == company_id)
                and (tag is None or tag in c["tags"])
            )

        return self.contacts.select(keep, limit=limit, offset=offset, sort_key="last_name")

    def get_contact(self, contact_id: str, include_activities: bool = False) -> dict[str, Any]:
        contact = dict(self.contacts.get(contact_id))
        if include_activities:
            contact["activities"] = [
                a for a in self.activities.records.values() if a["contact_id"] == contact_id
            ]
        return contact

    def create_contact(
        self,
        first_name: str,
        last_name: str,
        email: str,
        phone: str | None = None,
        title: str | None = None,
        company_id: str | None = None,
        lifecycle_stage: str = "lead",
        tags: list[str] | None = None,
        address: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        if company_id is not None:
            self.companies.get(company_id)
        if any(c["email"] == email.lower() for c in self.contacts.records.values()):
            raise ValueError(f"A contact with email {email!r} already exists.")
        return self.contacts.add(
            {
                "first_name": first_name,
                "last_name": last_name,
                "email": email.lower(),
                "phone": phone,
                "title": title,
                "company_id": company_id,
                "lifecycle_stage": lifecycle_stage,
                "tags": tags or [],
                "address": address,
                "owner": "ana@sales.example.com",
                "created_at": iso(),
            }
        )

    def update_contact(
        self,
        contact_id: str,
        email: str | None = None,
        phone: str | None = None,
        title: str | None = None,
        lifecycle_stage: str | None = None,
        tags: list[str] | None = None,
        owner: str | None = None,
    ) -> dict[str, Any]:
        changes: dict[str, Any] = dict(
            email=email, phone=phone, title=title, lifecycle_stage=lifecycle_stage
        )
        changes.update(tags=tags, owner=owner)
        return self.contacts.update(contact_id, changes)

    def delete_contact(self, contact_id: str) -> dict[str, Any]:
        removed = self.contacts.delete(contact_id)
        return {"deleted": True, "id": contact_id, "email": removed["email"]}

    def merge_contacts(self, primary_id: str, duplicate_ids: list[str]) -> dict[str, Any]:
        primary = self.contacts.get(primary_id)
        for dup_id in duplicate_ids:
            dup = self.contacts.get(dup_id)
            primary["tags"] = sorted(set(primary["tags"]) | set(dup["tags"]))
            for field in ("phone", "title", "company_id"):
                primary[field] = primary.get(field) or dup.get(field)
        for dup_id in duplicate_ids:
            self.contacts.delete(dup_id)
        return {"merged_into": primary_id, "removed": duplicate_ids, "contact": primary}

    def export_contacts(
        self, format: str = "json", lifecycle_stage: str | None = None
    ) -> dict[str, Any] | str:
        rows = [
            c
            for c in self.contacts.records.values()
            if lifecycle_stage is None or c["lifecycle_stage"] == lifecycle_stage
        ]
        if format == "csv":
            header = "id,first_name,last_name,email,phone,title,company_id,lifecycle_stage,owner"
            lines = [header]
            for c in rows:
                cols = [str(c.get(k) or "") for k in header.split(",")]
                lines.append(",".join(cols))
            return "\n".join(lines)
        return {"exported_at": iso(), "count": len(rows), "contacts": rows}

    # -- companies ------------------------------------------------------------------------

    def list_companies(
        self,
        query: str = "",
        industry: str | None = None,
        min_employees: int | None = None,
        limit: int = 20,
    ) -> dict[str, Any]:
        def keep(c: dict[str, Any]) -> bool:
            return (
                matches(f"{c['name']} {c['domain']}", query)
                and (industry is None or c["industry"] == industry)
                and (min_employees is None or c["employees"] >= min_employees)
            )

        return self.companies.select(keep, limit=limit, sort_key="name")

    def get_company(self, company_id: str) -> dict[str, Any]:
        company = dict(self.companies.get(company_id))
        company["contact_count"] = sum(
            1 for c in self.contacts.records.values() if c["company_id"] == company_id
        )
        company["open_deal_value"] = round(
            sum(
                d["amount"]
                for d in self.deals.records.values()
                if d["company_id"] == company_id and not d["stage"].startswith("closed")
            ),
            2,
        )
        return company

    def create_company(
        self,
        name: str,
        domain: str | None = None,
        industry: str | None = None,
        employees: int | None = None,
        address: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        record = {"name": name, "domain": domain, "industry": industry, "employees": employees}
        return self.companies.add({**record, "address": address, "created_at": iso()})

    def update_company(
        self,
        company_id: str,
        name: str | None = None,
        industry: str | None = None,
        employees: int | None = None,
    ) -> dict[str, Any]:
        changes = {"name": name, "industry": industry, "employees": employees}
        return self.companies.update(company_id, changes)

    # -- deals ----------------------------------------------------------------------------

    def list_deals(
        self,
        stage: str | None = None,
        company_id: str | None = None,
        min_amount: float | None = None,
        closing_before: str | None = None,
        sort_by: str = "close_date",
        limit: int = 20,
    ) -> dict[str, Any]:
        def keep(d: dict[str, Any]) -> bool:
            return (
                (stage is None or d["stage"] == stage)
                and (company_id is None or d["company_id"] == company_id)
                and (min_amount is None or d["amount"] >= min_amount)
                and (closing_before is None or d["close_date"] < closing_before)
            )

        descending = sort_by == "amount"
        return self.deals.select(keep, limit=limit, sort_key=sort_by, descending=descending)

    def get_deal(self, deal_id: str) -> dict[str, Any]:
        return self.deals.get(deal_id)

    def create_deal(
        self,
        title: str,
        company_id: str,
        amount: float,
        currency: str = "USD",
        stage: str = "prospecting",
        contact_id: str | None = None,
        close_date: str | None = None,
        line_items: list[dict[str, Any]] | None = None,
    ) -> dict[str, Any]:
        self.companies.get(company_id)
        if contact_id:
            self.contacts.get(contact_id)
        record: dict[str, Any] = {
            "title": title,
            "company_id": company_id,
            "contact_id": contact_id,
        }
        record.update(amount=amount, currency=currency, stage=stage, line_items=line_items or [])
        return self.deals.add({**record, "close_date": close_date or iso(days=30)[:10]})

    def update_deal_stage(
        self, deal_id: str, stage: str, lost_reason: str | None = None
    ) -> dict[str, Any]:
        if stage == "closed_lost" and not lost_reason:
            raise ValueError("lost_reason is required when moving a deal to closed_lost.")
        deal = self.deals.update(deal_id, {"stage": stage, "lost_reason": lost_reason})
        return {"id": deal_id, "stage": deal["stage"], "updated_at": iso()}

    def delete_deal(self, deal_id: str) -> dict[str, Any]:
        self.deals.delete(deal_id)
        return {"deleted": True, "id": deal_id}

    def forecast_revenue(self, quarter: str, include_weighted: bool = True) -> dict[str, Any]:
        weights = dict(zip(STAGES, [0.1, 0.2, 0.4, 0.7, 1.0, 0.0], strict=True))
        open_deals = [d for d in self.deals.records.values() if d["stage"] != "closed_lost"]
        total = sum(d["amount"] for d in open_deals)
        by_stage = {
            s: round(sum(d["amount"] for d in open_deals if d["stage"] == s), 2) for s in STAGES
        }
        result: dict[str, Any] = {"quarter": quarter, "pipeline_total": round(total, 2)}
        result["by_stage"] = by_stage
        if include_weighted:
            weighted = sum(d["amount"] * weights[d["stage"]] for d in open_deals)
            result["weighted_forecast"] = round(weighted, 2)
        return result

    # -- activities -----------------------------------------------------------------------

    def log_activity(
        self,
        contact_id: str,
        type: str,
        summary: str,
        deal_id: str | None = None,
        occurred_at: str | None = None,
        duration_minutes: int | None = None,
    ) -> dict[str, Any]:
        self.contacts.get(contact_id)
        if deal_id:
            self.deals.get(deal_id)
        record: dict[str, Any] = {
            "contact_id": contact_id,
            "deal_id": deal_id,
            "type": type,
            "summary": summary,
        }
        record.update(occurred_at=occurred_at or iso(), duration_minutes=duration_minutes)
        return self.activities.add(record)

    def list_activities(
        self, contact_id: str | None = None, type: str | None = None, limit: int = 20
    ) -> dict[str, Any]:
        def keep(a: dict[str, Any]) -> bool:
            return (contact_id is None or a["contact_id"] == contact_id) and (
                type is None or a["type"] == type
            )

        return self.activities.select(keep, limit=limit, sort_key="occurred_at", descending=True)

    def create_task(
        self,
        title: str,
        due_date: str,
        contact_id: str | None = None,
        priority: str = "normal",
        assignee: str | None = None,
    ) -> dict[str, Any]:
        if contact_id:
            self.contacts.get(contact_id)
        record: dict[str, Any] = {"title": title, "due_date": due_date, "contact_id": contact_id}
        record.update(priority=priority, assignee=assignee or "ana@sales.example.com")
        return self.tasks.add({**record, "status": "open"})


def build_tools() -> list[Tool]:
    """The CRM tools, bound to a fresh :class:`CrmBackend`."""
    b = CrmBackend()
    contact_id = string("Contact id, e.g. 'con_0001' (from crm_search_contacts).")
    company_id = string("Company id, e.g. 'cmp_0001' (from crm_list_companies).")
    deal_id = string("Deal id, e.g. 'deal_0001' (from crm_list_deals).")
    stage = enum(LIFECYCLE, "Lifecycle stage of the contact.")
    line_item = obj(
        {
            "product": string("Product or plan name."),
            "quantity": integer("Units.", minimum=1, default=1),
            "unit_price": number("Price per unit.", minimum=0),
        },
        ["product", "unit_price"],
    )
    return [
        Tool(
            name="crm_search_contacts",
            description=(
                "Search the CRM's people (contacts) by name, email or job title, optionally "
                "filtered by lifecycle stage, company or tag. Use it to find a contact's id "
                "before reading or changing the contact."
            ),
            parameters=obj(
                {
                    "query": string("Words to match in name, email or title.", default=""),
                    "lifecycle_stage": stage,
                    "company_id": company_id,
                    "tag": string("Only contacts carrying this tag, e.g. 'vip'."),
                    "limit": page(),
                    "offset": integer("Results to skip (pagination).", minimum=0, default=0),
                }
            ),
            handler=b.search_contacts,
            domain=DOMAIN,
            group="contacts",
            keywords=("people", "lead", "customer", "find person", "lookup"),
            annotations=READ,
            input_examples=({"query": "patel", "lifecycle_stage": "customer", "limit": 5},),
        ),
        Tool(
            name="crm_get_contact",
            description=(
                "Get one contact's full record (email, phone, title, company, stage, tags, "
                "owner), optionally with their logged activities. Use it after "
                "crm_search_contacts when you need everything about one person."
            ),
            parameters=obj(
                {
                    "contact_id": contact_id,
                    "include_activities": boolean("Also return logged calls, emails...", False),
                },
                ["contact_id"],
            ),
            handler=b.get_contact,
            domain=DOMAIN,
            group="contacts",
            keywords=("person details", "profile"),
            annotations=READ,
            input_examples=({"contact_id": "con_0001"},),
        ),
        Tool(
            name="crm_create_contact",
            description=(
                "Create a new contact (a person: lead or customer) in the CRM. Fails if a contact"
                " with the same email exists; search first to avoid duplicates. Use it when a new"
                " lead or customer should be tracked."
            ),
            parameters=obj(
                {
                    "first_name": string("Given name.", minLength=1),
                    "last_name": string("Family name.", minLength=1),
                    "email": string("Work email address.", format="email"),
                    "phone": string("Phone number in international format."),
                    "title": string("Job title."),
                    "company_id": company_id,
                    "lifecycle_stage": {**stage, "default": "lead"},
                    "tags": array(string("A tag."), "Tags to attach.", uniqueItems=True),
                    "address": _ADDRESS,
                },
                ["first_name", "last_name", "email"],
            ),
            handler=b.create_contact,
            domain=DOMAIN,
            group="contacts",
            keywords=("add person", "new lead"),
            annotations=CREATE,
            input_examples=(
                {
                    "first_name": "Marta",
                    "last_name": "Nowak",
                    "email": "marta.nowak@globex.example.com",
                    "company_id": "cmp_0003",
                    "tags": ["trial"],
                },
            ),
        ),
        Tool(
            name="crm_update_contact",
            description=(
                "Update fields of an existing contact; fields left out are unchanged. Use it to "
                "change a contact's email, phone, title, stage, tags or owner."
            ),
            parameters=obj(
                {
                    "contact_id": contact_id,
                    "email": string("New email address.", format="email"),
                    "phone": string("New phone number."),
                    "title": string("New job title."),
                    "lifecycle_stage": stage,
                    "tags": array(string("A tag."), "Replaces all tags."),
                    "owner": string("Email of the sales rep who owns the contact.", format="email"),
                },
                ["contact_id"],
            ),
            handler=b.update_contact,
            domain=DOMAIN,
            group="contacts",
            keywords=("edit person", "change stage"),
            annotations=UPDATE,
        ),
        Tool(
            name="crm_delete_contact",
            description=(
                "Permanently delete a contact and its personal data (GDPR erasure). Use it only "
                "when the user asks to erase a person; it cannot be undone."
            ),
            parameters=obj({"contact_id": contact_id}, ["contact_id"]),
            handler=b.delete_contact,
            domain=DOMAIN,
            group="contacts",
            keywords=("remove person", "gdpr", "erase"),
            annotations=DELETE,
            usage_notes="Irreversible. Confirm with the user first; prefer crm_update_contact "
            "with lifecycle_stage='churned' when they only want to mark a contact inactive.",
        ),
        Tool(
            name="crm_merge_contacts",
            description=(
                "Merge duplicate contacts into one primary contact: tags are combined and the "
                "duplicates are deleted. Use it when the same person exists twice."
            ),
            parameters=obj(
                {
                    "primary_id": string("The contact to keep."),
                    "duplicate_ids": array(
                        string("A duplicate contact id."),
                        "Contacts to merge into the primary and delete.",
                        minItems=1,
                        maxItems=10,
                    ),
                },
                ["primary_id", "duplicate_ids"],
            ),
            handler=b.merge_contacts,
            domain=DOMAIN,
            group="contacts",
            keywords=("dedupe", "duplicates"),
            input_examples=({"primary_id": "con_0001", "duplicate_ids": ["con_0002"]},),
            annotations=DELETE,
        ),
        Tool(
            name="crm_export_contacts",
            description=(
                "Export every contact (optionally one lifecycle stage) as JSON or CSV, for "
                "backups or spreadsheets. Returns a large result. Use it only for a full dump; "
                "use crm_search_contacts to find someone."
            ),
            parameters=obj(
                {
                    "format": enum(["json", "csv"], "Output format.", default="json"),
                    "lifecycle_stage": stage,
                }
            ),
            handler=b.export_contacts,
            domain=DOMAIN,
            group="contacts",
            keywords=("download", "backup", "spreadsheet", "csv"),
            annotations=READ,
            max_result_tokens=4000,
            truncation="smart",
        ),
        Tool(
            name="crm_list_companies",
            description=(
                "List companies (accounts) in the CRM, filtered by name, industry or size. Use it"
                " to find a company's id or browse accounts."
            ),
            parameters=obj(
                {
                    "query": string("Words to match in the name or web domain.", default=""),
                    "industry": enum(INDUSTRIES, "Only this industry."),
                    "min_employees": integer("Only companies at least this large.", minimum=1),
                    "limit": page(),
                }
            ),
            handler=b.list_companies,
            domain=DOMAIN,
            group="companies",
            keywords=("accounts", "organizations", "businesses"),
            annotations=READ,
        ),
        Tool(
            name="crm_get_company",
            description=(
                "Get a company's record with its number of contacts and the value of its open "
                "deals. Use it when you need an account overview."
            ),
            parameters=obj({"company_id": company_id}, ["company_id"]),
            handler=b.get_company,
            domain=DOMAIN,
            group="companies",
            keywords=("account details",),
            annotations=READ,
        ),
        Tool(
            name="crm_create_company",
            description=(
                "Create a company (account) in the CRM. Use it when an organisation is not in the"
                " CRM yet."
            ),
            parameters=obj(
                {
                    "name": string("Company name.", minLength=1),
                    "domain": string("Web domain, e.g. 'acme.com'.", format="hostname"),
                    "industry": enum(INDUSTRIES, "Industry."),
                    "employees": integer("Head count.", minimum=1),
                    "address": _ADDRESS,
                },
                ["name"],
            ),
            handler=b.create_company,
            domain=DOMAIN,
            group="companies",
            keywords=("new account", "organization"),
            annotations=CREATE,
        ),
        Tool(
            name="crm_update_company",
            description=(
                "Update a company's name, industry or head count. Use it when a company was "
                "renamed or changed size or industry."
            ),
            parameters=obj(
                {
                    "company_id": company_id,
                    "name": string("New name."),
                    "industry": enum(INDUSTRIES, "New industry."),
                    "employees": integer("New head count.", minimum=1),
                },
                ["company_id"],
            ),
            handler=b.update_company,
            domain=DOMAIN,
            group="companies",
            keywords=("edit account", "rename company"),
            annotations=UPDATE,
        ),
        Tool(
            name="crm_list_deals",
            description=(
                "List sales deals (opportunities) in the pipeline, filtered by stage, company, "
                "amount or close date. Use it to review the pipeline or find a deal's id."
            ),
            parameters=obj(
                {
                    "stage": enum(STAGES, "Only deals in this pipeline stage."),
                    "company_id": company_id,
                    "min_amount": number("Only deals worth at least this much.", minimum=0),
                    "closing_before": string("Only deals closing before this date.", format="date"),
                    "sort_by": enum(["close_date", "amount"], "Sort order.", default="close_date"),
                    "limit": page(),
                }
            ),
            handler=b.list_deals,
            domain=DOMAIN,
            group="deals",
            keywords=("opportunities", "pipeline", "sales"),
            annotations=READ,
        ),
        Tool(
            name="crm_get_deal",
            description=(
                "Get one deal with its amount, stage, company, contact and close date. Use it "
                "when you need one deal's details."
            ),
            parameters=obj({"deal_id": deal_id}, ["deal_id"]),
            handler=b.get_deal,
            domain=DOMAIN,
            group="deals",
            keywords=("opportunity details",),
            annotations=READ,
        ),
        Tool(
            name="crm_create_deal",
            description=(
                "Create a sales deal (opportunity) for a company, with optional line items. Use "
                "it when a new sales opportunity opens."
            ),
            parameters=obj(
                {
                    "title": string("Short name of the deal."),
                    "company_id": company_id,
                    "amount": number("Expected value.", minimum=0),
                    "currency": enum(["USD", "EUR", "GBP", "JPY"], "Currency.", default="USD"),
                    "stage": enum(STAGES, "Initial stage.", default="prospecting"),
                    "contact_id": contact_id,
                    "close_date": string("Expected close date.", format="date"),
                    "line_items": array(line_item, "Products in the deal."),
                },
                ["title", "company_id", "amount"],
            ),
            handler=b.create_deal,
            domain=DOMAIN,
            group="deals",
            keywords=("new opportunity", "quote"),
            annotations=CREATE,
            input_examples=(
                {
                    "title": "Analytics add-on",
                    "company_id": "cmp_0002",
                    "amount": 18000,
                    "line_items": [{"product": "Analytics Pro", "quantity": 3, "unit_price": 6000}],
                },
            ),
        ),
        Tool(
            name="crm_update_deal_stage",
            description=(
                "Move a deal to another pipeline stage, for example mark it won or lost (a lost "
                "deal needs a reason)."
            ),
            parameters=obj(
                {
                    "deal_id": deal_id,
                    "stage": enum(STAGES, "The new stage."),
                    "lost_reason": string("Why the deal was lost (required for closed_lost)."),
                },
                ["deal_id", "stage"],
            ),
            handler=b.update_deal_stage,
            domain=DOMAIN,
            group="deals",
            keywords=("win", "lose", "close deal", "advance"),
            annotations=UPDATE,
        ),
        Tool(
            name="crm_delete_deal",
            description=(
                "Permanently delete a deal from the pipeline. Use it only to remove a deal "
                "entered by mistake; mark lost deals with crm_update_deal_stage instead."
            ),
            parameters=obj({"deal_id": deal_id}, ["deal_id"]),
            handler=b.delete_deal,
            domain=DOMAIN,
            group="deals",
            keywords=("remove opportunity",),
            annotations=DELETE,
        ),
        Tool(
            name="crm_forecast_revenue",
            description=(
                "Forecast revenue for a quarter from the open pipeline: total by stage and a "
                "stage-weighted forecast. Use it when asked how much revenue to expect."
            ),
            parameters=obj(
                {
                    "quarter": string("Quarter, e.g. '2026-Q2'.", pattern="^\\d{4}-Q[1-4]$"),
                    "include_weighted": boolean("Include the weighted forecast.", True),
                },
                ["quarter"],
            ),
            handler=b.forecast_revenue,
            domain=DOMAIN,
            group="deals",
            keywords=("projection", "quota", "pipeline value"),
            annotations=READ,
            output_schema=obj(
                {
                    "quarter": string("The quarter."),
                    "pipeline_total": number("Sum of open deal amounts."),
                    "by_stage": {"type": "object", "additionalProperties": {"type": "number"}},
                    "weighted_forecast": number("Amounts weighted by stage probability."),
                },
                ["quarter", "pipeline_total", "by_stage"],
                closed=False,
            ),
        ),
        Tool(
            name="crm_log_activity",
            description=(
                "Log a call, email, meeting, demo or note against a contact (and optionally a "
                "deal), so the team sees the history. Use it after a customer interaction."
            ),
            parameters=obj(
                {
                    "contact_id": contact_id,
                    "type": enum(ACTIVITY_TYPES, "Kind of activity."),
                    "summary": string("What happened, in a sentence or two."),
                    "deal_id": deal_id,
                    "occurred_at": string("When it happened (default now).", format="date-time"),
                    "duration_minutes": integer("Length of a call or meeting.", minimum=1),
                },
                ["contact_id", "type", "summary"],
            ),
            handler=b.log_activity,
            domain=DOMAIN,
            group="activities",
            keywords=("record call", "meeting notes", "touchpoint"),
            annotations=CREATE,
        ),
        Tool(
            name="crm_list_activities",
            description=(
                "List logged activities, newest first, for a contact or of one type. Use it to "
                "see the history with a customer."
            ),
            parameters=obj(
                {
                    "contact_id": contact_id,
                    "type": enum(ACTIVITY_TYPES, "Only this kind."),
                    "limit": page(),
                }
            ),
            handler=b.list_activities,
            domain=DOMAIN,
            group="activities",
            keywords=("history", "timeline"),
            annotations=READ,
        ),
        Tool(
            name="crm_create_task",
            description=(
                "Create a follow-up task for a sales rep, optionally about a contact. Use it when"
                " someone must follow up later."
            ),
            parameters=obj(
                {
                    "title": string("What to do."),
                    "due_date": string("Due date.", format="date"),
                    "contact_id": contact_id,
                    "priority": enum(["low", "normal", "high"], "Priority.", default="normal"),
                    "assignee": string(
                        "Email of the rep (default: the contact owner).", format="email"
                    ),
                },
                ["title", "due_date"],
            ),
            handler=b.create_task,
            domain=DOMAIN,
            group="activities",
            keywords=("todo", "reminder", "follow up"),
            annotations=CREATE,
        ),
    ]
