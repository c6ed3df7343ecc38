"""Calendar tools: events, availability, calendars and meeting rooms."""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta
from typing import Any

from toolmgmt_core import Tool
from toolmgmt_demo._common import (
    CREATE,
    DELETE,
    EPOCH,
    FIRST_NAMES,
    READ,
    SEND,
    UPDATE,
    RecordNotFoundError,
    Store,
    array,
    boolean,
    enum,
    integer,
    iso,
    matches,
    obj,
    page,
    rng,
    string,
)

__all__ = ["DOMAIN", "build_tools"]

DOMAIN = "calendar"

_TITLES = [
    "Weekly sync",
    "1:1 with manager",
    "Customer call: Globex",
    "Sprint planning",
    "Design review",
    "Lunch with investors",
    "Hiring panel",
    "Quarterly business review",
]
_ROOMS: list[dict[str, Any]] = [
    {"id": "room_atlas", "name": "Atlas", "capacity": 4, "floor": 2, "video": True},
    {"id": "room_borealis", "name": "Borealis", "capacity": 8, "floor": 2, "video": True},
    {"id": "room_cosmos", "name": "Cosmos", "capacity": 16, "floor": 3, "video": True},
    {"id": "room_dune", "name": "Dune", "capacity": 2, "floor": 1, "video": False},
]


def _parse(value: str) -> datetime:
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError as exc:
        raise ValueError(
            f"{value!r} is not an ISO 8601 date-time; use e.g. '2026-03-04T14:00:00Z'."
        ) from exc


