// The page code (./in-page/, TypeScript checked with the DOM types) as functions
// puppeteer can evaluate. Each page function is bundled once, when this module loads,
// with only the code it uses (esbuild's tree shaking), so an evaluate sends that and not
// the whole page code: a `wait for` polls several of them every few milliseconds.
//
// Page code never reaches puppeteer as a function compiled in this process: puppeteer
// sends a function's source (toString()) to the page, and the TypeScript runners this
// service uses (tsx, vitest) may inject helpers such as __name() into compiled code,
// which do not exist in the page. The bundle is built by esbuild alone, with keepNames
// off so it adds no such helper either.
import { buildSync, type BuildOptions } from 'esbuild';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type * as pageFunctions from './in-page/page-functions.js';

type PageFunctions = typeof pageFunctions;

/**
 * The variable the bundle assigns its exports to. The bundle always runs inside a
 * function (below), so it stays local there and the page's globals gain nothing.
 */
const BUNDLE_EXPORTS = '__operatorPage';

const PAGE_FUNCTIONS_PATH = fileURLToPath(new URL('./in-page/page-functions.ts', import.meta.url));

/** Every page function in one script that defines BUNDLE_EXPORTS. */
export const PAGE_BUNDLE = bundle({ entryPoints: [PAGE_FUNCTIONS_PATH] });

/** A script that defines BUNDLE_EXPORTS with page function `name` and what it uses only. */
function bundleOf(name: string): string {
  return bundle({ stdin: { contents: `export { ${name} } from ${JSON.stringify(PAGE_FUNCTIONS_PATH)};`, resolveDir: path.dirname(PAGE_FUNCTIONS_PATH), loader: 'ts' } });
}

function bundle(entry: Pick<BuildOptions, 'entryPoints' | 'stdin'>): string {
  const result = buildSync({
    ...entry,
    bundle: true,
    write: false,
    format: 'iife',
    globalName: BUNDLE_EXPORTS,
    platform: 'browser',
    // Older than the Chromium the service drives, and recent enough that the code is
    // left as written rather than rewritten into older syntax.
    target: 'chrome120',
    // Unminified, so errors raised in the page name the functions they come from.
    minify: false,
    keepNames: false,
    logLevel: 'silent',
  });
  const [output] = result.outputFiles;
  if (output === undefined) throw new Error('esbuild produced no page bundle');
  return output.text;
}

/**
 * Page function `name` as a function puppeteer can evaluate, typed as the page function
 * itself. Its bundle runs afresh in every call, so the caches of the page code (the
 * document's shadow roots) never outlive one call.
 */
function inPage<Name extends keyof PageFunctions>(name: Name): PageFunctions[Name] {
  return new Function(`${bundleOf(name)}\nreturn ${BUNDLE_EXPORTS}.${name}.apply(null, arguments);`) as PageFunctions[Name];
}

export const OBSERVE_SCRIPT = inPage('observe');
export const FIND_BY_REF_SCRIPT = inPage('findByRef');
export const FIND_CLICK_TARGET_SCRIPT = inPage('findClickTarget');
export const FIND_FIELD_SCRIPT = inPage('findField');
export const TEXT_OF_SCRIPT = inPage('textOf');
export const TEXTS_OF_SCRIPT = inPage('textsOf');
export const HAS_TEXT_SCRIPT = inPage('hasText');
export const SCROLL_SCRIPT = inPage('scroll');
export const READ_LOCAL_STORAGE_SCRIPT = inPage('readLocalStorage');
export const WRITE_LOCAL_STORAGE_SCRIPT = inPage('writeLocalStorage');
export const LOCATE_FINGERPRINT_SCRIPT = inPage('locateFingerprint');

/** Functions puppeteer calls with an element handle as their first argument. */
export const PREPARE_FIELD_FUNCTION = inPage('prepareField');
export const SELECT_OPTION_FUNCTION = inPage('selectOption');
export const DOM_CLICK_FUNCTION = inPage('domClick');
export const GUARD_CLICK_FUNCTION = inPage('guardClick');
export const CLICK_POINT_FUNCTION = inPage('clickPoint');
export const FINGERPRINT_FUNCTION = inPage('fingerprintOf');
export const FRAME_PLACEMENT_FUNCTION = inPage('framePlacement');

/** Called with a click guard's handle (GUARD_CLICK_FUNCTION's result). */
export const END_CLICK_GUARD_FUNCTION = inPage('endClickGuard');

/**
 * Source of a script for evaluateOnNewDocument: what every document of the agent's page
 * gets (same-tab navigation, a caret that does not blink).
 */
export const AGENT_PAGE_SCRIPT = `(function () {\n${PAGE_BUNDLE}\n${BUNDLE_EXPORTS}.installSameTabNavigation();\n${BUNDLE_EXPORTS}.installSteadyCaret();\n})();`;
