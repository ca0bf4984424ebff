"""Reads back the policy of an S3 presigned POST, so tests (and debugging) can check its conditions.

moto accepts uploads without checking the policy, so what we can and must test is the policy we sign.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any


@dataclass(frozen=True, slots=True)
class PostPolicy:
    expiration: datetime
    exact: dict[str, str]  # field -> value that must match exactly (`{"f": v}` or `["eq", "$f", v]`)
    starts_with: dict[str, str]  # field -> required prefix
    content_length_range: tuple[int, int] | None


def decode_post_policy(fields: dict[str, str]) -> PostPolicy:
    """Decode the base64 `policy` form field of a presigned POST into its conditions."""
    document: dict[str, Any] = json.loads(base64.b64decode(fields["policy"]))
    exact: dict[str, str] = {}
    starts: dict[str, str] = {}
    length: tuple[int, int] | None = None
    for cond in document["conditions"]:
        if isinstance(cond, dict):
            exact.update({k: str(v) for k, v in cond.items()})
        elif cond[0] == "content-length-range":
            length = (int(cond[1]), int(cond[2]))
        elif cond[0] == "eq":
            exact[cond[1].lstrip("$")] = str(cond[2])
        elif cond[0] == "starts-with":
            starts[cond[1].lstrip("$")] = str(cond[2])
    expiration = datetime.fromisoformat(document["expiration"].replace("Z", "+00:00"))
    return PostPolicy(expiration, exact, starts, length)
