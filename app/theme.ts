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
  // Filled buttons and badges pick black or white text, whichever reads on their colour.
  autoContrast: true,
});

// Text on light badges and alerts, and dimmed text, darker than Mantine's defaults so that
// every pair meets WCAG AA (4.5:1) on its background: the defaults (shade 9 on shade 1,
// gray 6 on white) measure 3.3 to 3.9 for several colours, which axe reports as serious.
const LIGHT_TEXT: Record<string, string> = {
  indigo: '#2c3b94',
  green: '#1b6b2c',
  orange: '#9c3a06',
  red: '#a51d1d',
  teal: '#05634a',
  cyan: '#085d6c',
  yellow: '#7a4a00',
  lime: '#3f6212',
  pink: '#9c1f4f',
};

/**
 * The CSS variables the console overrides for contrast, as a style sheet the root layout
 * writes into <head> (a server component cannot hand MantineProvider a resolver function).
 * `html:root` outranks Mantine's own `:root[data-mantine-color-scheme]` rules.
 */
export const consoleContrastCss = `html:root[data-mantine-color-scheme='light'] { --mantine-color-dimmed: #545b62; --mantine-primary-color-light-color: #2c3b94; ${Object.entries(LIGHT_TEXT)
  .map(([name, value]) => `--mantine-color-${name}-light-color: ${value};`)
  .join(' ')} }`;
