"""plux plugin that registers the host executor under the name ``host`` for LocalStack's Lambda service."""

from localstack.services.lambda_.invocation.plugins import RuntimeExecutorPlugin


class HostRuntimeExecutorPlugin(RuntimeExecutorPlugin):
    name = "host"

    def load(self, *args, **kwargs):
        # Imported lazily: LocalStack lists plugins long before the Lambda service (and its models) loads.
        from cairn_localstack_host_lambda.executor import HostRuntimeExecutor

        return HostRuntimeExecutor
