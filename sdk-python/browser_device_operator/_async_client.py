"""The client's resources and its transport loop, written once, for asyncio.
`_sync_client.py` is this file with `async` and `await` removed by
scripts/sdk-python-generate.py, so both clients share one implementation; this file keeps
to the rewrites that script lists."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any, Generic, Literal, TypeVar, cast
from urllib.parse import quote

import httpx

from ._transport import (
    OMITTED,
    TERMINAL_STATUSES,
    Answer,
    ClientConfig,
    Omitted,
    Page,
    RetryPolicy,
    SseDecoder,
    StreamProgress,
    backoff_seconds,
    connection_error,
    drop_none,
    drop_omitted,
    error_from_response,
    is_repeatable,
    parse_json,
    retry_after_seconds,
    should_retry_status,
)
from .errors import OperatorConnectionError
from .live_view import AsyncLiveView, ConnectableSession, LiveReconnect, LiveRefusal
from .types import (
    CreateCdpSessionResponse,
    Credential,
    CredentialCode,
    Device,
    DeviceStatus,
    EscalationDelivery,
    Escalation,
    EscalationResolution,
    EventType,
    JsonValue,
    ListTaskFilesResponseDataItem,
    AuditEvent,
    ReleaseResult,
    Session,
    SessionWithToken,
    Step,
    TakeoverResult,
    Task,
    TaskCache,
    TaskEvent,
    Usage,
    WebhookEndpoint,
    WebhookEndpointWithSecret,
    Whoami,
)

T = TypeVar("T")
# The resources have `list` methods, which shadow the builtin inside their classes.
Strings = list[str]


def _id(value: str) -> str:
    return quote(value, safe="")


class AsyncPages(Generic[T]):
    """What a list method returns: iterate it for every item of every page (fetched as the
    loop needs them), or ask for `first_page()` or `pages()`."""

    def __init__(self, client: AsyncOperatorClient, path: str, params: dict[str, Any]) -> None:
        self._client = client
        self._path = path
        self._params = params

    async def first_page(self) -> Page[T]:
        return await self._client._page(self._path, self._params)

    async def pages(self) -> AsyncIterator[Page[T]]:
        params = dict(self._params)
        while True:
            page: Page[T] = await self._client._page(self._path, params)
            yield page
            if page.next_cursor == "":
                return
            params["cursor"] = page.next_cursor

    async def __aiter__(self) -> AsyncIterator[T]:
        async for page in self.pages():
            for item in page.data:
                yield item

    async def to_list(self) -> list[T]:
        """Every item of every page in one list (mind long lists)."""
        return [item async for item in self]


class AsyncOperatorClient:
    """The asynchronous client of the Browser Device Operator Service.

    `api_key` defaults to `OPERATOR_API_KEY`, `base_url` (without `/v1`) to
    `OPERATOR_BASE_URL`, then `http://localhost:3000`. Close it with `aclose()` or use it as
    an `async with` block.
    """

    def __init__(
        self,
        api_key: str | None = None,
        *,
        base_url: str | None = None,
        retry: RetryPolicy | None = None,
        timeout: float = 60.0,
        http_client: httpx.AsyncClient | None = None,
    ) -> None:
        self._config = ClientConfig.resolve(api_key, base_url, retry, timeout)
        # Redirects are never followed: that would replay the key to wherever one points.
        self._http = http_client or httpx.AsyncClient(timeout=timeout, follow_redirects=False)
        self.devices = AsyncDevices(self)
        self.tasks = AsyncTasks(self)
        self.task_caches = AsyncTaskCaches(self)
        self.sessions = AsyncSessions(self)
        self.cdp = AsyncCdp(self)
        self.escalations = AsyncEscalations(self)
        self.webhook_endpoints = AsyncWebhookEndpoints(self)
        self.credentials = AsyncCredentials(self)
        self.audit = AsyncAudit(self)

    @property
    def base_url(self) -> str:
        return self._config.base_url

    async def __aenter__(self) -> AsyncOperatorClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    async def whoami(self) -> Whoami:
        """The key's organization, Spaces and scopes."""
        return cast(Whoami, await self._json("GET", "/whoami"))

    async def usage(self, *, product: str | None = None) -> Usage:
        """The organization's metered usage over the rolling 24 hours."""
        return cast(Usage, await self._json("GET", "/usage", params=drop_none(product=product)))

    async def event_types(self) -> list[EventType]:
        """The catalogue of event types (`deliverable` ones can be subscribed to)."""
        return cast(list[EventType], (await self._json("GET", "/event_types"))["data"])

    # --- transport -------------------------------------------------------------------

    async def _send(
        self,
        method: str,
        url: str,
        *,
        params: dict[str, Any] | None = None,
        json: Any = None,
        idempotency_key: str | None = None,
        bearer: str | None = None,
        accept: str | None = None,
        stream: bool = False,
    ) -> httpx.Response:
        """Sends with the transport rules: 429 and 503 retried after `Retry-After` (or
        backoff) with the same `Idempotency-Key`; broken connections retried when the
        request is repeatable; no redirect followed; error answers raised as typed errors."""
        headers = self._config.headers(method, idempotency_key, bearer)
        if accept is not None:
            headers["Accept"] = accept
        request = self._http.build_request(method, url, params=params, json=json, headers=headers)
        policy = self._config.retry
        attempt = 0
        while True:
            try:
                response = await self._http.send(request, stream=stream, follow_redirects=False)
            except httpx.TransportError as error:
                if not is_repeatable(request) or attempt >= policy.max_retries:
                    raise connection_error(error) from error
                await asyncio.sleep(backoff_seconds(attempt, policy, None))
                attempt += 1
                continue
            if should_retry_status(response.status_code, attempt, policy):
                wait = backoff_seconds(attempt, policy, retry_after_seconds(response))
                await response.aclose()
                await asyncio.sleep(wait)
                attempt += 1
                continue
            if not 200 <= response.status_code < 300:
                try:
                    await response.aread()
                finally:
                    await response.aclose()
                raise error_from_response(response)
            return response

    async def _json(self, method: str, path: str, **options: Any) -> Any:
        response = await self._send(method, self._config.url(path), **options)
        return None if response.status_code == 204 or not response.content else response.json()

    async def _bytes(self, path: str) -> bytes:
        return (await self._send("GET", self._config.url(path))).content

    async def _page(self, path: str, params: dict[str, Any]) -> Page[Any]:
        body = await self._json("GET", path, params=drop_none(**params))
        return Page(data=list(body["data"]), next_cursor=str(body["next_cursor"]))

    def _pages(self, path: str, **params: Any) -> AsyncPages[Any]:
        return AsyncPages(self, path, params)


