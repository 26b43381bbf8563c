"""Against the real service through local proxies: an event stream cut after its first step
resumes with after_seq, and a create whose answer was lost is retried with the same
Idempotency-Key, which the service answers again without making a second device."""

from __future__ import annotations

import uuid

from conftest import Service
from servers import cutting_proxy, losing_first_create

from browser_device_operator import OperatorClient


def test_events_resume_with_after_seq_after_the_connection_drops(service: Service) -> None:
    with cutting_proxy(service.base_url) as proxy, OperatorClient(service.api_key, base_url=proxy.url) as client:
        device = client.devices.create(space_id=service.space_id)
        task = client.tasks.submit(device["id"], service.form_prompt())
        seqs: list[int] = []
        done = None
        for event in client.tasks.events(task["id"]):
            if event["event"] == "step":
                seqs.append(event["data"]["seq"])
            else:
                done = event["data"]
        assert proxy.cut.is_set()
        assert len(proxy.event_requests) >= 2
        assert "after_seq=0" in proxy.event_requests[0]
        assert "after_seq=1" in proxy.event_requests[1]
        assert seqs == list(range(1, len(seqs) + 1)) and len(seqs) > 3
        assert done is not None and (done["id"], done["status"]) == (task["id"], "succeeded")
        client.devices.delete(device["id"])


def test_a_retried_create_reuses_its_idempotency_key_and_makes_one_device(service: Service) -> None:
    name = f"retried-{uuid.uuid4().hex[:8]}"
    with losing_first_create(service.base_url) as (url, seen, statuses), OperatorClient(service.api_key, base_url=url) as client:
        device = client.devices.create(space_id=service.space_id, name=name)
        creates = [request for request in seen if request.method == "POST" and request.path == "/v1/devices"]
        assert len(creates) == 2
        assert creates[0].headers["idempotency-key"] == creates[1].headers["idempotency-key"]
        assert statuses[:2] == [201, 201]  # the second is the service's replay of the first
        named = [item["id"] for item in client.devices.list(space_id=service.space_id) if item["name"] == name]
        assert named == [device["id"]]
        client.devices.delete(device["id"])
