import { createTheme, defaultVariantColorsResolver, parseThemeColor, type CSSVariablesResolver, type VariantColorsResolver } from '@mantine/core';

/** A hex colour moved `amount` (0..1) of the way to black. */
function darken(hex: string, amount: number): string {
  const channels = [1, 3, 5].map((at) => Math.round(parseInt(hex.slice(at, at + 2), 16) * (1 - amount)));
  return `#${channels.map((channel) => channel.toString(16).padStart(2, '0')).join('')}`;
}

/**
 * Text on the light, outline, subtle and white variants (badges, light buttons, the active
 * navigation link, an error's "Try again") darker than any shade of its colour: Mantine's
 * default (shade 6 on a tinted or white background) falls below WCAG AA's 4.5:1 for small text.
 */
const readableVariants: VariantColorsResolver = (input) => {
  const defaults = defaultVariantColorsResolver(input);
  if (!['light', 'outline', 'subtle', 'white'].includes(input.variant)) return defaults;
  const parsed = parseThemeColor({ color: input.color ?? input.theme.primaryColor, theme: input.theme });
  // Only a colour named without a shade ("orange", not "orange.3") is darkened.
  if (!parsed.isThemeColor || String(input.color ?? '').includes('.')) return defaults;
  const shade9 = input.theme.colors[parsed.color]?.[9];
  if (shade9 === undefined) return defaults;
  // Shade 9 darkened a third: orange's and yellow's shade 9 alone stay under 4.5:1.
  const text = darken(shade9, 0.35);
  return { ...defaults, color: text, hoverColor: text, ...(input.variant === 'outline' ? { border: `1px solid ${text}` } : {}) };
};

/**
 * The console's one visual system: every page takes its colours, type, radius and spacing
 * from here, never from inline styles. Indigo reads as "operator tool"; the focus ring
 * shows on keyboard focus.
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
  variantColorResolver: readableVariants,
});

/**
 * Secondary ("dimmed") text one shade darker than Mantine's, so it passes 4.5:1 on white and
 * on the page's grey; so does a field's error message (Mantine's red 6 is 3.3:1).
 */
export const consoleCssVariables: CSSVariablesResolver = () => ({
  variables: {},
  light: { '--mantine-color-dimmed': 'var(--mantine-color-gray-7)', '--mantine-color-error': 'var(--mantine-color-red-9)' },
  dark: {},
});