class AsyncResource:
    """A group of methods of the client (`client.devices`, `client.tasks`, ...)."""

    def __init__(self, client: AsyncOperatorClient) -> None:
        self._client = client


class AsyncDevices(AsyncResource):
    """Browser devices: a real Chromium each."""

    async def create(
        self,
        *,
        name: str | None = None,
        region: str | None = None,
        idle_suspend_secs: int | None = None,
        space_id: str | None = None,
        idempotency_key: str | None = None,
    ) -> Device:
        """Creates a device (`space_id` is needed when the key holds several Spaces)."""
        body = drop_none(name=name, region=region, idle_suspend_secs=idle_suspend_secs, space_id=space_id)
        return cast(Device, await self._client._json("POST", "/devices", json=body, idempotency_key=idempotency_key))

    async def get(self, device_id: str) -> Device:
        return cast(Device, await self._client._json("GET", f"/devices/{_id(device_id)}"))

    def list(
        self, *, status: DeviceStatus | None = None, space_id: str | None = None, limit: int | None = None, cursor: str | None = None
    ) -> AsyncPages[Device]:
        """Devices, newest first: iterate for all of them, or `first_page()`."""
        return self._client._pages("/devices", status=status, space_id=space_id, limit=limit, cursor=cursor)

    async def sleep(self, device_id: str) -> Device:
        return cast(Device, await self._client._json("POST", f"/devices/{_id(device_id)}/sleep"))

    async def wake(self, device_id: str) -> Device:
        return cast(Device, await self._client._json("POST", f"/devices/{_id(device_id)}/wake"))

    async def delete(self, device_id: str) -> Device:
        """Terminates the device (202 with the device, `terminated`)."""
        return cast(Device, await self._client._json("DELETE", f"/devices/{_id(device_id)}"))


