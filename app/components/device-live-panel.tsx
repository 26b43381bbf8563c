'use client';

import { Button, Group, Paper, Text } from '@mantine/core';
import { useCallback, useEffect, useRef, useState } from 'react';
import { ErrorAlert } from './error-alert';
import { LiveView, type LiveSession } from './live-view';

export type Takeover = { session: LiveSession; hold_expires_at: string };

/**
 * The device's live view with Take over and Release: a watch session is minted when the
 * panel opens (and again when it ends); Take over mints a control session holding the
 * takeover and the view switches to it; Release drops the hold and the task resumes.
 * `takeOver` null means taking over is not offered (no task to take over).
 */
export function DeviceLivePanel({
  label,
  mintWatch,
  takeOver,
  release,
  end,
  onChanged,
}: {
  label: string;
  mintWatch: () => Promise<LiveSession>;
  takeOver: (() => Promise<Takeover>) | null;
  release: (sessionId: string) => Promise<unknown>;
  /** Ends a session this panel minted; called for each when the panel goes away, so a closed view stops being metered. */
  end: (sessionId: string) => Promise<unknown>;
  onChanged?: () => void;
}) {
  const [watch, setWatch] = useState<LiveSession | null>(null);
  const [control, setControl] = useState<LiveSession | null>(null);
  const [holdUntil, setHoldUntil] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [pending, setPending] = useState(false);

  const mint = useCallback(() => {
    setError(null);
    mintWatch().then(setWatch, (failure: unknown) => setError(failure instanceof Error ? failure.message : 'Could not open the live view.'));
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);
  useEffect(mint, [mint]);

  // Every session minted here, ended when the panel goes away (best effort: a page that
  // is closed outright leaves them to their TTL).
  const minted = useRef(new Set<string>());
  useEffect(() => {
    if (watch !== null) minted.current.add(watch.id);
    if (control !== null) minted.current.add(control.id);
  }, [watch, control]);
  const endRef = useRef(end);
  endRef.current = end;
  useEffect(
    () => () => {
      for (const id of minted.current) endRef.current(id).catch(() => undefined);
    },
    [],
  );

  const ended = (reason: string) => {
    setHoldUntil(null);
    // The session ran out (its TTL): watch again with a fresh one.
    if (reason === 'session_expired') {
      setControl(null);
      mint();
    }
  };

  const run = async (action: () => Promise<void>) => {
    setPending(true);
    setError(null);
    try {
      await action();
      onChanged?.();
    } catch (failure) {
      setError(failure instanceof Error ? failure.message : 'That did not work.');
    } finally {
      setPending(false);
    }
  };

  const held = control !== null && holdUntil !== null;
  return (
    <Paper withBorder radius="md" p="md">
      <LiveView session={control ?? watch} controlling={held} label={label} onEnded={ended} />
      <Group mt="sm" justify="space-between">
        <Text size="sm" c="dimmed">
          {held ? `You hold the device until ${new Date(holdUntil).toLocaleTimeString()}; the task waits.` : 'Watching. The agent drives the page.'}
        </Text>
        <Group gap="xs">
          {!held && takeOver !== null && (
            <Button
              // Dark orange: white text on it is 6:1 (Mantine's orange 7 is 3:1).
              color="#9c3a06"
              loading={pending}
              onClick={() =>
                run(async () => {
                  const taken = await takeOver();
                  setControl(taken.session);
                  setHoldUntil(taken.hold_expires_at);
                })
              }
            >
              Take over
            </Button>
          )}
          {held && (
            <Button
              variant="default"
              loading={pending}
              onClick={() =>
                run(async () => {
                  await release(control.id);
                  setHoldUntil(null);
                })
              }
            >
              Release
            </Button>
          )}
          {watch === null && error !== null && (
            <Button variant="default" onClick={mint}>
              Reconnect
            </Button>
          )}
        </Group>
      </Group>
      {error !== null && (
        <div style={{ marginTop: 8 }}>
          <ErrorAlert message={error} title="Live view" />
        </div>
      )}
    </Paper>
  );
}
