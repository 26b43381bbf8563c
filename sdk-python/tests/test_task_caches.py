"""Task caches with the SDK against the real service (docs/api.md, "Task caches"): a task run
twice with one `cache_key` is planned, then replayed; its entry is listed, read and deleted."""

from __future__ import annotations

import pytest
from conftest import Service

from browser_device_operator import InvalidRequestError, NotFoundError, OperatorClient, types


def test_a_cache_key_replays_the_second_run_and_its_entry_is_managed(service: Service, client: OperatorClient) -> None:
    device = client.devices.create(space_id=service.space_id)
    first_steps: list[types.Step] = []
    first = client.tasks.run(device["id"], service.form_prompt(), cache_key="py.form", on_step=first_steps.append)
    assert (first["status"], first["cache"]) == ("succeeded", {"key": "py.form", "outcome": "miss"})
    assert first["usage"]["replayed_steps"] == 0
    assert not any(step["replayed"] for step in first_steps)

    second_steps: list[types.Step] = []
    second = client.tasks.run(device["id"], service.form_prompt(), cache_key="py.form", on_step=second_steps.append)
    assert (second["status"], second["result"], second["cache"]) == ("succeeded", "Welcome, ada@example.com", {"key": "py.form", "outcome": "hit"})
    replayed = [step for step in second_steps if step["type"] == "action"]
    assert replayed and all(step["replayed"] for step in replayed)
    assert (second["usage"]["model_calls"], second["usage"]["replayed_steps"]) == (0, len(replayed))

    entries = [entry for entry in client.task_caches.list(space_id=service.space_id) if entry["key"] == "py.form"]
    assert len(entries) == 1
    entry = entries[0]
    assert (entry["object"], entry["space_id"], entry["prompt"], entry["hits"], entry["heals"]) == ("task_cache", service.space_id, service.form_prompt(), 1, 0)
    assert len(entry["steps"]) == len(replayed) and entry["last_used_at"] is not None
    assert client.task_caches.get(entry["id"]) == entry

    client.task_caches.delete(entry["id"])
    with pytest.raises(NotFoundError) as gone:
        client.task_caches.get(entry["id"])
    assert (gone.value.status, gone.value.code) == (404, "task_cache_not_found")
    with pytest.raises(NotFoundError):
        client.task_caches.delete(entry["id"])
    client.devices.delete(device["id"])


def test_an_invalid_cache_key_is_a_typed_error_naming_it(service: Service, client: OperatorClient) -> None:
    device = client.devices.create(space_id=service.space_id)
    with pytest.raises(InvalidRequestError) as invalid:
        client.tasks.submit(device["id"], f"go to {service.page('/plain')} then return the title", cache_key="no spaces")
    assert (invalid.value.status, invalid.value.code, invalid.value.param) == (400, "invalid_request", "cache_key")
    assert client.tasks.list(device["id"]).to_list() == []
    client.devices.delete(device["id"])