class AsyncTasks(AsyncResource):
    """Natural-language tasks on a device, their steps, results and artifacts."""

    async def submit(
        self,
        device_id: str,
        prompt: str,
        *,
        allowed_domains: Strings | None = None,
        max_steps: int | None = None,
        output_schema: dict[str, JsonValue] | None = None,
        confirm_before: Strings | None = None,
        escalation_on_timeout: Literal["fail", "continue"] | None = None,
        cache_key: str | None = None,
        idempotency_key: str | None = None,
    ) -> Task:
        """Submits a task (202, `running`); the device must be active and idle. With a
        `cache_key` a success is stored as the key's entry (`task_caches`), and the next
        task with the same key and prompt replays it with no model call (`cache.outcome`)."""
        body = drop_none(
            prompt=prompt,
            allowed_domains=allowed_domains,
            max_steps=max_steps,
            output_schema=output_schema,
            confirm_before=confirm_before,
            escalation_on_timeout=escalation_on_timeout,
            cache_key=cache_key,
        )
        return cast(Task, await self._client._json("POST", f"/devices/{_id(device_id)}/tasks", json=body, idempotency_key=idempotency_key))

    async def get(self, task_id: str) -> Task:
        return cast(Task, await self._client._json("GET", f"/tasks/{_id(task_id)}"))

    async def cancel(self, task_id: str) -> Task:
        return cast(Task, await self._client._json("POST", f"/tasks/{_id(task_id)}/cancel"))

    def list(self, device_id: str, *, limit: int | None = None, cursor: str | None = None) -> AsyncPages[Task]:
        """A device's tasks, newest first."""
        return self._client._pages(f"/devices/{_id(device_id)}/tasks", limit=limit, cursor=cursor)

    async def events(self, task_id: str, *, after_seq: int = 0, max_reconnects: int = 5) -> AsyncIterator[TaskEvent]:
        """The task's steps as they happen (`{"event": "step", "id", "data": Step}`), then
        `{"event": "done", "data": Task}` with the terminal task. A stream that ends without
        `done` (a dropped connection, or the service's 300 s limit) is resumed with
        `after_seq`, so no step is repeated or skipped; after `max_reconnects` resumptions
        in a row that brought no step it gives up (with `done` if the task is terminal)."""
        client = self._client
        progress = StreamProgress(after_seq, max_reconnects)
        while True:
            try:
                response = await client._send(
                    "GET",
                    client._config.url(f"/tasks/{_id(task_id)}/events"),
                    params={"after_seq": progress.after_seq},
                    accept="text/event-stream",
                    stream=True,
                )
                try:
                    decoder = SseDecoder()
                    async for line in response.aiter_lines():
                        message = decoder.feed(line)
                        if message is None:
                            continue
                        if message.event == "step":
                            step = cast(Step, parse_json(message.data))
                            if progress.accept(step["seq"]):
                                yield {"event": "step", "id": str(step["seq"]), "data": step}
                        elif message.event == "done":
                            yield {"event": "done", "data": cast(Task, parse_json(message.data))}
                            return
                finally:
                    await response.aclose()
            except (OperatorConnectionError, httpx.TransportError):
                pass  # typed answers of the service (404, 403, ...) are final; a broken stream resumes
            progress.dropped()
            if progress.exhausted:
                task = await self.get(task_id)
                if task["status"] in TERMINAL_STATUSES:
                    yield {"event": "done", "data": task}
                    return
                raise connection_error(RuntimeError("the task event stream keeps closing"))
            await asyncio.sleep(progress.delay(client._config.retry))

    async def run(
        self,
        device_id: str,
        prompt: str,
        *,
        on_step: Callable[[Step], object] | None = None,
        allowed_domains: Strings | None = None,
        max_steps: int | None = None,
        output_schema: dict[str, JsonValue] | None = None,
        confirm_before: Strings | None = None,
        escalation_on_timeout: Literal["fail", "continue"] | None = None,
        cache_key: str | None = None,
        idempotency_key: str | None = None,
    ) -> Task:
        """Submits a task, calls `on_step` with each step as it happens, and returns the task
        once terminal (`succeeded`, `failed` or `canceled`; a failure's `result` is
        `{"error", "detail"}`)."""
        task = await self.submit(
            device_id,
            prompt,
            allowed_domains=allowed_domains,
            max_steps=max_steps,
            output_schema=output_schema,
            confirm_before=confirm_before,
            escalation_on_timeout=escalation_on_timeout,
            cache_key=cache_key,
            idempotency_key=idempotency_key,
        )
        async for event in self.events(task["id"]):
            if event["event"] == "done":
                return event["data"]
            if on_step is not None:
                on_step(event["data"])
        return await self.get(task["id"])

    async def step_screenshot(self, task_id: str, seq: int) -> bytes:
        """The JPEG of the page after step `seq` (a step's `screenshot_url`)."""
        return await self._client._bytes(f"/tasks/{_id(task_id)}/steps/{int(seq)}/screenshot")

    async def recording(self, task_id: str) -> bytes:
        """The MP4 recording of the task's run."""
        return await self._client._bytes(f"/tasks/{_id(task_id)}/recording")

    def files(self, task_id: str, *, limit: int | None = None, cursor: str | None = None) -> AsyncPages[ListTaskFilesResponseDataItem]:
        """The files the task downloaded."""
        return self._client._pages(f"/tasks/{_id(task_id)}/files", limit=limit, cursor=cursor)

    async def file(self, task_id: str, file_id: str) -> bytes:
        """The content of one downloaded file."""
        return await self._client._bytes(f"/tasks/{_id(task_id)}/files/{_id(file_id)}")


