#!/usr/bin/env python3
"""Re-check every claim of set.json against the transcripts in sessions/ (stdlib only).

Run from anywhere:  python3 verify.py   (a session file may be kept gzipped as <file>.gz; sha256 is of the plain file)
Prints one JSON line: {"ok": true|false, ...counts..., "errors": [...]}; exit status 0 when ok.

Checks
- every session file / extra file exists; sessions are listed oldest first; sha256 of each file matches SOURCE.md
- schema: ids, kinds, fields; 40-55 questions; minimum counts per kind; in_context share
- must_contain: each string occurs (case-insensitive) in the decoded text of at least one cited evidence line
  (decoded = every JSON string value of that transcript line, joined with newlines: prompts, assistant text,
  thinking, tool inputs and tool outputs)
- must_not_contain (superseded / closed_item): each string occurs in a cited evidence line of a session that is
  older than the newest session holding a must_contain hit; superseded questions must have one
- cross_session: evidence from at least two sessions
- negative: empty must_contain, expected == "nothing_relevant", and none of its keywords occurs anywhere in any
  session (keywords below, case-insensitive, decoded text)
- the files written for this set (set.json, README.md, SOURCE.md, PROTOCOL.md, verify.py) hold no local machine path
"""
import gzip
import hashlib
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
KINDS = {"fact", "decision", "procedure", "preference", "error_fix", "episode", "open_item",
         "superseded", "cross_session", "closed_item", "negative"}
MINIMUM = {"superseded": 5, "cross_session": 5, "closed_item": 4, "negative": 5}
NEGATIVE_KEYWORDS = {
    "msdev-n1": ["grafana", "prometheus", "/metrics"],
    "msdev-n2": ["kubernetes", "helm chart", "namespace"],
    "msdev-n3": ["fail2ban", "passwordauthentication", "sshd_config"],
    "msdev-n4": ["pagerduty", "uptimerobot", "statuspage", "uptime"],
    "msdev-n5": ["autovacuum", "vacuum"],
    "msdev-n6": ["invoice", "billing", "aws bill", "monthly cost"],
}
OWN_FILES = ["set.json", "README.md", "SOURCE.md", "PROTOCOL.md", "verify.py"]
LOCAL_PATH = re.compile(r"(?<![\w.~-])/(?:work|tmp|home|Users)/")


def opened(path, mode="rb"):
    """The file, or its gzipped copy `<path>.gz` (the repository keeps the transcripts gzipped)."""
    if not os.path.isfile(path) and os.path.isfile(path + ".gz"):
        return gzip.open(path + ".gz", mode, encoding="utf-8" if "t" in mode else None)
    return open(path, mode, encoding="utf-8" if "t" in mode else None)


def present(path):
    return os.path.isfile(path) or os.path.isfile(path + ".gz")


def strings(o):
    if isinstance(o, str):
        yield o
    elif isinstance(o, dict):
        for v in o.values():
            yield from strings(v)
    elif isinstance(o, list):
        for v in o:
            yield from strings(v)


def decode(path):
    out = []
    with opened(path, "rt") as f:
        for line in f:
            try:
                out.append("\n".join(strings(json.loads(line))).lower())
            except ValueError:
                out.append(line.lower())
    return out


