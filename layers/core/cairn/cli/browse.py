"""`cairn list`, `cairn show` and `cairn audit`: every memory the team has, everything about one of them
(its audit trail included), and the team's audit trail."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from cairn.cli.client import CairnClient
from cairn.cli.output import AsJson, Full, Key, Url, cut, err, esc, out, print_json

MAX_PAGE = 500


def register(app: typer.Typer) -> None:
    app.command("list")(list_memories)
    app.command("show")(show)
    app.command("audit")(audit)


def list_memories(
    project: Annotated[str | None, typer.Option(help="Only this project (and team-wide memories)")] = None,
    kind: Annotated[list[str] | None, typer.Option("--kind", help="Only these kinds (repeatable)")] = None,
    scope: Annotated[
        list[str] | None, typer.Option("--scope", help="Only these scopes: project, team, personal")
    ] = None,
    tag: Annotated[list[str] | None, typer.Option("--tag", "-t", help="Only with these tags")] = None,
    session: Annotated[str | None, typer.Option("--session", help="Only learned from this session")] = None,
    include_superseded: Annotated[
        bool, typer.Option("--include-superseded", help="Also memories replaced by newer ones")
    ] = False,
    limit: Annotated[int, typer.Option(help="Page size (1-500)", min=1, max=MAX_PAGE)] = 50,
    cursor: Annotated[str | None, typer.Option(help="Continue from a previous page's cursor")] = None,
    all_pages: Annotated[bool, typer.Option("--all", help="Every page, not just the first")] = False,
    full: Full = False,
    as_json: AsJson = False,
    url: Url = None,
    key: Key = None,
) -> None:
    """List memories, newest first, with the API's filters (one page, or --all)."""
    params: dict[str, Any] = {"limit": limit, "include_superseded": include_superseded}
    for name, value in (("project", project), ("session_id", session), ("cursor", cursor)):
        if value:
            params[name] = value
    for name, values in (("kind", kind), ("scope", scope), ("tag", tag)):
        if values:
            params[name] = values
    items, next_cursor = _pages(CairnClient(url, key), "/v1/memories", params, all_pages)
    if as_json:
        print_json({"items": items, "next_cursor": next_cursor})
        return
    for m in items:
        flags = "".join(
            (
                " pinned" if m["pinned"] else "",
                f" superseded by {m['superseded_by']}" if m["superseded_by"] else "",
            )
        )
        out.print(
            f"{m['id']}  {m['kind']:<10} {m['scope']:<8} {esc(m['project'] or '-')}  "
            f"{m['confidence']:.2f}{flags}  {esc(cut(m['content'], full))}"
        )
    if not items:
        out.print("[dim]no memories[/dim]")
    if next_cursor:
        err.print(f"more: --cursor {next_cursor} (or --all)")