class AsyncTaskCaches(AsyncResource):
    """The stored runs of tasks submitted with a `cache_key`, one entry per key and Space."""

    def list(self, *, space_id: str | None = None, limit: int | None = None, cursor: str | None = None) -> AsyncPages[TaskCache]:
        """Entries, newest first (a Space-scoped key names its Space)."""
        return self._client._pages("/task_caches", space_id=space_id, limit=limit, cursor=cursor)

    async def get(self, task_cache_id: str) -> TaskCache:
        return cast(TaskCache, await self._client._json("GET", f"/task_caches/{_id(task_cache_id)}"))

    async def delete(self, task_cache_id: str) -> None:
        """Deletes the entry: the next task with its key runs with the planner again (a miss)."""
        await self._client._json("DELETE", f"/task_caches/{_id(task_cache_id)}")


class AsyncSessions(AsyncResource):
    """Live view of a device, and takeover of its running task."""

    async def create(self, device_id: str, *, mode: Literal["watch", "control"] | None = None, ttl_secs: int | None = None) -> SessionWithToken:
        """Mints a session; its `session_token` is shown this once."""
        body = drop_none(mode=mode, ttl_secs=ttl_secs)
        return cast(SessionWithToken, await self._client._json("POST", f"/devices/{_id(device_id)}/sessions", json=body))

    async def get(self, session_id: str) -> Session:
        return cast(Session, await self._client._json("GET", f"/sessions/{_id(session_id)}"))

    async def revoke(self, session_id: str) -> None:
        await self._client._json("DELETE", f"/sessions/{_id(session_id)}")

    async def take_over(self, session_id: str, *, reason: str | None = None) -> TakeoverResult:
        """Pauses the device's running task so this control session's inputs reach the page."""
        return cast(TakeoverResult, await self._client._json("POST", f"/sessions/{_id(session_id)}/takeover", json=drop_none(reason=reason)))

    async def release(self, session_id: str) -> ReleaseResult:
        """Ends the takeover; the task resumes."""
        return cast(ReleaseResult, await self._client._json("POST", f"/sessions/{_id(session_id)}/release"))

    async def recording(self, session_id: str) -> bytes:
        """The MP4 recording of what the session's device showed."""
        return await self._client._bytes(f"/sessions/{_id(session_id)}/recording")

    def connect(
        self,
        session: ConnectableSession,
        *,
        on_refusal: Callable[[LiveRefusal], object] | None = None,
        on_reconnect: Callable[[LiveReconnect], object] | None = None,
    ) -> AsyncLiveView:
        """The live view of a session from `create()` (its `ws_url` and `session_token`):
        open it with `with`, iterate it for frames, `send()` inputs on a control session."""
        return AsyncLiveView(session, on_refusal=on_refusal, on_reconnect=on_reconnect)


