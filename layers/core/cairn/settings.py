"""Settings from the environment (prefix CAIRN_); read only by bootstrap and the CLI."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

from cairn.userdirs import default_home


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="CAIRN_", extra="ignore")

    mode: Literal["local", "aws"] = "local"
    env: str = "local"
    home: Path = Field(default_factory=default_home)  # data dir of the embedded store and user config
    host: str = "127.0.0.1"
    port: int = 8787
    public_base_url: str | None = (
        None  # how clients reach this server (upload URLs); default http://host:port
    )
    max_body_bytes: int = 1_048_576  # JSON request bodies; transcript uploads have their own cap
    max_upload_bytes: int = 64 * 1_048_576
    upload_url_ttl_s: int = 300
    allowed_hosts: list[str] = ["127.0.0.1", "localhost", "127.0.0.1:*", "localhost:*"]

    # the learning pipeline's extractor: deterministic rules, or an LLM (falls back to rules when down)
    extractor: Literal["rules", "bedrock", "anthropic", "openai"] = "rules"
    extractor_model: str | None = None
    extractor_base_url: str | None = None
    extractor_api_key: SecretStr | None = None

    # the scheduled dream pass of a local server (`cairn serve`): every project with memories written
    # since its last pass is consolidated across its sessions this often; 0 turns the timer off (the pass
    # still runs after each learned session). AWS runs it on an EventBridge schedule (infra/units/pipeline.py)
    dream_every_s: int = Field(default=3600, ge=0)

    # business metrics (sessions learned, memories written, ...): "emf" writes them as CloudWatch EMF through
    # Powertools Metrics (set by the stack on every Lambda); "none" records nothing (local mode)
    metrics: Literal["none", "emf"] = "none"

    # signs the web UI's session cookies; locally a file in `home` is used when unset
    ui_secret: SecretStr | None = None
    ui_secret_arn: str | None = None  # aws: the Secrets Manager secret holding it (set by the stack)

    # aws mode (names set by the CDK stack on every Lambda)
    table_name: str | None = None
    bucket: str | None = None
    kms_key_id: str | None = None  # the stack's key: what the functions write is encrypted with it
    opensearch_endpoint: str | None = None
    opensearch_index_prefix: str = "cairn"
    opensearch_auth: Literal["sigv4", "none"] = "sigv4"
    opensearch_timeout_s: float = 5.0  # a request's read timeout (emulators under load need more)
    # the memories index's layout, set per environment by the stack (infra/config.py); read when it is made
    opensearch_shards: int = Field(default=1, ge=1, le=64)
    opensearch_replicas: int = Field(default=0, ge=0, le=8)
    embedding_dim: int = 384
    state_machine_arn: str | None = None
    # the model-change reindex state machine (infra/units/reindex.py; output ReindexStateMachineArn)
    reindex_state_machine_arn: str | None = None
    # how long the reindex plan waits after beginning a build before it lists ids (the stream indexer
    # looks at the build every opensearch_builds.BUILD_CHECK_S)
    reindex_settle_s: float = 12.0
    # the transfer worker Lambda (whole-team export/import staged in S3), invoked async by the API
    transfer_function: str | None = None
    # the stack's usage plan (output UsagePlanId): `cairn admin create-team` gives each team its key in it
    usage_plan_id: str | None = None
    aws_region: str | None = Field(default=None, validation_alias="AWS_REGION")
    # how Lambda started this process: "on-demand", "provisioned-concurrency" or "snap-start" (set by the
    # runtime); the last two run init ahead of any request, so init may load what a first request would
    lambda_initialization_type: str = Field(
        default="on-demand", validation_alias="AWS_LAMBDA_INITIALIZATION_TYPE"
    )
    dynamo_endpoint: str | None = None  # LocalStack / DynamoDB Local

    @property
    def db_path(self) -> Path:
        return self.home / "cairn.db"

    @property
    def blob_root(self) -> Path:
        return self.home / "blobs"

    @property
    def base_url(self) -> str:
        return self.public_base_url or f"http://{self.host}:{self.port}"
