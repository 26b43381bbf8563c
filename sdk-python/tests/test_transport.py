"""The transport rules against scripted local servers: which answers are retried and with
which Idempotency-Key, that no redirect is followed, typed errors, configuration from the
environment, and how server-sent events are read. The same rules for both clients."""

from __future__ import annotations

import asyncio
from http.server import BaseHTTPRequestHandler

import pytest

from browser_device_operator import (
    AsyncOperatorClient,
    InvalidRequestError,
    OperatorClient,
    OperatorConnectionError,
    RateLimitError,
    RedirectError,
    RetryPolicy,
    ServiceError,
)
from browser_device_operator._transport import SseDecoder, SseMessage

from servers import Answer, Seen, error_body, http_server, reply, scripted

DEVICE = {"id": "dev_1", "object": "device", "name": "d", "region": "local", "space_id": "s", "status": "active", "created_at": "", "current_task_id": None, "last_active_at": ""}
FAST = RetryPolicy(max_retries=3, initial_delay=0.01)


def test_retries_503_with_the_same_idempotency_key_and_uses_the_callers_key() -> None:
    answers = [Answer(503, error_body("capacity_exhausted"), {"retry-after": "0"}), Answer(201, DEVICE), Answer(201, DEVICE)]
    with scripted(answers) as (url, seen), OperatorClient("k", base_url=url) as client:
        assert client.devices.create(name="d") == DEVICE
        first, second = seen[0].headers["idempotency-key"], seen[1].headers["idempotency-key"]
        assert len(first) == 36 and second == first
        client.devices.create(idempotency_key="mine")
        assert seen[2].headers["idempotency-key"] == "mine"
        assert seen[0].headers["authorization"] == "Bearer k"


def test_retries_429_after_retry_after_in_the_async_client_too() -> None:
    answers = [Answer(429, error_body("rate_limited"), {"retry-after": "0"}), Answer(201, DEVICE)]

    async def create() -> None:
        async with AsyncOperatorClient("k", base_url=url) as client:
            assert await client.devices.create() == DEVICE

    with scripted(answers) as (url, seen):
        asyncio.run(create())
    assert [request.headers["idempotency-key"] for request in seen] == [seen[0].headers["idempotency-key"]] * 2


def test_does_not_retry_other_errors_and_stops_after_max_retries() -> None:
    answers = [Answer(400, error_body("invalid_request", param="name"))] + [Answer(503, error_body("capacity_exhausted"), {"retry-after": "0"})] * 3
    with scripted(answers) as (url, seen), OperatorClient("k", base_url=url, retry=RetryPolicy(max_retries=2)) as client:
        with pytest.raises(InvalidRequestError) as invalid:
            client.devices.get("dev_1")
        assert (invalid.value.code, invalid.value.status, invalid.value.param, invalid.value.request_id) == ("invalid_request", 400, "name", "req_scripted")
        assert len(seen) == 1
        with pytest.raises(ServiceError):
            client.devices.get("dev_1")
        assert len(seen) == 4


def test_a_rate_limit_that_outlasts_the_retries_carries_retry_after() -> None:
    with scripted([Answer(429, error_body("rate_limited"), {"retry-after": "0"})] * 2) as (url, _):
        with OperatorClient("k", base_url=url, retry=RetryPolicy(max_retries=1)) as client, pytest.raises(RateLimitError) as caught:
            client.whoami()
    assert caught.value.retry_after == 0


def test_a_refused_connection_is_a_connection_error_after_retrying_reads() -> None:
    with scripted([]) as (url, _):
        pass
    with OperatorClient("k", base_url=url, retry=RetryPolicy(max_retries=1, initial_delay=0.01)) as client:
        with pytest.raises(OperatorConnectionError) as caught:
            client.devices.get("dev_1")
    assert (caught.value.status, caught.value.code) == (0, "connection_error")


def test_no_redirect_is_followed_so_the_key_goes_nowhere_else() -> None:
    with scripted([Answer(200, DEVICE)]) as (elsewhere, reached):

        def redirect(handler: BaseHTTPRequestHandler, _: Seen) -> None:
            reply(handler, Answer(307, None, {"location": f"{elsewhere}/v1/devices/dev_1"}))

        with http_server(redirect) as (url, seen), OperatorClient("svc_operator_test_secret", base_url=url) as client:
            with pytest.raises(RedirectError) as caught:
                client.devices.get("dev_1")
            with pytest.raises(RedirectError):
                client.devices.create(name="d")
    assert caught.value.status == 307 and caught.value.location == f"{elsewhere}/v1/devices/dev_1"
    assert [request.method for request in seen] == ["GET", "POST"]
    assert reached == []


def test_key_and_url_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    with scripted([Answer(200, {"org_id": "org_1"})]) as (url, seen):
        monkeypatch.setenv("OPERATOR_API_KEY", "from-env")
        monkeypatch.setenv("OPERATOR_BASE_URL", f"{url}/v1/")
        with OperatorClient() as client:
            assert client.base_url == url
            assert client.whoami()["org_id"] == "org_1"
    assert (seen[0].path, seen[0].headers["authorization"]) == ("/v1/whoami", "Bearer from-env")
    monkeypatch.delenv("OPERATOR_API_KEY")
    with pytest.raises(ValueError):
        OperatorClient()


def test_lists_page_themselves() -> None:
    pages = [Answer(200, {"data": [DEVICE, DEVICE], "next_cursor": "c2"}), Answer(200, {"data": [DEVICE], "next_cursor": ""})]
    with scripted(pages) as (url, seen), OperatorClient("k", base_url=url) as client:
        assert len(client.devices.list(limit=2, status="active").to_list()) == 3
    assert seen[0].path == "/v1/devices?status=active&limit=2"
    assert seen[1].path == "/v1/devices?status=active&limit=2&cursor=c2"


def test_sse_decoder_reads_frames_ids_multiline_data_and_skips_comments() -> None:
    decoder = SseDecoder()
    lines = [": keep-alive", "", "id: 1", "event: step\r", 'data: {"a":', "data: 1}", "", "event: done", "data: x", ""]
    messages = [message for line in lines if (message := decoder.feed(line)) is not None]
    assert messages == [SseMessage("step", '{"a":\n1}', "1"), SseMessage("done", "x", None)]
