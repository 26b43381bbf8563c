'use client';

import { Alert, Badge, Box, Group, Text } from '@mantine/core';
import { useEffect, useRef, useState, type KeyboardEvent, type MouseEvent } from 'react';
import { asksToReconnect, reconnectDelayMs } from '../../shared/reconnect-on-restart';

/** A session to connect with, as minting one answers (its token shown that once). */
export type LiveSession = { id: string; ws_url: string; session_token: string };

export type LiveState = 'connecting' | 'live' | 'taken_over' | 'reconnecting' | 'ended';

type Frame = { src: string; width: number; height: number };

const STATE_LABELS: Record<LiveState, { label: string; color: string }> = {
  connecting: { label: 'Connecting', color: 'gray' },
  live: { label: 'Live', color: 'green' },
  taken_over: { label: 'Taken over: you control the page', color: 'orange' },
  reconnecting: { label: 'Reconnecting…', color: 'yellow' },
  ended: { label: 'Ended', color: 'red' },
};

// Keys sent by name (KeyboardEvent.key); a printable character is sent as text. Tab is
// left to the browser, so keyboard users can always move focus out of the view.
const NAMED_KEYS = new Set(['Enter', 'Backspace', 'Delete', 'Escape', 'ArrowUp', 'ArrowDown', 'ArrowLeft', 'ArrowRight', 'Home', 'End', 'PageUp', 'PageDown']);

/** Why the gateway closed a socket, as a person reads it (close reasons are CONTRACT.md codes). */
function closedSentence(reason: string): string {
  if (reason === 'session_expired') return 'The live view session ended.';
  if (reason === 'device_not_ready') return 'The device is not running any more.';
  if (reason === 'input_queue_full') return 'Input came faster than the page could take it.';
  return 'The connection to the device was lost.';
}

/**
 * The device's page, live: frames from the session gateway (`svc.operator.v1`, the token
 * offered as a subprotocol, never in the URL) drawn as they arrive. With `controlling`
 * (a control session holding the takeover), the operator's clicks, typing, named keys and
 * wheel scrolls are sent as input, mapped from the displayed image to the device's
 * viewport (the frame's width and height are CSS pixels of the viewport). The view is
 * focusable with a visible ring; its state (connecting, live, taken over, reconnecting,
 * ended) and any refusal are shown in place. When the service restarts or hands the device
 * to another instance (close code 1012) the view opens the socket again with the same
 * token, by shared/reconnect-on-restart.ts's backoff, showing "Reconnecting…" over the
 * last frame rather than an error.
 */
