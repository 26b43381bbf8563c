"""verify_webhook against the signature vectors the TypeScript SDK is checked against
(sdk/test/webhook-vectors.json; sdk/test/webhook-vectors.test.ts)."""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from pathlib import Path
from typing import Any

import pytest

from browser_device_operator import WebhookVerificationError, verify_webhook

VECTORS: dict[str, Any] = json.loads((Path(__file__).resolve().parents[2] / "sdk" / "test" / "webhook-vectors.json").read_text())


def outcome(vector: dict[str, Any]) -> dict[str, str]:
    tolerance = int(vector.get("tolerance", 300))
    try:
        if vector.get("delivery") == "escalation":
            delivery = verify_webhook(vector["body"], vector["header"], VECTORS["secret"], tolerance, now=VECTORS["now"], delivery="escalation")
            return {"escalation_id": delivery["escalation"]["id"]}
        return {"id": verify_webhook(vector["body"], vector["header"], VECTORS["secret"], tolerance, now=VECTORS["now"])["id"]}
    except WebhookVerificationError as error:
        return {"reason": error.reason}


@pytest.mark.parametrize("vector", VECTORS["cases"], ids=[case["name"] for case in VECTORS["cases"]])
def test_vector(vector: dict[str, Any]) -> None:
    assert outcome(vector) == vector["expect"]


def test_there_are_vectors_of_every_reason() -> None:
    reasons = {case["expect"].get("reason") for case in VECTORS["cases"]}
    assert reasons >= {None, "missing_header", "malformed_header", "signature_mismatch", "timestamp_out_of_tolerance", "invalid_payload"}


def test_bytes_and_str_bodies_and_the_clock() -> None:
    body = b'{"id": "evt_1", "object": "event", "created_at": "2026-11-22T10:00:00.000Z"}'
    t = int(time.time())
    header = f"t={t},v1=" + hmac.new(b"whsec_test", f"{t}.".encode() + body, hashlib.sha256).hexdigest()
    assert verify_webhook(body, header, "whsec_test")["id"] == "evt_1"
    assert verify_webhook(body.decode(), header, "whsec_test")["id"] == "evt_1"
    with pytest.raises(WebhookVerificationError) as caught:
        verify_webhook(body, header, "whsec_other")
    assert caught.value.reason == "signature_mismatch"
