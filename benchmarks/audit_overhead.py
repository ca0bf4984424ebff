"""What the audit trail costs a write, local mode: remember / update / forget with the trail and without.

One local store (SQLite + the real ONNX embedder); the same calls go through a `MemoryService` whose trail
records (as bootstrap wires it) and one whose trail records nothing, alternating per round so load on the
machine hits both alike. Each figure is the median per call over the rounds, in milliseconds; the entry is
written inside the memory's own transaction, so the difference is the trail's whole cost.

    .venv/bin/python benchmarks/audit_overhead.py [--rounds 7] [--calls 100]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from cairn.bootstrap import build_container
from cairn.domain.models import MemoryKind
from cairn.services.audit import AuditTrail
from cairn.services.memories import MemoryPatch, MemoryService, NewMemory
from cairn.settings import Settings


def _run(service: MemoryService, caller, calls: int, tag: str) -> dict[str, float]:
    times: dict[str, float] = {}
    start = time.perf_counter()
    made = [
        service.remember(caller, NewMemory(MemoryKind.FACT, f"{tag} fact {i} about the build", project="p"))
        for i in range(calls)
    ]
    times["remember"] = (time.perf_counter() - start) / calls
    start = time.perf_counter()
    for m in made:
        service.update(caller, m.id, MemoryPatch(title=f"{tag} {m.id}"))
    times["update"] = (time.perf_counter() - start) / calls
    start = time.perf_counter()
    for m in made:
        service.forget(caller, m.id)
    times["forget"] = (time.perf_counter() - start) / calls
    return times


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--calls", type=int, default=100)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        c = build_container(Settings(mode="local", home=Path(tmp)))
        _, _, secret = c.keys.create_team("bench", "dev")
        caller = c.keys.authenticate(secret)
        audited = c.memories
        bare = MemoryService(
            audited._memories, audited._relations, audited._indexer, unit=audited._unit, audit=AuditTrail()
        )
        _run(audited, caller, 10, "warm")  # the model and the views loaded before anything is timed
        runs: dict[str, list[dict[str, float]]] = {"with": [], "without": []}
        for r in range(args.rounds):
            for label, service in (("with", audited), ("without", bare))[:: 1 if r % 2 else -1]:
                runs[label].append(_run(service, caller, args.calls, f"{label}{r}"))
        c.close()
    result = {
        label: {op: round(statistics.median(t[op] for t in runs[label]) * 1000, 3) for op in runs[label][0]}
        for label in runs
    }
    for op in result["with"]:
        print(f"{op:<9} with trail {result['with'][op]:8.3f} ms   without {result['without'][op]:8.3f} ms")
    print(json.dumps({"benchmark": "audit_overhead", "rounds": args.rounds, "calls": args.calls, **result}))


if __name__ == "__main__":
    main()
