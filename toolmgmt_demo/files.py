"""File storage tools: files, folders, sharing and version history of a cloud drive."""

from __future__ import annotations

import fnmatch
import posixpath
from typing import Any

from toolmgmt_core import Tool, ToolAnnotations
from toolmgmt_demo._common import (
    CREATE,
    DELETE,
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
    obj,
    page,
    rng,
    string,
)

__all__ = ["DOMAIN", "build_tools"]

DOMAIN = "files"

_SERVICES = ["api", "worker", "scheduler", "auth", "billing"]
_MESSAGES = {
    "DEBUG": ["cache miss key=user:{n} fetching from primary", "token refreshed client=app-{n}"],
    "INFO": [
        "request completed path=/v1/orders status=200 duration_ms={n}",
        "job sync_inventory finished items={n}",
        "payment webhook received event=charge.succeeded id=ch_{n}",
    ],
    "WARN": ["slow query detected table=orders rows={n}", "retrying upstream attempt={n}"],
    "ERROR": [
        "upstream timeout calling inventory-service after 30000ms request_id=req_{n}",
        "connection pool exhausted waiting={n}",
        "unhandled exception in /v1/checkout: KeyError 'sku' order_id=ord_{n}",
    ],
}
_LEVELS = ["DEBUG", "INFO", "INFO", "INFO", "INFO", "WARN", "ERROR"]


def _log_text(name: str, lines: int) -> str:
    """A realistic application log, the same every time for the same name."""
    r = rng("log", name)
    out = []
    for n in range(lines):
        level = r.choice(_LEVELS)
        message = r.choice(_MESSAGES[level]).format(n=r.randint(1, 9999))
        stamp = iso(days=-1, minutes=n * 0.25)
        out.append(f"{stamp} {level:<5} [{r.choice(_SERVICES)}] {message}")
    return "\n".join(out) + "\n"


def _csv_text(rows: int) -> str:
    r = rng("csv", rows)
    lines = ["date,region,product,units,revenue"]
    for n in range(rows):
        units = r.randint(1, 400)
        region = r.choice(["EMEA", "NA", "APAC", "LATAM"])
        product = r.choice(["Basic", "Pro", "Enterprise"])
        lines.append(f"{iso(days=-n)[:10]},{region},{product},{units},{units * 49.0:.2f}")
    return "\n".join(lines) + "\n"


_SEED_FILES: dict[str, str] = {
    "/projects/roadmap.md": "# Roadmap 2026\n\n- Q1: SSO and audit log\n- Q2: usage-based billing\n"
    "- Q3: EU data residency\n- Q4: mobile app\n",
    "/projects/launch/checklist.md": "# Launch checklist\n\n1. Freeze scope\n2. Write release "
    "notes\n3. Brief support\n4. Flip the feature flag\n",
    "/notes/todo.txt": "call the accountant\nrenew the TLS certificate\nbook offsite venue\n",
    "/reports/q1-sales.csv": _csv_text(90),
    "/reports/board-deck-outline.md": "# Board deck\n\n## Highlights\n## Metrics\n## Asks\n",
    "/photos/team-offsite.jpg": "<binary JPEG data, 2.4 MB>",
}
_GENERATED = {"/logs/app.log": 9000, "/logs/worker.log": 2500}


