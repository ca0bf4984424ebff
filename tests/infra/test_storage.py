"""Durable state: transcripts bucket and the DynamoDB single table."""

from __future__ import annotations

import pytest
from aws_cdk.assertions import Match

from tests.infra.conftest import resources

pytestmark = pytest.mark.infra


def test_no_transcripts_bucket_is_public_and_every_request_must_use_tls(dev, synth):
    dev.has_resource_properties(
        "AWS::S3::Bucket",
        {
            "PublicAccessBlockConfiguration": {
                "BlockPublicAcls": True,
                "BlockPublicPolicy": True,
                "IgnorePublicAcls": True,
                "RestrictPublicBuckets": True,
            }
        },
    )
    dev.has_resource_properties(
        "AWS::S3::BucketPolicy",
        {
            "PolicyDocument": {
                "Statement": Match.array_with(
                    [
                        Match.object_like(
                            {
                                "Effect": "Deny",
                                "Condition": {"Bool": {"aws:SecureTransport": "false"}},
                            }
                        )
                    ]
                )
            }
        },
    )
    for template in synth.json.values():
        for bucket in resources(template, "AWS::S3::Bucket").values():
            assert all(bucket["Properties"]["PublicAccessBlockConfiguration"].values())


def test_transcripts_are_kms_encrypted_versioned_and_announced_to_eventbridge(dev):
    dev.has_resource_properties(
        "AWS::S3::Bucket",
        {
            "BucketEncryption": {
                "ServerSideEncryptionConfiguration": [
                    Match.object_like(
                        {
                            "BucketKeyEnabled": True,
                            "ServerSideEncryptionByDefault": Match.object_like({"SSEAlgorithm": "aws:kms"}),
                        }
                    )
                ]
            },
            "VersioningConfiguration": {"Status": "Enabled"},
            "NotificationConfiguration": {"EventBridgeConfiguration": {"EventBridgeEnabled": True}},
        },
    )


def test_transcripts_expire_sooner_in_dev_than_in_prod_and_prod_moves_them_to_cheaper_storage(dev, prod):
    dev.has_resource_properties(
        "AWS::S3::Bucket",
        {
            "LifecycleConfiguration": {
                "Rules": Match.array_with(
                    [Match.object_like({"Prefix": "teams/", "ExpirationInDays": 30, "Status": "Enabled"})]
                )
            }
        },
    )
    prod.has_resource_properties(
        "AWS::S3::Bucket",
        {
            "LifecycleConfiguration": {
                "Rules": Match.array_with(
                    [
                        Match.object_like({"AbortIncompleteMultipartUpload": {"DaysAfterInitiation": 1}}),
                        Match.object_like(
                            {
                                "Prefix": "teams/",
                                "ExpirationInDays": 365,
                                "Transitions": [
                                    {"StorageClass": "INTELLIGENT_TIERING", "TransitionInDays": 30}
                                ],
                            }
                        ),
                    ]
                )
            }
        },
    )


def test_table_has_string_pk_sk_and_the_all_projected_string_gsis_the_dynamo_adapter_queries(dev):
    from cairn.adapters.aws.dynamo_table import GSI_COUNT

    numbers = range(1, GSI_COUNT + 1)
    gsis = [
        {
            "IndexName": f"gsi{i}",
            "KeySchema": [
                {"AttributeName": f"gsi{i}pk", "KeyType": "HASH"},
                {"AttributeName": f"gsi{i}sk", "KeyType": "RANGE"},
            ],
            "Projection": {"ProjectionType": "ALL"},
        }
        for i in numbers
    ]
    names = ["pk", "sk", *(f"gsi{i}{part}" for i in numbers for part in ("pk", "sk"))]
    attributes = [{"AttributeName": name, "AttributeType": "S"} for name in names]
    dev.has_resource_properties(
        "AWS::DynamoDB::GlobalTable",
        {
            "KeySchema": [
                {"AttributeName": "pk", "KeyType": "HASH"},
                {"AttributeName": "sk", "KeyType": "RANGE"},
            ],
            "AttributeDefinitions": Match.array_with(attributes),
            "GlobalSecondaryIndexes": gsis,
        },
    )


def test_table_is_on_demand_encrypted_with_pitr_ttl_and_a_new_and_old_image_stream(dev, prod):
    for template in (dev, prod):
        template.has_resource_properties(
            "AWS::DynamoDB::GlobalTable",
            {
                "BillingMode": "PAY_PER_REQUEST",
                "SSESpecification": Match.object_like({"SSEEnabled": True, "SSEType": "KMS"}),
                "StreamSpecification": {"StreamViewType": "NEW_AND_OLD_IMAGES"},
                "TimeToLiveSpecification": {"AttributeName": "expires_at_epoch", "Enabled": True},
                "Replicas": [
                    Match.object_like(
                        {"PointInTimeRecoverySpecification": {"PointInTimeRecoveryEnabled": True}}
                    )
                ],
            },
        )


@pytest.mark.parametrize(
    "resource_type",
    ["AWS::DynamoDB::GlobalTable", "AWS::S3::Bucket", "AWS::OpenSearchService::Domain", "AWS::KMS::Key"],
)
def test_data_is_retained_in_prod_and_destroyed_in_dev(dev, prod, resource_type):
    dev.has_resource(resource_type, {"DeletionPolicy": "Delete", "UpdateReplacePolicy": "Delete"})
    prod.has_resource(resource_type, {"DeletionPolicy": "Retain", "UpdateReplacePolicy": "Retain"})


def test_prod_table_has_deletion_protection_and_dev_does_not(dev, prod):
    prod.has_resource_properties(
        "AWS::DynamoDB::GlobalTable", {"Replicas": [Match.object_like({"DeletionProtectionEnabled": True})]}
    )
    dev.has_resource_properties(
        "AWS::DynamoDB::GlobalTable", {"Replicas": [Match.object_like({"DeletionProtectionEnabled": False})]}
    )
