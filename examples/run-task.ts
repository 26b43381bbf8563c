// Runs one task on a new device and prints its steps as they happen.
//   OPERATOR_API_KEY=svc_operator_... OPERATOR_BASE_URL=http://localhost:3000 npx tsx examples/run-task.ts
import { OperatorClient } from '@browser-device-operator/sdk';

const operator = new OperatorClient({ apiKey: process.env.OPERATOR_API_KEY!, baseUrl: process.env.OPERATOR_BASE_URL });
const url = process.env.EXAMPLE_URL ?? 'https://example.com';

const device = await operator.devices.create({ name: 'example' });
try {
  const task = await operator.tasks.run(device.id, `go to ${url} then return the title`, {
    onStep: (step) => console.log(`step ${step.seq} ${step.type}: ${step.action ?? ''} ${step.note ?? step.title ?? ''}`.trimEnd()),
  });
  console.log(`task ${task.status}: ${JSON.stringify(task.result)}`);
} finally {
  await operator.devices.delete(device.id);
}