class FilesBackend:
    """An in-memory drive: paths to contents, plus shares and version history."""

    def __init__(self) -> None:
        self.files: dict[str, dict[str, Any]] = {}
        self.shares = Store("share", "shr", "files_list_shares")
        self.folders = {"/", "/projects", "/notes", "/reports", "/photos", "/logs"}
        for n, (path, text) in enumerate(_SEED_FILES.items()):
            self._put(path, text, modified=iso(days=-n - 1))
        self._put("/projects/roadmap.md", _SEED_FILES["/projects/roadmap.md"] + "- 2027: GA\n")
        self.shares.add(
            {"path": "/projects/roadmap.md", "email": "lena@example.com", "role": "commenter"}
        )
        for path in _GENERATED:
            self.files[path] = {"content": None, "modified": iso(), "versions": []}

    def _put(self, path: str, text: str, *, modified: str | None = None) -> dict[str, Any]:
        entry = self.files.get(path)
        versions = entry["versions"] if entry else []
        if entry and entry["content"] is not None:
            versions.append({"version": len(versions) + 1, "modified": entry["modified"]})
            versions[-1]["content"] = entry["content"]
        entry = {"content": text, "modified": modified or iso(), "versions": versions}
        self.files[path] = entry
        self.folders.add(posixpath.dirname(path))
        return entry

    def _text(self, path: str) -> str:
        entry = self._entry(path)
        if entry["content"] is None:
            entry["content"] = _log_text(path, _GENERATED[path])
        return str(entry["content"])

    def _entry(self, path: str) -> dict[str, Any]:
        path = posixpath.normpath(path)
        if path not in self.files:
            folder = posixpath.dirname(path)
            near = sorted(p for p in self.files if posixpath.dirname(p) == folder)[:5]
            hint = f" Files in {folder}: {', '.join(near)}." if near else ""
            raise RecordNotFoundError(
                f"No file at {path!r}.{hint} Use files_list_directory or files_search_files."
            )
        return self.files[path]

    def _meta(self, path: str) -> dict[str, Any]:
        entry = self.files[path]
        size = len(self._text(path).encode()) if entry["content"] is None else None
        size = size if size is not None else len(str(entry["content"]).encode())
        ext = posixpath.splitext(path)[1].lstrip(".")
        kinds = {"md": "text/markdown", "csv": "text/csv", "jpg": "image/jpeg", "log": "text/plain"}
        return {
            "path": path,
            "size_bytes": size,
            "mime_type": kinds.get(ext, "text/plain"),
            "modified": entry["modified"],
            "versions": len(entry["versions"]) + 1,
        }

    # -- files ----------------------------------------------------------------------------

    def read_file(
        self, path: str, encoding: str = "utf-8", max_bytes: int | None = None
    ) -> dict[str, Any]:
        text = self._text(path)
        if max_bytes is not None:
            text = text.encode(encoding)[:max_bytes].decode(encoding, errors="ignore")
        return {"path": posixpath.normpath(path), "encoding": encoding, "content": text}

    def tail_file(self, path: str, lines: int = 50, grep: str | None = None) -> dict[str, Any]:
        rows = self._text(path).splitlines()
        if grep:
            rows = [row for row in rows if grep in row]
        return {"path": path, "lines": rows[-lines:], "matched": len(rows)}

    def write_file(self, path: str, content: str, overwrite: bool = False) -> dict[str, Any]:
        path = posixpath.normpath(path)
        if not path.startswith("/"):
            raise ValueError(f"Paths are absolute, starting with '/': got {path!r}.")
        if path in self.files and not overwrite:
            raise FileExistsError(f"{path} exists; pass overwrite=true to replace it.")
        self._put(path, content)
        return self._meta(path)

    def append_to_file(self, path: str, content: str, newline: bool = True) -> dict[str, Any]:
        text = self._text(path)
        self._put(path, text + content + ("\n" if newline else ""))
        return self._meta(path)

    def delete_file(self, path: str, permanent: bool = False) -> dict[str, Any]:
        self._entry(path)
        del self.files[posixpath.normpath(path)]
        return {"deleted": path, "permanent": permanent, "recoverable_until": iso(days=30)}

    def move_file(self, source: str, destination: str, overwrite: bool = False) -> dict[str, Any]:
        entry = self._entry(source)
        if destination in self.files and not overwrite:
            raise FileExistsError(f"{destination} exists; pass overwrite=true to replace it.")
        self.files[destination] = entry
        del self.files[source]
        self.folders.add(posixpath.dirname(destination))
        return self._meta(destination)

    def copy_file(self, source: str, destination: str) -> dict[str, Any]:
        self._put(destination, self._text(source))
        return self._meta(destination)

    def get_file_metadata(self, path: str) -> dict[str, Any]:
        self._entry(path)
        return self._meta(posixpath.normpath(path))

    def search_files(
        self,
        query: str | None = None,
        name_pattern: str | None = None,
        folder: str = "/",
        modified_after: str | None = None,
        limit: int = 20,
    ) -> dict[str, Any]:
        found = []
        for path in sorted(self.files):
            if not path.startswith(folder.rstrip("/") + "/"):
                continue
            if name_pattern and not fnmatch.fnmatch(posixpath.basename(path), name_pattern):
                continue
            if modified_after and self.files[path]["modified"] < modified_after:
                continue
            if query and query.lower() not in self._text(path).lower():
                continue
            found.append(self._meta(path))
        return {"results": found[:limit], "total": len(found)}

    # -- folders --------------------------------------------------------------------------

    def list_directory(
        self, path: str = "/", recursive: bool = False, include_hidden: bool = False
    ) -> dict[str, Any]:
        path = posixpath.normpath(path)
        if path not in self.folders:
            valid = ", ".join(sorted(self.folders))
            raise RecordNotFoundError(f"No folder {path!r}. Folders: {valid}.")
        prefix = path.rstrip("/") + "/"
        entries = []
        for folder in sorted(self.folders):
            if (
                folder != path
                and folder.startswith(prefix)
                and (recursive or posixpath.dirname(folder) == path)
            ):
                entries.append({"path": folder, "type": "folder"})
        for file in sorted(self.files):
            if file.startswith(prefix) and (recursive or posixpath.dirname(file) == path):
                if include_hidden or not posixpath.basename(file).startswith("."):
                    entries.append({**self._meta(file), "type": "file"})
        return {"path": path, "entries": entries}

    def create_folder(self, path: str, parents: bool = True) -> dict[str, Any]:
        parent = posixpath.dirname(posixpath.normpath(path))
        if not parents and parent not in self.folders:
            raise RecordNotFoundError(f"Parent folder {parent!r} does not exist.")
        while path not in self.folders and path != "/":
            self.folders.add(path)
            path = posixpath.dirname(path)
        return {"created": True, "path": path}

    def delete_folder(self, path: str, recursive: bool = False) -> dict[str, Any]:
        if path not in self.folders or path == "/":
            raise RecordNotFoundError(f"No folder {path!r} (the root cannot be deleted).")
        inside = [p for p in self.files if p.startswith(path.rstrip("/") + "/")]
        if inside and not recursive:
            raise ValueError(f"{path} holds {len(inside)} files; pass recursive=true.")
        for p in inside:
            del self.files[p]
        self.folders = {f for f in self.folders if f != path and not f.startswith(path + "/")}
        return {"deleted": path, "files_deleted": len(inside)}

    def get_storage_usage(self, by_folder: bool = True) -> dict[str, Any]:
        usage: dict[str, int] = {}
        total = 0
        for path in self.files:
            size = self._meta(path)["size_bytes"]
            total += size
            top = "/" + path.strip("/").split("/")[0]
            usage[top] = usage.get(top, 0) + size
        result: dict[str, Any] = {"used_bytes": total, "quota_bytes": 15 * 1024**3}
        if by_folder:
            result["by_folder"] = usage
        return result

    # -- sharing and versions -------------------------------------------------------------

    def share_file(
        self,
        path: str,
        recipients: list[dict[str, Any]],
        message: str | None = None,
        notify: bool = True,
    ) -> dict[str, Any]:
        self._entry(path)
        created = []
        for recipient in recipients:
            share: dict[str, Any] = {
                "path": path,
                "email": recipient["email"],
                "role": recipient.get("role"),
            }
            share.update(role=share["role"] or "viewer", notified=notify, created_at=iso())
            created.append(self.shares.add(share))
        return {"path": path, "shares": created, "message": message}

    def create_share_link(
        self, path: str, access: str = "anyone_with_link", expires_in_days: int | None = 7
    ) -> dict[str, Any]:
        self._entry(path)
        token = f"{rng('link', path, access).getrandbits(64):016x}"
        expires = iso(days=expires_in_days) if expires_in_days else None
        return {"url": f"https://drive.example.com/s/{token}", "access": access, "expires": expires}

    def list_shares(self, path: str | None = None) -> dict[str, Any]:
        return self.shares.select(lambda s: path is None or s["path"] == path, limit=100)

    def revoke_share(self, share_id: str) -> dict[str, Any]:
        share = self.shares.delete(share_id)
        return {"revoked": share_id, "path": share["path"], "email": share["email"]}

    def list_versions(self, path: str) -> dict[str, Any]:
        entry = self._entry(path)
        versions = [{k: v for k, v in ver.items() if k != "content"} for ver in entry["versions"]]
        current = {"version": len(versions) + 1, "modified": entry["modified"], "current": True}
        return {"path": path, "versions": [*versions, current]}

    def restore_version(self, path: str, version: int) -> dict[str, Any]:
        entry = self._entry(path)
        older = {v["version"]: v for v in entry["versions"]}
        if version not in older:
            valid = sorted(older) or "none (the file has a single version)"
            raise ValueError(f"{path} has no version {version}; restorable versions: {valid}.")
        self._put(path, older[version]["content"])
        return {"path": path, "restored_version": version, **self._meta(path)}


