"""Smoke tests of the emulated AWS stack itself (LocalStack on the host + osmem-server), per service we use.

They prove what the Cairn e2e suite relies on: S3 enforcing presigned signatures, S3 → EventBridge → Step
Functions, DynamoDB Local, Lambda run by our host executor (direct, through API Gateway, from Step Functions),
CloudFormation, and OpenSearch domains forwarded to osmem-server.
"""

from __future__ import annotations

import base64
import json
import time
import urllib.parse

import httpx
import pytest

from tests.e2e.conftest import ENDPOINT, REGION, unique, wait_until

pytestmark = pytest.mark.e2e


@pytest.fixture
def bucket(aws):
    s3 = aws("s3")
    name = unique("cairn-e2e")
    s3.create_bucket(Bucket=name)
    yield name
    for item in s3.list_objects_v2(Bucket=name).get("Contents", []):
        s3.delete_object(Bucket=name, Key=item["Key"])
    s3.delete_bucket(Bucket=name)


# S3
def test_presigned_put_uploads_exactly_the_signed_key(aws, bucket):
    s3 = aws("s3")
    url = s3.generate_presigned_url(
        "put_object", Params={"Bucket": bucket, "Key": "team-a/one.json"}, ExpiresIn=60
    )

    assert httpx.put(url, content=b'{"n": 1}').status_code == 200
    assert s3.get_object(Bucket=bucket, Key="team-a/one.json")["Body"].read() == b'{"n": 1}'

    other_key = url.replace("team-a/one.json", "team-b/one.json")
    refused = httpx.put(other_key, content=b"intruder")
    assert refused.status_code == 403
    assert "SignatureDoesNotMatch" in refused.text
    assert "Contents" not in s3.list_objects_v2(Bucket=bucket, Prefix="team-b/")


def test_presigned_put_with_a_tampered_signature_is_refused(aws, bucket):
    url = aws("s3").generate_presigned_url("put_object", Params={"Bucket": bucket, "Key": "k"}, ExpiresIn=60)
    parts = urllib.parse.urlsplit(url)
    query = dict(urllib.parse.parse_qsl(parts.query))
    query["X-Amz-Signature"] = "0" * 64
    tampered = urllib.parse.urlunsplit(parts._replace(query=urllib.parse.urlencode(query)))

    assert httpx.put(tampered, content=b"x").status_code == 403


def test_expired_presigned_put_is_refused(aws, bucket):
    url = aws("s3").generate_presigned_url(
        "put_object", Params={"Bucket": bucket, "Key": "late"}, ExpiresIn=1
    )
    time.sleep(2.1)

    refused = httpx.put(url, content=b"too late")
    assert refused.status_code == 403
    assert "expired" in refused.text.lower()


def test_presigned_post_accepts_the_signed_key_and_refuses_another(aws, bucket):
    s3 = aws("s3")
    post = s3.generate_presigned_post(
        bucket, "uploads/a.txt", Conditions=[["content-length-range", 1, 1024]], ExpiresIn=60
    )

    accepted = httpx.post(post["url"], data=post["fields"], files={"file": ("a.txt", b"hello")})
    assert accepted.status_code == 204, accepted.text
    assert s3.get_object(Bucket=bucket, Key="uploads/a.txt")["Body"].read() == b"hello"

    forged = dict(post["fields"], key="uploads/b.txt")
    refused = httpx.post(post["url"], data=forged, files={"file": ("b.txt", b"hello")})
    assert refused.status_code == 403
    too_big = httpx.post(post["url"], data=post["fields"], files={"file": ("a.txt", b"x" * 2048)})
    assert too_big.status_code == 400
    assert "EntityTooLarge" in too_big.text


def test_expired_presigned_post_is_refused(aws, bucket):
    post = aws("s3").generate_presigned_post(bucket, "uploads/late.txt", ExpiresIn=1)
    time.sleep(2.1)

    refused = httpx.post(post["url"], data=post["fields"], files={"file": ("late.txt", b"x")})
    assert refused.status_code == 403
    assert "expired" in refused.text.lower()


# DynamoDB
def test_dynamodb_table_round_trips_an_item_and_queries_a_gsi(aws):
    ddb = aws("dynamodb")
    table = unique("cairn-e2e")
    ddb.create_table(
        TableName=table,
        BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[
            {"AttributeName": "pk", "AttributeType": "S"},
            {"AttributeName": "team", "AttributeType": "S"},
        ],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        GlobalSecondaryIndexes=[
            {
                "IndexName": "by-team",
                "KeySchema": [{"AttributeName": "team", "KeyType": "HASH"}],
                "Projection": {"ProjectionType": "ALL"},
            }
        ],
    )
    try:
        ddb.get_waiter("table_exists").wait(TableName=table)
        ddb.put_item(TableName=table, Item={"pk": {"S": "m1"}, "team": {"S": "a"}, "n": {"N": "3"}})

        item = ddb.get_item(TableName=table, Key={"pk": {"S": "m1"}}, ConsistentRead=True)["Item"]
        assert item == {"pk": {"S": "m1"}, "team": {"S": "a"}, "n": {"N": "3"}}
        found = ddb.query(
            TableName=table,
            IndexName="by-team",
            KeyConditionExpression="team = :t",
            ExpressionAttributeValues={":t": {"S": "a"}},
        )
        assert [i["pk"]["S"] for i in found["Items"]] == ["m1"]
    finally:
        ddb.delete_table(TableName=table)


