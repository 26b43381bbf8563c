// A small receiver for escalations: the service POSTs one to the organization's escalation
// URL when a task needs a person; this answers it and the task resumes.
//   Set the URL with `npm run admin -- org:create --name Acme --escalation-url http://127.0.0.1:4000/escalations`
//   OPERATOR_API_KEY=... ESCALATION_SECRET=whsec_... RECEIVER_PORT=4000 npx tsx examples/escalation-receiver.ts
import { createServer } from 'node:http';
import { OperatorClient, WebhookVerificationError } from '@browser-device-operator/sdk';

const operator = new OperatorClient({ apiKey: process.env.OPERATOR_API_KEY!, baseUrl: process.env.OPERATOR_BASE_URL });
const secret = process.env.ESCALATION_SECRET!;

const receiver = createServer(async (req, res) => {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  try {
    const header = req.headers['x-service-signature'];
    // Verify the raw bytes before trusting anything in them.
    const delivery = operator.webhooks.verify(Buffer.concat(chunks), typeof header === 'string' ? header : undefined, secret, { delivery: 'escalation' });
    res.writeHead(204).end();
    console.log(`escalation ${delivery.escalation.id}: ${String(delivery.escalation.reason)}`);
    // Here a person would answer (Slack, a form...); this one always picks the Pro plan.
    await operator.escalations.resolve(delivery.escalation.id, delivery.token, { answer: 'The Pro plan', resolved_by: 'example' });
  } catch (error) {
    if (error instanceof WebhookVerificationError) res.writeHead(400).end(error.reason);
    else throw error;
  }
});
await new Promise<void>((resolve) => receiver.listen(Number(process.env.RECEIVER_PORT ?? 4000), '127.0.0.1', resolve));

// A task that asks a human, to see the round trip.
const device = await operator.devices.create({ name: 'asks-a-human' });
try {
  const task = await operator.tasks.run(device.id, `go to ${process.env.EXAMPLE_URL ?? 'https://example.com'} then ask a human "Which plan should I pick?" then return the title`, {
    onStep: (step) => step.type === 'message' && console.log(`step ${step.seq}: ${step.note ?? ''}`),
  });
  console.log(`task ${task.status}: ${JSON.stringify(task.result)}`);
} finally {
  await operator.devices.delete(device.id);
  receiver.close();
}
