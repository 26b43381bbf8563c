'use client';

import { Tooltip } from '@mantine/core';
import { useEffect, useState } from 'react';

const UNITS: [Intl.RelativeTimeFormatUnit, number][] = [
  ['day', 86_400_000],
  ['hour', 3_600_000],
  ['minute', 60_000],
  ['second', 1000],
];
const format = new Intl.RelativeTimeFormat('en', { numeric: 'auto', style: 'short' });

/** "5 min ago", "in 12 min": the largest whole unit between `at` and `now`. */
export function relativeTime(at: string | Date, now: number): string {
  const delta = new Date(at).getTime() - now;
  for (const [unit, ms] of UNITS) {
    if (Math.abs(delta) >= ms || unit === 'second') return format.format(Math.trunc(delta / ms), unit);
  }
  return '';
}

/** The current time, re-read every `everyMs` so relative times stay true while a page is open. */
export function useNow(everyMs = 15_000): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), everyMs);
    return () => clearInterval(timer);
  }, [everyMs]);
  return now;
}

/** A timestamp shown relative to now, the exact UTC time on hover and to assistive technology. */
export function RelativeTime({ at }: { at: string }) {
  const now = useNow();
  const exact = new Date(at).toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC');
  return (
    <Tooltip label={exact} withArrow openDelay={300}>
      <time dateTime={at} title={exact} style={{ whiteSpace: "nowrap" }}>
        {relativeTime(at, now)}
      </time>
    </Tooltip>
  );
}