# Lambda (host executor)
def _invoke(aws, arn: str, event: dict) -> tuple[dict, dict]:
    response = aws("lambda").invoke(FunctionName=arn, Payload=json.dumps(event).encode(), LogType="Tail")
    return response, json.loads(response["Payload"].read())


def test_lambda_from_a_zip_runs_the_handler_with_event_and_context(aws, echo_function):
    response, body = _invoke(aws, echo_function, {"hello": "world"})

    assert response["StatusCode"] == 200
    assert "FunctionError" not in response
    assert body["echo"] == {"hello": "world"}
    assert body["function_name"] == echo_function.rsplit(":", 1)[1]
    assert body["region"] == REGION
    assert 0 < body["remaining_ms"] <= 2000


def test_lambda_environment_stays_warm_between_invocations(aws, echo_function):
    _, first = _invoke(aws, echo_function, {})
    _, second = _invoke(aws, echo_function, {})

    assert second["invocations"] == first["invocations"] + 1


def test_lambda_handler_exception_is_an_unhandled_function_error_with_logs(aws, echo_function):
    response, body = _invoke(aws, echo_function, {"fail": True})

    assert response["FunctionError"] == "Unhandled"
    assert body["errorType"] == "ValueError"
    assert body["errorMessage"] == "asked to fail"
    logs = base64.b64decode(response["LogResult"]).decode()
    assert 'echo handler got {"fail": true}' in logs
    assert "REPORT RequestId" in logs


def test_lambda_past_its_timeout_is_stopped_and_the_next_call_works(aws, echo_function):
    response, body = _invoke(aws, echo_function, {"sleep": 5})

    assert response["FunctionError"] == "Unhandled"
    assert body["errorType"] == "Sandbox.Timedout"
    _, after = _invoke(aws, echo_function, {"again": 1})
    assert after["echo"] == {"again": 1}


def test_lambda_reaches_other_services_through_localstack(aws, echo_function, bucket):
    response, _ = _invoke(aws, echo_function, {"write_to_bucket": bucket})

    assert "FunctionError" not in response
    assert aws("s3").get_object(Bucket=bucket, Key="from-lambda.txt")["Body"].read() == b"hi"


# API Gateway REST -> Lambda
def test_api_gateway_rest_proxy_routes_requests_to_the_lambda(aws, echo_function):
    apigw = aws("apigateway")
    api_id = apigw.create_rest_api(name=unique("cairn-e2e"))["id"]
    try:
        root = next(r["id"] for r in apigw.get_resources(restApiId=api_id)["items"] if r["path"] == "/")
        proxy = apigw.create_resource(restApiId=api_id, parentId=root, pathPart="{proxy+}")["id"]
        apigw.put_method(restApiId=api_id, resourceId=proxy, httpMethod="ANY", authorizationType="NONE")
        apigw.put_integration(
            restApiId=api_id,
            resourceId=proxy,
            httpMethod="ANY",
            type="AWS_PROXY",
            integrationHttpMethod="POST",
            uri=f"arn:aws:apigateway:{REGION}:lambda:path/2015-03-31/functions/{echo_function}/invocations",
        )
        apigw.create_deployment(restApiId=api_id, stageName="test")

        reply = httpx.get(f"{ENDPOINT}/_aws/execute-api/{api_id}/test/memories/42", params={"q": "x"})

        assert reply.status_code == 200, reply.text
        assert reply.json() == {"path": "/memories/42", "query": {"q": "x"}, "method": "GET"}
    finally:
        apigw.delete_rest_api(restApiId=api_id)


# Step Functions -> Lambda
def test_step_functions_state_machine_invokes_the_lambda(aws, echo_function):
    sfn = aws("stepfunctions")
    definition = {
        "StartAt": "Echo",
        "States": {
            "Echo": {
                "Type": "Task",
                "Resource": "arn:aws:states:::lambda:invoke",
                "Parameters": {"FunctionName": echo_function, "Payload.$": "$"},
                "ResultSelector": {"echo.$": "$.Payload.echo"},
                "End": True,
            }
        },
    }
    machine = sfn.create_state_machine(
        name=unique("cairn-e2e"),
        definition=json.dumps(definition),
        roleArn="arn:aws:iam::000000000000:role/cairn-e2e-sfn",
    )["stateMachineArn"]
    try:
        execution = sfn.start_execution(stateMachineArn=machine, input=json.dumps({"upload": "u1"}))[
            "executionArn"
        ]

        done = wait_until(
            lambda: (d := sfn.describe_execution(executionArn=execution))["status"] != "RUNNING" and d
        )
        assert done["status"] == "SUCCEEDED", done
        assert json.loads(done["output"]) == {"echo": {"upload": "u1"}}
    finally:
        sfn.delete_state_machine(stateMachineArn=machine)


