"""plux plugin: the ``AWS::ApiGateway::Authorizer`` resource provider for LocalStack's CloudFormation.

Kept apart from ``plugin.py`` so that listing Lambda executors never imports CloudFormation's modules.
"""

from localstack.services.cloudformation.resource_provider import CloudFormationResourceProviderPlugin


class ApiGatewayAuthorizerProviderPlugin(CloudFormationResourceProviderPlugin):
    name = "AWS::ApiGateway::Authorizer"

    def __init__(self):
        self.factory = None

    def load(self):
        from cairn_localstack_host_lambda.cfn_authorizer import ApiGatewayAuthorizerProvider

        self.factory = ApiGatewayAuthorizerProvider
