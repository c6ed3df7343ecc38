"""Email tools: messages, drafts, labels and mailbox settings."""

from __future__ import annotations

import asyncio
import base64
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
    iso,
    matches,
    obj,
    page,
    rng,
    string,
)

__all__ = ["DOMAIN", "build_tools"]

DOMAIN = "email"

ME = "alex@example.com"
_SUBJECTS = [
    ("Invoice INV-{n} is due", "Hi, a friendly reminder that invoice INV-{n} is due on Friday."),
    ("Re: Q2 planning", "Thanks, I added my notes to the planning doc. Can we meet Tuesday?"),
    ("Your flight itinerary", "Booking ref K{n}. Departure 08:15 BER -> LIS, seat 14C."),
    ("Contract draft v{n}", "Attached is the revised contract. Changes are in section 4."),
    ("Build failed on main", "Pipeline #{n} failed at the integration-test stage."),
    ("Lunch on Thursday?", "Are you free for lunch on Thursday around 12:30?"),
    ("Welcome to the team!", "We are thrilled to have you. Your onboarding starts Monday."),
]
READ_MARKS = ToolAnnotations(read_only=False, destructive=False, idempotent=True, open_world=False)
"""Reading an email marks it read: not strictly read-only, never destructive."""
FOLDERS = ["inbox", "sent", "archive", "spam", "trash"]


def _address(pattern: str | None = None) -> dict[str, Any]:
    return {"type": "string", "format": "email", "description": pattern or "Email address."}