class AsyncCdp(AsyncResource):
    """Direct Chrome DevTools Protocol access to a device, for your own Puppeteer or Playwright."""

    async def create(self, device_id: str, *, ttl_secs: int | None = None) -> CreateCdpSessionResponse:
        """A `cdp_session` whose `cdp_url` a CDP client connects to until `expires_at`."""
        return cast(CreateCdpSessionResponse, await self._client._json("POST", f"/devices/{_id(device_id)}/cdp", json=drop_none(ttl_secs=ttl_secs)))

    async def delete(self, cdp_session_id: str) -> None:
        await self._client._json("DELETE", f"/cdp_sessions/{_id(cdp_session_id)}")

    async def recording(self, cdp_session_id: str) -> bytes:
        return await self._client._bytes(f"/cdp_sessions/{_id(cdp_session_id)}/recording")


class AsyncEscalations(AsyncResource):
    """Requests for a human, and their answers."""

    def list(
        self,
        *,
        status: Literal["pending", "resolved", "expired", "canceled"] | None = None,
        task_id: str | None = None,
        space_id: str | None = None,
        limit: int | None = None,
        cursor: str | None = None,
    ) -> AsyncPages[Escalation]:
        return self._client._pages("/escalations", status=status, task_id=task_id, space_id=space_id, limit=limit, cursor=cursor)

    async def get(self, escalation_id: str) -> Escalation:
        return cast(Escalation, await self._client._json("GET", f"/escalations/{_id(escalation_id)}"))

    async def resolve(
        self,
        escalation_id: str,
        token: str,
        *,
        answer: Answer | None = None,
        cleared: bool | None = None,
        resolved_by: str | None = None,
        source: str | None = None,
    ) -> EscalationResolution:
        """Answers an escalation with the per-escalation `token` of its delivery (not the
        API key). `applied` is false when it was already settled."""
        url = self._client._config.url(f"/escalations/{_id(escalation_id)}/resolve")
        return await self._resolve_at(url, token, answer=answer, cleared=cleared, resolved_by=resolved_by, source=source)

    async def answer(
        self,
        delivery: EscalationDelivery,
        *,
        answer: Answer | None = None,
        cleared: bool | None = None,
        resolved_by: str | None = None,
        source: str | None = None,
    ) -> EscalationResolution:
        """Answers a verified escalation delivery (`verify_webhook(..., delivery="escalation")`)
        at its `resolve_url` with its `token`, as the docs' receivers do."""
        return await self._resolve_at(delivery["resolve_url"], delivery["token"], answer=answer, cleared=cleared, resolved_by=resolved_by, source=source)

    async def _resolve_at(self, url: str, token: str, **fields: Any) -> EscalationResolution:
        response = await self._client._send("POST", url, json=drop_none(**fields), bearer=token)
        return cast(EscalationResolution, response.json())


class AsyncWebhookEndpoints(AsyncResource):
    """Where the service POSTs signed events."""

    async def create(
        self, url: str, *, event_types: Strings | None = None, description: str | None = None, space_id: str | None = None
    ) -> WebhookEndpointWithSecret:
        """Registers an endpoint; its `secret` (the HMAC key) is shown this once."""
        body = drop_none(url=url, event_types=event_types, description=description, space_id=space_id)
        return cast(WebhookEndpointWithSecret, await self._client._json("POST", "/webhook_endpoints", json=body))

    async def get(self, endpoint_id: str) -> WebhookEndpoint:
        return cast(WebhookEndpoint, await self._client._json("GET", f"/webhook_endpoints/{_id(endpoint_id)}"))

    def list(self, *, space_id: str | None = None, limit: int | None = None, cursor: str | None = None) -> AsyncPages[WebhookEndpoint]:
        return self._client._pages("/webhook_endpoints", space_id=space_id, limit=limit, cursor=cursor)

    async def update(
        self,
        endpoint_id: str,
        *,
        url: str | None = None,
        event_types: Strings | None = None,
        description: str | None = None,
        enabled: bool | None = None,
    ) -> WebhookEndpoint:
        """Changes any of the fields; `enabled=True` is the way out of auto-disable."""
        body = drop_none(url=url, event_types=event_types, description=description, enabled=enabled)
        return cast(WebhookEndpoint, await self._client._json("PATCH", f"/webhook_endpoints/{_id(endpoint_id)}", json=body))

    async def delete(self, endpoint_id: str) -> None:
        await self._client._json("DELETE", f"/webhook_endpoints/{_id(endpoint_id)}")


