"""WorkQueue on Amazon SQS."""

from __future__ import annotations

import json
from typing import Any


class SqsQueue:
    def __init__(self, queue_url: str, *, client: Any = None, region_name: str | None = None):
        self.queue_url = queue_url
        self._client = client
        self._region = region_name

    @property
    def client(self) -> Any:
        if self._client is None:
            import boto3

            self._client = boto3.client("sqs", region_name=self._region)
        return self._client

    def send(self, job: dict, delay_seconds: int = 0) -> None:
        # SQS allows at most 900 s of delay per message.
        self.client.send_message(QueueUrl=self.queue_url,
                                 MessageBody=json.dumps(job, ensure_ascii=False),
                                 DelaySeconds=max(0, min(int(delay_seconds), 900)))
