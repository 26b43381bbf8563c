'use client';

import { Badge } from '@mantine/core';

// One colour per state, the same on every page: green working or done, blue in progress,
// orange waiting for a person, grey at rest, red failed.
const COLOURS: Record<string, string> = {
  active: 'green',
  creating: 'blue',
  waking: 'blue',
  sleeping: 'gray',
  terminated: 'dark',
  error: 'red',
  running: 'blue',
  needs_human: 'orange',
  succeeded: 'green',
  failed: 'red',
  canceled: 'gray',
  pending: 'orange',
  resolved: 'green',
  expired: 'red',
};

/** A device's, task's or escalation's status, as a coloured badge with the status's own word. */
export function StatusBadge({ status }: { status: string }) {
  return (
    <Badge variant="light" color={COLOURS[status] ?? 'gray'} radius="sm">
      {status.replace('_', ' ')}
    </Badge>
  );
}
