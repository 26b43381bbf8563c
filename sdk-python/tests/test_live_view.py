"""Live view and takeover against the real service (as sdk/test/sdk.test.ts), and the
reconnection on 1012 against a local WebSocket server."""

from __future__ import annotations

import asyncio
import base64
import json
import time
from collections.abc import Callable

import websockets.server
from conftest import Service
from websockets.server import WebSocketServerProtocol

from browser_device_operator import AsyncLiveView, LiveReconnect, OperatorClient
from browser_device_operator.live_view import reconnect_delay


def wait_until(condition: Callable[[], bool], timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_frames_and_inputs_during_a_takeover_which_the_task_then_sees(service: Service, client: OperatorClient) -> None:
    device = client.devices.create(space_id=service.space_id)
    session = client.sessions.create(device["id"], mode="control")
    refusals: list[str] = []
    with client.sessions.connect(session, on_refusal=lambda refusal: refusals.append(refusal["code"])) as watching:
        assert watching.ready is not None
        assert (watching.ready["session_id"], watching.ready["device_id"]) == (session["id"], device["id"])
        frame = watching.next_frame()
        assert frame is not None and frame["format"] == "jpeg"
        assert base64.b64decode(frame["data"])[:2] == b"\xff\xd8"
        watching.send({"kind": "click", "x": 150, "y": 60})  # no takeover yet: refused
        wait_until(lambda: refusals == ["input_not_allowed"])

    # A task waiting at a lock only a human opens: take over, click, release.
    task = client.tasks.submit(device["id"], f'go to {service.page("/takeover")} then wait for "Unlocked" then return the text of "#status"')
    for event in client.tasks.events(task["id"]):
        if event["event"] == "step":
            break
    held = client.sessions.take_over(session["id"], reason="the lock")
    assert (held["paused"], held["task_id"]) == (True, task["id"])
    with client.sessions.connect(session, on_refusal=lambda refusal: refusals.append(refusal["code"])) as driving:
        driving.next_frame()
        driving.send({"kind": "click", "x": 150, "y": 60})
        # Inputs are applied in order: once this one is refused, the click was applied.
        driving.send({"kind": "key", "key": "NotAKey"})
        wait_until(lambda: refusals == ["input_not_allowed", "invalid_input"])
    assert client.sessions.release(session["id"])["resumed"] is True
    done = [event for event in client.tasks.events(task["id"]) if event["event"] == "done"]
    assert done and done[0]["data"]["status"] == "succeeded" and done[0]["data"]["result"] == "Unlocked"

    # Revoking the session closes its views with 4410 session_expired, ending the iteration.
    assert client.sessions.get(session["id"])["revoked_at"] is None
    with client.sessions.connect(session) as ending:
        client.sessions.revoke(session["id"])
        for _ in ending:
            pass
        assert (ending.close_code, ending.close_reason) == (4410, "session_expired")
    client.devices.delete(device["id"])


def test_the_reconnection_policy_is_the_services() -> None:
    # shared/reconnect-on-restart.ts: 250 ms doubling to 5 s, half of it random, 12 attempts.
    assert reconnect_delay(0, 0) == 0.125
    assert reconnect_delay(0, 0.999) == 0.25
    assert reconnect_delay(5, 0.37) == 3.425
    assert reconnect_delay(11, 0) == 2.5
    assert reconnect_delay(12, 0) is None


async def restart_once() -> tuple[list[int], list[LiveReconnect], list[str]]:
    """A gateway that closes the first socket with 1012 after one frame, then serves again."""
    connections: list[str] = []

    async def gateway(socket: WebSocketServerProtocol, _path: str) -> None:
        connections.append(str(socket.request_headers.get("sec-websocket-protocol")))
        number = len(connections)
        await socket.send(json.dumps({"type": "ready", "session_id": "ses_1", "device_id": "dev_1", "mode": "watch", "expires_at": "2999-01-01T00:00:00.000Z"}))
        await socket.send(json.dumps({"type": "frame", "format": "jpeg", "data": "", "width": number, "height": 1}))
        if number == 1:
            await socket.close(1012, "service_restart")
        else:
            await socket.close(4410, "session_expired")

    async with websockets.server.serve(gateway, "127.0.0.1", 0, subprotocols=[websockets.typing.Subprotocol("svc.operator.v1")]) as server:
        port = next(iter(server.sockets)).getsockname()[1]
        reconnects: list[LiveReconnect] = []
        view = AsyncLiveView({"ws_url": f"ws://127.0.0.1:{port}/v1/sessions/ses_1/ws", "session_token": "sestok_x"}, on_reconnect=reconnects.append)
        await view.open()
        widths = [frame["width"] async for frame in view]
        assert (view.close_code, view.close_reason) == (4410, "session_expired")
        return widths, reconnects, connections


def test_the_live_view_reconnects_with_the_same_token_on_1012() -> None:
    widths, reconnects, connections = asyncio.run(restart_once())
    assert widths == [1, 2]
    assert [(event["type"], event["attempt"]) for event in reconnects] == [("reconnecting", 1), ("reconnected", 1)]
    assert connections == ["svc.operator.v1, svc.token.sestok_x"] * 2
