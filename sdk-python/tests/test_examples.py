"""Each example runs as a user would run it (`python3 examples/<name>.py`), against the real
service, with a key restricted to one Space so the examples need no space_id."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from conftest import Service

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def example(name: str, service: Service, env: dict[str, str]) -> str:
    result = subprocess.run(
        [sys.executable, str(EXAMPLES / name)],
        env={**os.environ, "OPERATOR_BASE_URL": service.base_url, "EXAMPLE_URL": service.page("/plain"), **env},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_run_task_prints_each_step_and_the_result(service: Service) -> None:
    output = example("run_task.py", service, {"OPERATOR_API_KEY": service.space_key})
    assert output.startswith("step 1 ")
    assert 'task succeeded: "Plain"' in output


def test_escalation_receiver_answers_the_escalation_its_task_raises(service: Service) -> None:
    output = example(
        "escalation_receiver.py",
        service,
        {"OPERATOR_API_KEY": service.example_escalation_key, "ESCALATION_SECRET": service.example_escalation_secret, "RECEIVER_PORT": str(service.example_escalation_port)},
    )
    assert re.search(r"^escalation esc_\S+: Which plan should I pick\?$", output, re.M)
    assert "The Pro plan" in output
    assert 'task succeeded: "Plain"' in output


def test_ten_devices_runs_a_task_on_each_of_its_devices_at_once(service: Service) -> None:
    # Three devices, not its default ten: its gathers and tally are the same for any
    # count, and the TypeScript example's test (examples/examples.test.ts) runs the full ten
    # at once on the same service code; ten more Chromium launches here cost the suite 15 s.
    output = example("ten_devices.py", service, {"OPERATOR_API_KEY": service.space_key, "DEVICES": "3"})
    assert "3/3 succeeded" in output
    assert len([line for line in output.splitlines() if line.startswith("worker-")]) == 3
