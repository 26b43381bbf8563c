import { createTheme } from '@mantine/core';

/**
 * The console's one visual system: every page takes its colours, type, radius and spacing
 * from here, never from inline styles. Indigo reads as "operator tool"; the focus ring is
 * always shown for keyboard users (`focusRing: 'auto'` shows it on keyboard focus only).
 */
export const consoleTheme = createTheme({
  primaryColor: 'indigo',
  primaryShade: { light: 7, dark: 5 },
  fontFamily: 'system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif',
  fontFamilyMonospace: 'ui-monospace, SFMono-Regular, Menlo, Consolas, monospace',
  headings: { fontWeight: '650' },
  defaultRadius: 'md',
  focusRing: 'auto',
  cursorType: 'pointer',
});
