"""Runs one task on each of 10 devices at once with asyncio, then cleans up.

    OPERATOR_API_KEY=svc_operator_... python3 examples/ten_devices.py
"""

import asyncio
import json
import os

from browser_device_operator import AsyncOperatorClient

URL = os.environ.get("EXAMPLE_URL", "https://example.com")
COUNT = int(os.environ.get("DEVICES", "10"))


async def main() -> None:
    async with AsyncOperatorClient() as operator:
        devices = await asyncio.gather(*(operator.devices.create(name=f"worker-{index + 1}") for index in range(COUNT)))
        try:
            tasks = await asyncio.gather(*(operator.tasks.run(device["id"], f"go to {URL} then return the title") for device in devices))
            for device, task in zip(devices, tasks):
                print(f"{device['name']}: {task['status']} {json.dumps(task['result'])}")
            print(f"{sum(task['status'] == 'succeeded' for task in tasks)}/{COUNT} succeeded")
        finally:
            await asyncio.gather(*(operator.devices.delete(device["id"]) for device in devices))


asyncio.run(main())
