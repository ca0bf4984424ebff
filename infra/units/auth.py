"""The REQUEST authorizer: a Lambda that checks hashed API keys in the table (read-only)."""

from __future__ import annotations

from aws_cdk import Duration
from aws_cdk import aws_apigateway as apigw
from constructs import Construct

from infra.config import EnvironmentConfig
from infra.units.shared_layer import SharedRuntime, warm
from infra.units.storage import Storage

#: API Gateway caches the authorizer's policy per identity-source value for this long.
AUTHORIZER_CACHE_TTL = Duration.seconds(300)


class Auth(Construct):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        config: EnvironmentConfig,
        runtime: SharedRuntime,
        storage: Storage,
    ) -> None:
        super().__init__(scope, construct_id)
        self.function = runtime.function(
            self,
            "Function",
            code_dir="authorizer",
            handler="handler.handler",
            service="cairn-authorizer",
            description="API Gateway REQUEST authorizer over hashed API keys",
            memory_mb=512,
            timeout=Duration.seconds(10),
            environment={"CAIRN_TABLE_NAME": storage.table.table_name},
            snap_start=config.snap_start,
        )
        storage.table.grant_read_data(self.function)
        # Identity source: the Authorization header ("Bearer <key>"). With caching on, API Gateway answers 401
        # itself when the header is missing, so clients must send Authorization (an X-API-Key-only client is
        # rejected before the authorizer runs). The cached policy is reused for every route of the API, so the
        # authorizer must return a policy covering the whole stage (e.g. arn:...:<api>/<stage>/*/*).
        # after idle (the cached policy lapses after AUTHORIZER_CACHE_TTL) a hook pays this function's cold
        # start before the API's; warm instances take it off the hook's 3 s path (docs/deploy.md)
        self.target = warm(self.function, config.authorizer_provisioned_concurrency, config.snap_start)
        self.authorizer = apigw.RequestAuthorizer(
            self,
            "Authorizer",
            authorizer_name=f"{config.resource_prefix}-api-key",
            handler=self.target,
            identity_sources=[apigw.IdentitySource.header("Authorization")],
            results_cache_ttl=AUTHORIZER_CACHE_TTL,
        )
