"""Limits on a memory's free-form `details` object, and a bounded view of it for replies.

`details` is caller-supplied JSON. Deep nesting is refused where it comes in (the REST and MCP models,
the import, the memory service), and a record stored before those limits existed is still answered:
`bounded` replaces whatever lies deeper than `MAX_DETAILS_DEPTH` by its JSON text, so a reply never
trips a serialiser's recursion limit (pydantic's is about 255) and one record cannot break a team's
reads. Depth is measured without recursion, so a hostile value cannot exhaust the stack here either.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from cairn.domain.errors import InvalidInput

MAX_DETAILS_DEPTH = 32  # containers inside `details`; the object itself is depth 1
MAX_DETAILS_BYTES = 32_768  # of JSON, for details written through the API
_TOO_DEEP = "<too deeply nested to show>"


def depth(value: Any, stop_after: int = MAX_DETAILS_DEPTH) -> int:
    """How deeply dicts and lists nest in `value` (a scalar is 0); counting stops past `stop_after`."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, level = stack.pop()
        if isinstance(node, Mapping):
            children: Any = node.values()
        elif isinstance(node, (list, tuple)):
            children = node
        else:
            continue
        deepest = max(deepest, level)
        if deepest > stop_after:
            return deepest
        stack.extend((child, level + 1) for child in children)
    return deepest


def too_deep_message(limit: int = MAX_DETAILS_DEPTH) -> str:
    return f"details must not nest more than {limit} levels deep"


def check_details(details: Mapping[str, Any], limit: int = MAX_DETAILS_DEPTH) -> None:
    """Refuse details nested deeper than `limit`, before anything is stored."""
    if depth(details, limit) > limit:
        raise InvalidInput(too_deep_message(limit), max_depth=limit)


def bounded(details: Mapping[str, Any], limit: int = MAX_DETAILS_DEPTH) -> dict[str, Any]:
    """`details` as it is when it nests at most `limit` deep; otherwise a copy whose too-deep parts
    are replaced by their JSON text."""
    if depth(details, limit) <= limit:
        return dict(details)
    return _cut(details, 1, limit)


def _cut(node: Any, level: int, limit: int) -> Any:
    if not isinstance(node, (Mapping, list, tuple)):
        return node
    if level > limit:
        try:
            return json.dumps(node, default=str)
        except (RecursionError, ValueError):
            return _TOO_DEEP
    if isinstance(node, Mapping):
        return {k: _cut(v, level + 1, limit) for k, v in node.items()}
    return [_cut(v, level + 1, limit) for v in node]
