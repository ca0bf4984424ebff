"""Each function's role holds only what its job needs."""

from __future__ import annotations

import pytest

from tests.infra.conftest import actions_of, function_by_service, resources, role_statements

pytestmark = pytest.mark.infra

DYNAMO_WRITES = {"dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:BatchWriteItem"}
PIPELINE_STAGES = ("parse", "chunk", "extract", "consolidate", "reflect", "dream")


def _actions(synth, service: str, handler: str | None = None) -> set[str]:
    template = synth.json["dev"]
    _, fn = function_by_service(template, service, handler)
    return actions_of(role_statements(template, fn))


def _statements(synth, service: str) -> list[dict]:
    template = synth.json["dev"]
    _, fn = function_by_service(template, service)
    return role_statements(template, fn)


def test_indexer_reads_the_stream_and_writes_opensearch_but_cannot_touch_s3_or_write_the_table(synth):
    actions = _actions(synth, "cairn-indexer")
    assert {"dynamodb:GetRecords", "dynamodb:GetShardIterator", "dynamodb:DescribeStream"} <= actions
    assert "es:ESHttpPut" in actions
    assert not {a for a in actions if a.startswith("s3:")}
    assert not actions & DYNAMO_WRITES


def test_authorizer_can_only_read_the_table(synth):
    actions = _actions(synth, "cairn-authorizer")
    assert {"dynamodb:GetItem", "dynamodb:Query"} <= actions
    assert not actions & DYNAMO_WRITES
    service_prefixes = {a.split(":")[0] for a in actions}
    assert service_prefixes <= {"dynamodb", "xray"}, service_prefixes


def test_only_the_api_mcp_indexer_transfer_worker_consolidate_and_reindex_tasks_may_call_opensearch(synth):
    template = synth.json["dev"]
    callers = set()
    for _, fn in resources(template, "AWS::Lambda::Function").items():
        if any(a.startswith("es:") for a in actions_of(role_statements(template, fn))):
            props = fn["Properties"]
            callers.add((props["Environment"]["Variables"]["POWERTOOLS_SERVICE_NAME"], props["Handler"]))
    assert callers == {
        ("cairn-api", "handler.handler"),
        ("cairn-mcp", "handler.handler"),
        ("cairn-indexer", "handler.handler"),
        ("cairn-transfer", "handler.handler"),
        ("cairn-pipeline", "handler.consolidate"),
        *(("cairn-reindex", f"handler.{task}") for task in ("plan", "embed_page", "finish")),
    }


def _s3_statements(synth, service: str) -> dict[str, list[dict]]:
    by_action: dict[str, list[dict]] = {}
    for st in _statements(synth, service):
        for action in actions_of([st]):
            if action.startswith("s3:"):
                by_action.setdefault(action, []).append(st)
    return by_action


def test_api_puts_and_reads_transcripts_under_teams_and_deletes_only_stage_outputs_and_old_versions(synth):
    s3 = _s3_statements(synth, "cairn-api")
    assert set(s3) == {
        "s3:PutObject",
        "s3:GetObject",
        "s3:ListBucket",
        "s3:DeleteObject",
        "s3:ListBucketVersions",
        "s3:DeleteObjectVersion",
    }
    # a redaction purges the earlier versions of the team's objects it rewrote, under teams/ only
    (versions,) = s3["s3:ListBucketVersions"]
    assert versions["Condition"] == {"StringLike": {"s3:prefix": ["teams/*"]}}
    (purge,) = s3["s3:DeleteObjectVersion"]
    assert "/teams/*" in str(purge["Resource"])
    # presigned uploads, the cited transcript lines, and a forced reprocess's clearing of stage outputs
    # besides teams/: the UI's reindex page reads the reindex run's record and lists its done markers
    assert all("/teams/*" in str(st["Resource"]) for st in s3["s3:PutObject"])
    assert all(
        "/teams/*" in str(st["Resource"]) or "/reindex/run.json" in str(st["Resource"])
        for st in s3["s3:GetObject"]
    )
    assert sorted(str(st["Condition"]) for st in s3["s3:ListBucket"]) == sorted(
        str({"StringLike": {"s3:prefix": [p]}}) for p in ("teams/*", "reindex/*/done/")
    )
    (delete,) = s3["s3:DeleteObject"]
    assert "/teams/*/stages/*" in str(delete["Resource"])
    statements = _statements(synth, "cairn-api")
    assert {"kms:Decrypt", "kms:GenerateDataKey"} <= actions_of(statements)
    assert {"dynamodb:PutItem", "dynamodb:Query"} <= actions_of(statements)
    assert "states:StartExecution" in actions_of(statements)


