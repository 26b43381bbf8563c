"""The asynchronous client against the real service: the same journey, concurrently."""

from __future__ import annotations

import asyncio

import pytest
from conftest import Service

from browser_device_operator import AsyncOperatorClient, NotFoundError, types


async def journey(service: Service) -> None:
    async with AsyncOperatorClient(service.api_key, base_url=service.base_url) as client:
        assert (await client.whoami())["product"] == "operator"
        devices = await asyncio.gather(*(client.devices.create(space_id=service.space_id, name=f"async-{n}") for n in range(2)))
        steps: dict[str, list[int]] = {device["id"]: [] for device in devices}

        async def run(device: types.Device) -> types.Task:
            return await client.tasks.run(
                device["id"], f"go to {service.page('/plain')} then return the title", on_step=lambda step: steps[device["id"]].append(step["seq"])
            )

        tasks = await asyncio.gather(*(run(device) for device in devices))
        assert [task["status"] for task in tasks] == ["succeeded", "succeeded"]
        assert [task["result"] for task in tasks] == ["Plain", "Plain"]
        for device in devices:
            assert steps[device["id"]] == list(range(1, len(steps[device["id"]]) + 1)) and steps[device["id"]]

        events = [event async for event in client.tasks.events(tasks[0]["id"])]
        assert events[-1]["event"] == "done" and events[-1]["data"] == tasks[0]
        assert [event["data"]["seq"] for event in events if event["event"] == "step"] == steps[devices[0]["id"]]
        resumed = [event async for event in client.tasks.events(tasks[0]["id"], after_seq=2)]
        assert [event["data"]["seq"] for event in resumed if event["event"] == "step"] == steps[devices[0]["id"]][2:]

        ids = {device["id"] for device in devices}
        listed = {device["id"] async for device in client.devices.list(space_id=service.space_id, limit=1) if device["id"] in ids}
        assert listed == ids
        with pytest.raises(NotFoundError):
            await client.tasks.get("task_nope")
        await asyncio.gather(*(client.devices.delete(device["id"]) for device in devices))


def test_async_journey(service: Service) -> None:
    asyncio.run(journey(service))


async def watch_then_revoke(service: Service) -> None:
    async with AsyncOperatorClient(service.api_key, base_url=service.base_url) as client:
        device = await client.devices.create(space_id=service.space_id)
        session = await client.sessions.create(device["id"], mode="watch", ttl_secs=120)
        async with client.sessions.connect(session) as view:
            assert view.ready is not None and (view.ready["mode"], view.ready["session_id"]) == ("watch", session["id"])
            frame = await view.next_frame()
            assert frame is not None and frame["format"] == "jpeg" and frame["width"] > 0
            await client.sessions.revoke(session["id"])
            async for _ in view:
                pass
            assert (view.close_code, view.close_reason) == (4410, "session_expired")
        assert (await client.sessions.get(session["id"]))["revoked_at"] is not None
        await client.devices.delete(device["id"])


def test_async_live_view_ends_when_its_session_is_revoked(service: Service) -> None:
    asyncio.run(watch_then_revoke(service))
