'use client';

import { Group, Paper, Text, Title } from '@mantine/core';
import type { ReactNode } from 'react';

/** A titled card that holds one section of a page, with optional actions beside its title. */
export function SectionCard({ title, description, actions, children }: { title: string; description?: ReactNode; actions?: ReactNode; children: ReactNode }) {
  return (
    <Paper withBorder radius="md" p="md" component="section" aria-label={title}>
      <Group justify="space-between" align="flex-start" mb="sm" wrap="nowrap">
        <div>
          <Title order={2} size="h4">
            {title}
          </Title>
          {description !== undefined && (
            <Text size="sm" c="dimmed">
              {description}
            </Text>
          )}
        </div>
        {actions}
      </Group>
      {children}
    </Paper>
  );
}
