'use client';

import { Anchor, AppShell, Avatar, Button, Group, NavLink, Text, ThemeIcon } from '@mantine/core';
import Link from 'next/link';
import { usePathname } from 'next/navigation';
import { useCallback, useEffect, useMemo, useState, type ReactNode } from 'react';
import { ErrorAlert } from '../components/error-alert';
import { Loading } from '../components/page-state';
import { consoleApi, isSignedOut, messageOf } from './console-client';
import { OperatorContext } from './operator-context';
import { SignIn } from './sign-in';

const NAVIGATION = [
  { href: '/console', label: 'Escalations', matches: (path: string) => path === '/console' || path.startsWith('/console/escalations') },
  { href: '/console/organizations', label: 'Organizations', matches: (path: string) => path.startsWith('/console/organizations') },
];

type Sign = { state: 'loading' } | { state: 'signed-out' } | { state: 'failed'; message: string } | { state: 'signed-in'; name: string };

/**
 * Every console page inside one frame: the header (product, signed-in operator, Sign out)
 * and the navigation. Signed out, the frame is the sign-in form instead, and a page whose
 * call finds the sign-in ended comes back here through `signedOut`.
 */
export function ConsoleShell({ children }: { children: ReactNode }) {
  const pathname = usePathname();
  const [sign, setSign] = useState<Sign>({ state: 'loading' });

  const loadOperator = useCallback(() => {
    setSign({ state: 'loading' });
    consoleApi.me.query().then(
      (me) => setSign({ state: 'signed-in', name: me.name }),
      (error: unknown) => setSign(isSignedOut(error) ? { state: 'signed-out' } : { state: 'failed', message: messageOf(error) }),
    );
  }, []);
  useEffect(loadOperator, [loadOperator]);

  const signedOut = useCallback(() => setSign({ state: 'signed-out' }), []);
  const session = useMemo(() => (sign.state === 'signed-in' ? { name: sign.name, signedOut } : null), [sign, signedOut]);

  if (sign.state === 'loading') return <Loading label="Opening the console…" />;
  if (sign.state === 'signed-out') return <SignIn onSignedIn={(name) => setSign({ state: 'signed-in', name })} />;
  if (sign.state === 'failed' || session === null) {
    return (
      <main style={{ padding: 'var(--mantine-spacing-xl)' }}>
        <ErrorAlert title="The console could not load" message={sign.state === 'failed' ? sign.message : ''} onRetry={loadOperator} />
      </main>
    );
  }

  return (
    <OperatorContext.Provider value={session}>
      <AppShell header={{ height: 56 }} navbar={{ width: 232, breakpoint: 'sm' }} padding="lg">
        <AppShell.Header>
          <Group h="100%" px="lg" justify="space-between">
            <Anchor component={Link} href="/console" underline="never" c="inherit">
              <Group gap="sm" wrap="nowrap">
              <ThemeIcon size="md" radius="md" variant="filled" aria-hidden>
                <Text fw={800} size="xs" c="white">
                  BD
                </Text>
              </ThemeIcon>
              <Text fw={700}>Browser Device Operator</Text>
              <Text c="dimmed" size="sm" visibleFrom="md">
                Operator console
              </Text>
              </Group>
            </Anchor>
            <Group gap="sm">
              <Avatar size="sm" color="indigo" radius="xl" aria-hidden>
                {session.name.slice(0, 1).toUpperCase()}
              </Avatar>
              <Text size="sm" data-testid="signed-in-operator">
                <Text span c="dimmed" size="sm">
                  Signed in as{' '}
                </Text>
                <Text span fw={600} size="sm">
                  {session.name}
                </Text>
              </Text>
              <Button variant="default" size="xs" onClick={() => void consoleApi.signOut.mutate().finally(signedOut)}>
                Sign out
              </Button>
            </Group>
          </Group>
        </AppShell.Header>
        <AppShell.Navbar p="sm" component="nav" aria-label="Console">
          {NAVIGATION.map((item) => (
            <NavLink
              key={item.href}
              component={Link}
              href={item.href}
              label={item.label}
              active={item.matches(pathname)}
              aria-current={item.matches(pathname) ? 'page' : undefined}
              variant="light"
              mb={4}
              style={{ borderRadius: 'var(--mantine-radius-md)' }}
            />
          ))}
        </AppShell.Navbar>
        <AppShell.Main bg="gray.0">
          <div style={{ maxWidth: 1280, margin: '0 auto' }}>{children}</div>
        </AppShell.Main>
      </AppShell>
    </OperatorContext.Provider>
  );
}