class CalendarBackend:
    """Three calendars with two weeks of events around the demo's "now"."""

    def __init__(self) -> None:
        r = rng("calendar-seed")
        self.calendars = Store("calendar", "cal", "calendar_list_calendars")
        for name, color in (("Work", "blue"), ("Personal", "green"), ("Team holidays", "orange")):
            self.calendars.add({"name": name, "color": color, "timezone": "Europe/Berlin"})
        self.events = Store("event", "evt", "calendar_list_events or calendar_search_events")
        for day in range(-7, 14):
            for _ in range(r.randint(1, 4)):
                start = EPOCH + timedelta(days=day, hours=r.randint(0, 8))
                people = r.sample(FIRST_NAMES, r.randint(1, 5))
                self.events.add(
                    {
                        "calendar_id": r.choice(["cal_0001", "cal_0001", "cal_0002"]),
                        "title": r.choice(_TITLES),
                        "start": iso(start),
                        "end": iso(start, minutes=r.choice([30, 45, 60, 90])),
                        "attendees": [
                            {"email": f"{p.lower()}@example.com", "response": "accepted"}
                            for p in people
                        ],
                        "location": r.choice(["Atlas", "Zoom", "Cosmos", None]),
                        "status": "confirmed",
                    }
                )
        self.out_of_office: dict[str, Any] | None = None
        self.bookings: list[dict[str, Any]] = []

    def _busy(self, email: str | None = None) -> list[tuple[datetime, datetime]]:
        spans = []
        for event in self.events.records.values():
            emails = {a["email"] for a in event["attendees"]}
            if email is None or email in emails:
                spans.append((_parse(event["start"]), _parse(event["end"])))
        return sorted(spans)

    # -- events ---------------------------------------------------------------------------

    def list_events(
        self,
        start: str | None = None,
        end: str | None = None,
        calendar_id: str | None = None,
        limit: int = 50,
    ) -> dict[str, Any]:
        low = start or iso()
        high = end or iso(days=7)

        def keep(e: dict[str, Any]) -> bool:
            in_range = low <= e["start"] < high
            return in_range and (calendar_id is None or e["calendar_id"] == calendar_id)

        return self.events.select(keep, limit=limit, sort_key="start")

    def search_events(self, query: str, limit: int = 20) -> dict[str, Any]:
        def keep(e: dict[str, Any]) -> bool:
            people = " ".join(a["email"] for a in e["attendees"])
            return matches(f"{e['title']} {e.get('location') or ''} {people}", query)

        return self.events.select(keep, limit=limit, sort_key="start")

    def get_event(self, event_id: str) -> dict[str, Any]:
        return self.events.get(event_id)

    def create_event(
        self,
        title: str,
        start: str,
        end: str,
        attendees: list[str] | None = None,
        calendar_id: str = "cal_0001",
        location: str | None = None,
        description: str | None = None,
        recurrence: dict[str, Any] | None = None,
        conference: bool = False,
        send_invitations: bool = True,
    ) -> dict[str, Any]:
        self.calendars.get(calendar_id)
        if _parse(end) <= _parse(start):
            raise ValueError(f"end ({end}) must be after start ({start}).")
        event = {
            "calendar_id": calendar_id,
            "title": title,
            "start": start,
            "end": end,
            "attendees": [{"email": a, "response": "needs_action"} for a in attendees or []],
            "location": location,
            "description": description,
            "recurrence": recurrence,
            "status": "confirmed",
        }
        if conference:
            token = rng("meet", title, start).randint(100_000_000, 999_999_999)
            event["conference_url"] = f"https://meet.example.com/{token}"
        created = self.events.add(event)
        return {**created, "invitations_sent": bool(attendees) and send_invitations}

    def update_event(
        self,
        event_id: str,
        title: str | None = None,
        start: str | None = None,
        end: str | None = None,
        location: str | None = None,
        add_attendees: list[str] | None = None,
        notify_attendees: bool = True,
    ) -> dict[str, Any]:
        event = self.events.update(event_id, {"title": title, "start": start, "end": end})
        if location is not None:
            event["location"] = location
        for email in add_attendees or []:
            event["attendees"].append({"email": email, "response": "needs_action"})
        return {**event, "attendees_notified": notify_attendees}

    def delete_event(self, event_id: str, notify_attendees: bool = True) -> dict[str, Any]:
        event = self.events.delete(event_id)
        notified = len(event["attendees"]) if notify_attendees else 0
        return {"deleted": event_id, "title": event["title"], "cancellations_sent": notified}

    def respond_to_invitation(
        self, event_id: str, response: str, comment: str | None = None
    ) -> dict[str, Any]:
        event = self.events.get(event_id)
        event["my_response"] = response
        return {"event_id": event_id, "response": response, "comment": comment}

    def set_reminder(
        self, event_id: str, minutes_before: int = 10, method: str = "popup"
    ) -> dict[str, Any]:
        event = self.events.get(event_id)
        event.setdefault("reminders", []).append({"minutes": minutes_before, "method": method})
        return {"event_id": event_id, "reminders": event["reminders"]}

    # -- availability ---------------------------------------------------------------------

    async def find_free_slots(
        self,
        attendees: list[str],
        duration_minutes: int,
        window_start: str | None = None,
        window_end: str | None = None,
        working_hours_only: bool = True,
        max_results: int = 5,
    ) -> dict[str, Any]:
        await asyncio.sleep(0)  # a real backend would query each attendee's free/busy
        start = _parse(window_start) if window_start else EPOCH
        end = _parse(window_end) if window_end else EPOCH + timedelta(days=5)
        busy = [span for email in attendees for span in self._busy(email)]
        slots: list[dict[str, Any]] = []
        cursor = start
        step = timedelta(minutes=30)
        length = timedelta(minutes=duration_minutes)
        while cursor + length <= end and len(slots) < max_results:
            hours_ok = not working_hours_only or (
                cursor.weekday() < 5 and 8 <= cursor.hour and (cursor + length).hour <= 18
            )
            free = all(cursor + length <= b0 or cursor >= b1 for b0, b1 in busy)
            if hours_ok and free:
                slots.append({"start": iso(cursor), "end": iso(cursor + length)})
            cursor += step
        return {"attendees": attendees, "duration_minutes": duration_minutes, "slots": slots}

    def check_availability(self, emails: list[str], start: str, end: str) -> dict[str, Any]:
        low, high = _parse(start), _parse(end)
        result = {}
        for email in emails:
            clashes = [(b0, b1) for b0, b1 in self._busy(email) if b0 < high and b1 > low]
            result[email] = {
                "free": not clashes,
                "busy": [{"start": iso(b0), "end": iso(b1)} for b0, b1 in clashes],
            }
        return {"window": {"start": start, "end": end}, "availability": result}

    def set_out_of_office(
        self,
        start_date: str,
        end_date: str,
        decline_new_invitations: bool = True,
        message: str | None = None,
    ) -> dict[str, Any]:
        self.out_of_office = {"start_date": start_date, "end_date": end_date}
        self.out_of_office.update(decline_new_invitations=decline_new_invitations, message=message)
        return {"out_of_office": self.out_of_office}

    # -- calendars and rooms --------------------------------------------------------------

    def list_calendars(self) -> dict[str, Any]:
        return self.calendars.select(limit=100)

    def create_calendar(
        self, name: str, color: str = "blue", timezone: str = "UTC"
    ) -> dict[str, Any]:
        return self.calendars.add({"name": name, "color": color, "timezone": timezone})

    def share_calendar(
        self, calendar_id: str, email: str, permission: str = "see_free_busy"
    ) -> dict[str, Any]:
        calendar = self.calendars.get(calendar_id)
        calendar.setdefault("shared_with", {})[email] = permission
        return {"calendar_id": calendar_id, "shared_with": calendar["shared_with"]}

    def delete_calendar(self, calendar_id: str) -> dict[str, Any]:
        self.calendars.get(calendar_id)
        doomed = [k for k, e in self.events.records.items() if e["calendar_id"] == calendar_id]
        for key in doomed:
            del self.events.records[key]
        self.calendars.delete(calendar_id)
        return {"deleted": calendar_id, "events_deleted": len(doomed)}

    def list_meeting_rooms(
        self, min_capacity: int = 1, needs_video: bool = False
    ) -> dict[str, Any]:
        rooms = [
            room
            for room in _ROOMS
            if room["capacity"] >= min_capacity and (room["video"] or not needs_video)
        ]
        return {"rooms": rooms}

    def book_meeting_room(self, room_id: str, start: str, end: str, title: str) -> dict[str, Any]:
        rooms = {room["id"]: room for room in _ROOMS}
        if room_id not in rooms:
            raise RecordNotFoundError(f"No room {room_id!r}. Rooms: {', '.join(rooms)}.")
        for booking in self.bookings:
            if booking["room_id"] == room_id and booking["start"] < end and booking["end"] > start:
                raise ValueError(f"{rooms[room_id]['name']} is already booked {booking['start']}.")
        booking = {"room_id": room_id, "start": start, "end": end, "title": title}
        self.bookings.append(booking)
        return {"booked": True, "room": rooms[room_id]["name"], **booking}