export function LiveView({ session, controlling, label, onEnded }: { session: LiveSession | null; controlling: boolean; label: string; onEnded?: (reason: string) => void }) {
  const [frame, setFrame] = useState<Frame | null>(null);
  // A state belongs to the session whose socket reported it: when the session changes (a
  // takeover mints a control session), the view is connecting again until the new socket
  // is ready, never "Taken over" on the old socket's word while input would be dropped.
  const [status, setStatus] = useState<{ session: LiveSession | null; state: LiveState }>({ session: null, state: 'connecting' });
  const state: LiveState = status.session === session || session === null ? status.state : 'connecting';
  const [error, setError] = useState<string | null>(null);
  const [focused, setFocused] = useState(false);
  const socketRef = useRef<WebSocket | null>(null);
  const imageRef = useRef<HTMLImageElement | null>(null);
  const frameRef = useRef<Frame | null>(null);
  const controllingRef = useRef(controlling);
  controllingRef.current = controlling;
  const onEndedRef = useRef(onEnded);
  onEndedRef.current = onEnded;

  useEffect(() => {
    if (session === null) return;
    const setState = (next: LiveState) => setStatus({ session, state: next });
    setState('connecting');
    setError(null);
    let stopped = false;
    // Attempts made since the service asked to reconnect; 0 while a socket works.
    let attempts = 0;
    let expiresAt = Number.POSITIVE_INFINITY;
    let retry: ReturnType<typeof setTimeout> | undefined;
    const open = () => {
      const socket = new WebSocket(session.ws_url, ['svc.operator.v1', `svc.token.${session.session_token}`]);
      socketRef.current = socket;
      socket.onmessage = (event: MessageEvent<string>) => {
        const message = JSON.parse(event.data) as { type: string; data?: string; width?: number; height?: number; message?: string; expires_at?: string };
        if (message.type === 'ready') {
          attempts = 0;
          expiresAt = Date.parse(message.expires_at ?? '') || Number.POSITIVE_INFINITY;
          setState('live');
        } else if (message.type === 'frame') {
          const next = { src: `data:image/jpeg;base64,${message.data}`, width: message.width!, height: message.height! };
          frameRef.current = next;
          setFrame(next);
        } else if (message.type === 'error') setError(message.message ?? 'The device refused that input.');
      };
      // An attempt to reconnect that fails is part of reconnecting, not an error to show.
      socket.onerror = () => {
        if (attempts === 0) setError('Could not connect to the device.');
      };
      socket.onclose = (event) => {
        if (stopped) return;
        const reconnecting = (asksToReconnect(event.code) || attempts > 0) && Date.now() < expiresAt;
        const delay = reconnecting ? reconnectDelayMs(attempts) : null;
        if (delay !== null) {
          attempts += 1;
          setState('reconnecting');
          retry = setTimeout(open, delay);
          return;
        }
        setState('ended');
        setError(closedSentence(event.reason));
        onEndedRef.current?.(event.reason || 'closed');
      };
    };
    open();
    return () => {
      stopped = true;
      clearTimeout(retry);
      socketRef.current?.close(1000, 'done');
      socketRef.current = null;
    };
  }, [session]);

  const send = (input: Record<string, unknown>) => {
    const socket = socketRef.current;
    if (socket === null || socket.readyState !== WebSocket.OPEN || !controllingRef.current) return;
    socket.send(JSON.stringify({ type: 'input', input }));
  };

  /** A point of the displayed image in the device's viewport coordinates. */
  const toViewport = (clientX: number, clientY: number): { x: number; y: number } | null => {
    const image = imageRef.current;
    const current = frameRef.current;
    if (image === null || current === null) return null;
    const rect = image.getBoundingClientRect();
    if (rect.width === 0 || rect.height === 0) return null;
    const x = ((clientX - rect.left) / rect.width) * current.width;
    const y = ((clientY - rect.top) / rect.height) * current.height;
    return { x: Math.max(0, Math.min(current.width, Math.round(x))), y: Math.max(0, Math.min(current.height, Math.round(y))) };
  };

  const onClick = (event: MouseEvent<HTMLImageElement>) => {
    if (!controlling) return;
    const point = toViewport(event.clientX, event.clientY);
    if (point !== null) send({ kind: 'click', ...point, button: 'left' });
  };

  const onKeyDown = (event: KeyboardEvent<HTMLDivElement>) => {
    if (!controlling || event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.key.length === 1) send({ kind: 'text', text: event.key });
    else if (NAMED_KEYS.has(event.key)) send({ kind: 'key', key: event.key });
    else return;
    event.preventDefault();
  };

  // Wheel listeners must be non-passive to keep the console's own page from scrolling.
  const boxRef = useRef<HTMLDivElement | null>(null);
  useEffect(() => {
    const box = boxRef.current;
    if (box === null) return;
    const onWheel = (event: WheelEvent) => {
      if (!controllingRef.current) return;
      event.preventDefault();
      const point = toViewport(event.clientX, event.clientY);
      if (point !== null) send({ kind: 'scroll', ...point, dx: Math.round(event.deltaX), dy: Math.round(event.deltaY) });
    };
    box.addEventListener('wheel', onWheel, { passive: false });
    return () => box.removeEventListener('wheel', onWheel);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);

  const shown: LiveState = state === 'live' && controlling ? 'taken_over' : state;
  const badge = STATE_LABELS[session === null && state !== 'ended' ? 'connecting' : shown];

  return (
    <Box>
      <Group justify="space-between" mb="xs">
        <Text size="sm" fw={600}>
          {label}
        </Text>
        <Badge color={badge.color} variant="light" data-testid="live-state" role="status" aria-live="polite">
          {badge.label}
        </Badge>
      </Group>
      <div
        ref={boxRef}
        tabIndex={0}
        role="region"
        aria-label={`${label}${controlling ? ' (taken over: clicks, typing and scrolling go to the device)' : ''}`}
        data-testid="live-view"
        onKeyDown={onKeyDown}
        onFocus={() => setFocused(true)}
        onBlur={() => setFocused(false)}
        style={{
          position: 'relative',
          background: 'var(--mantine-color-dark-7)',
          borderRadius: 8,
          minHeight: 200,
          outline: focused ? '3px solid var(--mantine-color-blue-5)' : 'none',
          outlineOffset: 3,
          border: controlling ? '3px solid var(--mantine-color-orange-6)' : '3px solid transparent',
          cursor: controlling ? 'crosshair' : 'default',
          overflow: 'hidden',
        }}
      >
        {frame === null ? (
          <Text c="gray.4" size="sm" ta="center" py={80}>
            {state === 'ended' ? 'No live view.' : 'Waiting for the first frame…'}
          </Text>
        ) : (
          // eslint-disable-next-line @next/next/no-img-element
          <img
            ref={imageRef}
            src={frame.src}
            alt={`Live frame of the device's page, ${frame.width}×${frame.height}`}
            data-testid="live-frame"
            data-frame-width={frame.width}
            data-frame-height={frame.height}
            onClick={onClick}
            draggable={false}
            // The last frame stays while the view reconnects, dimmed: it may be out of date.
            style={{ display: 'block', width: '100%', height: 'auto', userSelect: 'none', opacity: state === 'reconnecting' ? 0.5 : 1 }}
          />
        )}
      </div>
      {controlling && (
        <Text size="xs" c="dimmed" mt={4}>
          Focus the view, then click, type and scroll: they go to the device&apos;s page. Tab leaves the view.
        </Text>
      )}
      {error !== null && (
        <Alert color="red" variant="light" mt="xs" role="alert" title="Live view">
          {error}
        </Alert>
      )}
    </Box>
  );
}
