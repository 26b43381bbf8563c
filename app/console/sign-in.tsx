'use client';

import { Button, Center, Code, Paper, PasswordInput, Stack, Text, Title } from '@mantine/core';
import { useState, type FormEvent } from 'react';
import { ErrorAlert } from '../components/error-alert';
import { consoleApi, messageOf } from './console-client';

/** Sign-in with the console key `npm run admin -- operator:create` printed. */
export function SignIn({ onSignedIn }: { onSignedIn: (name: string) => void }) {
  const [consoleKey, setConsoleKey] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [pending, setPending] = useState(false);

  async function submit(event: FormEvent) {
    event.preventDefault();
    setError(null);
    setPending(true);
    try {
      const { name } = await consoleApi.signIn.mutate({ console_key: consoleKey.trim() });
      onSignedIn(name);
    } catch (failure) {
      setError(messageOf(failure));
    } finally {
      setPending(false);
    }
  }

  return (
    <Center component="main" mih="100vh" bg="gray.0" p="md">
      <Paper withBorder shadow="sm" p="xl" w={440} radius="lg">
        <form onSubmit={(event) => void submit(event)}>
          <Stack gap="md">
            <div>
              <Text size="xs" tt="uppercase" fw={700} c="indigo.7" lts={0.5}>
                Browser Device Operator
              </Text>
              <Title order={1} size="h2">
                Operator console
              </Title>
            </div>
            <PasswordInput
              label="Console key"
              autoComplete="off"
              value={consoleKey}
              onChange={(event) => setConsoleKey(event.currentTarget.value)}
              required
              data-autofocus
            />
            {error !== null && <ErrorAlert title="Sign-in failed" message={error} />}
            <Button type="submit" loading={pending} fullWidth>
              Sign in
            </Button>
            <Text size="xs" c="dimmed">
              Operators get a console key from <Code>npm run --silent admin -- operator:create --name NAME</Code>.
            </Text>
          </Stack>
        </form>
      </Paper>
    </Center>
  );
}
