"""``Cairn-<env>``: composes the units; no resources are declared here."""

from __future__ import annotations

from aws_cdk import CfnOutput, Environment, Stack, Tags
from constructs import Construct

from infra.assets import AssetSource
from infra.config import EnvironmentConfig
from infra.nag import acknowledge_findings
from infra.units.api import Api
from infra.units.auth import Auth
from infra.units.observability import Observability
from infra.units.pipeline import Pipeline
from infra.units.quotas import Quotas
from infra.units.reindex import Reindex
from infra.units.search import Indexer, Search
from infra.units.shared_layer import SharedRuntime
from infra.units.storage import Storage


class CairnStack(Stack):
    def __init__(
        self,
        scope: Construct,
        *,
        config: EnvironmentConfig,
        layer_path: str,
        functions_path: str,
        alarm_email: str | None = None,
        env: Environment | None = None,
    ) -> None:
        super().__init__(
            scope,
            config.stack_name,
            env=env,
            description=f"Cairn team memory service ({config.name})",
            termination_protection=config.retain_data,
        )
        Tags.of(self).add("app", "cairn")
        Tags.of(self).add("environment", config.name)

        assets = AssetSource(self, "Assets", layer_path=layer_path, functions_path=functions_path)
        runtime = SharedRuntime(self, "Runtime", config=config, assets=assets)
        storage = Storage(self, "Storage", config=config)
        search = Search(self, "Search", config=config)
        indexer = Indexer(self, "Indexer", config=config, runtime=runtime, storage=storage, search=search)
        pipeline = Pipeline(self, "Pipeline", config=config, runtime=runtime, storage=storage, search=search)
        reindex = Reindex(self, "Reindex", config=config, runtime=runtime, storage=storage, search=search)
        auth = Auth(self, "Auth", config=config, runtime=runtime, storage=storage)
        api = Api(
            self,
            "Api",
            config=config,
            runtime=runtime,
            storage=storage,
            search=search,
            auth=auth,
            state_machine_arn=pipeline.state_machine.state_machine_arn,
        )
        pipeline.state_machine.grant_start_execution(api.function)  # `cairn reprocess`
        quotas = Quotas(self, "Quotas", config=config, rest_api=api.rest_api)
        observability = Observability(
            self, "Observability", config=config, storage=storage, alarm_email=alarm_email
        )
        observability.watch(
            rest_api=api.rest_api,
            access_logs=api.access_logs,
            indexer=indexer.function,
            functions={
                "Api": api.function,
                "Mcp": api.mcp_function,
                "Authorizer": auth.function,
                "Indexer": indexer.function,
                **{name.capitalize(): fn for name, fn in pipeline.functions.items()},
                "Sweeper": pipeline.sweeper,
                **{f"Reindex{name.title().replace('_', '')}": fn for name, fn in reindex.functions.items()},
                "Transfer": api.transfer_function,
            },
            queues={"Pipeline": pipeline.dead_letter, "Indexer": indexer.dead_letter},
            state_machine=pipeline.state_machine,
            domain=search.domain,
        )

        self.storage, self.search, self.indexer, self.pipeline = storage, search, indexer, pipeline
        self.auth, self.api, self.observability, self.assets = auth, api, observability, assets
        self.quotas, self.reindex = quotas, reindex

        CfnOutput(self, "ApiUrl", value=api.rest_api.url)
        CfnOutput(self, "TableName", value=storage.table.table_name)
        CfnOutput(self, "BucketName", value=storage.bucket.bucket_name)
        CfnOutput(self, "OpenSearchEndpoint", value=search.endpoint_url)
        CfnOutput(self, "StateMachineArn", value=pipeline.state_machine.state_machine_arn)
        CfnOutput(self, "ReindexStateMachineArn", value=reindex.state_machine.state_machine_arn)
        CfnOutput(self, "UsagePlanId", value=quotas.usage_plan.usage_plan_id)  # CAIRN_USAGE_PLAN_ID
        CfnOutput(self, "AlarmTopicArn", value=observability.topic.topic_arn)
        if observability.dashboard is not None:
            CfnOutput(self, "DashboardName", value=observability.dashboard.dashboard_name)

        acknowledge_findings(self)