def sha256(path):
    h = hashlib.sha256()
    with opened(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def main():
    errors = []
    data = json.load(open(os.path.join(HERE, "set.json"), encoding="utf-8"))
    sessions = data.get("sessions", [])
    questions = data.get("questions", [])

    # --- sessions
    source = open(os.path.join(HERE, "SOURCE.md"), encoding="utf-8").read()
    listed_sha = dict(re.findall(r"`(sessions/[^`]+)`[^\n]*?`([0-9a-f]{64})`", source))
    index, text = {}, {}
    prev = ""
    for i, s in enumerate(sessions):
        sid = s.get("id")
        index[sid] = i
        for rel in [s.get("file")] + list(s.get("extra") or []):
            p = os.path.join(HERE, rel or "")
            if not rel or not present(p):
                errors.append(f"session {sid}: missing file {rel}")
                continue
            want = listed_sha.get(rel)
            if want is None:
                errors.append(f"session {sid}: {rel} has no sha256 in SOURCE.md")
            elif sha256(p) != want:
                errors.append(f"session {sid}: sha256 of {rel} differs from SOURCE.md")
        if s.get("agent") not in {"claude-code", "codex", "copilot", "gemini-cli"}:
            errors.append(f"session {sid}: unknown agent {s.get('agent')}")
        if (s.get("started") or "") < prev:
            errors.append(f"session {sid}: not in chronological order")
        prev = s.get("started") or ""
        if present(os.path.join(HERE, s.get("file") or "")):
            text[sid] = decode(os.path.join(HERE, s["file"]))

    # --- questions
    kinds, ids, in_ctx, total_lines = {}, set(), 0, 0
    for q in questions:
        qid, kind = q.get("id"), q.get("kind")
        kinds[kind] = kinds.get(kind, 0) + 1
        if qid in ids:
            errors.append(f"{qid}: duplicate id")
        ids.add(qid)
        if kind not in KINDS:
            errors.append(f"{qid}: unknown kind {kind}")
        for field in ("question", "answer"):
            if not (q.get(field) or "").strip():
                errors.append(f"{qid}: empty {field}")
        if not isinstance(q.get("in_context"), bool):
            errors.append(f"{qid}: in_context must be true/false")
        in_ctx += bool(q.get("in_context"))
        mc = q.get("must_contain") or []
        mnc = q.get("must_not_contain") or []

        if kind == "negative":
            if mc or q.get("expected") != "nothing_relevant" or q.get("in_context"):
                errors.append(f"{qid}: negative needs empty must_contain, expected=nothing_relevant, in_context false")
            kws = NEGATIVE_KEYWORDS.get(qid)
            if not kws:
                errors.append(f"{qid}: no keyword list in verify.py")
            for kw in kws or []:
                for sid, lines in text.items():
                    hit = [n for n, t in enumerate(lines, 1) if kw.lower() in t]
                    if hit:
                        errors.append(f"{qid}: keyword {kw!r} occurs in {sid[:8]} lines {hit[:5]}")
            continue

        if not 1 <= len(mc) <= 3:
            errors.append(f"{qid}: needs 1-3 must_contain strings")
        ev = q.get("evidence") or []
        if not ev:
            errors.append(f"{qid}: no evidence")
        ev_lines = []  # (session index, session id, line number, decoded text)
        for e in ev:
            sid = e.get("session")
            if sid not in index:
                errors.append(f"{qid}: evidence session {sid} not in sessions")
                continue
            for n in e.get("lines") or []:
                lines = text.get(sid, [])
                if not isinstance(n, int) or not 1 <= n <= len(lines):
                    errors.append(f"{qid}: line {n} out of range for {sid[:8]}")
                    continue
                ev_lines.append((index[sid], sid, n, lines[n - 1]))
                total_lines += 1
        newest_mc = -1
        for s in mc:
            where = [(i, sid, n) for i, sid, n, t in ev_lines if s.lower() in t]
            if not where:
                errors.append(f"{qid}: must_contain {s!r} not in any evidence line")
            else:
                newest_mc = max(newest_mc, max(i for i, _, _ in where))
        if kind == "superseded" and not mnc:
            errors.append(f"{qid}: superseded needs must_not_contain")
        if mnc and kind not in ("superseded", "closed_item"):
            errors.append(f"{qid}: must_not_contain only for superseded/closed_item")
        for s in mnc:
            older = [(i, sid, n) for i, sid, n, t in ev_lines if s.lower() in t and i < newest_mc]
            if not older:
                errors.append(f"{qid}: must_not_contain {s!r} not in an older session's evidence line")
        if kind == "cross_session" and len({sid for _, sid, _, _ in ev_lines}) < 2:
            errors.append(f"{qid}: cross_session evidence spans fewer than two sessions")

    n = len(questions)
    if not 40 <= n <= 55:
        errors.append(f"{n} questions; expected 40-55")
    for k, m in MINIMUM.items():
        if kinds.get(k, 0) < m:
            errors.append(f"kind {k}: {kinds.get(k, 0)} < {m}")
    share = in_ctx / n if n else 0
    if not 0.3 <= share <= 0.5:
        errors.append(f"in_context share {share:.2f} outside 0.30-0.50")

    # --- no local machine paths in the files written for this set
    for name in OWN_FILES:
        p = os.path.join(HERE, name)
        if os.path.isfile(p):
            for ln, line in enumerate(open(p, encoding="utf-8"), 1):
                if LOCAL_PATH.search(line) and "LOCAL_PATH" not in line:
                    errors.append(f"{name}:{ln}: local machine path")

    print(json.dumps({
        "ok": not errors,
        "sessions": len(sessions),
        "questions": n,
        "kinds": dict(sorted(kinds.items())),
        "in_context": in_ctx,
        "evidence_lines": total_lines,
        "errors": errors,
    }, ensure_ascii=False))
    return 0 if not errors else 1


if __name__ == "__main__":
    sys.exit(main())
