"""The credential vault with the SDK against the real service (docs/api.md, "Credential
vault"): create, read, list, rotate, push a code and delete, and never a value returned."""

from __future__ import annotations

import asyncio
import json

import pytest
from conftest import Service

from browser_device_operator import AsyncOperatorClient, ConflictError, InvalidRequestError, NotFoundError, OperatorClient, types

SECRETS = ("py-Secret-1", "py-Secret-2", "JBSWY3DPEHPK3PXP", "py-recovery-notes", "424242")


def assert_no_value(answer: object) -> None:
    text = json.dumps(answer)
    assert not [secret for secret in SECRETS if secret in text]


def test_a_credential_from_creation_to_deletion_never_shows_a_value(service: Service, client: OperatorClient) -> None:
    created = client.credentials.create(
        "py-bank", ["Example.com", "example.com"], space_id=service.space_id, username="ada", password="py-Secret-1", notes="py-recovery-notes"
    )
    assert set(created) == set(types.Credential.__annotations__)
    assert (created["object"], created["name"], created["domains"], created["username"]) == ("credential", "py-bank", ["example.com"], "ada")
    assert (created["has_password"], created["has_totp"], created["has_notes"]) == (True, False, True)
    assert created["id"].startswith("cred_") and created["space_id"] == service.space_id

    rotated = client.credentials.update(created["id"], password="py-Secret-2", totp_secret="JBSWY3DPEHPK3PXP", totp_digits=8)
    assert (rotated["has_password"], rotated["has_totp"], rotated["has_notes"], rotated["username"]) == (True, True, True, "ada")
    # None removes a field; a field not given stays.
    cleared = client.credentials.update(created["id"], notes=None, username=None)
    assert (cleared["has_password"], cleared["has_totp"], cleared["has_notes"], cleared["username"]) == (True, True, False, None)

    assert created["id"] in [item["id"] for item in client.credentials.list(space_id=service.space_id)]
    code = client.credentials.push_code(created["id"], "424242")
    assert (code["object"], code["credential_id"]) == ("credential_code", created["id"])
    fetched = client.credentials.get(created["id"])
    assert fetched["id"] == created["id"] and fetched["name"] == "py-bank"
    for answer in (created, rotated, cleared, code, fetched, client.credentials.list(space_id=service.space_id).to_list()):
        assert_no_value(answer)
    assert_no_value(client.audit.list(resource_id=created["id"]).to_list())

    with pytest.raises(ConflictError) as taken:
        client.credentials.create("py-bank", ["example.org"], space_id=service.space_id)
    assert (taken.value.status, taken.value.code, taken.value.param) == (409, "credential_name_taken", "name")
    with pytest.raises(InvalidRequestError) as subdomain:
        client.credentials.create("py-other", ["login.example.com"], space_id=service.space_id)
    assert (subdomain.value.code, subdomain.value.param) == ("invalid_request", "domains")

    client.credentials.delete(created["id"])
    with pytest.raises(NotFoundError) as gone:
        client.credentials.get(created["id"])
    assert (gone.value.status, gone.value.code) == (404, "credential_not_found")
    with pytest.raises(NotFoundError):
        client.credentials.push_code(created["id"], "424242")


async def rotate_asynchronously(service: Service) -> None:
    async with AsyncOperatorClient(service.api_key, base_url=service.base_url) as client:
        created = await client.credentials.create("py-async", ["example.com"], space_id=service.space_id, password="py-Secret-1")
        rotated = await client.credentials.update(created["id"], password=None, totp_secret="JBSWY3DPEHPK3PXP")
        assert (rotated["has_password"], rotated["has_totp"]) == (False, True)
        assert created["id"] in [item["id"] async for item in client.credentials.list(space_id=service.space_id)]
        assert (await client.credentials.push_code(created["id"], "424242"))["credential_id"] == created["id"]
        await client.credentials.delete(created["id"])
        with pytest.raises(NotFoundError):
            await client.credentials.get(created["id"])


def test_the_async_client_rotates_and_deletes_a_credential(service: Service) -> None:
    asyncio.run(rotate_asynchronously(service))
