#!/usr/bin/env python3
"""Re-check every claim of set.json against the session files (stdlib only).

- each must_contain string occurs verbatim in at least one cited evidence line (decoded JSON string values);
- each must_not_contain string occurs verbatim in a cited evidence line of a session that comes before the latest
  session whose cited lines hold a must_contain string (the stale value predates the current one);
- evidence lines exist; ids unique; kinds known; minimum counts per kind;
- negatives: no evidence, expected == nothing_relevant, and none of their probe keywords occurs in any session;
- sha256 of each session file matches SOURCE.md; no local machine paths in the set's text files.
Prints one JSON line; exit status 1 when anything fails.
Usage: python3 verify.py            (run from anywhere; paths are relative to this file)
"""
import gzip
import hashlib
import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
KINDS = {"fact", "decision", "procedure", "preference", "error_fix", "episode", "open_item", "superseded",
         "cross_session", "closed_item", "negative"}
MINIMA = {"superseded": 6, "cross_session": 5, "closed_item": 4, "negative": 6}
# keywords searched (case-insensitive) in every session to show that nothing answers a negative question
NEG_PROBES = {
    "ccb-53": ["grafana"],
    "ccb-54": ["kubernetes", "helm", "kubectl"],
    "ccb-55": ["redis"],
    "ccb-56": ["sentry"],
    "ccb-57": ["dockerfile", "docker"],
    "ccb-58": ["fuzz"],
    "ccb-59": ["litestream", "backup"],
}


def read_session(path: Path) -> bytes:
    """The file's bytes, or those of its gzipped copy `<file>.gz` (the repository keeps the transcripts gzipped)."""
    gz = path.with_name(path.name + ".gz")
    if not path.exists() and gz.exists():
        return gzip.decompress(gz.read_bytes())
    return path.read_bytes()


def strings(obj, out):
    if isinstance(obj, str):
        out.append(obj)
    elif isinstance(obj, dict):
        for v in obj.values():
            strings(v, out)
    elif isinstance(obj, list):
        for v in obj:
            strings(v, out)


def main() -> int:
    data = json.loads((HERE / "set.json").read_text(encoding="utf-8"))
    errors: list[str] = []
    order = {}
    lines: dict[str, list[str]] = {}   # session id -> joined decoded strings per line (1-based index = i+1)
    for i, s in enumerate(data["sessions"]):
        order[s["id"]] = i
        path = HERE / s["file"]
        if not (path.exists() or path.with_name(path.name + ".gz").exists()):
            errors.append(f"missing session file {s['file']}")
            continue
        decoded = []
        for raw in read_session(path).decode("utf-8").splitlines():
            out: list[str] = []
            strings(json.loads(raw), out)
            decoded.append("\n".join(out))
        lines[s["id"]] = decoded
        for extra in s.get("extra", []):
            if not (HERE / extra).exists():
                errors.append(f"missing extra file {extra}")
    started = [s["started"] for s in data["sessions"]]
    if started != sorted(started):
        errors.append("sessions are not oldest first")

    source = (HERE / "sessions" / "SOURCE.md")
    if source.exists():
        src = source.read_text(encoding="utf-8")
        for s in data["sessions"]:
            digest = hashlib.sha256(read_session(HERE / s["file"])).hexdigest()
            if digest not in src:
                errors.append(f"sha256 of {s['file']} not in SOURCE.md")
    else:
        errors.append("sessions/SOURCE.md missing")

    ids = set()
    counts: dict[str, int] = {}
    checked_mc = checked_mnc = 0
    for q in data["questions"]:
        qid = q["id"]
        if qid in ids:
            errors.append(f"duplicate id {qid}")
        ids.add(qid)
        kind = q["kind"]
        counts[kind] = counts.get(kind, 0) + 1
        if kind not in KINDS:
            errors.append(f"{qid}: unknown kind {kind}")
        if kind == "negative":
            if q.get("must_contain") or q.get("evidence") or q.get("expected") != "nothing_relevant":
                errors.append(f"{qid}: negative must have no must_contain/evidence and expected=nothing_relevant")
            for kw in NEG_PROBES.get(qid, []):
                for sid, ls in lines.items():
                    for n, text in enumerate(ls, 1):
                        if kw.lower() in text.lower():
                            errors.append(f"{qid}: probe '{kw}' occurs in {sid[:8]} line {n}")
            if qid not in NEG_PROBES:
                errors.append(f"{qid}: no probe keywords")
            continue
        if not q.get("must_contain"):
            errors.append(f"{qid}: answerable question without must_contain")
        ev = []
        for e in q.get("evidence", []):
            sid = e["session"]
            if sid not in lines:
                errors.append(f"{qid}: evidence session {sid} not in set")
                continue
            for n in e["lines"]:
                if not 1 <= n <= len(lines[sid]):
                    errors.append(f"{qid}: line {n} out of range for {sid[:8]}")
                else:
                    ev.append((order[sid], sid, n, lines[sid][n - 1]))
        latest_mc = -1
        for m in q.get("must_contain", []):
            checked_mc += 1
            where = [o for o, _, _, t in ev if m in t]
            if not where:
                errors.append(f"{qid}: must_contain {m!r} not in its evidence lines")
            else:
                latest_mc = max(latest_mc, max(where))
        for m in q.get("must_not_contain", []):
            checked_mnc += 1
            where = [o for o, _, _, t in ev if m in t]
            if not where:
                errors.append(f"{qid}: must_not_contain {m!r} not in its evidence lines")
            elif min(where) >= latest_mc:
                errors.append(f"{qid}: must_not_contain {m!r} not in a session before the current value")
        if kind in ("superseded", "closed_item") and q.get("must_not_contain") is not None and not q["must_not_contain"]:
            errors.append(f"{qid}: empty must_not_contain list")
        if kind == "cross_session" and len({e['session'] for e in q.get('evidence', [])}) < 2:
            errors.append(f"{qid}: cross_session cites fewer than two sessions")
        if not isinstance(q.get("in_context"), bool):
            errors.append(f"{qid}: in_context must be a boolean")
    for k, n in MINIMA.items():
        if counts.get(k, 0) < n:
            errors.append(f"kind {k}: {counts.get(k, 0)} < {n}")
    total = len(data["questions"])
    if not 45 <= total <= 60:
        errors.append(f"{total} questions, want 45-60")

    local = re.compile(r"(?<![\w.])/(?:work|tmp|home|Users)/")
    for name in ("set.json", "README.md", "sessions/SOURCE.md", "verify.py"):
        p = HERE / name
        if p.exists():
            text = p.read_text(encoding="utf-8")
            if name == "verify.py":
                text = text.replace("(?:work|tmp|home|Users)", "")
            if local.search(text):
                errors.append(f"{name}: contains a local machine path")

    answerable = [q for q in data["questions"] if q["kind"] != "negative"]
    result = {"ok": not errors, "questions": total, "answerable": len(answerable),
              "negatives": counts.get("negative", 0), "in_context": sum(q["in_context"] for q in answerable),
              "kinds": counts, "must_contain_checked": checked_mc, "must_not_contain_checked": checked_mnc,
              "sessions": len(data["sessions"]), "errors": errors}
    print(json.dumps(result))
    return 0 if not errors else 1


if __name__ == "__main__":
    sys.exit(main())