class EmailBackend:
    """A mailbox with 300 messages across folders, drafts and labels."""

    def __init__(self) -> None:
        r = rng("email-seed")
        self.messages = Store("email", "msg", "email_search_emails")
        self.drafts = Store("draft", "drf", "email_list_drafts")
        self.labels = {"finance": "red", "travel": "blue", "important": "yellow"}
        self.filters: list[dict[str, Any]] = []
        self.auto_reply: dict[str, Any] | None = None
        self.drafts.add(
            {
                "to": ["omar.okafor@example.org"],
                "cc": [],
                "subject": "Proposal follow-up",
                "body": "Hi Omar, following up on the proposal we sent last week.",
                "updated_at": iso(days=-1),
            }
        )
        for n in range(300):
            subject, body = r.choice(_SUBJECTS)
            sender = f"{r.choice(FIRST_NAMES)}.{r.choice(LAST_NAMES)}@example.org".lower()
            self.messages.add(
                {
                    "thread_id": f"thr_{r.randint(1, 120):04d}",
                    "from": sender,
                    "to": [ME],
                    "subject": subject.format(n=1000 + n),
                    "body": body.format(n=1000 + n),
                    "received_at": iso(days=-n * 0.3),
                    "folder": r.choice(["inbox", "inbox", "inbox", "archive", "spam"]),
                    "unread": r.random() < 0.3,
                    "labels": r.sample(sorted(self.labels), r.randint(0, 1)),
                    "attachments": (
                        [
                            {
                                "id": f"att_{n + 1:04d}",
                                "filename": f"document-{n}.pdf",
                                "size": 48_213,
                            }
                        ]
                        if "Contract" in subject or "Invoice" in subject
                        else []
                    ),
                }
            )

    @staticmethod
    def _preview(m: dict[str, Any]) -> dict[str, Any]:
        keys = ("id", "thread_id", "from", "subject", "received_at", "unread", "labels")
        return {**{k: m[k] for k in keys}, "snippet": m["body"][:80]}

    # -- messages -------------------------------------------------------------------------

    def search_emails(
        self,
        query: str = "",
        sender: str | None = None,
        folder: str | None = None,
        label: str | None = None,
        unread_only: bool = False,
        has_attachment: bool | None = None,
        received_after: str | None = None,
        limit: int = 20,
    ) -> dict[str, Any]:
        def keep(m: dict[str, Any]) -> bool:
            return (
                matches(f"{m['subject']} {m['body']} {m['from']}", query)
                and (sender is None or sender.lower() in m["from"])
                and (folder is None or m["folder"] == folder)
                and (label is None or label in m["labels"])
                and (not unread_only or m["unread"])
                and (has_attachment is None or bool(m["attachments"]) == has_attachment)
                and (received_after is None or m["received_at"] >= received_after)
            )

        page_ = self.messages.select(keep, limit=limit, sort_key="received_at", descending=True)
        page_["items"] = [self._preview(m) for m in page_["items"]]
        return page_

    def list_inbox(self, unread_only: bool = False, limit: int = 20) -> dict[str, Any]:
        return self.search_emails(folder="inbox", unread_only=unread_only, limit=limit)

    def get_email(self, message_id: str, mark_as_read: bool = True) -> dict[str, Any]:
        message = self.messages.get(message_id)
        if mark_as_read:
            message["unread"] = False
        return message

    def get_thread(self, thread_id: str) -> dict[str, Any]:
        items = [m for m in self.messages.records.values() if m["thread_id"] == thread_id]
        if not items:
            raise KeyError(f"No thread {thread_id!r}; thread ids come with each email.")
        return {"thread_id": thread_id, "messages": sorted(items, key=lambda m: m["received_at"])}

    async def send_email(
        self,
        to: list[str],
        subject: str,
        body: str,
        cc: list[str] | None = None,
        bcc: list[str] | None = None,
        body_format: str = "text",
        attachments: list[dict[str, Any]] | None = None,
        importance: str = "normal",
    ) -> dict[str, Any]:
        await asyncio.sleep(0)  # a real client would talk to an SMTP relay here
        return self._deliver(to, subject, body, cc, bcc, body_format, attachments, importance)

    def _deliver(
        self,
        to: list[str],
        subject: str,
        body: str,
        cc: list[str] | None = None,
        bcc: list[str] | None = None,
        body_format: str = "text",
        attachments: list[dict[str, Any]] | None = None,
        importance: str = "normal",
        thread_id: str | None = None,
    ) -> dict[str, Any]:
        """Store a sent message (in its thread, for replies); return the send receipt."""
        message = self.messages.add(
            {
                "thread_id": thread_id or f"thr_{rng('thread', subject).randint(500, 999):04d}",
                "from": ME,
                "to": to,
                "cc": cc or [],
                "bcc": bcc or [],
                "subject": subject,
                "body": body,
                "body_format": body_format,
                "importance": importance,
                "received_at": iso(),
                "folder": "sent",
                "unread": False,
                "labels": [],
                "attachments": [{"filename": a["filename"]} for a in attachments or []],
            }
        )
        return {"sent": True, "id": message["id"], "thread_id": message["thread_id"]}

    async def reply_to_email(
        self, message_id: str, body: str, reply_all: bool = False
    ) -> dict[str, Any]:
        original = self.messages.get(message_id)
        to = [original["from"]] + ([*original.get("cc", [])] if reply_all else [])
        subject = original["subject"]
        subject = subject if subject.startswith("Re:") else f"Re: {subject}"
        await asyncio.sleep(0)
        return self._deliver(to, subject, body, thread_id=original["thread_id"])

    async def forward_email(
        self, message_id: str, to: list[str], comment: str = ""
    ) -> dict[str, Any]:
        original = self.messages.get(message_id)
        quoted = f"{comment}\n\n---------- Forwarded message ----------\n{original['body']}"
        return await self.send_email(to=to, subject=f"Fwd: {original['subject']}", body=quoted)

    def delete_email(self, message_ids: list[str], permanent: bool = False) -> dict[str, Any]:
        for message_id in message_ids:
            self.messages.get(message_id)
        for message_id in message_ids:
            if permanent:
                self.messages.delete(message_id)
            else:
                self.messages.records[message_id]["folder"] = "trash"
        return {"deleted": message_ids, "permanent": permanent}

    def archive_email(self, message_ids: list[str]) -> dict[str, Any]:
        for message_id in message_ids:
            self.messages.update(message_id, {"folder": "archive"})
        return {"archived": message_ids}

    def mark_as_read(self, message_ids: list[str], read: bool = True) -> dict[str, Any]:
        for message_id in message_ids:
            self.messages.get(message_id)["unread"] = not read
        return {"updated": message_ids, "read": read}

    def get_attachment(self, message_id: str, attachment_id: str) -> dict[str, Any]:
        message = self.messages.get(message_id)
        found = [a for a in message["attachments"] if a.get("id") == attachment_id]
        if not found:
            ids = [a.get("id") for a in message["attachments"]] or "none"
            raise KeyError(f"Email {message_id} has no attachment {attachment_id!r}; ids: {ids}.")
        payload = rng("attachment", attachment_id).randbytes(6_000)
        return {
            **found[0],
            "mime_type": "application/pdf",
            "content_base64": base64.b64encode(payload).decode(),
        }

    # -- drafts ---------------------------------------------------------------------------

    def create_draft(
        self, to: list[str], subject: str, body: str, cc: list[str] | None = None
    ) -> dict[str, Any]:
        draft = {"to": to, "cc": cc or [], "subject": subject, "body": body}
        return self.drafts.add({**draft, "updated_at": iso()})

    def list_drafts(self, limit: int = 20) -> dict[str, Any]:
        return self.drafts.select(limit=limit)

    async def send_draft(self, draft_id: str) -> dict[str, Any]:
        draft = self.drafts.delete(draft_id)
        keys = ("to", "subject", "body", "cc")
        return await self.send_email(**{k: draft[k] for k in keys})

    # -- labels and settings --------------------------------------------------------------

    def list_labels(self) -> dict[str, Any]:
        counts = {name: 0 for name in self.labels}
        for m in self.messages.records.values():
            for label in m["labels"]:
                counts[label] = counts.get(label, 0) + 1
        labels = [{"name": n, "color": c, "messages": counts[n]} for n, c in self.labels.items()]
        return {"labels": labels}

    def create_label(self, name: str, color: str = "gray") -> dict[str, Any]:
        if name in self.labels:
            raise ValueError(f"Label {name!r} exists. Labels: {', '.join(self.labels)}.")
        self.labels[name] = color
        return {"name": name, "color": color}

    def apply_label(
        self, message_ids: list[str], label: str, remove: bool = False
    ) -> dict[str, Any]:
        if label not in self.labels:
            raise KeyError(f"No label {label!r}. Labels: {', '.join(self.labels)}.")
        for message_id in message_ids:
            labels = self.messages.get(message_id)["labels"]
            if remove and label in labels:
                labels.remove(label)
            elif not remove and label not in labels:
                labels.append(label)
        return {"label": label, "removed" if remove else "applied": message_ids}

    def create_filter(self, criteria: dict[str, Any], actions: dict[str, Any]) -> dict[str, Any]:
        if not criteria:
            raise ValueError("criteria needs at least one of from, subject_contains, has_words.")
        rule = {"id": f"flt_{len(self.filters) + 1:04d}", "criteria": criteria, "actions": actions}
        self.filters.append(rule)
        return rule

    def set_auto_reply(
        self,
        enabled: bool,
        message: str | None = None,
        start_date: str | None = None,
        end_date: str | None = None,
        only_contacts: bool = False,
    ) -> dict[str, Any]:
        if enabled and not message:
            raise ValueError("message is required when enabling the auto-reply.")
        self.auto_reply = {"enabled": enabled, "message": message, "start_date": start_date}
        self.auto_reply.update(end_date=end_date, only_contacts=only_contacts)
        return self.auto_reply


