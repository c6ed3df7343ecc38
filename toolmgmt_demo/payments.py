"""Payment tools: charges and refunds, customers, invoices and subscriptions.

Amounts are integers in the currency's minor unit (cents), as payment APIs use them.
"""

from __future__ import annotations

from typing import Any

from toolmgmt_core import Tool, ToolAnnotations
from toolmgmt_demo._common import (
    CREATE,
    DELETE,
    FIRST_NAMES,
    LAST_NAMES,
    READ,
    SEND,
    UPDATE,
    Store,
    array,
    boolean,
    enum,
    integer,
    iso,
    obj,
    page,
    rng,
    string,
)

__all__ = ["DOMAIN", "build_tools"]

DOMAIN = "payments"

CURRENCIES = ["usd", "eur", "gbp", "jpy"]
PLANS = {"starter": 900, "team": 4900, "business": 19900, "enterprise": 99900}
REFUND_REASONS = ["requested_by_customer", "duplicate", "fraudulent", "product_not_delivered"]
CHARGE_ANNOTATIONS = ToolAnnotations(
    read_only=False, destructive=False, idempotent=False, open_world=True
)
"""Charging a card moves real money through the card network."""


class PaymentsBackend:
    """A payment account with 80 customers, 250 charges, invoices and subscriptions."""

    def __init__(self) -> None:
        r = rng("payments-seed")
        self.customers = Store("customer", "cus", "payments_list_customers")
        self.charges = Store("charge", "ch", "payments_list_charges")
        self.refunds = Store("refund", "re", "payments_list_refunds")
        self.invoices = Store("invoice", "in", "payments_list_invoices")
        self.subscriptions = Store("subscription", "sub", "payments_list_subscriptions")
        for _ in range(80):
            first, last = r.choice(FIRST_NAMES), r.choice(LAST_NAMES)
            self.customers.add(
                {
                    "name": f"{first} {last}",
                    "email": f"{first}.{last}@example.net".lower(),
                    "currency": r.choice(["usd", "usd", "eur", "gbp"]),
                    "payment_methods": [
                        {
                            "id": f"pm_{r.randint(1000, 9999)}",
                            "brand": r.choice(["visa", "mc"]),
                            "last4": f"{r.randint(0, 9999):04d}",
                        }
                    ],
                    "created_at": iso(days=-r.randint(10, 800)),
                }
            )
        customer_ids = list(self.customers.records)
        for n in range(250):
            customer = self.customers.records[r.choice(customer_ids)]
            amount = r.choice([900, 4900, 19900, 2500, 12000, 75000])
            self.charges.add(
                {
                    "customer_id": customer["id"],
                    "amount": amount,
                    "currency": customer["currency"],
                    "status": r.choice(["succeeded"] * 8 + ["failed", "pending"]),
                    "captured": n % 25 != 0,
                    "amount_refunded": 0,
                    "description": r.choice(["Team plan", "Business plan", "Consulting", "Add-on"]),
                    "created_at": iso(days=-n * 0.7),
                }
            )
        for n, status in enumerate(["draft", "open", "paid", "open", "void"]):
            lines = [{"description": "Team plan (10 seats)", "unit_amount": 4900, "quantity": 10}]
            self.invoices.add(
                {
                    "customer_id": customer_ids[n],
                    "currency": "usd",
                    "lines": [{**line, "amount": 49000} for line in lines],
                    "total": 49000,
                    "status": status,
                    "memo": None,
                    "due_date": iso(days=30 - 20 * n)[:10],
                    "created_at": iso(days=-10 * n),
                }
            )
        for customer_id in customer_ids[:50]:
            plan = r.choice(list(PLANS))
            self.subscriptions.add(
                {
                    "customer_id": customer_id,
                    "plan": plan,
                    "quantity": r.randint(1, 20),
                    "status": r.choice(["active", "active", "trialing", "past_due"]),
                    "current_period_end": iso(days=r.randint(1, 30))[:10],
                }
            )

    # -- charges --------------------------------------------------------------------------

    def create_charge(
        self,
        customer_id: str,
        amount: int,
        currency: str = "usd",
        description: str | None = None,
        payment_method_id: str | None = None,
        capture: bool = True,
        idempotency_key: str | None = None,
        metadata: dict[str, str] | None = None,
    ) -> dict[str, Any]:
        customer = self.customers.get(customer_id)
        if idempotency_key:
            for existing in self.charges.records.values():
                if existing.get("idempotency_key") == idempotency_key:
                    return existing
        methods = {m["id"] for m in customer["payment_methods"]}
        if payment_method_id and payment_method_id not in methods:
            raise ValueError(
                f"Payment method {payment_method_id!r} is not attached to {customer_id}; "
                f"attached: {', '.join(sorted(methods)) or 'none'}."
            )
        declined = rng("decline", customer_id, amount).random() < 0.05
        charge: dict[str, Any] = {
            "customer_id": customer_id,
            "amount": amount,
            "currency": currency,
        }
        charge.update(status="failed" if declined else "succeeded", captured=capture)
        charge.update(amount_refunded=0, description=description, metadata=metadata or {})
        charge.update(idempotency_key=idempotency_key, created_at=iso())
        if declined:
            charge["failure_code"] = "card_declined"
        return self.charges.add(charge)

    def get_charge(self, charge_id: str) -> dict[str, Any]:
        return self.charges.get(charge_id)

    def list_charges(
        self,
        customer_id: str | None = None,
        status: str | None = None,
        created_after: str | None = None,
        min_amount: int | None = None,
        limit: int = 20,
    ) -> dict[str, Any]:
        def keep(c: dict[str, Any]) -> bool:
            return (
                (customer_id is None or c["customer_id"] == customer_id)
                and (status is None or c["status"] == status)
                and (created_after is None or c["created_at"] >= created_after)
                and (min_amount is None or c["amount"] >= min_amount)
            )

        return self.charges.select(keep, limit=limit, sort_key="created_at", descending=True)

    def capture_charge(self, charge_id: str, amount: int | None = None) -> dict[str, Any]:
        charge = self.charges.get(charge_id)
        if charge["captured"]:
            raise ValueError(f"Charge {charge_id} is already captured.")
        charge.update(captured=True, amount=amount or charge["amount"])
        return charge

    def refund_charge(
        self,
        charge_id: str,
        amount: int | None = None,
        reason: str = "requested_by_customer",
        note: str | None = None,
    ) -> dict[str, Any]:
        charge = self.charges.get(charge_id)
        if charge["status"] != "succeeded":
            raise ValueError(
                f"Charge {charge_id} is {charge['status']}; only succeeded charges can be refunded."
            )
        remaining = charge["amount"] - charge["amount_refunded"]
        amount = remaining if amount is None else amount
        if amount > remaining:
            raise ValueError(
                f"Cannot refund {amount} on {charge_id}: only {remaining} "
                f"{charge['currency'].upper()} minor units remain refundable."
            )
        charge["amount_refunded"] += amount
        refund: dict[str, Any] = {
            "charge_id": charge_id,
            "amount": amount,
            "currency": charge["currency"],
        }
        refund.update(reason=reason, note=note, status="succeeded", created_at=iso())
        return self.refunds.add(refund)

    def list_refunds(self, charge_id: str | None = None, limit: int = 20) -> dict[str, Any]:
        return self.refunds.select(
            lambda f: charge_id is None or f["charge_id"] == charge_id, limit=limit
        )

    def get_balance(self, currency: str | None = None) -> dict[str, Any]:
        totals: dict[str, dict[str, int]] = {}
        for c in self.charges.records.values():
            if c["status"] != "succeeded" or (currency and c["currency"] != currency):
                continue
            bucket = totals.setdefault(c["currency"], {"available": 0, "pending": 0})
            net = c["amount"] - c["amount_refunded"] - round(c["amount"] * 0.029 + 30)
            bucket["available" if c["created_at"] < iso(days=-2) else "pending"] += net
        return {"balance": [{"currency": k, **v} for k, v in sorted(totals.items())]}

    # -- customers ------------------------------------------------------------------------

    def create_customer(
        self,
        email: str,
        name: str | None = None,
        currency: str = "usd",
        address: dict[str, Any] | None = None,
        tax_ids: list[dict[str, str]] | None = None,
    ) -> dict[str, Any]:
        customer: dict[str, Any] = {
            "email": email,
            "name": name,
            "currency": currency,
            "address": address,
        }
        customer.update(tax_ids=tax_ids or [], payment_methods=[], created_at=iso())
        return self.customers.add(customer)

    def get_customer(self, customer_id: str) -> dict[str, Any]:
        customer = dict(self.customers.get(customer_id))
        customer["lifetime_value"] = sum(
            c["amount"] - c["amount_refunded"]
            for c in self.charges.records.values()
            if c["customer_id"] == customer_id and c["status"] == "succeeded"
        )
        return customer

    def list_customers(self, email: str | None = None, limit: int = 20) -> dict[str, Any]:
        return self.customers.select(
            lambda c: email is None or email.lower() in c["email"], limit=limit
        )

    def update_customer(
        self,
        customer_id: str,
        email: str | None = None,
        name: str | None = None,
        default_payment_method_id: str | None = None,
    ) -> dict[str, Any]:
        changes = {"email": email, "name": name}
        changes["default_payment_method_id"] = default_payment_method_id
        return self.customers.update(customer_id, changes)

    def delete_customer(self, customer_id: str) -> dict[str, Any]:
        self.customers.delete(customer_id)
        cancelled = 0
        for sub in self.subscriptions.records.values():
            if sub["customer_id"] == customer_id and sub["status"] != "canceled":
                sub["status"] = "canceled"
                cancelled += 1
        return {"deleted": customer_id, "subscriptions_canceled": cancelled}

    def attach_payment_method(
        self, customer_id: str, card: dict[str, Any], make_default: bool = False
    ) -> dict[str, Any]:
        customer = self.customers.get(customer_id)
        method: dict[str, Any] = {"id": f"pm_{rng('pm', customer_id, card).randint(10000, 99999)}"}
        method.update(brand=card.get("brand", "visa"), last4=str(card["number"])[-4:])
        customer["payment_methods"].append(method)
        if make_default:
            customer["default_payment_method_id"] = method["id"]
        return method

    # -- invoices -------------------------------------------------------------------------

    def create_invoice(
        self,
        customer_id: str,
        items: list[dict[str, Any]],
        due_days: int = 30,
        memo: str | None = None,
        auto_send: bool = False,
    ) -> dict[str, Any]:
        customer = self.customers.get(customer_id)
        lines = [
            {**item, "amount": item["unit_amount"] * item.get("quantity", 1)} for item in items
        ]
        total = sum(line["amount"] for line in lines)
        invoice: dict[str, Any] = {
            "customer_id": customer_id,
            "currency": customer["currency"],
            "lines": lines,
        }
        invoice.update(total=total, status="open" if auto_send else "draft", memo=memo)
        invoice.update(due_date=iso(days=due_days)[:10], created_at=iso())
        return self.invoices.add(invoice)

    def get_invoice(self, invoice_id: str) -> dict[str, Any]:
        return self.invoices.get(invoice_id)

    def list_invoices(
        self, customer_id: str | None = None, status: str | None = None, limit: int = 20
    ) -> dict[str, Any]:
        return self.invoices.select(
            lambda i: (
                (customer_id is None or i["customer_id"] == customer_id)
                and (status is None or i["status"] == status)
            ),
            limit=limit,
        )

    def send_invoice(self, invoice_id: str, message: str | None = None) -> dict[str, Any]:
        invoice = self.invoices.get(invoice_id)
        if invoice["status"] == "void":
            raise ValueError(f"Invoice {invoice_id} is void and cannot be sent.")
        invoice["status"] = "open"
        email = self.customers.get(invoice["customer_id"])["email"]
        return {
            "invoice_id": invoice_id,
            "sent_to": email,
            "message": message,
            "hosted_url": f"https://pay.example.com/i/{invoice_id}",
        }

    def void_invoice(self, invoice_id: str) -> dict[str, Any]:
        invoice = self.invoices.get(invoice_id)
        if invoice["status"] == "paid":
            raise ValueError(f"Invoice {invoice_id} is paid; refund the charge instead.")
        invoice["status"] = "void"
        return {"invoice_id": invoice_id, "status": "void"}

    # -- subscriptions --------------------------------------------------------------------

    def create_subscription(
        self,
        customer_id: str,
        plan: str,
        quantity: int = 1,
        trial_days: int = 0,
        coupon: str | None = None,
    ) -> dict[str, Any]:
        self.customers.get(customer_id)
        sub: dict[str, Any] = {
            "customer_id": customer_id,
            "plan": plan,
            "quantity": quantity,
            "coupon": coupon,
        }
        sub.update(status="trialing" if trial_days else "active")
        sub.update(current_period_end=iso(days=trial_days or 30)[:10])
        sub["monthly_amount"] = PLANS[plan] * quantity
        return self.subscriptions.add(sub)

    def list_subscriptions(
        self,
        customer_id: str | None = None,
        status: str | None = None,
        plan: str | None = None,
        limit: int = 20,
    ) -> dict[str, Any]:
        return self.subscriptions.select(
            lambda s: (
                (customer_id is None or s["customer_id"] == customer_id)
                and (status is None or s["status"] == status)
                and (plan is None or s["plan"] == plan)
            ),
            limit=limit,
        )

    def update_subscription(
        self,
        subscription_id: str,
        plan: str | None = None,
        quantity: int | None = None,
        proration: str = "create_prorations",
    ) -> dict[str, Any]:
        sub = self.subscriptions.update(subscription_id, {"plan": plan, "quantity": quantity})
        sub["monthly_amount"] = PLANS[sub["plan"]] * sub["quantity"]
        return {**sub, "proration": proration}

    def cancel_subscription(
        self, subscription_id: str, at_period_end: bool = True, reason: str | None = None
    ) -> dict[str, Any]:
        sub = self.subscriptions.get(subscription_id)
        sub["status"] = "active" if at_period_end else "canceled"
        sub["cancel_at_period_end"] = at_period_end
        sub["cancellation_reason"] = reason
        return sub


