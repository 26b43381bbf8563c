'use client';

import { Center, EmptyState, Loader, Stack, Text, Title } from '@mantine/core';
import type { ReactNode } from 'react';

/** While a page or a section loads: a spinner announced to assistive technology. */
export function Loading({ label = 'Loading…' }: { label?: string }) {
  return (
    <Center py="xl" role="status" aria-live="polite">
      <Stack align="center" gap="xs">
        <Loader size="sm" />
        <Text size="sm" c="dimmed">
          {label}
        </Text>
      </Stack>
    </Center>
  );
}

/** When a list has nothing to show: what is missing and, optionally, what to do about it. */
export function Empty({ title, description, action }: { title: string; description?: ReactNode; action?: ReactNode }) {
  return (
    <EmptyState py="lg" size="sm" title={title} description={description}>
      {action}
    </EmptyState>
  );
}

/** A page's heading row: its title, a line under it, and its actions on the right. */
export function PageHeader({ title, description, actions }: { title: ReactNode; description?: ReactNode; actions?: ReactNode }) {
  return (
    <Stack gap={4} mb="lg">
      <div style={{ display: 'flex', justifyContent: 'space-between', alignItems: 'flex-start', gap: 'var(--mantine-spacing-md)' }}>
        <Title order={1} size="h2">
          {title}
        </Title>
        {actions}
      </div>
      {description !== undefined && (
        <Text c="dimmed" size="sm">
          {description}
        </Text>
      )}
    </Stack>
  );
}