def build_tools() -> list[Tool]:
    """The email tools, bound to a fresh :class:`EmailBackend`."""
    b = EmailBackend()
    message_id = string("Email id, e.g. 'msg_0001' (from email_search_emails).")
    message_ids = array(message_id, "One or more email ids.", minItems=1, maxItems=100)
    recipients = array(_address(), "Recipients.", minItems=1)
    attachment = obj(
        {
            "filename": string("File name shown to the recipient."),
            "path": string("Drive path of the file to attach, e.g. '/reports/q1-sales.csv'."),
        },
        ["filename", "path"],
    )
    return [
        Tool(
            name="email_search_emails",
            description=(
                "Search the mailbox by words, sender, folder, label, date, read state or "
                "attachments. Returns previews; use email_get_email for a full message. Use it "
                "when looking for a message by topic or sender."
            ),
            parameters=obj(
                {
                    "query": string("Words in subject, body or sender.", default=""),
                    "sender": string("Part of the sender's address."),
                    "folder": enum(FOLDERS, "Only this folder."),
                    "label": string("Only emails with this label."),
                    "unread_only": boolean("Only unread emails.", False),
                    "has_attachment": boolean("With (true) or without (false) attachments."),
                    "received_after": string("Only newer emails.", format="date-time"),
                    "limit": page(),
                }
            ),
            handler=b.search_emails,
            domain=DOMAIN,
            group="messages",
            keywords=("find mail", "inbox", "messages", "gmail", "outlook"),
            annotations=READ,
            input_examples=({"query": "invoice", "unread_only": True, "limit": 10},),
        ),
        Tool(
            name="email_list_inbox",
            description="List the newest emails in the inbox, optionally only unread ones.",
            parameters=obj({"unread_only": boolean("Only unread.", False), "limit": page()}),
            handler=b.list_inbox,
            domain=DOMAIN,
            group="messages",
            keywords=("check mail", "new messages"),
            annotations=READ,
        ),
        Tool(
            name="email_get_email",
            description=(
                "Read one email in full: headers, body and attachment list. Use it when you need "
                "a message's full text."
            ),
            parameters=obj(
                {"message_id": message_id, "mark_as_read": boolean("Mark it read.", True)},
                ["message_id"],
            ),
            handler=b.get_email,
            domain=DOMAIN,
            group="messages",
            keywords=("open", "read message"),
            annotations=READ_MARKS,
        ),
        Tool(
            name="email_get_thread",
            description=(
                "Read a whole conversation (every email of a thread), oldest first. Use it when "
                "you need the context of a conversation."
            ),
            parameters=obj({"thread_id": string("Thread id, e.g. 'thr_0042'.")}, ["thread_id"]),
            handler=b.get_thread,
            domain=DOMAIN,
            group="messages",
            keywords=("conversation",),
            annotations=READ,
        ),
        Tool(
            name="email_send_email",
            description=(
                "Send an email now to one or more recipients, with optional cc, bcc, HTML body "
                "and file attachments from the drive. Use it when the user wants a message sent "
                "now."
            ),
            parameters=obj(
                {
                    "to": recipients,
                    "subject": string("Subject line.", maxLength=200),
                    "body": string("Message body."),
                    "cc": array(_address(), "Carbon-copy recipients."),
                    "bcc": array(_address(), "Blind-copy recipients."),
                    "body_format": enum(["text", "html"], "Body format.", default="text"),
                    "attachments": array(attachment, "Files to attach.", maxItems=10),
                    "importance": enum(["low", "normal", "high"], "Flag.", default="normal"),
                },
                ["to", "subject", "body"],
            ),
            handler=b.send_email,
            domain=DOMAIN,
            group="messages",
            keywords=("mail", "write", "message", "notify", "email someone", "team"),
            annotations=SEND,
            defer_loading=False,
            input_examples=(
                {
                    "to": ["maya@example.com"],
                    "subject": "Itinerary for Lisbon",
                    "body": "Hi Maya, the itinerary is attached.",
                    "attachments": [{"filename": "itinerary.pdf", "path": "/notes/todo.txt"}],
                },
            ),
            usage_notes="Sending cannot be undone. When the user asked for a draft or wants to "
            "review the text, use email_create_draft instead.",
        ),
        Tool(
            name="email_reply_to_email",
            description=(
                "Reply to an email (or to everyone on it with reply_all). Use it to answer a "
                "message in the same thread."
            ),
            parameters=obj(
                {
                    "message_id": message_id,
                    "body": string("Reply text."),
                    "reply_all": boolean("Include everyone.", False),
                },
                ["message_id", "body"],
            ),
            handler=b.reply_to_email,
            domain=DOMAIN,
            group="messages",
            keywords=("respond", "answer"),
            annotations=SEND,
        ),
        Tool(
            name="email_forward_email",
            description=(
                "Forward an email to other people with an optional comment. Use it when others "
                "should see a message as it is."
            ),
            parameters=obj(
                {
                    "message_id": message_id,
                    "to": recipients,
                    "comment": string("Text above the forwarded message.", default=""),
                },
                ["message_id", "to"],
            ),
            handler=b.forward_email,
            domain=DOMAIN,
            group="messages",
            keywords=("fwd", "pass on"),
            annotations=SEND,
        ),
        Tool(
            name="email_delete_email",
            description=(
                "Delete emails: move them to trash, or erase them with permanent=true. Use it "
                "only when the user asks to delete messages."
            ),
            parameters=obj(
                {"message_ids": message_ids, "permanent": boolean("Skip the trash.", False)},
                ["message_ids"],
            ),
            handler=b.delete_email,
            domain=DOMAIN,
            group="messages",
            keywords=("trash", "remove"),
            annotations=DELETE,
        ),
        Tool(
            name="email_archive_email",
            description=(
                "Archive emails (remove them from the inbox, keep them searchable). Use it to "
                "clean up the inbox without deleting."
            ),
            parameters=obj({"message_ids": message_ids}, ["message_ids"]),
            handler=b.archive_email,
            domain=DOMAIN,
            group="messages",
            keywords=("clean inbox", "inbox zero", "old emails", "tidy"),
            annotations=UPDATE,
        ),
        Tool(
            name="email_mark_as_read",
            description=(
                "Mark emails as read, or as unread with read=false. Use it to change read state "
                "without opening messages."
            ),
            parameters=obj(
                {"message_ids": message_ids, "read": boolean("Read (true) or unread.", True)},
                ["message_ids"],
            ),
            handler=b.mark_as_read,
            domain=DOMAIN,
            group="messages",
            keywords=("unread", "seen"),
            annotations=UPDATE,
        ),
        Tool(
            name="email_get_attachment",
            description=(
                "Download an email attachment as base64. Use it when you need a file attached to "
                "an email."
            ),
            parameters=obj(
                {
                    "message_id": message_id,
                    "attachment_id": string("Attachment id from email_get_email."),
                },
                ["message_id", "attachment_id"],
            ),
            handler=b.get_attachment,
            domain=DOMAIN,
            group="messages",
            keywords=("download file", "pdf"),
            input_examples=({"message_id": "msg_0002", "attachment_id": "att_0002"},),
            annotations=READ,
        ),
        Tool(
            name="email_create_draft",
            description="Save an email as a draft for the user to review before sending.",
            parameters=obj(
                {
                    "to": recipients,
                    "subject": string("Subject line."),
                    "body": string("Message body."),
                    "cc": array(_address(), "Carbon-copy recipients."),
                },
                ["to", "subject", "body"],
            ),
            handler=b.create_draft,
            domain=DOMAIN,
            group="drafts",
            keywords=("compose", "prepare"),
            annotations=CREATE,
        ),
        Tool(
            name="email_list_drafts",
            description=(
                "List saved email drafts that have not been sent yet. Use it to find a draft to "
                "review or send."
            ),
            parameters=obj({"limit": page()}),
            handler=b.list_drafts,
            domain=DOMAIN,
            group="drafts",
            keywords=("unsent", "drafts folder"),
            annotations=READ,
        ),
        Tool(
            name="email_send_draft",
            description=(
                "Send a saved email draft as it is. Use it after the user approved a draft."
            ),
            parameters=obj({"draft_id": string("Draft id, e.g. 'drf_0001'.")}, ["draft_id"]),
            handler=b.send_draft,
            domain=DOMAIN,
            group="drafts",
            keywords=("send prepared email",),
            annotations=SEND,
        ),
        Tool(
            name="email_list_labels",
            description=(
                "List mailbox labels (folders/tags) with their message counts. Use it before "
                "applying a label, to see which exist."
            ),
            parameters=obj({}),
            handler=b.list_labels,
            domain=DOMAIN,
            group="labels",
            keywords=("tags", "categories"),
            annotations=READ,
        ),
        Tool(
            name="email_create_label",
            description=(
                "Create a new label to organise emails. Use it when no existing label fits."
            ),
            parameters=obj(
                {
                    "name": string("Label name.", minLength=1, maxLength=40),
                    "color": enum(
                        ["gray", "red", "blue", "green", "yellow"], "Colour.", default="gray"
                    ),
                },
                ["name"],
            ),
            handler=b.create_label,
            domain=DOMAIN,
            group="labels",
            keywords=("new folder", "tag"),
            annotations=CREATE,
        ),
        Tool(
            name="email_apply_label",
            description=(
                "Add a label to emails, or remove it with remove=true. Use it to organise messages."
            ),
            parameters=obj(
                {
                    "message_ids": message_ids,
                    "label": string("Label name (from email_list_labels), e.g. 'finance'."),
                    "remove": boolean("Remove instead of add.", False),
                },
                ["message_ids", "label"],
            ),
            handler=b.apply_label,
            domain=DOMAIN,
            group="labels",
            keywords=("tag", "categorize"),
            annotations=UPDATE,
        ),
        Tool(
            name="email_create_filter",
            description=(
                "Create a rule that automatically labels, archives, forwards or deletes incoming "
                "emails that match criteria. Use it when the same kind of email should always be "
                "handled the same way."
            ),
            parameters=obj(
                {
                    "criteria": obj(
                        {
                            "from": _address("Sender address."),
                            "subject_contains": string("Text in the subject."),
                            "has_words": string("Words anywhere in the email."),
                        },
                        description="What incoming emails to match (at least one key).",
                    ),
                    "actions": obj(
                        {
                            "add_label": string("Label to apply."),
                            "archive": boolean("Skip the inbox.", False),
                            "mark_read": boolean("Mark as read.", False),
                            "forward_to": _address("Forward matches here."),
                            "delete": boolean("Move matches to trash.", False),
                        },
                        description="What to do with them.",
                    ),
                },
                ["criteria", "actions"],
            ),
            handler=b.create_filter,
            domain=DOMAIN,
            group="settings",
            keywords=("rule", "automation", "auto label"),
            annotations=CREATE,
            input_examples=(
                {
                    "criteria": {"from": "billing@vendor.example.com"},
                    "actions": {"add_label": "finance", "archive": True},
                },
            ),
        ),
        Tool(
            name="email_set_auto_reply",
            description=(
                "Turn the vacation auto-reply on or off, with a message and dates. Use it when "
                "the user is away and senders should be told."
            ),
            parameters=obj(
                {
                    "enabled": boolean("On or off."),
                    "message": string("The automatic reply."),
                    "start_date": string("First day.", format="date"),
                    "end_date": string("Last day.", format="date"),
                    "only_contacts": boolean("Reply only to known contacts.", False),
                },
                ["enabled"],
            ),
            handler=b.set_auto_reply,
            domain=DOMAIN,
            group="settings",
            keywords=("out of office", "vacation responder", "away"),
            annotations=UPDATE,
        ),
    ]
