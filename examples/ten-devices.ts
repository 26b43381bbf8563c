// Runs one task on each of 10 devices at once, then cleans up.
//   OPERATOR_API_KEY=svc_operator_... npx tsx examples/ten-devices.ts
import { OperatorClient } from '@browser-device-operator/sdk';

const operator = new OperatorClient({ apiKey: process.env.OPERATOR_API_KEY!, baseUrl: process.env.OPERATOR_BASE_URL });
const url = process.env.EXAMPLE_URL ?? 'https://example.com';
const count = Number(process.env.DEVICES ?? 10);

const devices = await Promise.all(Array.from({ length: count }, (_, index) => operator.devices.create({ name: `worker-${index + 1}` })));
try {
  const tasks = await Promise.all(devices.map((device) => operator.tasks.run(device.id, `go to ${url} then return the title`)));
  for (const [index, task] of tasks.entries()) console.log(`${devices[index]!.name}: ${task.status} ${JSON.stringify(task.result)}`);
  console.log(`${tasks.filter((task) => task.status === 'succeeded').length}/${count} succeeded`);
} finally {
  await Promise.all(devices.map((device) => operator.devices.delete(device.id)));
}
