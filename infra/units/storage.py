"""Durable state: the customer-managed key, the DynamoDB single table and the transcripts bucket."""

from __future__ import annotations

from aws_cdk import Duration, Stack
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from infra.config import EnvironmentConfig

#: Key schema the PynamoDB adapters are written against (all string attributes, ALL projection).
TABLE_KEYS = ("pk", "sk")
GSI_KEYS = {f"gsi{n}": (f"gsi{n}pk", f"gsi{n}sk") for n in range(1, 6)}
TTL_ATTRIBUTE = "expires_at_epoch"
#: Transcript uploads that start the learning pipeline: teams/<team>/.../<session>.jsonl.gz
TRANSCRIPT_PREFIX = "teams/"
TRANSCRIPT_SUFFIX = ".jsonl.gz"
#: A session's stage outputs: teams/<team>/projects/<project>/sessions/<session>/stages/<stage>/<name>.json
STAGE_OUTPUTS = f"{TRANSCRIPT_PREFIX}*/stages/*"
TRANSFER_FILES = f"{TRANSCRIPT_PREFIX}*/transfers/*"  # whole-team exports and imports


class Storage(Construct):
    def __init__(self, scope: Construct, construct_id: str, *, config: EnvironmentConfig) -> None:
        super().__init__(scope, construct_id)

        self.key = kms.Key(
            self,
            "Key",
            alias=f"alias/{config.resource_prefix}",
            description=f"Cairn {config.name}: table, transcripts, queues and alarm topic",
            enable_key_rotation=True,
            pending_window=Duration.days(30 if config.retain_data else 7),
            removal_policy=config.removal_policy,
        )
        # CloudWatch alarms publish to the encrypted topic; EventBridge sends failed targets to the DLQ.
        for service in ("cloudwatch.amazonaws.com", "events.amazonaws.com"):
            self.key.add_to_resource_policy(
                iam.PolicyStatement(
                    sid=f"Allow{service.split('.')[0].capitalize()}",
                    principals=[iam.ServicePrincipal(service)],
                    actions=["kms:Decrypt", "kms:GenerateDataKey*"],
                    resources=["*"],  # in a key policy "*" means this key
                    conditions={"StringEquals": {"aws:SourceAccount": Stack.of(self).account}},
                )
            )

        self.table = dynamodb.TableV2(
            self,
            "Table",
            partition_key=dynamodb.Attribute(name=TABLE_KEYS[0], type=dynamodb.AttributeType.STRING),
            sort_key=dynamodb.Attribute(name=TABLE_KEYS[1], type=dynamodb.AttributeType.STRING),
            billing=dynamodb.Billing.on_demand(),
            point_in_time_recovery_specification=dynamodb.PointInTimeRecoverySpecification(
                point_in_time_recovery_enabled=True
            ),
            time_to_live_attribute=TTL_ATTRIBUTE,
            dynamo_stream=dynamodb.StreamViewType.NEW_AND_OLD_IMAGES,
            # KMS encryption with the AWS-managed key: a customer-managed key on TableV2 needs a region-bound
            # stack, and synth must stay environment-agnostic (no AWS lookups).
            encryption=dynamodb.TableEncryptionV2.aws_managed_key(),
            deletion_protection=config.retain_data,
            removal_policy=config.removal_policy,
            global_secondary_indexes=[
                dynamodb.GlobalSecondaryIndexPropsV2(
                    index_name=name,
                    partition_key=dynamodb.Attribute(name=pk, type=dynamodb.AttributeType.STRING),
                    sort_key=dynamodb.Attribute(name=sk, type=dynamodb.AttributeType.STRING),
                    projection_type=dynamodb.ProjectionType.ALL,
                )
                for name, (pk, sk) in GSI_KEYS.items()
            ],
        )

        self.bucket = s3.Bucket(
            self,
            "Transcripts",
            encryption=s3.BucketEncryption.KMS,
            encryption_key=self.key,
            bucket_key_enabled=True,  # one data key per bucket, not one KMS call per object
            block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
            object_ownership=s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
            enforce_ssl=True,
            minimum_tls_version=1.2,
            versioned=True,
            removal_policy=config.removal_policy,
            lifecycle_rules=self._lifecycle_rules(config),
        )
        # EventBridge delivery set natively on the bucket (Bucket(event_bridge_enabled=True) would add a
        # notifications custom-resource Lambda instead).
        cfn_bucket: s3.CfnBucket = self.bucket.node.default_child  # type: ignore[assignment]
        cfn_bucket.notification_configuration = s3.CfnBucket.NotificationConfigurationProperty(
            event_bridge_configuration=s3.CfnBucket.EventBridgeConfigurationProperty(
                event_bridge_enabled=True
            )
        )

    def dead_letter_queue(self, scope: Construct, config: EnvironmentConfig) -> sqs.Queue:
        """An SQS dead-letter queue encrypted with this unit's key, kept 14 days (the maximum)."""
        return sqs.Queue(
            scope,
            "DeadLetter",
            encryption=sqs.QueueEncryption.KMS,
            encryption_master_key=self.key,
            enforce_ssl=True,
            retention_period=Duration.days(14),
            removal_policy=config.removal_policy,
        )

    def grant_blob_read(self, grantee: iam.IGrantable) -> None:
        """GetObject/ListBucket on the transcripts bucket and Decrypt with its key: nothing else."""
        grantee.grant_principal.add_to_principal_policy(
            iam.PolicyStatement(actions=["s3:GetObject"], resources=[self.bucket.arn_for_objects("*")])
        )
        grantee.grant_principal.add_to_principal_policy(
            iam.PolicyStatement(actions=["s3:ListBucket"], resources=[self.bucket.bucket_arn])
        )
        self.key.grant(grantee, "kms:Decrypt")

    def grant_transcript_read(self, grantee: iam.IGrantable) -> None:
        """GetObject and a listing under the transcripts' prefix, and Decrypt with the key: a session's parts
        are listed, then read (the transcript lines behind a citation)."""
        grantee.grant_principal.add_to_principal_policy(
            iam.PolicyStatement(
                actions=["s3:GetObject"], resources=[self.bucket.arn_for_objects(f"{TRANSCRIPT_PREFIX}*")]
            )
        )
        self.grant_blob_list(grantee)
        self.key.grant(grantee, "kms:Decrypt")

    def grant_blob_delete(self, grantee: iam.IGrantable, key_pattern: str) -> None:
        """DeleteObject under ``key_pattern`` only."""
        grantee.grant_principal.add_to_principal_policy(
            iam.PolicyStatement(
                actions=["s3:DeleteObject"], resources=[self.bucket.arn_for_objects(key_pattern)]
            )
        )

    def grant_blob_redact(self, grantee: iam.IGrantable) -> None:
        """What a redaction needs beyond reading and writing the team's objects: the listing of their
        versions and the deletion of the earlier ones (the bucket is versioned), under `teams/` only."""
        grantee.grant_principal.add_to_principal_policy(
            iam.PolicyStatement(
                actions=["s3:ListBucketVersions"],
                resources=[self.bucket.bucket_arn],
                conditions={"StringLike": {"s3:prefix": [f"{TRANSCRIPT_PREFIX}*"]}},
            )
        )
        grantee.grant_principal.add_to_principal_policy(
            iam.PolicyStatement(
                actions=["s3:DeleteObjectVersion"],
                resources=[self.bucket.arn_for_objects(f"{TRANSCRIPT_PREFIX}*")],
            )
        )

    def grant_blob_list(self, grantee: iam.IGrantable) -> None:
        """ListBucket under the transcripts' prefix: which keys exist, never their content."""
        grantee.grant_principal.add_to_principal_policy(
            iam.PolicyStatement(
                actions=["s3:ListBucket"],
                resources=[self.bucket.bucket_arn],
                conditions={"StringLike": {"s3:prefix": [f"{TRANSCRIPT_PREFIX}*"]}},
            )
        )

    def grant_transfer_files(self, grantee: iam.IGrantable) -> None:
        """The transfer worker: read and write its files under `teams/*/transfers/*` (an export written
        as a multipart upload, aborted on failure; a status object; the uploaded import), with the key."""
        grantee.grant_principal.add_to_principal_policy(
            iam.PolicyStatement(
                actions=["s3:GetObject", "s3:PutObject", "s3:AbortMultipartUpload"],
                resources=[self.bucket.arn_for_objects(TRANSFER_FILES)],
            )
        )
        # a multipart upload under SSE-KMS decrypts its data key to complete (AWS: kms:Decrypt needed)
        self.key.grant(grantee, "kms:GenerateDataKey", "kms:Decrypt")

    def grant_blob_put(self, grantee: iam.IGrantable, key_pattern: str = "*") -> None:
        """PutObject under ``key_pattern`` (also what a presigned PUT URL signed by ``grantee`` can do)."""
        grantee.grant_principal.add_to_principal_policy(
            iam.PolicyStatement(
                actions=["s3:PutObject"], resources=[self.bucket.arn_for_objects(key_pattern)]
            )
        )
        self.key.grant(grantee, "kms:GenerateDataKey")

    @staticmethod
    def _lifecycle_rules(config: EnvironmentConfig) -> list[s3.LifecycleRule]:
        rules = [
            s3.LifecycleRule(
                id="abort-incomplete-uploads",
                abort_incomplete_multipart_upload_after=Duration.days(1),
            ),
            s3.LifecycleRule(
                id="expire-old-versions",
                noncurrent_version_expiration=Duration.days(config.noncurrent_version_expiry_days),
            ),
        ]
        transitions = []
        if config.transcript_transition_days is not None:
            transitions.append(
                s3.Transition(
                    storage_class=s3.StorageClass.INTELLIGENT_TIERING,
                    transition_after=Duration.days(config.transcript_transition_days),
                )
            )
        expiration = (
            Duration.days(config.transcript_expiry_days)
            if config.transcript_expiry_days is not None
            else None
        )
        if transitions or expiration:
            rules.append(
                s3.LifecycleRule(
                    id="transcripts",
                    prefix=TRANSCRIPT_PREFIX,
                    transitions=transitions or None,
                    expiration=expiration,
                )
            )
        return rules
