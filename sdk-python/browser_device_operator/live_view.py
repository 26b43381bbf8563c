"""The live view of a device over the service's WebSocket gateway: frames of the page, and
inputs to it through a `control` session during a takeover (docs/api.md, "Sessions and
the live-view gateway"). `AsyncLiveView` does the work on asyncio; `LiveView` runs one on a
private event loop thread for synchronous programs."""

from __future__ import annotations

import asyncio
import json
import random
import threading
import time
from collections import deque
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator, Mapping
from datetime import datetime
from typing import Any, Literal, TypedDict, TypeVar, Union

import websockets.client
import websockets.exceptions
import websockets.typing

from .errors import OperatorConnectionError, error_class_for, OperatorError

SUBPROTOCOL = "svc.operator.v1"
TOKEN_PREFIX = "svc.token."
#: The close code of a socket the service asks its client to open again ("Service Restart").
SERVICE_RESTART_CLOSE_CODE = 1012
#: Attempts in a row that do not reach a working socket before giving up (about 48 s).
RECONNECT_MAX_ATTEMPTS = 12
_FIRST_DELAY = 0.25
_MAX_DELAY = 5.0
#: Frames kept for a slow reader; older ones are dropped.
_FRAME_BUFFER = 10

R = TypeVar("R")


class LiveFrame(TypedDict):
    """A screencast frame: `data` is a base64 JPEG of `width` × `height` CSS pixels."""

    format: Literal["jpeg"]
    data: str
    width: int
    height: int


class LiveRefusal(TypedDict):
    """An input the service refused (the socket stays open)."""

    type: Literal["error"]
    code: str
    message: str


class LiveReconnect(TypedDict):
    """`reconnecting` (with the wait before attempt `attempt`) or `reconnected`."""

    type: Literal["reconnecting", "reconnected"]
    attempt: int
    delay: float


class ClickInput(TypedDict, total=False):
    kind: Literal["click"]
    x: float
    y: float
    button: Literal["left", "right", "middle"]


class MoveInput(TypedDict):
    kind: Literal["move"]
    x: float
    y: float


class ScrollInput(TypedDict):
    kind: Literal["scroll"]
    x: float
    y: float
    dx: float
    dy: float


class KeyInput(TypedDict):
    kind: Literal["key"]
    key: str


class TextInput(TypedDict):
    kind: Literal["text"]
    text: str


LiveInput = Union[ClickInput, MoveInput, ScrollInput, KeyInput, TextInput]
#: What `connect()` needs of a session: its `ws_url` and the `session_token` shown at creation.
ConnectableSession = Mapping[str, Any]


def reconnect_delay(attempt: int, rand: float | None = None) -> float | None:
    """The wait before reconnection attempt `attempt` (0 for the first): 250 ms doubling to
    5 s, half of it random; None once the attempts are used up. The same policy as the
    service's shared/reconnect-on-restart.ts."""
    if attempt >= RECONNECT_MAX_ATTEMPTS:
        return None
    base: float = min(_MAX_DELAY, _FIRST_DELAY * 2**attempt)
    return round(base / 2 + (random.random() if rand is None else rand) * base / 2, 3)