def build_tools() -> list[Tool]:
    """The payment tools, bound to a fresh :class:`PaymentsBackend`."""
    b = PaymentsBackend()
    customer_id = string("Customer id, e.g. 'cus_0001' (from payments_list_customers).")
    charge_id = string("Charge id, e.g. 'ch_0001' (from payments_list_charges).")
    invoice_id = string("Invoice id, e.g. 'in_0001'.")
    subscription_id = string("Subscription id, e.g. 'sub_0001'.")
    amount = integer("Amount in the currency's minor unit (cents): 1999 means 19.99.", minimum=1)
    currency = enum(CURRENCIES, "Three-letter ISO currency code, lowercase.", default="usd")
    plan = enum(list(PLANS), "Price plan.")
    invoice_item = obj(
        {
            "description": string("What is billed."),
            "unit_amount": {**amount, "description": "Price per unit in minor units."},
            "quantity": integer("Units.", minimum=1, default=1),
        },
        ["description", "unit_amount"],
    )
    return [
        Tool(
            name="payments_create_charge",
            description=(
                "Charge a customer's saved card now. Use an idempotency_key so a retry never "
                "charges twice. Use it only when the user asks to take a payment now."
            ),
            parameters=obj(
                {
                    "customer_id": customer_id,
                    "amount": amount,
                    "currency": currency,
                    "description": string("Shown on the receipt."),
                    "payment_method_id": string("Card to charge (default: the customer's)."),
                    "capture": boolean("Capture now; false only authorises.", True),
                    "idempotency_key": string("Unique key per intended charge.", maxLength=255),
                    "metadata": {
                        "type": "object",
                        "additionalProperties": {"type": "string"},
                        "description": "Your own key-value pairs.",
                    },
                },
                ["customer_id", "amount"],
            ),
            handler=b.create_charge,
            domain=DOMAIN,
            group="charges",
            keywords=("bill", "take payment", "card", "stripe"),
            annotations=CHARGE_ANNOTATIONS,
            input_examples=(
                {
                    "customer_id": "cus_0001",
                    "amount": 4900,
                    "currency": "usd",
                    "description": "Team plan, March",
                    "idempotency_key": "order-8812",
                },
            ),
        ),
        Tool(
            name="payments_get_charge",
            description=(
                "Get a charge: amount, status, refunded amount, customer. Use it before refunding"
                " or to answer a billing question."
            ),
            parameters=obj({"charge_id": charge_id}, ["charge_id"]),
            handler=b.get_charge,
            domain=DOMAIN,
            group="charges",
            keywords=("payment details", "transaction"),
            annotations=READ,
        ),
        Tool(
            name="payments_list_charges",
            description=(
                "List charges (payments received), newest first, filtered by customer, status, "
                "date or amount. Use it to find a charge id or review a customer's payments."
            ),
            parameters=obj(
                {
                    "customer_id": customer_id,
                    "status": enum(["succeeded", "failed", "pending"], "Only this status."),
                    "created_after": string("Only newer charges.", format="date-time"),
                    "min_amount": integer("Only charges at least this large.", minimum=0),
                    "limit": page(),
                }
            ),
            handler=b.list_charges,
            domain=DOMAIN,
            group="charges",
            keywords=("transactions", "payments", "sales"),
            annotations=READ,
        ),
        Tool(
            name="payments_capture_charge",
            description=(
                "Capture a previously authorised (uncaptured) charge. Use it when an authorised "
                "order ships."
            ),
            parameters=obj(
                {"charge_id": charge_id, "amount": {**amount, "description": "Capture less."}},
                ["charge_id"],
            ),
            handler=b.capture_charge,
            domain=DOMAIN,
            group="charges",
            input_examples=({"charge_id": "ch_0001"},),
            keywords=("authorization", "capture payment"),
            annotations=CHARGE_ANNOTATIONS,
        ),
        Tool(
            name="payments_refund_charge",
            description=(
                "Refund a customer's payment (a charge), fully or partly. The money goes back to "
                "the customer's card. Use it when a customer should get money back."
            ),
            parameters=obj(
                {
                    "charge_id": charge_id,
                    "amount": {**amount, "description": "Minor units to refund (default: all)."},
                    "reason": enum(REFUND_REASONS, "Why.", default="requested_by_customer"),
                    "note": string("Internal note."),
                },
                ["charge_id"],
            ),
            handler=b.refund_charge,
            domain=DOMAIN,
            group="charges",
            keywords=("money back", "reimburse", "return payment", "chargeback"),
            annotations=ToolAnnotations(
                read_only=False, destructive=True, idempotent=False, open_world=True
            ),
            usage_notes="Refunds cannot be reversed. Check the charge with payments_get_charge "
            "first; a partial refund needs amount in minor units (cents).",
            input_examples=({"charge_id": "ch_0002", "amount": 500, "reason": "duplicate"},),
        ),
        Tool(
            name="payments_list_refunds",
            description=(
                "List refunds, optionally of one charge. Use it to check whether a charge was "
                "already refunded."
            ),
            parameters=obj({"charge_id": charge_id, "limit": page()}),
            handler=b.list_refunds,
            domain=DOMAIN,
            group="charges",
            keywords=("money back", "refund history"),
            annotations=READ,
        ),
        Tool(
            name="payments_get_balance",
            description="Get the account balance (available and pending) per currency, after fees.",
            parameters=obj({"currency": enum(CURRENCIES, "Only this currency.")}),
            handler=b.get_balance,
            domain=DOMAIN,
            group="charges",
            keywords=("funds", "payout", "revenue"),
            annotations=READ,
        ),
        Tool(
            name="payments_create_customer",
            description=(
                "Create a billing customer (the payer of charges and invoices). Use it before "
                "charging or invoicing someone new."
            ),
            parameters=obj(
                {
                    "email": string("Billing email.", format="email"),
                    "name": string("Person or company name."),
                    "currency": currency,
                    "address": obj(
                        {
                            "line1": string("Street."),
                            "city": string("City."),
                            "postal_code": string("Postal code."),
                            "country": string("ISO country code.", pattern="^[A-Z]{2}$"),
                        },
                        ["line1", "country"],
                        description="Billing address.",
                    ),
                    "tax_ids": array(
                        obj(
                            {
                                "type": enum(["eu_vat", "us_ein", "gb_vat"], "Kind of tax id."),
                                "value": string("The id."),
                            },
                            ["type", "value"],
                        ),
                        "Tax ids for invoices.",
                    ),
                },
                ["email"],
            ),
            handler=b.create_customer,
            domain=DOMAIN,
            group="customers",
            keywords=("new payer", "billing account"),
            annotations=CREATE,
        ),
        Tool(
            name="payments_get_customer",
            description=(
                "Get a billing customer with saved cards and lifetime value. Use it when you need"
                " a payer's details."
            ),
            parameters=obj({"customer_id": customer_id}, ["customer_id"]),
            handler=b.get_customer,
            domain=DOMAIN,
            group="customers",
            keywords=("payer details", "saved cards"),
            annotations=READ,
        ),
        Tool(
            name="payments_list_customers",
            description=(
                "List billing customers, optionally by email. Use it to find a customer id."
            ),
            parameters=obj({"email": string("Part of the email."), "limit": page()}),
            handler=b.list_customers,
            domain=DOMAIN,
            group="customers",
            keywords=("payers", "find customer"),
            annotations=READ,
        ),
        Tool(
            name="payments_update_customer",
            description=(
                "Change a billing customer's email, name or default card. Use it when billing "
                "details change."
            ),
            parameters=obj(
                {
                    "customer_id": customer_id,
                    "email": string("New email.", format="email"),
                    "name": string("New name."),
                    "default_payment_method_id": string("Card to use by default."),
                },
                ["customer_id"],
            ),
            handler=b.update_customer,
            domain=DOMAIN,
            group="customers",
            keywords=("change billing email", "default card"),
            annotations=UPDATE,
        ),
        Tool(
            name="payments_delete_customer",
            description=(
                "Delete a billing customer and cancel all their subscriptions. Use it only on an "
                "explicit request."
            ),
            parameters=obj({"customer_id": customer_id}, ["customer_id"]),
            handler=b.delete_customer,
            domain=DOMAIN,
            group="customers",
            keywords=("remove payer", "gdpr"),
            annotations=DELETE,
        ),
        Tool(
            name="payments_attach_payment_method",
            description=(
                "Save a card on a customer for future charges. Use it when a customer gives a new"
                " card."
            ),
            parameters=obj(
                {
                    "customer_id": customer_id,
                    "card": obj(
                        {
                            "number": string(
                                "Test card number, e.g. '4242424242424242'.", pattern="^\\d{12,19}$"
                            ),
                            "exp_month": integer("Expiry month.", minimum=1, maximum=12),
                            "exp_year": integer("Expiry year.", minimum=2026),
                            "brand": enum(["visa", "mc", "amex"], "Card brand."),
                        },
                        ["number", "exp_month", "exp_year"],
                        description="The card to save.",
                    ),
                    "make_default": boolean("Use it by default.", False),
                },
                ["customer_id", "card"],
            ),
            handler=b.attach_payment_method,
            domain=DOMAIN,
            group="customers",
            keywords=("add card", "credit card"),
            annotations=CREATE,
        ),
        Tool(
            name="payments_create_invoice",
            description=(
                "Create an invoice with line items for a customer (draft unless auto_send)."
            ),
            parameters=obj(
                {
                    "customer_id": customer_id,
                    "items": array(invoice_item, "Line items.", minItems=1),
                    "due_days": integer("Days until due.", minimum=0, maximum=365, default=30),
                    "memo": string("Note printed on the invoice."),
                    "auto_send": boolean("Finalise and email it now.", False),
                },
                ["customer_id", "items"],
            ),
            handler=b.create_invoice,
            domain=DOMAIN,
            group="invoices",
            keywords=("bill", "billing", "quote"),
            annotations=CREATE,
            input_examples=(
                {
                    "customer_id": "cus_0002",
                    "items": [{"description": "Onboarding workshop", "unit_amount": 150000}],
                    "due_days": 14,
                },
            ),
        ),
        Tool(
            name="payments_get_invoice",
            description=(
                "Get an invoice with its lines, total, status and due date. Use it to answer "
                "questions about one invoice."
            ),
            parameters=obj({"invoice_id": invoice_id}, ["invoice_id"]),
            handler=b.get_invoice,
            domain=DOMAIN,
            group="invoices",
            keywords=("invoice details", "bill"),
            annotations=READ,
        ),
        Tool(
            name="payments_list_invoices",
            description=(
                "List invoices by customer or status (draft, open, paid, void). Use it to find "
                "unpaid or overdue invoices."
            ),
            parameters=obj(
                {
                    "customer_id": customer_id,
                    "status": enum(["draft", "open", "paid", "void"], "Only this status."),
                    "limit": page(),
                }
            ),
            handler=b.list_invoices,
            domain=DOMAIN,
            group="invoices",
            keywords=("unpaid", "overdue", "receivables"),
            annotations=READ,
        ),
        Tool(
            name="payments_send_invoice",
            description=(
                "Email an invoice to the customer with a payment link. Use it when a draft "
                "invoice is ready to go out."
            ),
            parameters=obj(
                {"invoice_id": invoice_id, "message": string("Note in the email.")},
                ["invoice_id"],
            ),
            handler=b.send_invoice,
            domain=DOMAIN,
            group="invoices",
            keywords=("email invoice", "payment link"),
            annotations=SEND,
        ),
        Tool(
            name="payments_void_invoice",
            description=(
                "Void an unpaid invoice so it can no longer be paid. Use it when an invoice was "
                "issued by mistake."
            ),
            parameters=obj({"invoice_id": invoice_id}, ["invoice_id"]),
            handler=b.void_invoice,
            domain=DOMAIN,
            group="invoices",
            keywords=("cancel invoice",),
            annotations=DELETE,
        ),
        Tool(
            name="payments_create_subscription",
            description=(
                "Start a recurring subscription to a plan for a customer, optionally a trial. Use"
                " it when a customer signs up for a plan."
            ),
            parameters=obj(
                {
                    "customer_id": customer_id,
                    "plan": plan,
                    "quantity": integer("Seats.", minimum=1, default=1),
                    "trial_days": integer("Free trial length.", minimum=0, maximum=90, default=0),
                    "coupon": string("Discount code."),
                },
                ["customer_id", "plan"],
            ),
            handler=b.create_subscription,
            domain=DOMAIN,
            group="subscriptions",
            keywords=("recurring", "plan", "signup"),
            annotations=CREATE,
        ),
        Tool(
            name="payments_list_subscriptions",
            description=(
                "List subscriptions by customer, status or plan. Use it to find a subscription id"
                " or review recurring revenue."
            ),
            parameters=obj(
                {
                    "customer_id": customer_id,
                    "status": enum(
                        ["active", "trialing", "past_due", "canceled"], "Only this status."
                    ),
                    "plan": plan,
                    "limit": page(),
                }
            ),
            handler=b.list_subscriptions,
            domain=DOMAIN,
            group="subscriptions",
            keywords=("recurring revenue", "mrr"),
            annotations=READ,
        ),
        Tool(
            name="payments_update_subscription",
            description=(
                "Change a subscription's plan or seat count (upgrade or downgrade). Use it when a"
                " customer changes plan or seats."
            ),
            parameters=obj(
                {
                    "subscription_id": subscription_id,
                    "plan": plan,
                    "quantity": integer("New seat count.", minimum=1),
                    "proration": enum(
                        ["create_prorations", "none", "always_invoice"],
                        "How to bill the change.",
                        default="create_prorations",
                    ),
                },
                ["subscription_id"],
            ),
            handler=b.update_subscription,
            domain=DOMAIN,
            group="subscriptions",
            keywords=("upgrade", "downgrade", "seats"),
            annotations=UPDATE,
        ),
        Tool(
            name="payments_cancel_subscription",
            description=(
                "Cancel a subscription now or at the end of the billing period. Use it when a "
                "customer wants to stop paying."
            ),
            parameters=obj(
                {
                    "subscription_id": subscription_id,
                    "at_period_end": boolean("Keep it until the period ends.", True),
                    "reason": string("Why the customer cancels."),
                },
                ["subscription_id"],
            ),
            handler=b.cancel_subscription,
            domain=DOMAIN,
            group="subscriptions",
            keywords=("churn", "stop billing", "unsubscribe"),
            annotations=DELETE,
        ),
    ]
