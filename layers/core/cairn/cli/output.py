"""How the CLI prints: `--json` documents as the API returns them, ids whole, text cut only with "…".

Listings are lines, not tables: a terminal's width never cuts an id (tables squeeze columns to fit).
"""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer
from rich.console import Console

out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, soft_wrap=True)

AsJson = Annotated[bool, typer.Option("--json", help="Print the API's JSON (one document)")]
Full = Annotated[bool, typer.Option("--full", help="Print whole texts (default: cut at one line with …)")]
Url = Annotated[str | None, typer.Option("--url", help="Server URL (default: CAIRN_URL, then user config)")]
Key = Annotated[str | None, typer.Option("--key", help="API key (default: CAIRN_API_KEY, then user config)")]

ELLIPSIS = "…"
CUT_AT = 160


def print_json(doc: Any) -> None:
    """One JSON document on stdout, nothing else (no colour, no wrapping)."""
    typer.echo(json.dumps(doc, indent=2, ensure_ascii=False))


def cut(text: str | None, full: bool = False, width: int = CUT_AT) -> str:
    """The text on one line, cut with an ellipsis past `width` characters; whole with `full`."""
    if text is None:
        return ""
    if full:
        return text
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1].rstrip() + ELLIPSIS


def esc(text: object) -> str:
    """Text printed through rich without its [markup] being read as styles."""
    from rich.markup import escape

    return escape(str(text))


def print_digest(doc: dict[str, Any]) -> None:
    """A digest's text for a person: as an agent reads it, without the markers that fence it off."""
    lines = doc["markdown"].splitlines()
    shown = [ln for ln in lines if ln.strip() not in ("<cairn-context>", "</cairn-context>")]
    typer.echo("\n".join(shown))


def clock(seconds: float) -> str:
    """A duration as a progress line shows it: `0:04:07`."""
    seconds = max(0, int(seconds))
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"