def test_the_transfer_worker_reads_and_writes_only_transfer_files_and_the_api_may_invoke_it(synth):
    s3 = _s3_statements(synth, "cairn-transfer")
    assert set(s3) == {"s3:GetObject", "s3:PutObject", "s3:AbortMultipartUpload"}
    assert all("/teams/*/transfers/*" in str(st["Resource"]) for sts in s3.values() for st in sts)
    actions = _actions(synth, "cairn-transfer", "handler.handler")
    assert {"dynamodb:PutItem", "dynamodb:Query", "kms:Decrypt", "kms:GenerateDataKey"} <= actions
    assert not {a for a in actions if a.startswith(("states:", "lambda:"))}
    assert "lambda:InvokeFunction" in actions_of(_statements(synth, "cairn-api"))


def test_every_pipeline_stage_reads_and_writes_its_stage_outputs_and_consolidate_alone_searches(synth):
    for stage in PIPELINE_STAGES:
        actions = _actions(synth, "cairn-pipeline", f"handler.{stage}")
        assert {"dynamodb:PutItem", "dynamodb:Query", "s3:GetObject", "kms:Decrypt"} <= actions, stage
        # consolidate and reflect write their results next to the others' (consolidate/, reflect/)
        assert {"s3:PutObject", "kms:GenerateDataKey"} <= actions, stage
        es = {a for a in actions if a.startswith("es:")}
        # consolidate looks for near-duplicates in the index; no stage may write to it
        assert es == (
            {"es:ESHttpGet", "es:ESHttpHead", "es:ESHttpPost"} if stage == "consolidate" else set()
        ), stage
        assert "s3:DeleteObject" not in actions


def test_functions_that_write_the_bucket_are_told_the_stacks_key(synth):
    template = synth.json["dev"]
    writers = [("cairn-api", None), ("cairn-transfer", None)] + [
        ("cairn-pipeline", f"handler.{s}") for s in PIPELINE_STAGES
    ]
    for service, handler in writers:
        _, fn = function_by_service(template, service, handler)
        key_id = fn["Properties"]["Environment"]["Variables"]["CAIRN_KMS_KEY_ID"]
        assert "Fn::GetAtt" in key_id and key_id["Fn::GetAtt"][1] == "Arn", (service, handler)


def test_no_role_is_granted_service_wide_wildcard_actions(synth):
    for template in synth.json.values():
        for policy in resources(template, "AWS::IAM::Policy").values():
            for action in actions_of(policy["Properties"]["PolicyDocument"]["Statement"]):
                assert not action.endswith(":*") and action != "*", action


def test_the_mcp_function_reads_transcript_lines_but_never_writes_blobs_or_starts_the_pipeline(synth):
    actions = _actions(synth, "cairn-mcp")
    assert {"dynamodb:PutItem", "dynamodb:Query", "es:ESHttpPost", "kms:Decrypt"} <= actions
    assert {a for a in actions if a.startswith("s3:")} == {"s3:GetObject", "s3:ListBucket"}
    assert not {a for a in actions if a.startswith("states:")}
    assert "kms:GenerateDataKey" not in actions


def test_the_upload_sweep_updates_sessions_and_lists_transcript_keys_but_never_reads_or_writes_them(synth):
    actions = _actions(synth, "cairn-sweeper", "handler.handler")
    assert {"dynamodb:Query", "dynamodb:GetItem", "dynamodb:PutItem"} <= actions
    s3 = {a for a in actions if a.startswith("s3:")}
    assert s3 == {"s3:ListBucket"}
    assert not {a for a in actions if a.startswith(("es:", "kms:", "states:"))}
    (listing,) = [s for s in _statements(synth, "cairn-sweeper") if "s3:ListBucket" in actions_of([s])]
    assert listing["Condition"] == {"StringLike": {"s3:prefix": ["teams/*"]}}
