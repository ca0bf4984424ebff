"""cdk-nag AwsSolutions acknowledgements for the Cairn stack.

The checks run on the whole app (``infra/app.py``); every finding that remains is acknowledged here, on the
narrowest construct, with the reason. IAM5 (wildcard) acknowledgements name the exact action or resource
pattern they cover, so a new wildcard anywhere still fails the check (``tests/infra`` asserts there are no
unacknowledged AwsSolutions errors).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from aws_cdk import aws_lambda as lambda_
from cdk_nag import NagPackSuppression, NagSuppressions, RegexAppliesTo
from constructs import IConstruct

if TYPE_CHECKING:  # pragma: no cover
    from infra.stack import CairnStack

LAMBDA_BASIC_EXECUTION = (
    "Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole"
)


def _ack(construct: IConstruct, rule: str, reason: str, applies_to: list | None = None) -> None:
    NagSuppressions.add_resource_suppressions(
        construct,
        [NagPackSuppression(id=f"AwsSolutions-{rule}", reason=reason, applies_to=applies_to)],
        apply_to_children=True,
    )


def _logical(prefix: str, suffix: str) -> RegexAppliesTo:
    """Matches ``Resource::<PrefixHASH.Arn>suffix`` where HASH is CDK's logical-id hash."""
    escaped = suffix.replace("/", "\\/").replace("*", "\\*")
    return RegexAppliesTo(regex=f"/^Resource::<{prefix}[0-9A-F]{{8}}\\.Arn>{escaped}$/g")


