// The published event catalogue (CONTRACT.md). `deliverable: false` marks the audit-only
// operator.webhook.* family: it is recorded in the audit trail and never delivered, and
// endpoints cannot subscribe to it.
export const eventCatalogue = [
  { type: 'operator.device.created.v1', description: 'A device was created and is active.', deliverable: true },
  { type: 'operator.device.slept.v1', description: 'A device was put to sleep (on request or after being idle).', deliverable: true },
  { type: 'operator.device.woke.v1', description: 'A device was woken and is active again.', deliverable: true },
  { type: 'operator.device.terminated.v1', description: 'A device was deleted.', deliverable: true },
  { type: 'operator.device.errored.v1', description: "A device's browser was lost and the device is in error.", deliverable: true },
  { type: 'operator.task.created.v1', description: 'A task was submitted and is running.', deliverable: true },
  { type: 'operator.task.needs_human.v1', description: 'A task is parked waiting for a human.', deliverable: true },
  { type: 'operator.task.resumed.v1', description: 'A parked task resumed.', deliverable: true },
  { type: 'operator.task.succeeded.v1', description: 'A task finished with a result.', deliverable: true },
  { type: 'operator.task.failed.v1', description: 'A task failed; its result holds the error code.', deliverable: true },
  { type: 'operator.task.canceled.v1', description: 'A task was canceled.', deliverable: true },
  { type: 'operator.session.created.v1', description: 'A live-view session was minted.', deliverable: true },
  { type: 'operator.session.revoked.v1', description: 'A session was revoked.', deliverable: true },
  { type: 'operator.session.takeover.v1', description: 'A human took over a device through a control session.', deliverable: true },
  { type: 'operator.session.released.v1', description: 'A takeover was released and the agent resumed.', deliverable: true },
  { type: 'operator.escalation.created.v1', description: 'The agent asked for human help.', deliverable: true },
  { type: 'operator.escalation.resolved.v1', description: 'A human answered an escalation.', deliverable: true },
  { type: 'operator.escalation.expired.v1', description: 'An escalation expired unanswered.', deliverable: true },
  { type: 'operator.webhook.created.v1', description: 'A webhook endpoint was created (audit only).', deliverable: false },
  { type: 'operator.webhook.updated.v1', description: 'A webhook endpoint was updated (audit only).', deliverable: false },
  { type: 'operator.webhook.deleted.v1', description: 'A webhook endpoint was deleted (audit only).', deliverable: false },
  { type: 'operator.webhook.disabled.v1', description: 'A webhook endpoint was disabled after repeated failures (audit only).', deliverable: false },
] as const;

export type EventType = (typeof eventCatalogue)[number]['type'];
export type DeliverableEventType = Extract<(typeof eventCatalogue)[number], { deliverable: true }>['type'];

const deliverableTypes = new Set<string>(eventCatalogue.filter((entry) => entry.deliverable).map((entry) => entry.type));

export function isDeliverableEventType(value: string): value is DeliverableEventType {
  return deliverableTypes.has(value);
}
