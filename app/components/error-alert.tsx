'use client';

import { Alert, Button, Group, Text } from '@mantine/core';

/** A failure shown in place of what failed, with a retry when the caller offers one. */
export function ErrorAlert({ message, title = 'Something went wrong', onRetry }: { message: string; title?: string; onRetry?: () => void }) {
  return (
    <Alert color="red" variant="light" title={title} role="alert">
      <Group justify="space-between" wrap="nowrap" gap="md">
        <Text size="sm">{message}</Text>
        {onRetry !== undefined && (
          <Button size="xs" variant="white" color="red" onClick={onRetry}>
            Try again
          </Button>
        )}
      </Group>
    </Alert>
  );
}