def build_tools() -> list[Tool]:
    """The calendar tools, bound to a fresh :class:`CalendarBackend`."""
    b = CalendarBackend()
    event_id = string("Event id, e.g. 'evt_0001' (from calendar_list_events).")
    when = string(
        "ISO 8601 date-time with timezone, e.g. '2026-03-04T14:00:00Z'.", format="date-time"
    )
    emails = array(string("Email address.", format="email"), "People by email.", minItems=1)
    recurrence = obj(
        {
            "frequency": enum(["daily", "weekly", "monthly"], "How often."),
            "interval": integer("Every n periods.", minimum=1, default=1),
            "days_of_week": array(
                enum(["MO", "TU", "WE", "TH", "FR", "SA", "SU"], "A weekday."),
                "For weekly recurrence.",
            ),
            "until": string("Last date.", format="date"),
        },
        ["frequency"],
        description="Repeat rule; omit for a one-off event.",
    )
    calendar_id = string("Calendar id, e.g. 'cal_0001' (from calendar_list_calendars).")
    return [
        Tool(
            name="calendar_list_events",
            description=(
                "List calendar events between two times (default: the next 7 days), in start "
                "order. Use it to see what is on someone's schedule."
            ),
            parameters=obj(
                {
                    "start": {**when, "description": "Window start (default now)."},
                    "end": {**when, "description": "Window end (default in 7 days)."},
                    "calendar_id": calendar_id,
                    "limit": page(default=50),
                }
            ),
            handler=b.list_events,
            domain=DOMAIN,
            group="events",
            keywords=("schedule", "agenda", "meetings", "appointments"),
            annotations=READ,
        ),
        Tool(
            name="calendar_search_events",
            description=(
                "Search events by words in the title, location or attendee emails. Use it when "
                "you know what a meeting was about but not when."
            ),
            parameters=obj({"query": string("Words to match."), "limit": page()}, ["query"]),
            handler=b.search_events,
            domain=DOMAIN,
            group="events",
            keywords=("find meeting",),
            annotations=READ,
        ),
        Tool(
            name="calendar_get_event",
            description=(
                "Get one event with its attendees and their responses. Use it to see who accepted"
                " a meeting."
            ),
            parameters=obj({"event_id": event_id}, ["event_id"]),
            handler=b.get_event,
            domain=DOMAIN,
            group="events",
            keywords=("meeting details", "attendees"),
            annotations=READ,
        ),
        Tool(
            name="calendar_create_event",
            description=(
                "Create a calendar event or meeting and invite attendees by email, optionally "
                "recurring and with a video conference link. Use it when the user wants to "
                "schedule a meeting or appointment."
            ),
            parameters=obj(
                {
                    "title": string("Event title."),
                    "start": when,
                    "end": when,
                    "attendees": {**emails, "minItems": 0},
                    "calendar_id": {**calendar_id, "default": "cal_0001"},
                    "location": string("Room or address."),
                    "description": string("Agenda or notes."),
                    "recurrence": recurrence,
                    "conference": boolean("Add a video meeting link.", False),
                    "send_invitations": boolean("Email invitations to attendees.", True),
                },
                ["title", "start", "end"],
            ),
            handler=b.create_event,
            domain=DOMAIN,
            group="events",
            keywords=("schedule meeting", "book", "invite", "appointment"),
            annotations=SEND,
            input_examples=(
                {
                    "title": "Roadmap review",
                    "start": "2026-03-04T14:00:00Z",
                    "end": "2026-03-04T15:00:00Z",
                    "attendees": ["maya@example.com", "omar@example.com"],
                    "conference": True,
                },
            ),
            usage_notes="Find a time first with calendar_find_free_slots. Times need a "
            "timezone (Z or +01:00). Invitations are sent immediately unless "
            "send_invitations is false.",
        ),
        Tool(
            name="calendar_update_event",
            description=(
                "Reschedule or edit an event, or add attendees; attendees are notified. Use it "
                "when a meeting moves or changes."
            ),
            parameters=obj(
                {
                    "event_id": event_id,
                    "title": string("New title."),
                    "start": when,
                    "end": when,
                    "location": string("New location."),
                    "add_attendees": array(string("Email.", format="email"), "People to add."),
                    "notify_attendees": boolean("Email attendees about the change.", True),
                },
                ["event_id"],
            ),
            handler=b.update_event,
            domain=DOMAIN,
            group="events",
            keywords=("reschedule", "move meeting"),
            annotations=UPDATE,
        ),
        Tool(
            name="calendar_delete_event",
            description=(
                "Cancel and delete an event; attendees get a cancellation by default. Use it when"
                " a meeting is called off."
            ),
            parameters=obj(
                {"event_id": event_id, "notify_attendees": boolean("Send cancellations.", True)},
                ["event_id"],
            ),
            handler=b.delete_event,
            domain=DOMAIN,
            group="events",
            keywords=("cancel meeting", "remove"),
            annotations=DELETE,
        ),
        Tool(
            name="calendar_respond_to_invitation",
            description=(
                "Accept, decline or tentatively accept a meeting invitation. Use it when the user"
                " answers an invitation."
            ),
            parameters=obj(
                {
                    "event_id": event_id,
                    "response": enum(["accepted", "declined", "tentative"], "Your answer."),
                    "comment": string("A note to the organiser."),
                },
                ["event_id", "response"],
            ),
            handler=b.respond_to_invitation,
            domain=DOMAIN,
            group="events",
            keywords=("rsvp", "accept", "decline"),
            annotations=SEND,
        ),
        Tool(
            name="calendar_set_reminder",
            description="Add a reminder before an event (popup or email).",
            parameters=obj(
                {
                    "event_id": event_id,
                    "minutes_before": integer("Minutes before start.", minimum=0, default=10),
                    "method": enum(["popup", "email"], "How to remind.", default="popup"),
                },
                ["event_id"],
            ),
            handler=b.set_reminder,
            domain=DOMAIN,
            group="events",
            keywords=("alert", "notification"),
            annotations=CREATE,
        ),
        Tool(
            name="calendar_find_free_slots",
            description=(
                "Find times when all the given people are free for a meeting of a given length, "
                "within working hours by default."
            ),
            parameters=obj(
                {
                    "attendees": emails,
                    "duration_minutes": integer("Meeting length.", minimum=15, maximum=480),
                    "window_start": when,
                    "window_end": when,
                    "working_hours_only": boolean("Only 08:00-18:00 on weekdays.", True),
                    "max_results": integer("How many slots.", minimum=1, maximum=20, default=5),
                },
                ["attendees", "duration_minutes"],
            ),
            handler=b.find_free_slots,
            domain=DOMAIN,
            group="availability",
            keywords=("when can we meet", "scheduling", "common time", "free busy"),
            annotations=READ,
            input_examples=(
                {"attendees": ["maya@example.com", "noah@example.com"], "duration_minutes": 45},
            ),
        ),
        Tool(
            name="calendar_check_availability",
            description=(
                "Check whether people are free or busy during one time window. Use it to test one"
                " proposed time; use calendar_find_free_slots to find a time."
            ),
            parameters=obj(
                {"emails": emails, "start": when, "end": when}, ["emails", "start", "end"]
            ),
            handler=b.check_availability,
            domain=DOMAIN,
            group="availability",
            keywords=("free busy", "conflict"),
            annotations=READ,
        ),
        Tool(
            name="calendar_set_out_of_office",
            description=(
                "Set an out-of-office period on the calendar that declines new invitations. Use "
                "it when the user will be away."
            ),
            parameters=obj(
                {
                    "start_date": string("First day away.", format="date"),
                    "end_date": string("Last day away.", format="date"),
                    "decline_new_invitations": boolean("Decline meetings in the period.", True),
                    "message": string("Decline message."),
                },
                ["start_date", "end_date"],
            ),
            handler=b.set_out_of_office,
            domain=DOMAIN,
            group="availability",
            keywords=("vacation", "holiday", "away", "ooo"),
            annotations=UPDATE,
        ),
        Tool(
            name="calendar_list_calendars",
            description=(
                "List the calendars the user owns or can see. Use it to find a calendar's id."
            ),
            parameters=obj({}),
            handler=b.list_calendars,
            domain=DOMAIN,
            group="calendars",
            keywords=("my calendars",),
            annotations=READ,
        ),
        Tool(
            name="calendar_create_calendar",
            description=(
                "Create a new calendar, for a project or a team. Use it when events need their "
                "own calendar."
            ),
            parameters=obj(
                {
                    "name": string("Calendar name."),
                    "color": enum(
                        ["blue", "green", "orange", "red", "purple"], "Colour.", default="blue"
                    ),
                    "timezone": string("IANA timezone, e.g. 'Europe/Berlin'.", default="UTC"),
                },
                ["name"],
            ),
            handler=b.create_calendar,
            domain=DOMAIN,
            group="calendars",
            keywords=("new calendar", "project calendar"),
            annotations=CREATE,
        ),
        Tool(
            name="calendar_share_calendar",
            description="Share a calendar with someone: free/busy only, full details, or editing.",
            parameters=obj(
                {
                    "calendar_id": calendar_id,
                    "email": string("Who to share with.", format="email"),
                    "permission": enum(
                        ["see_free_busy", "see_details", "edit"],
                        "Access level.",
                        default="see_free_busy",
                    ),
                },
                ["calendar_id", "email"],
            ),
            handler=b.share_calendar,
            domain=DOMAIN,
            group="calendars",
            keywords=("permissions", "delegate"),
            annotations=UPDATE,
        ),
        Tool(
            name="calendar_delete_calendar",
            description=(
                "Delete a calendar and every event in it. Use it only when the user asks to "
                "remove the whole calendar."
            ),
            parameters=obj({"calendar_id": calendar_id}, ["calendar_id"]),
            handler=b.delete_calendar,
            domain=DOMAIN,
            group="calendars",
            keywords=("remove calendar",),
            annotations=DELETE,
        ),
        Tool(
            name="calendar_list_meeting_rooms",
            description=(
                "List bookable meeting rooms with capacity and video equipment. Use it before "
                "booking a room."
            ),
            parameters=obj(
                {
                    "min_capacity": integer("At least this many seats.", minimum=1, default=1),
                    "needs_video": boolean("Only rooms with video conferencing.", False),
                }
            ),
            handler=b.list_meeting_rooms,
            domain=DOMAIN,
            group="rooms",
            keywords=("conference room", "space"),
            annotations=READ,
        ),
        Tool(
            name="calendar_book_meeting_room",
            description=(
                "Book a meeting room for a time slot; fails if it is already taken. Use it when a"
                " meeting needs a physical room."
            ),
            parameters=obj(
                {
                    "room_id": enum([room["id"] for room in _ROOMS], "The room."),
                    "start": when,
                    "end": when,
                    "title": string("What the booking is for."),
                },
                ["room_id", "start", "end", "title"],
            ),
            handler=b.book_meeting_room,
            domain=DOMAIN,
            group="rooms",
            keywords=("reserve room",),
            annotations=CREATE,
        ),
    ]
