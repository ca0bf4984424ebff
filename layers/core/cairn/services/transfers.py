"""Whole-team export and import, staged in the blob store and done by a worker, not in an API response.

An export is started by a request that only records it and launches the worker (a Lambda invoked
asynchronously in AWS, a thread locally); the worker writes the team's JSON lines into one object a
page at a time, updating a small status object as it goes; the client polls the status, and once it is
`done` the status carries a short-lived URL confined to that one object (an S3 presigned GET, or the
local signed token). An import is the mirror: the client asks for a presigned upload of one object,
sends the file there, then starts the worker, which imports it with `PortabilityService` (vectors of the
same model reused) and reports the counts in the status. So no API response carries the data: no
response size cap, no API timeout, and no gateway re-encoding of the body.

Keys: `teams/<team>/transfers/<id>/{status.json,export.jsonl,import.jsonl}`; the team in the key comes
from the caller's key, so a transfer id of another team is simply not found.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field, replace
from typing import Literal

from cairn.domain.audit import AuditAction
from cairn.domain.errors import Conflict, Forbidden, InvalidInput, NotFound, Unavailable
from cairn.domain.ids import is_valid_id, new_id
from cairn.domain.models import KeyScope, Principal, utcnow
from cairn.domain.ports import BlobStore, TransferLauncher, UploadTarget
from cairn.services.audit import AuditTrail
from cairn.services.memories import require
from cairn.services.portability import PortabilityService

ID_PREFIX = "xfer"
CONTENT_TYPE = "application/x-ndjson"
PAGE_LINES = 1000  # lines per page written, and per progress update of the status
MAX_IMPORT_BYTES = 4 * 1024**3

State = Literal["waiting", "queued", "running", "done", "failed"]


@dataclass(frozen=True, slots=True)
class Transfer:
    id: str
    team_id: str
    kind: Literal["export", "import"]
    state: State
    member: str  # who asked: the worker acts for them
    created_at: str
    updated_at: str
    records: int = 0  # export: lines written so far; import: lines imported so far
    total: int | None = None  # import: the lines of the file, once read
    counts: dict[str, int] = field(default_factory=dict)  # import: memories, relations, sessions, skipped
    error: str | None = None

    def to_json(self) -> dict:
        return asdict(self)


def transfer_key(team_id: str, transfer_id: str, name: str) -> str:
    return f"teams/{team_id}/transfers/{transfer_id}/{name}"


class TransferService:
    def __init__(
        self,
        blobs: BlobStore,
        portability: PortabilityService,
        launcher: TransferLauncher | None,
        url_ttl_s: int = 900,
        clock: Callable[[], object] = utcnow,
        audit: AuditTrail | None = None,
    ) -> None:
        self._audit = audit or AuditTrail()
        self._blobs = blobs
        self._portability = portability
        self._launcher = launcher
        self._ttl = url_ttl_s
        self._clock = clock

    # --- the API's side ----------------------------------------------------------------------------
    def start_export(self, caller: Principal) -> Transfer:
        _require_whole_team(caller)
        transfer = self._new(caller, "export", "queued")
        self._launch(transfer)
        self._record(caller, AuditAction.EXPORT, transfer, "started")
        return transfer

    def request_import(self, caller: Principal, size: int) -> tuple[Transfer, UploadTarget]:
        """A transfer waiting for its file, and where to upload it (one object, at most `size` bytes)."""
        _require_whole_team(caller)
        if not 1 <= size <= MAX_IMPORT_BYTES:
            raise InvalidInput(f"an import file must be 1 byte to {MAX_IMPORT_BYTES} bytes", bytes=size)
        transfer = self._new(caller, "import", "waiting")
        target = self._blobs.presign_upload(
            transfer_key(caller.team_id, transfer.id, "import.jsonl"), size, CONTENT_TYPE, self._ttl
        )
        self._record(caller, AuditAction.IMPORT, transfer, "upload granted")
        return transfer, target

    def start_import(self, caller: Principal, transfer_id: str) -> Transfer:
        _require_whole_team(caller)
        transfer = self._get(caller.team_id, transfer_id)
        if transfer.kind != "import":
            raise InvalidInput("this transfer is an export, not an import", transfer_id=transfer_id)
        if transfer.state != "waiting":
            raise Conflict(f"this import was already started ({transfer.state})", transfer_id=transfer_id)
        if not self._blobs.exists(transfer_key(caller.team_id, transfer_id, "import.jsonl")):
            raise InvalidInput("the import file has not been uploaded", transfer_id=transfer_id)
        transfer = self._save(replace(transfer, state="queued"))
        self._launch(transfer)
        self._record(caller, AuditAction.IMPORT, transfer, "started")
        return transfer

    def status(self, caller: Principal, transfer_id: str) -> tuple[Transfer, str | None]:
        """The transfer, and for a finished export a short-lived URL of its file."""
        _require_whole_team(caller)
        transfer = self._get(caller.team_id, transfer_id)
        url = None
        if transfer.kind == "export" and transfer.state == "done":
            key = transfer_key(caller.team_id, transfer_id, "export.jsonl")
            url = self._blobs.presign_download(key, self._ttl)
        return transfer, url

    # --- the worker's side ---------------------------------------------------------------------------
    def run(self, team_id: str, transfer_id: str) -> Transfer:
        """Do a queued transfer (the worker); a failure is recorded in its status, not raised, so an
        async invocation is not retried into a second copy of the work."""
        transfer = self._get(team_id, transfer_id)
        if transfer.state != "queued":
            return transfer  # a duplicate delivery of the launch: the first one does the work
        transfer = self._save(replace(transfer, state="running"))
        acting = Principal(team_id, transfer.member, f"transfer:{transfer_id}", frozenset({KeyScope.ADMIN}))
        try:
            if transfer.kind == "export":
                return self._export(transfer, acting)
            return self._import(transfer, acting)
        except Exception as exc:  # noqa: BLE001 - any failure ends the transfer with its reason
            message = getattr(exc, "message", None) or f"{type(exc).__name__}: {exc}"
            cause = getattr(exc, "details", {}).get("cause") or getattr(exc, "details", {}).get("first")
            message = f"{message} ({cause})" if cause else message
            return self._save(replace(self._get(team_id, transfer_id), state="failed", error=str(message)))

    def _export(self, transfer: Transfer, acting: Principal) -> Transfer:
        progress = {"records": 0}

        def pages() -> Iterator[bytes]:
            page: list[str] = []
            for line in self._portability.export_lines(acting):
                page.append(line)
                if len(page) >= PAGE_LINES:
                    yield self._page(transfer, page, progress)
                    page = []
            if page:
                yield self._page(transfer, page, progress)

        key = transfer_key(transfer.team_id, transfer.id, "export.jsonl")
        self._blobs.put_chunks(key, pages(), CONTENT_TYPE)
        return self._save(replace(transfer, state="done", records=progress["records"]))

    def _page(self, transfer: Transfer, page: list[str], progress: dict[str, int]) -> bytes:
        progress["records"] += len(page)
        self._save(replace(transfer, state="running", records=progress["records"]))
        return ("\n".join(page) + "\n").encode()

    def _import(self, transfer: Transfer, acting: Principal) -> Transfer:
        raw = self._blobs.get(transfer_key(transfer.team_id, transfer.id, "import.jsonl"))
        try:
            lines = raw.decode("utf-8").splitlines()
        except UnicodeDecodeError:
            raise InvalidInput("the import file is not UTF-8 JSON lines") from None
        total = sum(1 for line in lines if line.strip())
        running = self._save(replace(transfer, total=total))

        def progress(done: int) -> None:
            self._save(replace(running, records=done))

        report = self._portability.import_lines(acting, lines, progress=progress)
        counts = {
            "memories": report.memories,
            "relations": report.relations,
            "sessions": report.sessions,
            "skipped": report.skipped,
        }
        return self._save(replace(running, state="done", records=total, counts=counts))

    def _record(self, caller: Principal, action: AuditAction, transfer: Transfer, step: str) -> None:
        """The request's entry (its actor and request id); the worker's own export or import entry
        follows with the counts, under the key `transfer:<id>`."""
        details = {"transfer": transfer.id, "step": step}
        self._audit.record(caller, action, caller.team_id, details=details)

    # --- status objects ------------------------------------------------------------------------------
    def _new(self, caller: Principal, kind: Literal["export", "import"], state: State) -> Transfer:
        now = self._clock().isoformat()  # type: ignore[attr-defined]
        transfer = Transfer(new_id(ID_PREFIX), caller.team_id, kind, state, caller.member, now, now)
        return self._save(transfer)

    def _launch(self, transfer: Transfer) -> None:
        if self._launcher is None:
            self._save(replace(transfer, state="failed", error="no transfer worker is configured"))
            raise InvalidInput("this server has no transfer worker configured (CAIRN_TRANSFER_FUNCTION)")
        try:
            self._launcher.launch(transfer.team_id, transfer.id)
        except Exception as exc:  # noqa: BLE001 - an SDK error is a one-line 503, not a traceback
            self._save(replace(transfer, state="failed", error=f"the worker did not start: {exc}"))
            raise Unavailable("the transfer worker could not be started; try again") from exc

    def _save(self, transfer: Transfer) -> Transfer:
        transfer = replace(transfer, updated_at=self._clock().isoformat())  # type: ignore[attr-defined]
        key = transfer_key(transfer.team_id, transfer.id, "status.json")
        self._blobs.put(key, json.dumps(transfer.to_json()).encode(), "application/json")
        return transfer

    def _get(self, team_id: str, transfer_id: str) -> Transfer:
        if not is_valid_id(transfer_id, ID_PREFIX):
            raise NotFound("no such transfer", transfer_id=transfer_id)
        try:
            raw = self._blobs.get(transfer_key(team_id, transfer_id, "status.json"))
        except NotFound:
            raise NotFound("no such transfer", transfer_id=transfer_id) from None
        return Transfer(**json.loads(raw))


def _require_whole_team(caller: Principal) -> None:
    """A staged transfer moves the whole team, so it needs an admin key for every project of it (the
    worker acts for the team); a key limited to projects exports its own through `/v1/admin/export`."""
    require(caller, KeyScope.ADMIN)
    if caller.projects is not None:
        raise Forbidden("a whole-team export or import needs an admin key for every project of the team")
