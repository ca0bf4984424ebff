"""The model-change reindex state machine: plan, a Distributed Map over the S3 manifest, finish; its
workers' grants stay under `reindex/` in the bucket and read-only on the table (finish may update items:
the `embedding_version` stamp)."""

from __future__ import annotations

import json

import pytest

from tests.infra.conftest import ENVIRONMENTS, function_by_service, resources, role_statements

pytestmark = pytest.mark.infra


def _machine(template: dict) -> dict:
    machines = resources(template, "AWS::StepFunctions::StateMachine").values()
    (machine,) = [m for m in machines if "reindex" in json.dumps(m["Properties"].get("StateMachineName"))]
    return machine


def _definition(template: dict) -> dict:
    body = _machine(template)["Properties"]["DefinitionString"]
    if isinstance(body, dict):  # Fn::Join of literals and GetAtt tokens
        body = "".join(part if isinstance(part, str) else "TOKEN" for part in body["Fn::Join"][1])
    return json.loads(body)


@pytest.mark.parametrize("env", ENVIRONMENTS)
def test_reindex_plans_then_maps_the_manifest_pages_distributed_then_finishes(synth, env):
    d = _definition(synth.json[env])
    states = d["States"]
    assert d["StartAt"] == "Defaults"
    assert states["Defaults"]["Next"] == "Plan"
    assert states["Plan"]["Next"] == "EmbedPages"
    pages = states["EmbedPages"]
    assert pages["Type"] == "Map" and pages["ItemProcessor"]["ProcessorConfig"]["Mode"] == "DISTRIBUTED"
    reader = pages["ItemReader"]
    assert reader["Resource"].endswith(":s3:getObject")
    assert reader["ReaderConfig"]["InputType"] == "JSON"
    assert reader["Parameters"]["Key"] == "reindex/manifest.json"
    assert pages["MaxConcurrencyPath"] == "$.args.workers"
    # no tolerated failures (the default): never a swap with a page missing
    assert not pages.get("ToleratedFailurePercentage") and not pages.get("ToleratedFailureCount")
    assert pages["Next"] == "Finish" and states["Finish"]["End"] is True
    worker = pages["ItemProcessor"]["States"][pages["ItemProcessor"]["StartAt"]]
    assert worker["Parameters"] == {"page.$": "$.page", "version.$": "$.version"}
    assert any("States.TaskFailed" in r["ErrorEquals"] for r in worker["Retry"])


@pytest.mark.parametrize("env", ENVIRONMENTS)
def test_reindex_workers_read_the_table_and_write_only_under_the_reindex_prefix_and_finish_stamps(synth, env):
    template = synth.json[env]
    for handler in ("handler.plan", "handler.embed_page", "handler.finish"):
        _, fn = function_by_service(template, "cairn-reindex", handler)
        statements = role_statements(template, fn)
        actions = {
            a for s in statements for a in ([s["Action"]] if isinstance(s["Action"], str) else s["Action"])
        }
        # only finish writes to the table: it stamps each record's `embedding_version` (UpdateItem alone)
        stamps = {"dynamodb:UpdateItem"} if handler == "handler.finish" else set()
        writes_table = actions & {"dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem"}
        assert writes_table == stamps, handler
        assert {"dynamodb:Query", "dynamodb:BatchGetItem", "dynamodb:GetItem"} <= actions
        writes = [s for s in statements if "s3:PutObject" in s["Action"] or "s3:DeleteObject" in s["Action"]]
        assert writes and all("reindex/*" in json.dumps(s["Resource"]) for s in writes), handler
        assert "es:ESHttpPut" in actions or "es:ESHttp*" in actions or any("es:" in a for a in actions)


@pytest.mark.parametrize("env", ENVIRONMENTS)
def test_the_state_machine_may_read_the_manifest_and_start_its_child_workflows(synth, env):
    template = synth.json[env]
    machine = _machine(template)
    role_id = machine["Properties"]["RoleArn"]["Fn::GetAtt"][0]
    policies = [
        p for p in resources(template, "AWS::IAM::Policy").values()
        if {"Ref": role_id} in p["Properties"]["Roles"]
    ]  # fmt: skip
    actions = {
        a
        for p in policies
        for s in p["Properties"]["PolicyDocument"]["Statement"]
        for a in ([s["Action"]] if isinstance(s["Action"], str) else s["Action"])
    }
    assert "s3:GetObject" in actions and "lambda:InvokeFunction" in actions
    assert "states:StartExecution" in actions  # a Distributed Map runs each page as a child execution


@pytest.mark.parametrize("env", ENVIRONMENTS)
def test_the_api_reads_only_the_reindex_runs_record_and_lists_only_its_done_markers(synth, env):
    """The UI's reindex page: exactly what `DistributedReindex.status` reads, nothing written there."""
    template = synth.json[env]
    _, fn = function_by_service(template, "cairn-api", "handler.handler")
    statements = role_statements(template, fn)
    on_reindex = [s for s in statements if "reindex/" in json.dumps(s)]
    granted = {
        (a, json.dumps(s.get("Condition", {})) if a == "s3:ListBucket" else json.dumps(s["Resource"]))
        for s in on_reindex
        for a in ([s["Action"]] if isinstance(s["Action"], str) else s["Action"])
    }
    assert {a for a, _ in granted} == {"s3:GetObject", "s3:ListBucket"}
    assert all("reindex/run.json" in where for a, where in granted if a == "s3:GetObject")
    assert all('"reindex/*/done/"' in where for a, where in granted if a == "s3:ListBucket")
