"""The JavaScript client (sillytavern/extension/annals-client.js) is checked against the OpenAPI
document: every operation it names exists with the same method and path, and the query
parameters it sends are the operation's. A change of the document under it fails here."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from chalicelib.api.openapi import OPERATIONS

CLIENT = Path(__file__).resolve().parents[2] / "sillytavern" / "extension" / "annals-client.js"
NODE = shutil.which("node")


def js_operations() -> dict[str, list[str]]:
    """OPERATIONS as Node imports the module (the file is real ESM, not just text)."""
    script = (f"import({json.dumps(CLIENT.as_uri())})"
              ".then(m => console.log(JSON.stringify(m.OPERATIONS)))")
    out = subprocess.run([NODE, "--input-type=module", "-e", script], capture_output=True,
                         text=True, timeout=30, check=True)
    return json.loads(out.stdout)


@pytest.mark.skipif(NODE is None, reason="Node.js is not installed")
def test_every_operation_of_the_client_is_the_documents():
    documented = {op.operation_id: op for op in OPERATIONS}
    ops = js_operations()
    assert ops, "the client names no operation"
    for op_id, (method, path) in ops.items():
        assert op_id in documented, f"{op_id}: no such operation in the OpenAPI document"
        assert (method, path) == (documented[op_id].method, documented[op_id].path), op_id


def test_the_query_parameters_it_sends_are_the_operations():
    """`this.call("op", …, {query: {name: …}})` and the query types in its JSDoc."""
    source = CLIENT.read_text()
    documented = {op.operation_id: op for op in OPERATIONS}
    sent = {"reading_tasks": {"limit"}}
    block = re.search(r"listEvents\(space, query = \{\}\)", source)
    assert block, "listEvents changed shape: update this test"
    doc = source[source.rindex("/**", 0, block.start()):block.start()]
    sent["list_events"] = set(re.findall(r"(\w+)\?:", doc))
    for op_id, names in sent.items():
        query = documented[op_id].query
        assert query is not None and names <= set(query.model_fields), (op_id, names)