class AsyncLiveView:
    """A live view: `async with` opens it (and waits for `ready`), `async for` yields
    frames, `send()` sends inputs. When the service closes the socket with 1012
    (`service_restart`) the view opens it again with the same token, by the policy of
    `reconnect_delay()` and never past the session's `expires_at`; `on_reconnect` reports
    each step. Iteration ends when the socket closes for any other reason (or the attempts
    run out); `close_code` and `close_reason` then say why (4410 `session_expired`, ...)."""

    def __init__(
        self,
        session: ConnectableSession,
        *,
        on_refusal: Callable[[LiveRefusal], object] | None = None,
        on_reconnect: Callable[[LiveReconnect], object] | None = None,
    ) -> None:
        self._url = str(session["ws_url"])
        self._token = str(session["session_token"])
        self.on_refusal = on_refusal
        self.on_reconnect = on_reconnect
        #: The `ready` message: `session_id`, `device_id`, `mode`, `expires_at`.
        self.ready: dict[str, Any] | None = None
        self.close_code: int | None = None
        self.close_reason: str | None = None
        self._socket: websockets.client.WebSocketClientProtocol | None = None
        self._frames: deque[LiveFrame] = deque(maxlen=_FRAME_BUFFER)
        self._wake = asyncio.Event()
        self._reader: asyncio.Task[None] | None = None
        self._attempts = 0
        self._expires_at = float("inf")
        self._closed_by_caller = False
        self._ended = False

    async def open(self) -> dict[str, Any]:
        """Connects and waits for the `ready` message, which it returns."""
        self._socket = await self._connect()
        self._reader = asyncio.create_task(self._read())
        assert self.ready is not None
        return self.ready

    async def __aenter__(self) -> AsyncLiveView:
        await self.open()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def _connect(self) -> websockets.client.WebSocketClientProtocol:
        try:
            socket = await websockets.client.connect(
                self._url,
                subprotocols=[websockets.typing.Subprotocol(SUBPROTOCOL), websockets.typing.Subprotocol(TOKEN_PREFIX + self._token)],
                max_size=16 * 1024 * 1024,
                open_timeout=30,
            )
        except websockets.exceptions.InvalidStatusCode as refused:
            status = refused.status_code
            raise error_class_for(status)(
                f"The live view was refused (HTTP {status}).", code=f"http_{status}", status=status
            ) from refused
        except (OSError, asyncio.TimeoutError, websockets.exceptions.WebSocketException) as broken:
            raise OperatorConnectionError("Could not reach the live view.", code="connection_error", status=0) from broken
        try:
            first = json.loads(await socket.recv())
        except websockets.exceptions.ConnectionClosed as closed:
            raise OperatorConnectionError(
                f"The live view closed before it was ready: {closed.code} {closed.reason}", code="connection_error", status=0
            ) from closed
        self._on_ready(first)
        return socket

    def _on_ready(self, ready: dict[str, Any]) -> None:
        expires_at = ready.get("expires_at")
        if isinstance(expires_at, str):
            self._expires_at = datetime.fromisoformat(expires_at.replace("Z", "+00:00")).timestamp()
        if self._attempts > 0 and self.on_reconnect is not None:
            self.on_reconnect({"type": "reconnected", "attempt": self._attempts, "delay": 0.0})
        self._attempts = 0
        self.ready = ready

    async def _read(self) -> None:
        while True:
            socket = self._socket
            assert socket is not None
            try:
                async for raw in socket:
                    self._on_message(json.loads(raw))
            except websockets.exceptions.ConnectionClosed:
                pass
            code, reason = socket.close_code or 1006, socket.close_reason or ""
            if self._closed_by_caller or code != SERVICE_RESTART_CLOSE_CODE or not await self._reconnect():
                self._end(code, reason)
                return

    async def _reconnect(self) -> bool:
        """Opens the socket again after a 1012; False when the attempts run out."""
        while True:
            delay = reconnect_delay(self._attempts)
            if delay is None or time.time() >= self._expires_at or self._closed_by_caller:
                return False
            self._attempts += 1
            if self.on_reconnect is not None:
                self.on_reconnect({"type": "reconnecting", "attempt": self._attempts, "delay": delay})
            await asyncio.sleep(delay)
            try:
                self._socket = await self._connect()
                return True
            except OperatorError:
                continue  # the service may still be starting: that counts as an attempt

    def _on_message(self, message: dict[str, Any]) -> None:
        kind = message.get("type")
        if kind == "ready":
            self._on_ready(message)
        elif kind == "frame":
            self._frames.append({"format": "jpeg", "data": message["data"], "width": message["width"], "height": message["height"]})
        elif kind == "error" and self.on_refusal is not None:
            self.on_refusal({"type": "error", "code": str(message.get("code")), "message": str(message.get("message"))})
        self._wake.set()

    def _end(self, code: int, reason: str) -> None:
        self._ended = True
        self.close_code = code
        self.close_reason = reason
        self._wake.set()

    async def send(self, live_input: LiveInput) -> None:
        """Sends an input to the page (needs a control session holding a takeover, else the
        service answers a refusal on `on_refusal`). Raises while the view reconnects: an
        input meant for the page as last seen is not held for a later one."""
        if self._socket is None or self._attempts > 0 or self._ended:
            raise OperatorConnectionError("The live view is not connected; send the input again once it is.", code="connection_error", status=0)
        await self._socket.send(json.dumps({"type": "input", "input": live_input}))

    async def next_frame(self) -> LiveFrame | None:
        """The next frame, or None once the view ended."""
        while True:
            if self._frames:
                return self._frames.popleft()
            if self._ended:
                return None
            self._wake.clear()
            await self._wake.wait()

    async def __aiter__(self) -> AsyncIterator[LiveFrame]:
        while (frame := await self.next_frame()) is not None:
            yield frame

    async def close(self) -> None:
        self._closed_by_caller = True
        if self._socket is not None:
            await self._socket.close(1000)
        if self._reader is not None:
            await self._reader
        if not self._ended:
            self._end(1000, "")


class LiveView:
    """`AsyncLiveView` for synchronous programs: the socket runs on a private event loop
    thread (so `on_refusal` and `on_reconnect` are called on that thread). Use it as a
    `with` block, iterate it for frames, `send()` inputs."""

    def __init__(
        self,
        session: ConnectableSession,
        *,
        on_refusal: Callable[[LiveRefusal], object] | None = None,
        on_reconnect: Callable[[LiveReconnect], object] | None = None,
    ) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="live-view", daemon=True)
        self._thread.start()
        self._view = AsyncLiveView(session, on_refusal=on_refusal, on_reconnect=on_reconnect)

    def _call(self, coroutine: Coroutine[Any, Any, R]) -> R:
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result()

    @property
    def ready(self) -> dict[str, Any] | None:
        return self._view.ready

    @property
    def close_code(self) -> int | None:
        return self._view.close_code

    @property
    def close_reason(self) -> str | None:
        return self._view.close_reason

    def open(self) -> dict[str, Any]:
        try:
            return self._call(self._view.open())
        except BaseException:
            self._stop_loop()
            raise

    def __enter__(self) -> LiveView:
        self.open()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def send(self, live_input: LiveInput) -> None:
        self._call(self._view.send(live_input))

    def next_frame(self) -> LiveFrame | None:
        return self._call(self._view.next_frame())

    def __iter__(self) -> Iterator[LiveFrame]:
        while (frame := self.next_frame()) is not None:
            yield frame

    def close(self) -> None:
        if self._loop.is_closed():
            return
        self._call(self._view.close())
        self._stop_loop()

    def _stop_loop(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()
        self._loop.close()