def acknowledge_findings(stack: CairnStack) -> None:
    config_name = stack.node.id.removeprefix("Cairn-")
    domain_paths = (
        f"Resource::arn:<AWS::Partition>:es:<AWS::Region>:<AWS::AccountId>:domain/cairn-{config_name}/*"
    )
    functions: list[lambda_.Function] = [
        stack.api.function,
        stack.api.mcp_function,
        stack.auth.function,
        stack.indexer.function,
        *stack.pipeline.functions.values(),
        stack.pipeline.sweeper,
        *stack.reindex.functions.values(),
        stack.api.transfer_function,
    ]
    _ack(
        stack.api.ui_secret,
        "SMG4",
        "The UI session secret signs short-lived cookies; rotating it signs everyone out, so it is "
        "rotated by redeploying (a new secret) rather than on a schedule.",
    )
    for fn in functions:
        _ack(
            fn,
            "L1",
            "Pinned to python3.12: the shared layer is built for cp312 manylinux wheels "
            "(infra/config.py PYTHON_VERSION); bump both together.",
        )
        _ack(
            fn,
            "IAM4",
            "AWSLambdaBasicExecutionRole only allows writing this function's CloudWatch Logs.",
            [LAMBDA_BASIC_EXECUTION],
        )
        _ack(
            fn,
            "IAM5",
            "X-Ray PutTraceSegments/PutTelemetryRecords (active tracing) support no resource-level "
            "permissions; for the indexer also dynamodb:ListStreams, which has none either.",
            ["Resource::*"],
        )

    table_users = [
        stack.api.function,
        stack.api.mcp_function,
        stack.auth.function,
        *stack.pipeline.functions.values(),
        stack.pipeline.sweeper,
        *stack.reindex.functions.values(),
        stack.api.transfer_function,
    ]
    for fn in table_users:
        _ack(
            fn,
            "IAM5",
            "Queries on the table's GSIs (gsi1-gsi5) of this one table.",
            [_logical("StorageTable", "/index/*")],
        )

    for fn in stack.pipeline.functions.values():
        _ack(
            fn,
            "IAM5",
            "Pipeline stages read transcripts and write intermediate objects (chunks, extraction "
            "results) anywhere in this one bucket; keys are derived from the transcript key.",
            [_logical("StorageTranscripts", "/*")],
        )
    _ack(
        stack.api.function,
        "IAM5",
        "Presigned uploads and reading the cited transcript lines, limited to the teams/ prefix; "
        "the per-team prefix is enforced by the API when it signs or reads.",
        [_logical("StorageTranscripts", "/teams/*")],
    )
    _ack(
        stack.api.function,
        "IAM5",
        "A forced reprocess deletes a session's stage outputs: DeleteObject under teams/*/stages/ only.",
        [_logical("StorageTranscripts", "/teams/*/stages/*")],
    )
    _ack(
        stack.api.mcp_function,
        "IAM5",
        "The transcript tool reads a session's parts under the teams/ prefix; the team is enforced by "
        "the tool before it reads.",
        [_logical("StorageTranscripts", "/teams/*")],
    )

    _ack(
        stack.api.function,
        "IAM5",
        "CDK's grantInvoke also names the transfer worker's versions and aliases (<arn>:*): that one "
        "function only.",
        [f"Resource::<{stack.get_logical_id(stack.api.transfer_function.node.default_child)}.Arn>:*"],
    )
    _ack(
        stack.api.transfer_function,
        "IAM5",
        "The transfer worker reads and writes whole-team export/import files under teams/*/transfers/ "
        "only; the team is enforced by the API that starts it.",
        [_logical("StorageTranscripts", "/teams/*/transfers/*")],
    )
    for fn in (
        stack.api.function,
        stack.api.mcp_function,
        stack.indexer.function,
        *stack.reindex.functions.values(),
        stack.api.transfer_function,
    ):
        _ack(fn, "IAM5", "es:ESHttp* on the index paths of this one OpenSearch domain.", [domain_paths])
    _ack(
        stack.reindex.state_machine,
        "IAM5",
        "CDK's Distributed Map policy: start, describe and stop this state machine's own child executions "
        "(execution ARNs are per run), invoke the reindex tasks' versions (:*), read the manifest object "
        "of this one bucket and decrypt it with the stack's key.",
    )
    for fn in stack.reindex.functions.values():
        _ack(
            fn,
            "IAM5",
            "A model-change reindex reads and writes its pages, done markers and run record under the "
            "reindex/ prefix of this one bucket only.",
            [_logical("StorageTranscripts", "/reindex/*")],
        )
    _ack(
        stack.pipeline.functions["consolidate"],
        "IAM5",
        "Read-only queries (GET/HEAD/POST for _search/_msearch) on the memories index of this one domain; "
        "the wildcard covers the index's request paths.",
        [RegexAppliesTo(regex=r"/^Resource::arn:<AWS::Partition>:es:.*:domain\/[^/]+\/[^/*]+-memories\*$/")],
    )

    _ack(
        stack.indexer.function,
        "IAM5",
        "CDK's SQS send grant for the encrypted stream-failure DLQ: "
        "kms:GenerateDataKey*/ReEncrypt* on the stack's own key only.",
        ["Action::kms:GenerateDataKey*", "Action::kms:ReEncrypt*"],
    )

    state_machine = stack.pipeline.state_machine
    _ack(
        state_machine,
        "IAM5",
        "Invoke any version/alias of the five stage functions (CDK's LambdaInvoke grant adds <fn arn>:*).",
        [_logical(f"Pipeline{s.capitalize()}Function", ":*") for s in stack.pipeline.functions],
    )
    _ack(
        state_machine,
        "IAM5",
        "CloudWatch Logs delivery (logs:*LogDelivery, DescribeResourcePolicies...) and "
        "X-Ray have no resource-level permissions.",
        ["Resource::*"],
    )
    _ack(
        state_machine,
        "IAM5",
        "Send to the KMS-encrypted dead-letter queue: GenerateDataKey* on the stack's own key only.",
        ["Action::kms:GenerateDataKey*"],
    )

    _ack(
        stack.pipeline.dream_machine,
        "IAM5",
        "Invoke any version/alias of the dream function (CDK's LambdaInvoke grant adds <fn arn>:*).",
        [_logical("PipelineDreamFunction", ":*")],
    )
    _ack(
        stack.pipeline.dream_machine,
        "IAM5",
        "CloudWatch Logs delivery (logs:*LogDelivery, DescribeResourcePolicies...) and "
        "X-Ray have no resource-level permissions.",
        ["Resource::*"],
    )

    _ack(
        stack.storage.bucket,
        "S1",
        "Transcript access is logged by the API (who asked for which presigned "
        "URL) and by CloudTrail S3 data events where the account enables them; a second logging bucket per "
        "environment is not worth its cost here.",
    )

    domain = stack.search.domain
    _ack(
        domain,
        "OS1",
        "Callers are Lambda functions outside any VPC; access is IAM (SigV4) restricted to the "
        "API and indexer roles by the domain's resource policy, HTTPS only. A VPC would need NAT/endpoints.",
    )
    _ack(domain, "OS3", "No IP allow-list: Lambda has no fixed IPs. Access is restricted to two IAM roles.")
    cfg = stack.search.config
    if not cfg.opensearch_master_nodes:
        _ack(domain, "OS4", f"{cfg.name}: no dedicated master nodes to keep the domain cheap; prod has them.")
    if cfg.opensearch_availability_zones < 2:
        _ack(
            domain,
            "OS7",
            f"{cfg.name}: single-node, single-AZ domain by design (cost); the index is "
            "derived from DynamoDB and rebuildable with `cairn reindex`.",
        )

    _ack(
        stack.pipeline.dead_letter,
        "SQS3",
        "This queue is itself the dead-letter destination of the pipeline "
        "(Step Functions catch + EventBridge target DLQ).",
    )
    _ack(
        stack.indexer.dead_letter,
        "SQS3",
        "This queue is itself the on-failure destination of the DynamoDB stream event source mapping.",
    )

    rest_api = stack.api.rest_api
    _ack(rest_api, "APIG2", "Proxy integration: FastAPI validates every request body and parameter.")
    _ack(
        rest_api,
        "APIG3",
        "No WAF web ACL per environment (cost); the API is protected by the authorizer and "
        "usage-plan throttling. Add WAF in front of prod if abuse appears.",
    )
    _ack(
        rest_api,
        "APIG6",
        "Execution logging needs the account-wide API Gateway CloudWatch role shared by all "
        "stacks; access logs (JSON), X-Ray tracing and the API Lambda's logs cover each request.",
    )
    _ack(
        rest_api,
        "COG4",
        "Callers are agents' hooks/MCP clients with team API keys, not Cognito users; the "
        "REQUEST authorizer validates hashed keys.",
    )
    for method in stack.api.ui_methods:
        _ack(
            method,
            "APIG4",
            "The web UI (GET / and /ui/*) authenticates in the app: a signed, HttpOnly session cookie "
            "naming an API key that is re-checked as active on every request; CSRF tokens on every POST.",
        )
    _ack(
        stack.api.health_method,
        "APIG4",
        "GET /v1/health is deliberately unauthenticated (liveness probe); it returns no team data.",
    )
