"""Reprocessing in AWS: start a learning execution of the Step Functions state machine for a session.

Uploads start executions on their own (S3 → EventBridge); `cairn reprocess` needs one started by hand.
The input looks like the EventBridge event the state machine's first (Pass) state reads, naming the
session's last transcript part. A forced reprocess first deletes the session's stage outputs, so no
stage can skip its work (memories are still deduplicated by consolidation).
"""

from __future__ import annotations

import json
import re
import uuid
from typing import Any

from cairn.domain.errors import InvalidInput, Unavailable
from cairn.domain.models import utcnow
from cairn.pipeline import keys as k
from cairn.pipeline.deps import PipelineDeps
from cairn.pipeline.models import SessionRef

_NAME_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")


class StepFunctionsPipelineRunner:
    def __init__(self, deps: PipelineDeps, state_machine_arn: str, bucket: str, client: Any = None) -> None:
        if client is None:
            import boto3

            client = boto3.client("stepfunctions")
        self.deps = deps
        self._arn = state_machine_arn
        self._bucket = bucket
        self._sfn = client

    def start(self, team_id: str, session_id: str, force: bool = False) -> str:
        """Start an execution for the session; returns its ARN."""
        session = self.deps.session(SessionRef(team_id=team_id, session_id=session_id))
        parts = k.transcript_parts(session.transcript_keys, session)
        if not parts:
            raise InvalidInput("this session has no stored transcript to learn from", session_id=session_id)
        if force:
            for key in self.deps.blobs.list(k.stages_prefix(session)):
                self.deps.blobs.delete(key)
        event = {
            "id": f"reprocess-{uuid.uuid4()}",
            "time": utcnow().isoformat(),
            "detail": {"bucket": {"name": self._bucket}, "object": {"key": parts[-1], "size": 0, "etag": ""}},
        }
        name = _NAME_UNSAFE.sub("-", f"reprocess-{session_id}")[:60] + f"-{uuid.uuid4().hex[:8]}"
        try:
            resp = self._sfn.start_execution(stateMachineArn=self._arn, name=name, input=json.dumps(event))
        except Exception as exc:  # botocore errors: the pipeline cannot be started right now
            raise Unavailable(f"could not start the learning pipeline: {exc}") from exc
        return resp["executionArn"]
