"""GET /v1/openapi.json: a valid OpenAPI 3.1 document, generated from the pydantic models, that
covers every route registered on the Chalice app (and no route that is not), with the error
statuses and shapes the routes really answer."""

from __future__ import annotations

import json

import pytest
from jsonschema import Draft202012Validator
from openapi_spec_validator import validate

from app import PUBLIC_PATHS, app
from chalicelib.api.openapi import OPERATIONS, ExportQuery, openapi_document
from chalicelib.usecases.export import EXPORT_STATUSES
from tests.conftest import AUTH

SP = "/v1/spaces/demo"
METHODS = {"get", "put", "post", "patch", "delete", "head", "options"}


def registered() -> dict[tuple[str, str], object]:
    """The routes, but HEAD: every GET answers it (app.route), said once in info.description
    (an operation of its own would repeat the GET's operationId)."""
    return {(method, path): entry for path, methods in app.routes.items()
            for method, entry in methods.items() if method != "HEAD"}


def documented() -> dict[tuple[str, str], dict]:
    doc = openapi_document()
    return {(method.upper(), path): op for path, item in doc["paths"].items()
            for method, op in item.items() if method in METHODS}


def conforms(body: object, ref: str) -> list[str]:
    """Errors of `body` against a component schema of the document ($refs resolved in it)."""
    schema = {"$ref": ref, "components": openapi_document()["components"]}
    return [e.message for e in Draft202012Validator(schema).iter_errors(body)]


def test_the_document_is_valid_openapi_3_1():
    doc = openapi_document()
    assert doc["openapi"].startswith("3.1")
    validate(doc)  # openapi-spec-validator: raises on any problem


def test_every_registered_route_is_documented_and_nothing_else():
    routes, ops = registered(), documented()
    assert sorted(set(routes) - set(ops)) == [], "routes missing from chalicelib.api.openapi"
    assert sorted(set(ops) - set(routes)) == [], "documented routes that app.py does not have"
    assert len(OPERATIONS) == len(ops)  # no (method, path) twice in the table


def test_operation_ids_and_path_params_are_the_views():
    routes, ops = registered(), documented()
    for key, entry in routes.items():
        op = ops[key]
        assert op["operationId"] == entry.view_name, key
        params = [p["name"] for p in op.get("parameters", []) if p["in"] == "path"]
        assert params == list(entry.view_args), key


def test_public_routes_and_security():
    doc = openapi_document()
    assert doc["components"]["securitySchemes"]["bearerAuth"] == {
        "type": "http", "scheme": "bearer", "description": "Authorization: Bearer <API key>"}
    assert doc["security"] == [{"bearerAuth": []}]
    public = {op.path for op in OPERATIONS if op.public}
    assert public == PUBLIC_PATHS
    for (_, path), op in documented().items():
        if path in PUBLIC_PATHS:
            assert op["security"] == [] and "401" not in op["responses"]
        else:
            assert "security" not in op and {"401", "403", "503"} <= set(op["responses"])


def test_every_error_response_has_the_error_shape():
    doc = openapi_document()
    error_ref = {"$ref": "#/components/schemas/ErrorResponse"}
    for code, response in doc["components"]["responses"].items():
        assert 400 <= int(code) < 600
        assert response["content"]["application/json"]["schema"] == error_ref
    assert "Retry-After" in doc["components"]["responses"]["503"]["headers"]
    for key, op in documented().items():
        success = [c for c in op["responses"] if c.startswith("2")]
        # one success answer; POST …/extract and …/graph have two: done (200) or a job (202)
        two = key[1].endswith("/extract") or key == ("POST", "/v1/spaces/{space}/graph")
        assert len(success) == (2 if two else 1), key
        for code, response in op["responses"].items():
            if not code.startswith("2"):
                assert response == {"$ref": f"#/components/responses/{code}"}, key


