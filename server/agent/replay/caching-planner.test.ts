import { describe, expect, it } from 'vitest';
import type { LocatedTarget, PageDriver, PageObservation, TargetFingerprint } from '../../browser/types';
import type { Planner, PlannerDecision, PlannerInput } from '../planner';
import type { RecordedStep } from '../step';
import type { CachedStep } from './cached-step';
import { cachingPlanner } from './caching-planner';

const field: TargetFingerprint = { tag: 'input', role: 'textbox', name: 'Email', label: 'Email', text: '', attributes: { name: 'email' }, path: 'html:nth-of-type(1)>body:nth-of-type(1)>input:nth-of-type(1)' };
const button: TargetFingerprint = { tag: 'button', role: 'button', name: 'Subscribe', label: '', text: 'Subscribe', attributes: {}, path: 'html:nth-of-type(1)>body:nth-of-type(1)>button:nth-of-type(1)' };

const ENTRY: CachedStep[] = [
  { action: { kind: 'navigate', url: 'https://shop.example/signup' }, described: 'navigate https://shop.example/signup', note: null, page: 'about:blank' },
  { action: { kind: 'type', text: '{{otp}}', into: field }, described: 'type "{{otp}}" into "Email"', note: 'Type the code.', page: 'https://shop.example/signup' },
  { action: { kind: 'click', target: button }, described: 'click "Subscribe"', note: null, page: 'https://shop.example/signup' },
  { action: { kind: 'finish', answer: 'done' }, described: 'finish', note: null, page: 'https://shop.example/welcome' },
];

const onPage = (url: string): PageObservation => ({ url, title: '', elements: [] });
const replayedAction = (described: string): RecordedStep => ({ type: 'action', action: described, url: null, title: null, note: null, replayed: true });

/** The two driver methods the planner uses: `present` lists the fingerprints the page shows. */
function pageWith(present: TargetFingerprint[]): PageDriver & { fingerprinted: unknown[] } {
  const fingerprinted: unknown[] = [];
  return {
    fingerprinted,
    fingerprint: async (target: unknown) => {
      fingerprinted.push(target);
      return button;
    },
    locate: async (fingerprint: TargetFingerprint): Promise<LocatedTarget> =>
      present.includes(fingerprint) ? { status: 'found', target: `[data-operator-replay="${fingerprint.name}"]` } : { status: 'missing' },
  } as unknown as PageDriver & { fingerprinted: unknown[] };
}

/** A planner that clicks "Sign me up" and records what it was given. */
function fallback(): Planner & { inputs: PlannerInput[] } {
  const inputs: PlannerInput[] = [];
  return {
    inputs,
    wantsScreenshots: false,
    observesElements: true,
    maxCorrections: 3,
    async next(input): Promise<PlannerDecision> {
      inputs.push(input);
      return { action: { kind: 'click', target: 'Sign me up' }, note: 'The button was renamed.' };
    },
  };
}

const input = (observation: PageObservation, history: RecordedStep[] = []): PlannerInput => ({
  prompt: 'Sign up.',
  observation,
  history,
  outputSchema: null,
  confirmBefore: null,
  signal: new AbortController().signal,
});

describe('cachingPlanner', () => {
  it('replays the step at the count of replayed actions, targeting what locate found, with no planner call', async () => {
    const planner = fallback();
    let heals = 0;
    const caching = cachingPlanner(planner, pageWith([field, button]), null, { entry: ENTRY, healing: false, onHeal: async () => void (heals += 1) });
    expect(await caching.next(input(onPage('about:blank')))).toEqual({ action: { kind: 'navigate', url: 'https://shop.example/signup' }, note: null, cache: { step: ENTRY[0], replayed: true } });
    const typed = await caching.next(input(onPage('https://shop.example/signup?session=1'), [replayedAction(ENTRY[0]!.described)]));
    // The placeholder stays as stored: the run fills it from this task's own credentials.
    expect(typed).toMatchObject({ action: { kind: 'type', text: '{{otp}}', into: '[data-operator-replay="Email"]' }, note: 'Type the code.', cache: { replayed: true } });
    const history = ENTRY.slice(0, 3).map((step) => replayedAction(step.described));
    expect(await caching.next(input(onPage('https://shop.example/welcome'), history))).toMatchObject({ action: { kind: 'finish', answer: 'done' } });
    expect(planner.inputs).toHaveLength(0);
    expect(heals).toBe(0);
  });

  it('hands over to the planner, with the entry as context, when a target is missing, and keeps it from then on', async () => {
    const planner = fallback();
    let heals = 0;
    const driver = pageWith([field]);
    const caching = cachingPlanner(planner, driver, null, { entry: ENTRY, healing: false, onHeal: async () => void (heals += 1) });
    const history = ENTRY.slice(0, 2).map((step) => replayedAction(step.described));
    const healed = await caching.next(input(onPage('https://shop.example/signup'), history));
    expect(healed).toMatchObject({ action: { kind: 'click', target: 'Sign me up' }, cache: { step: { action: { kind: 'click', target: button } }, replayed: false } });
    expect(driver.fingerprinted).toEqual(['Sign me up']);
    expect(planner.inputs[0]!.context).toContain('step 3 no longer fits the page');
    expect(planner.inputs[0]!.context).toContain('3. click "Subscribe"');
    // Later steps are the planner's too, even where the entry would fit again.
    await caching.next(input(onPage('https://shop.example/signup'), history));
    expect(planner.inputs).toHaveLength(2);
    expect(heals).toBe(1);
  });

  it('heals instead of replaying onto another page, outside allowed_domains, after a failed replayed action, or in a run that was already healing', async () => {
    const cases: Array<{ allowed: string[] | null; healing: boolean; page: string; history: RecordedStep[] }> = [
      { allowed: null, healing: false, page: 'https://shop.example/other', history: [replayedAction(ENTRY[0]!.described)] },
      { allowed: ['example.com'], healing: false, page: 'about:blank', history: [] },
      { allowed: null, healing: false, page: 'https://shop.example/signup', history: [replayedAction(ENTRY[0]!.described), { type: 'correction', action: 'correction element_not_found', url: null, title: null, note: null }] },
      { allowed: null, healing: true, page: 'about:blank', history: [] },
    ];
    for (const { allowed, healing, page, history } of cases) {
      const planner = fallback();
      const caching = cachingPlanner(planner, pageWith([field, button]), allowed, { entry: ENTRY, healing, onHeal: async () => undefined });
      expect(await caching.next(input(onPage(page), history))).toMatchObject({ cache: { replayed: false } });
      expect(planner.inputs).toHaveLength(1);
    }
  });

  it('on a miss only records: every decision is the planner’s, with its stored form', async () => {
    const planner = fallback();
    const caching = cachingPlanner(planner, pageWith([]), null, { entry: null, healing: false, onHeal: async () => undefined });
    const decision = await caching.next(input(onPage('https://shop.example/signup')));
    expect(decision).toMatchObject({ cache: { step: { described: 'click "Sign me up"', note: 'The button was renamed.', page: 'https://shop.example/signup' }, replayed: false } });
    expect(planner.inputs[0]!.context).toBeUndefined();
  });
});
