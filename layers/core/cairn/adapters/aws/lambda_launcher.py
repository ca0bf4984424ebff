"""Lambda adapter of the TransferLauncher port: the transfer worker invoked asynchronously.

The API answers at once; Lambda queues the event and runs the worker under its own time limit (minutes,
not the API's 29 s). The worker records failures in the transfer's status rather than raising, so
Lambda's own retries of an async event never run a transfer twice.
"""

from __future__ import annotations

import json
from typing import Any


class LambdaTransferLauncher:
    def __init__(self, function_name: str, client: Any = None) -> None:
        if client is None:
            import boto3

            client = boto3.client("lambda")
        self._function = function_name
        self._lambda = client

    def launch(self, team_id: str, transfer_id: str) -> None:
        self._lambda.invoke(
            FunctionName=self._function,
            InvocationType="Event",
            Payload=json.dumps({"team_id": team_id, "transfer_id": transfer_id}).encode(),
        )
