"""Code hosting tools: repositories, issues, pull requests and CI workflows."""

from __future__ import annotations

import asyncio
from typing import Any

from toolmgmt_core import Tool, ToolAnnotations
from toolmgmt_demo._common import (
    CREATE,
    DELETE,
    FIRST_NAMES,
    READ,
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

DOMAIN = "code_hosting"

ORG = "acme"
_REPOS = [
    ("web-app", "TypeScript", "Customer-facing web application"),
    ("api", "Python", "Public REST API and background workers"),
    ("infra", "HCL", "Terraform for every environment"),
    ("mobile", "Kotlin", "Android app"),
    ("design-system", "TypeScript", "Shared UI components"),
    ("data-pipeline", "Python", "Nightly ETL into the warehouse"),
]
_VERBS = ["Fix", "Add", "Refactor", "Update", "Remove", "Speed up", "Document"]
_THINGS = [
    "login redirect loop",
    "rate limiting on /v1/orders",
    "flaky checkout test",
    "dependency versions",
    "dead feature flags",
    "CSV export for large accounts",
    "retry logic in webhook sender",
    "dark mode tokens",
]
_FILES = [
    "src/auth/session.py",
    "src/orders/api.py",
    "src/billing/webhooks.py",
    "tests/test_checkout.py",
    "README.md",
    "package.json",
    "src/components/Button.tsx",
]
LANGUAGES = ["Python", "TypeScript", "Kotlin", "HCL", "Go", "Java"]
_MERGE_METHODS = ["merge", "squash", "rebase"]


def _sha(*parts: Any) -> str:
    return f"{rng('sha', *parts).getrandbits(160):040x}"


class CodeHostingBackend:
    """Six repositories with issues, pull requests and workflow runs."""

    def __init__(self) -> None:
        r = rng("code-seed")
        self.repos: dict[str, dict[str, Any]] = {}
        for name, language, description in _REPOS:
            self.repos[f"{ORG}/{name}"] = {
                "full_name": f"{ORG}/{name}",
                "description": description,
                "language": language,
                "visibility": "private" if name != "design-system" else "public",
                "default_branch": "main",
                "stars": r.randint(0, 900),
                "open_issues": 0,
                "branches": ["main", "develop"],
                "updated_at": iso(days=-r.randint(0, 40)),
            }
        self.issues = Store("issue", "iss", "code_hosting_list_issues")
        self.pulls = Store("pull request", "pr", "code_hosting_list_pull_requests")
        self.runs = Store("workflow run", "run", "code_hosting_list_workflow_runs")
        repo_names = list(self.repos)
        for n in range(84):
            self.issues.add(
                {
                    "repository": repo_names[n % len(repo_names)],
                    "number": n // len(repo_names) + 1,
                    "title": f"{r.choice(_VERBS)} {r.choice(_THINGS)}",
                    "state": r.choice(["open", "open", "closed"]),
                    "labels": r.sample(["bug", "enhancement", "good first issue", "p1"], 2),
                    "assignees": [r.choice(FIRST_NAMES).lower()],
                    "comments": [],
                    "created_at": iso(days=-r.randint(1, 200)),
                }
            )
        for n in range(30):
            self.pulls.add(
                {
                    "repository": repo_names[n % len(repo_names)],
                    "number": 100 + n // len(repo_names),
                    "title": f"{r.choice(_VERBS)} {r.choice(_THINGS)}",
                    "head": f"feature/{n}-{r.choice(['auth', 'orders', 'ui', 'ci'])}",
                    "base": "main",
                    "state": "open" if n < 6 else r.choice(["open", "merged", "closed"]),
                    "author": r.choice(FIRST_NAMES).lower(),
                    "reviewers": [],
                    "checks": "passing" if n < 6 else r.choice(["passing", "failing", "pending"]),
                }
            )
        for n in range(40):
            self.runs.add(
                {
                    "repository": r.choice(list(self.repos)),
                    "workflow": r.choice(["ci.yml", "deploy.yml", "nightly.yml"]),
                    "branch": r.choice(["main", "develop", f"feature/{n}"]),
                    "status": r.choice(["success", "success", "failure", "in_progress"]),
                    "duration_seconds": r.randint(60, 1800),
                    "started_at": iso(days=-n * 0.5),
                }
            )

    def _repo(self, repository: str) -> dict[str, Any]:
        if repository not in self.repos:
            valid = ", ".join(self.repos)
            raise RecordNotFoundError(f"No repository {repository!r}. Repositories: {valid}.")
        return self.repos[repository]

    def _pull(self, repository: str, number: int) -> dict[str, Any]:
        self._repo(repository)
        for pr in self.pulls.records.values():
            if pr["repository"] == repository and pr["number"] == number:
                return pr
        raise RecordNotFoundError(
            f"No pull request #{number} in {repository}; use code_hosting_list_pull_requests."
        )

    def _issue(self, repository: str, number: int) -> dict[str, Any]:
        self._repo(repository)
        for issue in self.issues.records.values():
            if issue["repository"] == repository and issue["number"] == number:
                return issue
        raise RecordNotFoundError(
            f"No issue #{number} in {repository}; use code_hosting_list_issues."
        )

    # -- repositories ---------------------------------------------------------------------

    def list_repositories(
        self, language: str | None = None, visibility: str = "all", sort: str = "updated"
    ) -> dict[str, Any]:
        repos = [
            repo
            for repo in self.repos.values()
            if (language is None or repo["language"].lower() == language.lower())
            and (visibility == "all" or repo["visibility"] == visibility)
        ]
        key = "updated_at" if sort == "updated" else ("stars" if sort == "stars" else "full_name")
        repos.sort(key=lambda repo: repo[key], reverse=sort != "name")
        return {"repositories": repos}

    def get_repository(self, repository: str) -> dict[str, Any]:
        return self._repo(repository)

    def create_repository(
        self,
        name: str,
        description: str = "",
        visibility: str = "private",
        initialize_readme: bool = True,
        gitignore_template: str | None = None,
    ) -> dict[str, Any]:
        full = f"{ORG}/{name}"
        if full in self.repos:
            raise ValueError(f"Repository {full} already exists.")
        repo: dict[str, Any] = {"full_name": full, "description": description, "language": None}
        repo.update(visibility=visibility, default_branch="main", stars=0, open_issues=0)
        repo.update(branches=["main"], updated_at=iso(), gitignore=gitignore_template)
        self.repos[full] = repo
        return {**repo, "clone_url": f"https://code.example.com/{full}.git"}

    def delete_repository(self, repository: str, confirm_name: str) -> dict[str, Any]:
        self._repo(repository)
        if confirm_name != repository:
            raise ValueError(f"confirm_name must repeat the repository name: {repository!r}.")
        del self.repos[repository]
        return {"deleted": repository}

    def list_commits(
        self,
        repository: str,
        branch: str = "main",
        author: str | None = None,
        since: str | None = None,
        path: str | None = None,
        per_page: int = 100,
    ) -> dict[str, Any]:
        self._repo(repository)
        r = rng("commits", repository, branch)
        commits = []
        for n in range(per_page * 2):
            who = r.choice(FIRST_NAMES).lower()
            touched = r.sample(_FILES, r.randint(1, 4))
            title = f"{r.choice(_VERBS)} {r.choice(_THINGS)}"
            ref = r.choice(["closes", "refs"])
            commit: dict[str, Any] = {
                "sha": _sha(repository, branch, n),
                "author": {"login": who, "email": f"{who}@acme.example.com"},
                "date": iso(days=-n * 0.4),
                "message": f"{title}\n\n{title} ({ref} #{r.randint(1, 80)}).\n"
                f"Reviewed-by: {r.choice(FIRST_NAMES).lower()}",
                "files": [
                    {"path": f, "additions": r.randint(0, 120), "deletions": r.randint(0, 60)}
                    for f in touched
                ],
                "verified": r.random() < 0.8,
            }
            if author and who != author.lower():
                continue
            if since and commit["date"] < since:
                continue
            if path and path not in touched:
                continue
            commits.append(commit)
        return {"repository": repository, "branch": branch, "commits": commits[:per_page]}

    def get_file_contents(self, repository: str, path: str, ref: str = "main") -> dict[str, Any]:
        repo = self._repo(repository)
        if path not in _FILES:
            raise RecordNotFoundError(f"No file {path!r} at {ref}. Files: {', '.join(_FILES)}.")
        r = rng("file", repository, path, ref)
        if path.endswith(".md"):
            text = f"# {repository}\n\n{repo['description']}.\n\n## Setup\n\n    make dev\n"
        else:
            lines = [f"# {path} ({ref})"]
            for n in range(r.randint(40, 120)):
                lines.append(
                    f"def handler_{n}(request):\n    return process(request, retries={n % 5})"
                )
            text = "\n".join(lines)
        return {
            "repository": repository,
            "path": path,
            "ref": ref,
            "sha": _sha(path, ref),
            "content": text,
        }

    def search_code(
        self,
        query: str,
        repository: str | None = None,
        language: str | None = None,
        limit: int = 20,
    ) -> dict[str, Any]:
        r = rng("search-code", query, repository, language)
        repos = [repository] if repository else list(self.repos)
        hits = []
        for repo in repos:
            self._repo(repo)
            if language and self.repos[repo]["language"].lower() != language.lower():
                continue
            for path in r.sample(_FILES, 2):
                hits.append(
                    {
                        "repository": repo,
                        "path": path,
                        "line": r.randint(1, 300),
                        "fragment": f"    result = {query}(payload)  # called from {path}",
                    }
                )
        return {"query": query, "total": len(hits), "items": hits[:limit]}

    def create_branch(self, repository: str, branch: str, from_ref: str = "main") -> dict:
        repo = self._repo(repository)
        if branch in repo["branches"]:
            raise ValueError(f"Branch {branch!r} exists in {repository}.")
        repo["branches"].append(branch)
        return {"repository": repository, "branch": branch, "sha": _sha(repository, from_ref)}

    def delete_branch(self, repository: str, branch: str) -> dict[str, Any]:
        repo = self._repo(repository)
        if branch == repo["default_branch"]:
            raise ValueError("The default branch cannot be deleted.")
        if branch not in repo["branches"]:
            valid = ", ".join(repo["branches"])
            raise RecordNotFoundError(f"No branch {branch!r} in {repository}. Branches: {valid}.")
        repo["branches"].remove(branch)
        return {"deleted": branch, "repository": repository}

    # -- issues ---------------------------------------------------------------------------

    def list_issues(
        self,
        repository: str,
        state: str = "open",
        labels: list[str] | None = None,
        assignee: str | None = None,
        query: str = "",
        limit: int = 20,
    ) -> dict[str, Any]:
        self._repo(repository)

        def keep(i: dict[str, Any]) -> bool:
            return (
                i["repository"] == repository
                and (state == "all" or i["state"] == state)
                and all(label in i["labels"] for label in labels or [])
                and (assignee is None or assignee in i["assignees"])
                and matches(i["title"], query)
            )

        return self.issues.select(keep, limit=limit, sort_key="number", descending=True)

    def create_issue(
        self,
        repository: str,
        title: str,
        body: str = "",
        labels: list[str] | None = None,
        assignees: list[str] | None = None,
    ) -> dict[str, Any]:
        self._repo(repository)
        number = 1 + max(
            (i["number"] for i in self.issues.records.values() if i["repository"] == repository),
            default=0,
        )
        issue: dict[str, Any] = {
            "repository": repository,
            "number": number,
            "title": title,
            "body": body,
        }
        issue.update(state="open", labels=labels or [], assignees=assignees or [], comments=[])
        issue["created_at"] = iso()
        created = self.issues.add(issue)
        return {**created, "url": f"https://code.example.com/{repository}/issues/{number}"}

    def comment_on_issue(self, repository: str, number: int, body: str) -> dict[str, Any]:
        issue = self._issue(repository, number)
        comment = {"id": len(issue["comments"]) + 1, "body": body, "created_at": iso()}
        issue["comments"].append(comment)
        return {"repository": repository, "number": number, "comment": comment}

    def close_issue(
        self, repository: str, number: int, reason: str = "completed"
    ) -> dict[str, Any]:
        issue = self._issue(repository, number)
        issue.update(state="closed", state_reason=reason)
        return {"repository": repository, "number": number, "state": "closed", "reason": reason}

    # -- pull requests --------------------------------------------------------------------

    def list_pull_requests(
        self, repository: str, state: str = "open", author: str | None = None, limit: int = 20
    ) -> dict[str, Any]:
        self._repo(repository)

        def keep(p: dict[str, Any]) -> bool:
            return (
                p["repository"] == repository
                and (state == "all" or p["state"] == state)
                and (author is None or p["author"] == author)
            )

        return self.pulls.select(keep, limit=limit, sort_key="number", descending=True)

    def create_pull_request(
        self,
        repository: str,
        title: str,
        head: str,
        base: str = "main",
        body: str = "",
        draft: bool = False,
        reviewers: list[str] | None = None,
    ) -> dict[str, Any]:
        repo = self._repo(repository)
        if head not in repo["branches"]:
            raise ValueError(
                f"Branch {head!r} does not exist in {repository}; create it first with "
                "code_hosting_create_branch."
            )
        number = 100 + len(self.pulls.records)
        pr: dict[str, Any] = {
            "repository": repository,
            "number": number,
            "title": title,
            "head": head,
        }
        pr.update(base=base, body=body, draft=draft, state="open", author="alex")
        pr.update(reviewers=reviewers or [], checks="pending")
        return self.pulls.add(pr)

    def get_pull_request_diff(self, repository: str, number: int) -> dict[str, Any]:
        pr = self._pull(repository, number)
        r = rng("diff", repository, number)
        chunks = []
        for path in r.sample(_FILES, 4):
            chunks.append(f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}")
            for n in range(r.randint(30, 90)):
                chunks.append(
                    f"@@ -{n * 10},7 +{n * 10},8 @@\n"
                    f"-    old_call({n})\n+    new_call({n}, timeout=30)"
                )
        return {
            "repository": repository,
            "number": number,
            "title": pr["title"],
            "diff": "\n".join(chunks),
        }

    def request_review(self, repository: str, number: int, reviewers: list[str]) -> dict:
        pr = self._pull(repository, number)
        pr["reviewers"] = sorted(set(pr["reviewers"]) | set(reviewers))
        return {"repository": repository, "number": number, "reviewers": pr["reviewers"]}

    def merge_pull_request(
        self,
        repository: str,
        number: int,
        merge_method: str = "squash",
        delete_branch: bool = True,
    ) -> dict[str, Any]:
        pr = self._pull(repository, number)
        if pr["state"] != "open":
            raise ValueError(f"Pull request #{number} is {pr['state']}, not open.")
        if pr["checks"] == "failing":
            raise ValueError(f"Pull request #{number} has failing checks; fix them first.")
        pr["state"] = "merged"
        sha = _sha(repository, number, merge_method)
        return {"merged": True, "sha": sha, "method": merge_method, "branch_deleted": delete_branch}

    # -- CI -------------------------------------------------------------------------------

    def list_workflow_runs(
        self,
        repository: str | None = None,
        status: str | None = None,
        branch: str | None = None,
        limit: int = 20,
    ) -> dict[str, Any]:
        def keep(run: dict[str, Any]) -> bool:
            return (
                (repository is None or run["repository"] == repository)
                and (status is None or run["status"] == status)
                and (branch is None or run["branch"] == branch)
            )

        return self.runs.select(keep, limit=limit, sort_key="started_at", descending=True)

    async def get_workflow_logs(self, run_id: str, step: str | None = None) -> dict[str, Any] | str:
        await asyncio.sleep(0)
        run = self.runs.get(run_id)
        r = rng("ci-log", run_id)
        steps = ["checkout", "setup", "install", "lint", "test", "build"]
        lines = []
        for name in steps:
            if step and name != step:
                continue
            lines.append(f"##[group]{name}")
            for n in range(r.randint(300, 700)):
                lines.append(f"{iso(minutes=n / 60)} [{name}] ok step {n}: {r.choice(_THINGS)}")
            lines.append("##[endgroup]")
        if run["status"] == "failure":
            lines.append(
                "FAILED tests/test_checkout.py::test_total - AssertionError: 41.99 != 42.0"
            )
        return "\n".join(lines)

    def rerun_workflow(self, run_id: str, failed_jobs_only: bool = True) -> dict[str, Any]:
        run = self.runs.get(run_id)
        new = self.runs.add({**{k: v for k, v in run.items() if k != "id"}, "status": "queued"})
        return {"rerun_of": run_id, "run": new, "failed_jobs_only": failed_jobs_only}


def build_tools() -> list[Tool]:
    """The code hosting tools, bound to a fresh :class:`CodeHostingBackend`."""
    b = CodeHostingBackend()
    repository = string(
        "Repository as 'owner/name', e.g. 'acme/api'.", pattern="^[\\w.-]+/[\\w.-]+$"
    )
    number = integer("Issue or pull request number.", minimum=1)
    run_id = string("Workflow run id, e.g. 'run_0001' (from code_hosting_list_workflow_runs).")
    logins = array(string("A username."), "Usernames.")
    return [
        Tool(
            name="code_hosting_list_repositories",
            description=(
                "List the organisation's git repositories, by language or visibility. Use it to "
                "find a repository's full name."
            ),
            parameters=obj(
                {
                    "language": enum(LANGUAGES, "Only repositories in this main language."),
                    "visibility": enum(["all", "public", "private"], "Visibility.", default="all"),
                    "sort": enum(["updated", "stars", "name"], "Order.", default="updated"),
                }
            ),
            handler=b.list_repositories,
            domain=DOMAIN,
            group="repositories",
            keywords=("github", "gitlab", "repos", "projects"),
            annotations=READ,
        ),
        Tool(
            name="code_hosting_get_repository",
            description=(
                "Get a repository's details: description, language, branches, stars. Use it for "
                "an overview of one repository."
            ),
            parameters=obj({"repository": repository}, ["repository"]),
            handler=b.get_repository,
            domain=DOMAIN,
            group="repositories",
            keywords=("repo details", "github"),
            annotations=READ,
        ),
        Tool(
            name="code_hosting_create_repository",
            description=(
                "Create a new git repository in the organisation. Use it when a new project needs"
                " a repository."
            ),
            parameters=obj(
                {
                    "name": string("Repository name.", pattern="^[a-z0-9][a-z0-9._-]*$"),
                    "description": string("One-line description.", default=""),
                    "visibility": enum(["private", "public"], "Visibility.", default="private"),
                    "initialize_readme": boolean("Create an initial README.", True),
                    "gitignore_template": enum(["Python", "Node", "Go", "Java"], "A .gitignore."),
                },
                ["name"],
            ),
            handler=b.create_repository,
            domain=DOMAIN,
            group="repositories",
            keywords=("new repo", "init"),
            annotations=CREATE,
        ),
        Tool(
            name="code_hosting_delete_repository",
            description=(
                "Permanently delete a repository with all its code, issues and history. Use it "
                "only on an explicit request."
            ),
            parameters=obj(
                {
                    "repository": repository,
                    "confirm_name": string(
                        "Repeat the repository name to confirm, e.g. 'acme/api'."
                    ),
                },
                ["repository", "confirm_name"],
            ),
            handler=b.delete_repository,
            domain=DOMAIN,
            group="repositories",
            keywords=("remove repo",),
            annotations=DELETE,
            usage_notes="Irreversible. Only when the user explicitly asks to delete this exact "
            "repository; archive it instead when in doubt.",
        ),
        Tool(
            name="code_hosting_list_commits",
            description=(
                "List the commit history of a branch with messages, authors and changed files; "
                "filter by author, date or path. Returns many commits by default (large). Use it "
                "to see what changed and who changed it."
            ),
            parameters=obj(
                {
                    "repository": repository,
                    "branch": string("Branch or tag.", default="main"),
                    "author": string("Only commits by this username."),
                    "since": string("Only commits after.", format="date-time"),
                    "path": string("Only commits touching this file."),
                    "per_page": integer("Commits to return.", minimum=1, maximum=500, default=100),
                },
                ["repository"],
            ),
            handler=b.list_commits,
            domain=DOMAIN,
            group="repositories",
            keywords=("git log", "history", "changes"),
            annotations=READ,
            truncation="smart",
        ),
        Tool(
            name="code_hosting_get_file_contents",
            description=(
                "Read a file from a repository at a branch, tag or commit. Use it when you need "
                "source code."
            ),
            parameters=obj(
                {
                    "repository": repository,
                    "path": string("File path in the repository, e.g. 'src/orders/api.py'."),
                    "ref": string("Branch, tag or commit sha.", default="main"),
                },
                ["repository", "path"],
            ),
            handler=b.get_file_contents,
            domain=DOMAIN,
            group="repositories",
            keywords=("source code", "view file", "blob"),
            annotations=READ,
        ),
        Tool(
            name="code_hosting_search_code",
            description=(
                "Search source code across repositories for a symbol or text. Use it when you do "
                "not know which file holds something."
            ),
            parameters=obj(
                {
                    "query": string("Text or symbol to find."),
                    "repository": repository,
                    "language": enum(LANGUAGES, "Only code in this language."),
                    "limit": page(),
                },
                ["query"],
            ),
            handler=b.search_code,
            domain=DOMAIN,
            group="repositories",
            keywords=("grep", "find usages", "symbol"),
            annotations=READ,
        ),
        Tool(
            name="code_hosting_create_branch",
            description=(
                "Create a git branch from another branch or commit. Use it before opening a pull "
                "request with new changes."
            ),
            parameters=obj(
                {
                    "repository": repository,
                    "branch": string("New branch name, e.g. 'fix/login-loop'."),
                    "from_ref": string("Branch or sha to start from.", default="main"),
                },
                ["repository", "branch"],
            ),
            handler=b.create_branch,
            domain=DOMAIN,
            group="repositories",
            keywords=("git branch", "checkout -b"),
            annotations=CREATE,
        ),
        Tool(
            name="code_hosting_delete_branch",
            description=(
                "Delete a git branch (not the default branch). Use it to clean up after a merge."
            ),
            parameters=obj(
                {"repository": repository, "branch": string("Branch to delete.")},
                ["repository", "branch"],
            ),
            handler=b.delete_branch,
            domain=DOMAIN,
            group="repositories",
            input_examples=({"repository": "acme/api", "branch": "develop"},),
            keywords=("remove branch", "cleanup"),
            annotations=DELETE,
        ),
        Tool(
            name="code_hosting_list_issues",
            description=(
                "List a repository's issues (bugs, feature requests) by state, label, assignee. "
                "Use it to review the backlog or find an issue number."
            ),
            parameters=obj(
                {
                    "repository": repository,
                    "state": enum(["open", "closed", "all"], "Issue state.", default="open"),
                    "labels": array(string("Label."), "Issues carrying all these labels."),
                    "assignee": string("Only issues assigned to this username."),
                    "query": string("Words in the title.", default=""),
                    "limit": page(),
                },
                ["repository"],
            ),
            handler=b.list_issues,
            domain=DOMAIN,
            group="issues",
            keywords=("bugs", "tickets", "backlog"),
            annotations=READ,
        ),
        Tool(
            name="code_hosting_create_issue",
            description=(
                "Open a new issue (bug report or feature request) in a repository. Use it when a "
                "bug or request should be tracked."
            ),
            parameters=obj(
                {
                    "repository": repository,
                    "title": string("Issue title.", minLength=1),
                    "body": string("Markdown description.", default=""),
                    "labels": array(string("Label."), "Labels to add."),
                    "assignees": logins,
                },
                ["repository", "title"],
            ),
            handler=b.create_issue,
            domain=DOMAIN,
            group="issues",
            keywords=("report bug", "file ticket"),
            annotations=CREATE,
            input_examples=(
                {
                    "repository": "acme/api",
                    "title": "Checkout returns 500 for empty carts",
                    "labels": ["bug", "p1"],
                },
            ),
        ),
        Tool(
            name="code_hosting_comment_on_issue",
            description=(
                "Add a comment to an issue or pull request. Use it to discuss or give an update."
            ),
            parameters=obj(
                {"repository": repository, "number": number, "body": string("Markdown comment.")},
                ["repository", "number", "body"],
            ),
            handler=b.comment_on_issue,
            domain=DOMAIN,
            group="issues",
            keywords=("reply", "discuss"),
            annotations=CREATE,
        ),
        Tool(
            name="code_hosting_close_issue",
            description=(
                "Close an issue as completed or as not planned. Use it when the work is done or "
                "will not be done."
            ),
            parameters=obj(
                {
                    "repository": repository,
                    "number": number,
                    "reason": enum(["completed", "not_planned"], "Why.", default="completed"),
                },
                ["repository", "number"],
            ),
            handler=b.close_issue,
            domain=DOMAIN,
            group="issues",
            keywords=("resolve", "done"),
            annotations=UPDATE,
        ),
        Tool(
            name="code_hosting_list_pull_requests",
            description=(
                "List a repository's pull requests (merge requests) by state or author. Use it to"
                " find open reviews or a pull request number."
            ),
            parameters=obj(
                {
                    "repository": repository,
                    "state": enum(["open", "closed", "merged", "all"], "State.", default="open"),
                    "author": string("Only pull requests by this username."),
                    "limit": page(),
                },
                ["repository"],
            ),
            handler=b.list_pull_requests,
            domain=DOMAIN,
            group="pull_requests",
            keywords=("PR", "merge request", "code review"),
            annotations=READ,
        ),
        Tool(
            name="code_hosting_create_pull_request",
            description=(
                "Open a pull request to merge a branch, optionally a draft with reviewers. Use it"
                " when changes on a branch are ready for review."
            ),
            parameters=obj(
                {
                    "repository": repository,
                    "title": string("Title."),
                    "head": string("Branch with the changes, e.g. 'develop'."),
                    "base": string("Branch to merge into.", default="main"),
                    "body": string("Markdown description.", default=""),
                    "draft": boolean("Open as draft.", False),
                    "reviewers": logins,
                },
                ["repository", "title", "head"],
            ),
            handler=b.create_pull_request,
            domain=DOMAIN,
            group="pull_requests",
            keywords=("PR", "propose changes"),
            annotations=CREATE,
        ),
        Tool(
            name="code_hosting_get_pull_request_diff",
            description=(
                "Get the unified diff of a pull request (can be long). Use it when reviewing a "
                "pull request's changes."
            ),
            parameters=obj({"repository": repository, "number": number}, ["repository", "number"]),
            handler=b.get_pull_request_diff,
            domain=DOMAIN,
            group="pull_requests",
            keywords=("changes", "patch", "review code"),
            input_examples=({"repository": "acme/api", "number": 100},),
            annotations=READ,
        ),
        Tool(
            name="code_hosting_request_review",
            description=(
                "Ask people to review a pull request. Use it when a pull request needs reviewers."
            ),
            parameters=obj(
                {
                    "repository": repository,
                    "number": number,
                    "reviewers": {**logins, "minItems": 1},
                },
                ["repository", "number", "reviewers"],
            ),
            handler=b.request_review,
            domain=DOMAIN,
            group="pull_requests",
            keywords=("reviewer", "approve"),
            input_examples=({"repository": "acme/api", "number": 100, "reviewers": ["maya"]},),
            annotations=UPDATE,
        ),
        Tool(
            name="code_hosting_merge_pull_request",
            description=(
                "Merge an open pull request with passing checks (merge, squash or rebase). Use it"
                " only after approval."
            ),
            parameters=obj(
                {
                    "repository": repository,
                    "number": number,
                    "merge_method": enum(_MERGE_METHODS, "How to merge.", default="squash"),
                    "delete_branch": boolean("Delete the head branch afterwards.", True),
                },
                ["repository", "number"],
            ),
            handler=b.merge_pull_request,
            domain=DOMAIN,
            group="pull_requests",
            keywords=("land", "ship"),
            input_examples=({"repository": "acme/api", "number": 100},),
            annotations=ToolAnnotations(
                read_only=False, destructive=False, idempotent=False, open_world=False
            ),
        ),
        Tool(
            name="code_hosting_list_workflow_runs",
            description=(
                "List CI/CD workflow runs (builds, tests, deploys), newest first. Use it to find "
                "failed builds and their run ids."
            ),
            parameters=obj(
                {
                    "repository": repository,
                    "status": enum(
                        ["success", "failure", "in_progress", "queued"], "Only this outcome."
                    ),
                    "branch": string("Only runs on this branch."),
                    "limit": page(),
                }
            ),
            handler=b.list_workflow_runs,
            domain=DOMAIN,
            group="ci",
            keywords=("pipeline", "build", "actions", "failed tests"),
            annotations=READ,
        ),
        Tool(
            name="code_hosting_get_workflow_logs",
            description=(
                "Get the full log text of a CI workflow run (or one step), to see why a build "
                "failed. Logs are long. Use it after code_hosting_list_workflow_runs."
            ),
            parameters=obj(
                {
                    "run_id": run_id,
                    "step": enum(
                        ["checkout", "setup", "install", "lint", "test", "build"], "Only this step."
                    ),
                },
                ["run_id"],
            ),
            handler=b.get_workflow_logs,
            domain=DOMAIN,
            group="ci",
            keywords=("build log", "ci output", "why did it fail"),
            annotations=READ,
            truncation="tail",
        ),
        Tool(
            name="code_hosting_rerun_workflow",
            description="Re-run a CI workflow run, by default only its failed jobs.",
            parameters=obj(
                {"run_id": run_id, "failed_jobs_only": boolean("Only failed jobs.", True)},
                ["run_id"],
            ),
            handler=b.rerun_workflow,
            domain=DOMAIN,
            group="ci",
            keywords=("retry build", "restart pipeline"),
            annotations=CREATE,
        ),
    ]