def test_route_specific_statuses():
    ops = documented()
    space = "/v1/spaces/{space}"
    assert {"400", "401", "404", "409", "413", "422"} <= set(
        ops[("PATCH", space + "/events/{event_id}")]["responses"])
    assert "404" in ops[("GET", space + "/events/{event_id}")]["responses"]
    assert "201" in ops[("POST", space + "/events")]["responses"]
    put = ops[("PUT", space + "/sessions/{session}/messages")]
    assert {"200", "400", "401", "403", "413", "415", "422", "429", "503"} == set(put["responses"])
    assert put["requestBody"]["required"] is True
    extract = ops[("POST", space + "/extract")]
    assert extract["requestBody"]["required"] is False
    accepted = extract["responses"]["202"]
    assert accepted["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/ExtractAccepted"}
    assert "Location" in accepted["headers"]
    assert "404" in ops[("GET", space + "/jobs/{job_id}")]["responses"]
    jobs = {p["name"] for p in ops[("GET", space + "/jobs")]["parameters"]}
    assert jobs == {"space", "limit", "status", "kind"}
    listed = {p["name"]: p for p in ops[("GET", space + "/events")]["parameters"]}
    assert set(listed) == {"space", "from", "to", "limit", "cursor", "status", "kind"}
    assert listed["kind"]["schema"]["default"] == "event,note"  # summaries on request
    assert "pattern" in listed["kind"]["schema"]
    assert listed["from"]["schema"] == {"type": "string", "format": "date-time"}
    export = ops[("GET", space + "/export")]["responses"]["200"]["content"]
    assert set(export) == {"application/json", "text/markdown"}


def test_export_query_matches_the_use_case():
    values = ExportQuery.model_json_schema()["properties"]["status"]["enum"]
    assert set(values) == set(EXPORT_STATUSES)


def test_served_without_a_key(client):
    resp = client.http.get("/v1/openapi.json")
    assert resp.status_code == 200
    assert resp.headers["Content-Type"].startswith("application/json")
    assert json.loads(resp.body) == json.loads(json.dumps(openapi_document()))


@pytest.mark.parametrize(("method", "path", "body", "status"), [
    ("get", SP + "/events", None, 401),  # no key
    ("put", SP + "/sessions/s1/messages", "{oops", 400),
    ("put", SP + "/sessions/s1/messages", '{"messages": []}', 422),
    ("get", SP + "/events/nope", None, 404),
    ("get", "/v1/spaces/bad space/events", None, 400),
    ("patch", SP + "/events/nope", '{"version": 1}', 404),
])
def test_real_errors_have_the_documented_shape(client, method, path, body, status):
    headers = {} if status == 401 else AUTH
    kwargs = {"headers": headers} if body is None else {"headers": headers, "body": body}
    resp = getattr(client.http, method)(path, **kwargs)
    assert resp.status_code == status
    assert conforms(json.loads(resp.body), "#/components/schemas/ErrorResponse") == []


def test_real_answers_have_the_documented_shape(client):
    health = json.loads(client.http.get("/v1/health").body)
    assert conforms(health, "#/components/schemas/Health") == []
    accepted = json.loads(client.http.post(SP + "/extract", headers=AUTH,
                                           body='{"wait": false}').body)
    assert conforms(accepted, "#/components/schemas/ExtractAccepted") == []
    job = json.loads(client.http.get(f"{SP}/jobs/{accepted['job']['id']}", headers=AUTH).body)
    assert conforms(job, "#/components/schemas/JobView") == []
    jobs = json.loads(client.http.get(SP + "/jobs", headers=AUTH).body)
    assert conforms(jobs, "#/components/schemas/JobList") == []
    stats = json.loads(client.http.get(SP + "/stats", headers=AUTH).body)
    assert conforms(stats, "#/components/schemas/SpaceStats") == []
    merged = json.loads(client.http.post(SP + "/consolidate", headers=AUTH).body)
    assert conforms(merged, "#/components/schemas/MergeSummary") == []


def test_a_forbidden_answer_has_the_documented_shape(client):
    created = client.http.post("/v1/keys", headers=AUTH,
                               body=json.dumps({"spaces": ["other"], "access": "read"}))
    assert created.status_code == 201
    reader = {"Authorization": f"Bearer {json.loads(created.body)['key']}"}
    resp = client.http.get(SP + "/events", headers=reader)
    assert resp.status_code == 403
    assert "403" in documented()[("GET", "/v1/spaces/{space}/events")]["responses"]
    assert conforms(json.loads(resp.body), "#/components/schemas/ErrorResponse") == []
    key_created = json.loads(created.body)
    assert conforms(key_created, "#/components/schemas/NewKey") == []
