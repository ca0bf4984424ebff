"""Local adapter of the TransferLauncher port: the transfer worker on a background thread of the server.

The same `TransferService.run` the Lambda worker calls; the request that starts a transfer returns at
once and the client polls its status, as it does against AWS.
"""

from __future__ import annotations

import threading
from collections.abc import Callable


class ThreadTransferLauncher:
    def __init__(self, run: Callable[[str, str], object]) -> None:
        self._run = run

    def launch(self, team_id: str, transfer_id: str) -> None:
        threading.Thread(
            target=self._run, args=(team_id, transfer_id), name=f"transfer-{transfer_id}", daemon=True
        ).start()
