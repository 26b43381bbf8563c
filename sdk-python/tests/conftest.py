"""What the tests share: the service the harness started (test/integration/python-sdk.test.ts
starts the real service, makes an organization, a Space and keys, serves task pages on
127.0.0.1, and passes them in the environment), and small local servers."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from browser_device_operator import OperatorClient


@dataclass(frozen=True)
class Service:
    base_url: str
    api_key: str
    space_id: str
    #: A key of the same organization with `operator:devices:read` only.
    read_only_key: str
    pages_url: str
    #: An organization whose escalation URL is http://127.0.0.1:<escalation_port>/escalations.
    escalation_key: str
    escalation_secret: str
    escalation_port: int
    #: A key holding only `space_id` (devices and tasks), for the examples.
    space_key: str
    #: Another organization with an escalation URL, for the escalation example.
    example_escalation_key: str
    example_escalation_secret: str
    example_escalation_port: int

    def page(self, path: str) -> str:
        return f"{self.pages_url}{path}"

    def form_prompt(self) -> str:
        return (
            f'go to {self.page("/form")} then type "ada@example.com" into "Email" then click "Submit" '
            'then wait for "Welcome" then return the text of "#message"'
        )


def _env(name: str) -> str:
    value = os.environ.get(name)
    if not value:
        pytest.fail(f"{name} is not set: these tests run against the service that `npx vitest run test/integration/python-sdk.test.ts` starts")
    return value


@pytest.fixture(scope="session")
def service() -> Service:
    return Service(
        base_url=_env("OPERATOR_BASE_URL"),
        api_key=_env("OPERATOR_API_KEY"),
        space_id=_env("OPERATOR_TEST_SPACE_ID"),
        read_only_key=_env("OPERATOR_TEST_READ_ONLY_KEY"),
        pages_url=_env("OPERATOR_TEST_PAGES_URL"),
        escalation_key=_env("OPERATOR_TEST_ESCALATION_KEY"),
        escalation_secret=_env("OPERATOR_TEST_ESCALATION_SECRET"),
        escalation_port=int(_env("OPERATOR_TEST_ESCALATION_PORT")),
        space_key=_env("OPERATOR_TEST_SPACE_KEY"),
        example_escalation_key=_env("OPERATOR_TEST_EXAMPLE_ESCALATION_KEY"),
        example_escalation_secret=_env("OPERATOR_TEST_EXAMPLE_ESCALATION_SECRET"),
        example_escalation_port=int(_env("OPERATOR_TEST_EXAMPLE_ESCALATION_PORT")),
    )


def _terminate_devices(api_key: str, base_url: str) -> None:
    with OperatorClient(api_key, base_url=base_url) as operator:
        # A Space-scoped key names its Spaces on lists; an organization-wide one lists them all.
        spaces: list[str | None] = [*operator.whoami()["space_ids"]] or [None]
        for space_id in spaces:
            for device in operator.devices.list(space_id=space_id).to_list():
                if device["status"] not in ("terminated", "error"):
                    operator.devices.delete(device["id"])


@pytest.fixture(autouse=True)
def no_devices_left(request: pytest.FixtureRequest) -> Iterator[None]:
    """Terminates what a test left running (a failed one does not clean up), so that no test
    finds the service's browsers (OPERATOR_MAX_BROWSERS) taken by another."""
    yield
    if "service" in request.fixturenames:
        service: Service = request.getfixturevalue("service")
        for key in (service.api_key, service.escalation_key, service.example_escalation_key):
            _terminate_devices(key, service.base_url)


@pytest.fixture
def client(service: Service) -> Iterator[OperatorClient]:
    with OperatorClient(service.api_key, base_url=service.base_url) as operator:
        yield operator
