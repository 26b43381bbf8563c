"""Escalations against the real service: a receiver on the organization's escalation URL
verifies each delivery with verify_webhook and answers it, through the delivery's
resolve_url or by id with its token; typed kinds (choice, confirm)."""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from conftest import Service

from browser_device_operator import AuthenticationError, OperatorClient, types, verify_webhook


@pytest.fixture
def deliveries(service: Service) -> Iterator[queue.Queue[types.EscalationDelivery]]:
    received: queue.Queue[types.EscalationDelivery] = queue.Queue()

    class Receiver(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("content-length") or 0))
            received.put(verify_webhook(body, self.headers.get("x-service-signature"), service.escalation_secret, delivery="escalation"))
            self.send_response(204)
            self.end_headers()

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", service.escalation_port), Receiver)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield received
    server.shutdown()
    server.server_close()


def final_task(client: OperatorClient, task_id: str) -> types.Task:
    return next(event["data"] for event in client.tasks.events(task_id) if event["event"] == "done")


def test_answering_a_choice_at_resolve_url_and_a_confirm_by_id(service: Service, deliveries: queue.Queue[types.EscalationDelivery]) -> None:
    with OperatorClient(service.escalation_key, base_url=service.base_url) as client:
        device = client.devices.create()
        task = client.tasks.submit(device["id"], f'go to {service.page("/plain")} then ask a human to choose between "Red" and "Blue" then return the title')
        delivery = deliveries.get(timeout=60)
        escalation = delivery["escalation"]
        assert (escalation["kind"], escalation["options"], escalation["task_id"]) == ("choice", ["Red", "Blue"], task["id"])
        space_id = client.whoami()["space_ids"][0]  # a Space-scoped key names its Space on lists
        assert [item["id"] for item in client.escalations.list(task_id=task["id"], space_id=space_id)] == [escalation["id"]]
        assert client.escalations.get(escalation["id"])["status"] == "pending"
        assert client.tasks.get(task["id"])["status"] == "needs_human"

        with pytest.raises(AuthenticationError) as wrong:
            client.escalations.resolve(escalation["id"], "esctok_" + "x" * 43, answer="Blue")
        assert wrong.value.code == "invalid_escalation_token"
        resolution = client.escalations.answer(delivery, answer="Blue", resolved_by="pytest")
        assert (resolution["applied"], resolution["status"]) == (True, "resolved")
        assert client.escalations.answer(delivery, answer="Red")["applied"] is False
        done = final_task(client, task["id"])
        assert (done["status"], done["result"]) == ("succeeded", "Plain")
        assert client.escalations.get(escalation["id"])["answer"] == "Blue"

        task = client.tasks.submit(device["id"], f'go to {service.page("/plain")} then ask a human to confirm "Go on?" then return the url')
        delivery = deliveries.get(timeout=60)
        assert delivery["escalation"]["kind"] == "confirm"
        assert client.escalations.resolve(delivery["escalation"]["id"], delivery["token"], answer=True)["applied"] is True
        assert final_task(client, task["id"])["status"] == "succeeded"
        client.devices.delete(device["id"])
