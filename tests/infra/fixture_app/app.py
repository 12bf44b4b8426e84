"""A tiny Chalice app with the same decorators the real app.py will have (routes, the SQS
extraction worker, the DynamoDB stream indexer and three schedules), so the infra tests can
prove the stack's event-source overrides before the real handlers land."""

import os

from chalice import Chalice, Rate

app = Chalice(app_name="annals")


@app.route("/v1/health", methods=["GET"])
def health():
    return {"status": "ok"}


@app.on_sqs_message(queue="annals-extract", batch_size=10)
def extract_worker(event):
    return {"batchItemFailures": []}


@app.on_dynamodb_record(stream_arn=os.environ.get(
    "ANNALS_TABLE_STREAM_ARN",
    "arn:aws:dynamodb:us-east-1:123456789012:table/annals/stream/2020-01-01T00:00:00.000"))
def index_stream(event):
    return {"batchItemFailures": []}


@app.schedule(Rate(5, unit=Rate.MINUTES))
def quiet_window_job(event):
    return {}


@app.schedule(Rate(1, unit=Rate.HOURS))
def merge_job(event):
    return {}


@app.schedule(Rate(15, unit=Rate.MINUTES))
def cooldown_job(event):
    return {}