class AsyncCredentials(AsyncResource):
    """The credential vault: logins that tasks fill as `{{vault:<name>.<field>}}` on the
    credential's domains only. No method ever returns a password, TOTP secret, note or code."""

    async def create(
        self,
        name: str,
        domains: Strings,
        *,
        space_id: str | None = None,
        username: str | None = None,
        password: str | None = None,
        totp_secret: str | None = None,
        totp_algorithm: Literal["SHA1", "SHA256", "SHA512"] | None = None,
        totp_digits: int | None = None,
        totp_period: int | None = None,
        notes: str | None = None,
    ) -> Credential:
        """Stores a credential (`name` unique in its Space, else `ConflictError`
        `credential_name_taken`); `totp_secret` is base32 or an `otpauth://totp/` URI."""
        body = drop_none(
            name=name,
            domains=domains,
            space_id=space_id,
            username=username,
            password=password,
            totp_secret=totp_secret,
            totp_algorithm=totp_algorithm,
            totp_digits=totp_digits,
            totp_period=totp_period,
            notes=notes,
        )
        return cast(Credential, await self._client._json("POST", "/credentials", json=body))

    async def get(self, credential_id: str) -> Credential:
        return cast(Credential, await self._client._json("GET", f"/credentials/{_id(credential_id)}"))

    def list(self, *, space_id: str | None = None, limit: int | None = None, cursor: str | None = None) -> AsyncPages[Credential]:
        """Credentials, newest first (a Space-scoped key names its Space)."""
        return self._client._pages("/credentials", space_id=space_id, limit=limit, cursor=cursor)

    async def update(
        self,
        credential_id: str,
        *,
        name: str | None = None,
        domains: Strings | None = None,
        username: str | None | Omitted = OMITTED,
        password: str | None | Omitted = OMITTED,
        totp_secret: str | None | Omitted = OMITTED,
        totp_algorithm: Literal["SHA1", "SHA256", "SHA512"] | None = None,
        totp_digits: int | None = None,
        totp_period: int | None = None,
        notes: str | None | Omitted = OMITTED,
    ) -> Credential:
        """Replaces the fields given (this is how a credential is rotated); `None` removes
        `username`, `password`, `totp_secret` or `notes`, and a field not given stays."""
        body = drop_none(name=name, domains=domains, totp_algorithm=totp_algorithm, totp_digits=totp_digits, totp_period=totp_period)
        body.update(drop_omitted(username=username, password=password, totp_secret=totp_secret, notes=notes))
        return cast(Credential, await self._client._json("PATCH", f"/credentials/{_id(credential_id)}", json=body))

    async def delete(self, credential_id: str) -> None:
        """Deletes the credential and its pushed codes."""
        await self._client._json("DELETE", f"/credentials/{_id(credential_id)}")

    async def push_code(self, credential_id: str, code: str) -> CredentialCode:
        """Keeps a one-time code (an SMS or e-mail code) for 5 minutes, for the next fill of
        `{{vault:<name>.code}}`."""
        return cast(CredentialCode, await self._client._json("POST", f"/credentials/{_id(credential_id)}/codes", json={"code": code}))


class AsyncAudit(AsyncResource):
    """The organization's audit trail."""

    def list(
        self,
        *,
        action: str | None = None,
        resource_id: str | None = None,
        space_id: str | None = None,
        limit: int | None = None,
        cursor: str | None = None,
    ) -> AsyncPages[AuditEvent]:
        return self._client._pages("/audit", action=action, resource_id=resource_id, space_id=space_id, limit=limit, cursor=cursor)
