"""CloudFormation resource provider for ``AWS::ApiGateway::Authorizer``, missing from LocalStack community.

Without it LocalStack deploys the resource as a no-op whose Ref is not an authorizer id, and every method
that names it (``AuthorizationType: CUSTOM``) fails with "Invalid authorizer ID specified". The provider
creates the authorizer through LocalStack's own API Gateway control plane (``CreateAuthorizer``), so the CDK
template deploys unchanged. LocalStack community's gateway does not run Lambda authorizers at invocation
time (a Pro feature): requests reach the integration without the authorizer being called. See
localstack/README.md.
"""

from __future__ import annotations

import contextlib
from typing import Any

from localstack.services.cloudformation.resource_provider import (
    OperationStatus,
    ProgressEvent,
    ResourceProvider,
    ResourceRequest,
)

# CloudFormation property -> CreateAuthorizer argument
_ARGUMENTS = {
    "Name": "name",
    "Type": "type",
    "ProviderARNs": "providerARNs",
    "AuthType": "authType",
    "AuthorizerUri": "authorizerUri",
    "AuthorizerCredentials": "authorizerCredentials",
    "IdentitySource": "identitySource",
    "IdentityValidationExpression": "identityValidationExpression",
    "AuthorizerResultTtlInSeconds": "authorizerResultTtlInSeconds",
}


class ApiGatewayAuthorizerProvider(ResourceProvider[dict]):
    TYPE = "AWS::ApiGateway::Authorizer"
    SCHEMA: dict[str, Any] = {
        "typeName": TYPE,
        "properties": {name: {} for name in ("RestApiId", "AuthorizerId", *_ARGUMENTS)},
        "required": ["RestApiId", "Type", "Name"],
        "readOnlyProperties": ["/properties/AuthorizerId"],
        "createOnlyProperties": ["/properties/RestApiId"],
        "primaryIdentifier": ["/properties/RestApiId", "/properties/AuthorizerId"],
    }

    def create(self, request: ResourceRequest[dict]) -> ProgressEvent[dict]:
        model = request.desired_state
        arguments = {arg: model[prop] for prop, arg in _ARGUMENTS.items() if model.get(prop) is not None}
        if "authorizerResultTtlInSeconds" in arguments:
            arguments["authorizerResultTtlInSeconds"] = int(arguments["authorizerResultTtlInSeconds"])
        created = request.aws_client_factory.apigateway.create_authorizer(
            restApiId=model["RestApiId"], **arguments
        )
        model["AuthorizerId"] = created["id"]
        return ProgressEvent(status=OperationStatus.SUCCESS, resource_model=model)

    def read(self, request: ResourceRequest[dict]) -> ProgressEvent[dict]:
        raise NotImplementedError

    def delete(self, request: ResourceRequest[dict]) -> ProgressEvent[dict]:
        model = request.desired_state
        api = request.aws_client_factory.apigateway
        with contextlib.suppress(api.exceptions.NotFoundException):  # gone with its REST API
            api.delete_authorizer(restApiId=model["RestApiId"], authorizerId=model["AuthorizerId"])
        return ProgressEvent(status=OperationStatus.SUCCESS, resource_model=model)

    def update(self, request: ResourceRequest[dict]) -> ProgressEvent[dict]:
        model = request.desired_state
        previous = request.previous_state or {}
        model["AuthorizerId"] = previous.get("AuthorizerId") or model.get("AuthorizerId")
        operations = [
            {"op": "replace", "path": f"/{arg}", "value": str(model[prop])}
            for prop, arg in _ARGUMENTS.items()
            if prop not in ("Type",) and model.get(prop) is not None and model.get(prop) != previous.get(prop)
        ]
        if operations:
            request.aws_client_factory.apigateway.update_authorizer(
                restApiId=model["RestApiId"], authorizerId=model["AuthorizerId"], patchOperations=operations
            )
        return ProgressEvent(status=OperationStatus.SUCCESS, resource_model=model)