# OpenSearch -> osmem-server
def test_opensearch_domain_is_served_by_osmem_server(aws):
    opensearch = aws("opensearch")
    name = unique("cairn-e2e")[:28]
    opensearch.create_domain(DomainName=name, EngineVersion="OpenSearch_2.19")
    try:
        status = wait_until(
            lambda: (
                (s := opensearch.describe_domain(DomainName=name)["DomainStatus"]).get("Endpoint")
                and not s["Processing"]
                and s
            )
        )
        base = f"http://{status['Endpoint']}"

        assert httpx.get(base).json()["cluster_name"] == "osmem"
        index = unique("memories")
        assert httpx.put(f"{base}/{index}").status_code == 200
        indexed = httpx.put(
            f"{base}/{index}/_doc/1", params={"refresh": "true"}, json={"text": "cairn stack"}
        )
        assert indexed.status_code in (200, 201)
        hits = httpx.post(f"{base}/{index}/_search", json={"query": {"match": {"text": "stack"}}}).json()
        assert [h["_id"] for h in hits["hits"]["hits"]] == ["1"]
        httpx.delete(f"{base}/{index}")
    finally:
        opensearch.delete_domain(DomainName=name)


# CloudFormation (how the CDK template will be deployed)
INLINE_HANDLER = (
    "import os\n\n\ndef handler(event, context):\n    return {'uploads': os.environ['UPLOADS']}\n"
)
CFN_TEMPLATE = {
    "Resources": {
        "Uploads": {"Type": "AWS::S3::Bucket"},
        "Role": {
            "Type": "AWS::IAM::Role",
            "Properties": {
                "AssumeRolePolicyDocument": {
                    "Version": "2012-10-17",
                    "Statement": [
                        {
                            "Effect": "Allow",
                            "Principal": {"Service": "lambda.amazonaws.com"},
                            "Action": "sts:AssumeRole",
                        }
                    ],
                }
            },
        },
        "Fn": {
            "Type": "AWS::Lambda::Function",
            "Properties": {
                "Runtime": "python3.13",
                "Handler": "index.handler",
                "Role": {"Fn::GetAtt": ["Role", "Arn"]},
                "Environment": {"Variables": {"UPLOADS": {"Ref": "Uploads"}}},
                "Code": {"ZipFile": INLINE_HANDLER},
            },
        },
    },
    "Outputs": {"FunctionName": {"Value": {"Ref": "Fn"}}, "Bucket": {"Value": {"Ref": "Uploads"}}},
}


def test_cloudformation_deploys_a_template_whose_function_runs(aws):
    cfn = aws("cloudformation")
    name = unique("cairn-e2e")
    cfn.create_stack(StackName=name, TemplateBody=json.dumps(CFN_TEMPLATE), Capabilities=["CAPABILITY_IAM"])
    try:
        cfn.get_waiter("stack_create_complete").wait(
            StackName=name, WaiterConfig={"Delay": 1, "MaxAttempts": 120}
        )
        outputs = {
            o["OutputKey"]: o["OutputValue"]
            for o in cfn.describe_stacks(StackName=name)["Stacks"][0]["Outputs"]
        }

        response, body = _invoke(aws, outputs["FunctionName"], {})

        assert "FunctionError" not in response, body
        assert body == {"uploads": outputs["Bucket"]}
    finally:
        cfn.delete_stack(StackName=name)


# S3 -> EventBridge -> Step Functions (the ingestion trigger)
def test_s3_upload_starts_a_state_machine_through_an_eventbridge_rule(aws, bucket):
    s3, events, sfn = aws("s3"), aws("events"), aws("stepfunctions")
    s3.put_bucket_notification_configuration(
        Bucket=bucket, NotificationConfiguration={"EventBridgeConfiguration": {}}
    )
    definition = {"StartAt": "Done", "States": {"Done": {"Type": "Pass", "End": True}}}
    machine = sfn.create_state_machine(
        name=unique("cairn-e2e"),
        definition=json.dumps(definition),
        roleArn="arn:aws:iam::000000000000:role/cairn-e2e-sfn",
    )["stateMachineArn"]
    rule = unique("cairn-e2e")
    events.put_rule(
        Name=rule,
        EventPattern=json.dumps(
            {
                "source": ["aws.s3"],
                "detail-type": ["Object Created"],
                "detail": {"bucket": {"name": [bucket]}},
            }
        ),
    )
    events.put_targets(
        Rule=rule,
        Targets=[
            {"Id": "ingest", "Arn": machine, "RoleArn": "arn:aws:iam::000000000000:role/cairn-e2e-events"}
        ],
    )
    try:
        s3.put_object(Bucket=bucket, Key="uploads/session.jsonl", Body=b"{}")

        executions = wait_until(
            lambda: sfn.list_executions(stateMachineArn=machine)["executions"], timeout=30
        )
        started = json.loads(sfn.describe_execution(executionArn=executions[0]["executionArn"])["input"])
        assert started["detail"]["object"]["key"] == "uploads/session.jsonl"
    finally:
        events.remove_targets(Rule=rule, Ids=["ingest"])
        events.delete_rule(Name=rule)
        sfn.delete_state_machine(stateMachineArn=machine)
