'use client';

import { Alert, Button, Code, CopyButton, Group, Stack, Text } from '@mantine/core';

/**
 * A secret the service shows only this once (a new API key, an escalation signing
 * secret), with a copy button, until the operator says they have stored it.
 */
export function ShownOnce({ label, value, testId, onDone }: { label: string; value: string; testId: string; onDone: () => void }) {
  return (
    <Alert color="yellow" variant="light" title={`${label}: shown only now`} role="status">
      <Stack gap="xs">
        <Text size="sm">Copy it now and keep it somewhere safe; the service stores only a hash and cannot show it again.</Text>
        <Code block data-testid={testId} style={{ wordBreak: 'break-all', whiteSpace: 'pre-wrap' }}>
          {value}
        </Code>
        <Group gap="xs">
          <CopyButton value={value}>
            {({ copied, copy }) => (
              <Button size="xs" color={copied ? 'teal' : 'indigo'} onClick={copy}>
                {copied ? 'Copied' : 'Copy'}
              </Button>
            )}
          </CopyButton>
          <Button size="xs" variant="default" onClick={onDone}>
            Done
          </Button>
        </Group>
      </Stack>
    </Alert>
  );
}