def show(
    memory_id: Annotated[str, typer.Argument(help="Memory id (mem_...)")],
    as_json: AsJson = False,
    url: Url = None,
    key: Key = None,
) -> None:
    """Everything about one memory: content, provenance, supersession, details, relations and history."""
    client = CairnClient(url, key)
    m = client.request("GET", f"/v1/memories/{memory_id}")
    relations = client.request("GET", f"/v1/memories/{memory_id}/relations")["items"]
    history = client.request("GET", f"/v1/memories/{memory_id}/audit")["items"]
    if as_json:
        print_json({"memory": m, "relations": relations, "history": history})
        return
    p = m["provenance"]
    span = f"lines {p['line_start']}-{p['line_end']}" if p["line_start"] is not None else "-"
    rows = [
        ("id", m["id"]),
        ("kind", m["kind"]),
        ("scope", m["scope"]),
        ("project", m["project"] or "- (team-wide)"),
        ("owner", m["owner"] or "-"),
        ("title", m["title"] or "-"),
        ("tags", ", ".join(m["tags"]) or "-"),
        ("confidence", f"{m['confidence']:.2f}"),
        ("pinned", "yes" if m["pinned"] else "no"),
        ("session", p["session_id"] or "-"),
        ("agent", p["agent"] or "-"),
        ("transcript", p["transcript_key"] or "-"),
        ("span", span),
        ("said by", p.get("said_by") or "-"),
        ("written by", f"{p.get('member') or '-'} (key {p.get('key_id') or '-'})"),
        ("valid", f"{m['valid_from']} → {m['valid_to'] or 'now'}"),
        ("superseded by", m["superseded_by"] or "-"),
        ("created", m["created_at"]),
        ("updated", m["updated_at"]),
        ("accessed", f"{m['access_count']} times, last {m['last_accessed_at'] or 'never'}"),
    ]
    for label, value in rows:
        out.print(f"{label:<14}{esc(value)}")
    for source in p.get("sources") or []:
        trust = "trusted" if source.get("trusted") else "untrusted"
        cue = f"; reads as instructions: {source['directive']}" if source.get("directive") else ""
        target = f" {source['target']}" if source.get("target") else ""
        out.print(f"{'source':<14}{esc(source['tool'] + target)} ({trust}{esc(cue)})")
    out.print("content")
    out.print(esc(m["content"]))
    if m["details"]:
        out.print("details")
        for name, value in m["details"].items():
            out.print(f"  {esc(name)}: {esc(value)}")
    out.print("relations" if relations else "relations     -")
    for r in relations:
        ended = f" (ended {r['valid_to']})" if r["valid_to"] else ""
        edge = f"{r['source_id']} -{esc(r['predicate'])}-> {r['target_id']}"
        out.print(f"  {edge}  {r['weight']:.2f}{ended}  {r['id']}")
    out.print("history" if history else "history       -")
    for e in history:
        out.print(f"  {_entry_line(e)}")


def audit(
    target: Annotated[str | None, typer.Option(help="Only entries about this memory, key or project")] = None,
    limit: Annotated[int, typer.Option(help="Page size (1-500)", min=1, max=MAX_PAGE)] = 50,
    cursor: Annotated[str | None, typer.Option(help="Continue from a previous page's cursor")] = None,
    all_pages: Annotated[bool, typer.Option("--all", help="Every page, not just the first")] = False,
    as_json: AsJson = False,
    url: Url = None,
    key: Key = None,
) -> None:
    """The team's audit trail, newest first: who wrote, changed, forgot, exported or redacted what (admin)."""
    params: dict[str, Any] = {"limit": limit}
    for name, value in (("target", target), ("cursor", cursor)):
        if value:
            params[name] = value
    items, next_cursor = _pages(CairnClient(url, key), "/v1/audit", params, all_pages)
    if as_json:
        print_json({"items": items, "next_cursor": next_cursor})
        return
    for e in items:
        out.print(f"{esc(e['target'])}  {_entry_line(e)}")
    if not items:
        out.print("[dim]no audit entries[/dim]")
    if next_cursor:
        err.print(f"more: --cursor {next_cursor} (or --all)")


def _entry_line(e: dict[str, Any]) -> str:
    """One entry: when, what, who (member, key, agent) and in which request."""
    agent = f", agent {e['agent']}" if e.get("agent") else ""
    details = " ".join(f"{k}={v}" for k, v in (e.get("details") or {}).items())
    return esc(
        f"{e['at']}  {e['action']:<10} {e['member']} (key {e['key_id']}{agent})  "
        f"request {e.get('request_id') or '-'}" + (f"  {details}" if details else "")
    )


def _pages(
    client: CairnClient, path: str, params: dict[str, Any], all_pages: bool
) -> tuple[list, str | None]:
    """A listing's first page (or every page, with `all_pages`), and the cursor to continue from."""
    page = client.request("GET", path, params=params)
    items = list(page["items"])
    while all_pages and page.get("next_cursor"):
        page = client.request("GET", path, params={**params, "cursor": page["next_cursor"]})
        items.extend(page["items"])
    return items, None if all_pages else page.get("next_cursor")
