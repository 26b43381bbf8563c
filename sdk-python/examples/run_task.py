"""Runs one task on a new device and prints its steps as they happen.

    OPERATOR_API_KEY=svc_operator_... OPERATOR_BASE_URL=http://localhost:3000 python3 examples/run_task.py
"""

import json
import os

from browser_device_operator import OperatorClient

url = os.environ.get("EXAMPLE_URL", "https://example.com")

with OperatorClient() as operator:  # OPERATOR_API_KEY and OPERATOR_BASE_URL
    device = operator.devices.create(name="example")
    try:
        task = operator.tasks.run(
            device["id"],
            f"go to {url} then return the title",
            on_step=lambda step: print(f"step {step['seq']} {step['type']}: {step['action'] or ''} {step['note'] or step['title'] or ''}".rstrip()),
        )
        print(f"task {task['status']}: {json.dumps(task['result'])}")
    finally:
        operator.devices.delete(device["id"])
