"""A small receiver for escalations (standard library http.server): the service POSTs one to
the organization's escalation URL when a task needs a person; this answers it at the
delivery's resolve_url and the task resumes.

    Set the URL with `npm run admin -- org:create --name Acme --escalation-url http://127.0.0.1:4000/escalations`
    OPERATOR_API_KEY=... ESCALATION_SECRET=whsec_... RECEIVER_PORT=4000 python3 examples/escalation_receiver.py
"""

import json
import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from browser_device_operator import OperatorClient, WebhookVerificationError, verify_webhook

operator = OperatorClient()
secret = os.environ["ESCALATION_SECRET"]


class Receiver(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        raw_body = self.rfile.read(int(self.headers.get("content-length") or 0))
        try:
            # Verify the raw bytes before trusting anything in them.
            delivery = verify_webhook(raw_body, self.headers.get("x-service-signature"), secret, delivery="escalation")
        except WebhookVerificationError as error:
            self.send_response(400)
            self.end_headers()
            self.wfile.write(error.reason.encode())
            return
        self.send_response(204)
        self.end_headers()
        escalation = delivery["escalation"]
        print(f"escalation {escalation['id']}: {escalation['reason']}", flush=True)
        # Here a person would answer (Slack, a form...); this one always picks the Pro plan.
        operator.escalations.answer(delivery, answer="The Pro plan", resolved_by="example")

    def log_message(self, format: str, *args: object) -> None:
        pass


receiver = ThreadingHTTPServer(("127.0.0.1", int(os.environ.get("RECEIVER_PORT", "4000"))), Receiver)
threading.Thread(target=receiver.serve_forever, daemon=True).start()

# A task that asks a human, to see the round trip.
device = operator.devices.create(name="asks-a-human")
try:
    task = operator.tasks.run(
        device["id"],
        f'go to {os.environ.get("EXAMPLE_URL", "https://example.com")} then ask a human "Which plan should I pick?" then return the title',
        on_step=lambda step: print(f"step {step['seq']}: {step['note'] or ''}") if step["type"] == "message" else None,
    )
    print(f"task {task['status']}: {json.dumps(task['result'])}")
finally:
    operator.devices.delete(device["id"])
    receiver.shutdown()
    operator.close()