def build_tools() -> list[Tool]:
    """The file storage tools, bound to a fresh :class:`FilesBackend`."""
    b = FilesBackend()
    path = string("Absolute path, e.g. '/reports/q1-sales.csv'.", pattern="^/")
    overwrite = boolean("Replace the destination if it exists.", False)
    recipient = obj(
        {
            "email": string("Recipient email.", format="email"),
            "role": enum(["viewer", "commenter", "editor"], "Access level.", default="viewer"),
        },
        ["email"],
    )
    return [
        Tool(
            name="files_read_file",
            description=(
                "Read a text file from the drive and return its whole content. Log files can be "
                "large (hundreds of KB): prefer files_tail_file to look at recent lines. Use it "
                "when you need a file's full text."
            ),
            parameters=obj(
                {
                    "path": path,
                    "encoding": enum(["utf-8", "latin-1"], "Text encoding.", default="utf-8"),
                    "max_bytes": integer("Return at most this many bytes.", minimum=1),
                },
                ["path"],
            ),
            handler=b.read_file,
            domain=DOMAIN,
            group="files",
            keywords=("open", "cat", "contents", "download"),
            annotations=READ,
            defer_loading=False,
            input_examples=({"path": "/logs/app.log"}, {"path": "/notes/todo.txt"}),
            truncation="tail",
        ),
        Tool(
            name="files_tail_file",
            description=(
                "Return the last lines of a text file such as a log, optionally only lines "
                "containing a string (like `tail | grep`)."
            ),
            parameters=obj(
                {
                    "path": path,
                    "lines": integer("How many lines.", minimum=1, maximum=2000, default=50),
                    "grep": string("Only lines containing this text, e.g. 'ERROR'."),
                },
                ["path"],
            ),
            handler=b.tail_file,
            domain=DOMAIN,
            group="files",
            keywords=("log", "last lines", "grep", "errors"),
            annotations=READ,
            input_examples=({"path": "/logs/app.log", "lines": 20, "grep": "ERROR"},),
        ),
        Tool(
            name="files_write_file",
            description="Create a text file, or replace one when overwrite is true.",
            parameters=obj(
                {
                    "path": path,
                    "content": string("The full text to write."),
                    "overwrite": overwrite,
                },
                ["path", "content"],
            ),
            handler=b.write_file,
            domain=DOMAIN,
            group="files",
            keywords=("save", "create file", "upload"),
            input_examples=(
                {"path": "/notes/meeting-2026-03-04.md", "content": "# Notes\\n- ship v2\\n"},
            ),
            annotations=ToolAnnotations(
                read_only=False, destructive=True, idempotent=True, open_world=False
            ),
        ),
        Tool(
            name="files_append_to_file",
            description=(
                "Append text to the end of an existing file. Use it to add lines without "
                "rewriting the file."
            ),
            parameters=obj(
                {
                    "path": path,
                    "content": string("Text to add."),
                    "newline": boolean("End the added text with a newline.", True),
                },
                ["path", "content"],
            ),
            handler=b.append_to_file,
            domain=DOMAIN,
            group="files",
            keywords=("add line", "log", "append"),
            annotations=ToolAnnotations(
                read_only=False, destructive=False, idempotent=False, open_world=False
            ),
        ),
        Tool(
            name="files_delete_file",
            description=(
                "Delete a file. It stays in the trash for 30 days unless permanent is true."
            ),
            parameters=obj(
                {"path": path, "permanent": boolean("Skip the trash.", False)}, ["path"]
            ),
            handler=b.delete_file,
            domain=DOMAIN,
            group="files",
            keywords=("remove", "trash", "rm"),
            annotations=DELETE,
            usage_notes="Destructive: confirm with the user before deleting anything they did "
            "not name explicitly. permanent=true cannot be undone.",
        ),
        Tool(
            name="files_move_file",
            description=(
                "Move or rename a file. Use it to rename a file or put it in another folder."
            ),
            parameters=obj(
                {
                    "source": path,
                    "destination": string("New path, e.g. '/archive/q1-sales.csv'.", pattern="^/"),
                    "overwrite": overwrite,
                },
                ["source", "destination"],
            ),
            handler=b.move_file,
            domain=DOMAIN,
            group="files",
            keywords=("rename", "mv"),
            annotations=UPDATE,
        ),
        Tool(
            name="files_copy_file",
            description=(
                "Copy a file to another path. Use it when the original must stay where it is."
            ),
            parameters=obj(
                {
                    "source": path,
                    "destination": string("Path of the copy, e.g. '/tmp/copy.csv'.", pattern="^/"),
                },
                ["source", "destination"],
            ),
            handler=b.copy_file,
            domain=DOMAIN,
            group="files",
            keywords=("duplicate", "cp"),
            annotations=CREATE,
        ),
        Tool(
            name="files_get_file_metadata",
            description=(
                "Get a file's size, type, last modification time and version count. Use it to "
                "check a file before reading it (it may be large)."
            ),
            parameters=obj({"path": path}, ["path"]),
            handler=b.get_file_metadata,
            domain=DOMAIN,
            group="files",
            keywords=("stat", "size", "info"),
            annotations=READ,
        ),
        Tool(
            name="files_search_files",
            description=(
                "Find files by name pattern (glob such as '*.csv'), by text they contain, by "
                "folder or by modification date. Use it when you do not know a file's path."
            ),
            parameters=obj(
                {
                    "query": string("Text the file must contain."),
                    "name_pattern": string("Glob on the file name, e.g. 'q1-*.csv'."),
                    "folder": string("Only under this folder.", default="/"),
                    "modified_after": string("Only files changed after.", format="date-time"),
                    "limit": page(),
                }
            ),
            handler=b.search_files,
            domain=DOMAIN,
            group="files",
            keywords=("find", "locate", "grep"),
            annotations=READ,
        ),
        Tool(
            name="files_list_directory",
            description=(
                "List the files and folders in a folder, optionally recursively. Use it to see "
                "what a folder holds."
            ),
            parameters=obj(
                {
                    "path": string("Folder path.", default="/"),
                    "recursive": boolean("Include sub-folders' contents.", False),
                    "include_hidden": boolean("Include dot-files.", False),
                }
            ),
            handler=b.list_directory,
            domain=DOMAIN,
            group="folders",
            keywords=("ls", "browse", "folder contents"),
            annotations=READ,
        ),
        Tool(
            name="files_create_folder",
            description=(
                "Create a folder (and missing parent folders). Use it before writing files into a"
                " new folder."
            ),
            parameters=obj(
                {
                    "path": string("Folder path, e.g. '/projects/2026'.", pattern="^/"),
                    "parents": boolean("Create parents.", True),
                },
                ["path"],
            ),
            handler=b.create_folder,
            domain=DOMAIN,
            group="folders",
            keywords=("mkdir", "directory"),
            annotations=UPDATE,
        ),
        Tool(
            name="files_delete_folder",
            description=(
                "Delete a folder; with recursive=true also every file inside it. Use it only when"
                " the user asks to remove the folder."
            ),
            parameters=obj(
                {
                    "path": string("Folder path, e.g. '/photos'.", pattern="^/"),
                    "recursive": boolean("Also delete its contents.", False),
                },
                ["path"],
            ),
            handler=b.delete_folder,
            domain=DOMAIN,
            group="folders",
            keywords=("rmdir", "remove directory"),
            input_examples=({"path": "/photos", "recursive": True},),
            annotations=DELETE,
        ),
        Tool(
            name="files_get_storage_usage",
            description=(
                "Report how much storage is used, in total and per top-level folder. Use it when "
                "the drive is full or to find what takes space."
            ),
            parameters=obj({"by_folder": boolean("Break the total down by folder.", True)}),
            handler=b.get_storage_usage,
            domain=DOMAIN,
            group="folders",
            keywords=("quota", "disk space"),
            annotations=READ,
        ),
        Tool(
            name="files_share_file",
            description=(
                "Share a file with people by email, as viewer, commenter or editor; they are "
                "notified unless notify is false."
            ),
            parameters=obj(
                {
                    "path": path,
                    "recipients": array(recipient, "Who gets access.", minItems=1),
                    "message": string("A note included in the notification."),
                    "notify": boolean("Email the recipients.", True),
                },
                ["path", "recipients"],
            ),
            handler=b.share_file,
            domain=DOMAIN,
            group="sharing",
            keywords=("document", "colleague", "give access", "invite", "collaborate"),
            annotations=SEND,
            input_examples=(
                {
                    "path": "/projects/roadmap.md",
                    "recipients": [{"email": "lena@example.com", "role": "commenter"}],
                },
            ),
        ),
        Tool(
            name="files_create_share_link",
            description=(
                "Create a shareable link to a file, optionally expiring. Use it when anyone with "
                "the link should open the file, without naming people."
            ),
            parameters=obj(
                {
                    "path": path,
                    "access": enum(
                        ["anyone_with_link", "organization", "restricted"],
                        "Who can open the link.",
                        default="anyone_with_link",
                    ),
                    "expires_in_days": integer("Days until the link stops working.", minimum=1),
                },
                ["path"],
            ),
            handler=b.create_share_link,
            domain=DOMAIN,
            group="sharing",
            keywords=("public link", "url"),
            annotations=CREATE,
        ),
        Tool(
            name="files_list_shares",
            description=(
                "List who a file (or every file) is shared with. Use it before revoking access, "
                "to find the share id."
            ),
            parameters=obj({"path": string("Only shares of this file.")}),
            handler=b.list_shares,
            domain=DOMAIN,
            group="sharing",
            keywords=("permissions", "access"),
            annotations=READ,
        ),
        Tool(
            name="files_revoke_share",
            description=(
                "Remove a person's access to a shared file. Use it when someone should no longer "
                "see a file."
            ),
            parameters=obj(
                {"share_id": string("Share id from files_list_shares, e.g. 'shr_0001'.")},
                ["share_id"],
            ),
            handler=b.revoke_share,
            domain=DOMAIN,
            group="sharing",
            keywords=("unshare", "remove access"),
            annotations=UPDATE,
        ),
        Tool(
            name="files_list_versions",
            description=(
                "List a file's earlier versions (version history). Use it before restoring an "
                "older version."
            ),
            parameters=obj({"path": path}, ["path"]),
            handler=b.list_versions,
            domain=DOMAIN,
            group="versions",
            keywords=("history", "revisions"),
            annotations=READ,
        ),
        Tool(
            name="files_restore_version",
            description=(
                "Restore an earlier version of a file (the current one is kept as a version). Use"
                " it to undo changes to a file."
            ),
            parameters=obj(
                {"path": path, "version": integer("Version number to restore.", minimum=1)},
                ["path", "version"],
            ),
            handler=b.restore_version,
            domain=DOMAIN,
            group="versions",
            keywords=("undo", "rollback", "revert"),
            input_examples=({"path": "/projects/roadmap.md", "version": 1},),
            annotations=ToolAnnotations(
                read_only=False, destructive=False, idempotent=False, open_world=False
            ),
        ),
    ]
