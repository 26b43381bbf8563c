"""The TypeScript SDK's journeys (sdk/test/sdk.test.ts), with the synchronous client, against
the real service: real PostgreSQL, real Chromium, the offline planner."""

from __future__ import annotations

import pytest
from conftest import Service

from browser_device_operator import (
    AuthenticationError,
    ConflictError,
    InvalidRequestError,
    NotFoundError,
    OperatorClient,
    OperatorError,
    PermissionDeniedError,
    types,
)


def test_readme_journey(service: Service, client: OperatorClient) -> None:
    """Creates a device, runs a task to the end while collecting its steps, reads step
    screenshots, pages through devices, sleeps, wakes and deletes."""
    assert client.whoami()["product"] == "operator"

    device = client.devices.create(space_id=service.space_id, name="journey")
    assert (device["object"], device["status"], device["name"]) == ("device", "active", "journey")

    steps: list[types.Step] = []
    task = client.tasks.run(device["id"], service.form_prompt(), on_step=steps.append)
    assert task["status"] == "succeeded"
    assert task["result"] == "Welcome, ada@example.com"
    assert len(steps) > 3
    assert [step["seq"] for step in steps] == list(range(1, len(steps) + 1))
    assert client.tasks.get(task["id"]) == task
    assert [item["id"] for item in client.tasks.list(device["id"])] == [task["id"]]

    jpeg = client.tasks.step_screenshot(task["id"], steps[0]["seq"])
    assert isinstance(jpeg, bytes) and jpeg[:3] == b"\xff\xd8\xff"
    with pytest.raises(NotFoundError) as missing:
        client.tasks.step_screenshot(task["id"], 999)
    assert (missing.value.status, missing.value.code) == (404, "screenshot_not_found")
    recording = client.tasks.recording(task["id"])
    assert recording[4:8] == b"ftyp"

    others = [client.devices.create(space_id=service.space_id), client.devices.create(space_id=service.space_id)]
    ids = sorted([device["id"]] + [other["id"] for other in others])
    first = client.devices.list(space_id=service.space_id, limit=2).first_page()
    assert len(first.data) == 2 and first.next_cursor != ""
    listed = [item["id"] for item in client.devices.list(space_id=service.space_id, limit=2) if item["id"] in ids]
    assert sorted(listed) == ids

    assert client.devices.sleep(device["id"])["status"] == "sleeping"
    assert client.devices.wake(device["id"])["status"] == "active"
    for item in [device, *others]:
        assert client.devices.delete(item["id"])["status"] == "terminated"

    usage = client.usage()
    assert {row["kind"] for row in usage["data"]} >= {"task", "step", "device_duration"}
    audit = client.audit.list(resource_id=device["id"]).to_list()
    assert any(event["action"].startswith("operator.device.created") and event["resource_id"] == device["id"] for event in audit)


def test_typed_errors_carry_code_status_request_id_and_param(service: Service, client: OperatorClient) -> None:
    with pytest.raises(NotFoundError) as not_found:
        client.devices.get("dev_nope")
    assert isinstance(not_found.value, OperatorError)
    assert (not_found.value.code, not_found.value.status) == ("device_not_found", 404)
    assert (not_found.value.request_id or "").startswith("req_")

    with pytest.raises(InvalidRequestError) as invalid:
        client.devices.create(space_id=service.space_id, idle_suspend_secs=5)
    assert (invalid.value.code, invalid.value.status, invalid.value.param) == ("invalid_request", 400, "idle_suspend_secs")

    with OperatorClient("svc_operator_test_aaaaaaaaaaaa_nope", base_url=service.base_url) as bad_key:
        with pytest.raises(AuthenticationError) as unauthenticated:
            bad_key.devices.list().first_page()
    assert (unauthenticated.value.code, unauthenticated.value.status) == ("invalid_api_key", 401)

    with OperatorClient(service.read_only_key, base_url=service.base_url) as read_only:
        with pytest.raises(PermissionDeniedError) as denied:
            read_only.devices.create(space_id=service.space_id)
    assert denied.value.code == "insufficient_scope"

    device = client.devices.create(space_id=service.space_id)
    task = client.tasks.run(device["id"], f"go to {service.page('/plain')} then return the title")
    with pytest.raises(ConflictError) as late:
        client.tasks.cancel(task["id"])
    assert (late.value.code, late.value.status) == ("task_not_cancelable", 409)
    client.devices.delete(device["id"])


def test_structured_results_with_an_output_schema(service: Service, client: OperatorClient) -> None:
    device = client.devices.create(space_id=service.space_id)
    schema: dict[str, types.JsonValue] = {
        "type": "object",
        "properties": {"title": {"type": "string"}, "message": {"type": "string"}},
        "required": ["title", "message"],
    }
    prompt = (
        f'go to {service.page("/form")} then type "ada@example.com" into "Email" then click "Submit" then wait for "Welcome" '
        'then return json {"title": the title, "message": the text of "#message"}'
    )
    task = client.tasks.run(device["id"], prompt, output_schema=schema)
    assert task["status"] == "succeeded"
    assert task["result"] == {"title": "Thanks", "message": "Welcome, ada@example.com"}
    assert task["output_schema"] == schema
    client.devices.delete(device["id"])


def test_cdp_sessions(service: Service, client: OperatorClient) -> None:
    device = client.devices.create(space_id=service.space_id)
    cdp = client.cdp.create(device["id"], ttl_secs=60)
    assert cdp["object"] == "cdp_session" and cdp["cdp_url"].startswith("ws")
    client.cdp.delete(cdp["id"])
    with pytest.raises(NotFoundError) as missing:
        client.cdp.recording(cdp["id"])
    assert missing.value.code == "recording_not_found"
    client.devices.delete(device["id"])


def test_webhook_endpoints(service: Service, client: OperatorClient) -> None:
    deliverable = [entry["type"] for entry in client.event_types() if entry["deliverable"]]
    assert "operator.task.succeeded.v1" in deliverable
    created = client.webhook_endpoints.create("http://127.0.0.1:9/hooks", event_types=["operator.task.succeeded.v1"], description="test")
    assert created["secret"].startswith("whsec_")
    fetched = client.webhook_endpoints.get(created["id"])
    assert "secret" not in fetched and fetched["url"] == "http://127.0.0.1:9/hooks"
    assert created["id"] in [endpoint["id"] for endpoint in client.webhook_endpoints.list()]
    updated = client.webhook_endpoints.update(created["id"], enabled=False, description="paused")
    assert (updated["enabled"], updated["description"]) == (False, "paused")
    client.webhook_endpoints.delete(created["id"])
    with pytest.raises(NotFoundError) as gone:
        client.webhook_endpoints.get(created["id"])
    assert gone.value.code == "webhook_endpoint_not_found"
    with pytest.raises(InvalidRequestError) as unknown:
        client.webhook_endpoints.create("http://127.0.0.1:9/hooks", event_types=["operator.webhook.created.v1"])
    assert (unknown.value.code, unknown.value.param) == ("unknown_event_type", "event_types")
