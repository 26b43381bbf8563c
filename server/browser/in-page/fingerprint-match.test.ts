import { describe, expect, it } from 'vitest';
import { bestMatch, matchScore, type TargetFingerprint } from './fingerprint-match';

const submit: TargetFingerprint = {
  tag: 'button',
  role: 'button',
  name: 'Submit',
  label: '',
  text: 'Submit',
  attributes: { type: 'submit' },
  path: 'html:nth-of-type(1)>body:nth-of-type(1)>form:nth-of-type(1)>button:nth-of-type(1)',
};

describe('matchScore', () => {
  it('matches the same element, and one moved elsewhere that kept its name', () => {
    expect(matchScore(submit, submit)).not.toBeNull();
    expect(matchScore(submit, { ...submit, path: 'html:nth-of-type(1)>body:nth-of-type(1)>div:nth-of-type(2)>button:nth-of-type(1)' })).not.toBeNull();
  });

  it('does not match a button renamed and moved, another role or another tag', () => {
    expect(matchScore(submit, { ...submit, name: 'Send', text: 'Send', path: 'html:nth-of-type(1)>body:nth-of-type(1)>button:nth-of-type(1)' })).toBeNull();
    expect(matchScore(submit, { ...submit, role: 'link' })).toBeNull();
    expect(matchScore(submit, { ...submit, tag: 'input' })).toBeNull();
  });

  it('matches a renamed element by an identifying attribute that stayed', () => {
    const withId = { ...submit, attributes: { type: 'submit', id: 'signup' } };
    expect(matchScore(withId, { ...withId, name: 'Send', text: 'Send' })).not.toBeNull();
  });
});

describe('bestMatch', () => {
  it('finds the one match, reports a tie as ambiguous and no match as missing', () => {
    const other = { ...submit, name: 'Cancel', text: 'Cancel' };
    expect(bestMatch(submit, [{ element: 'a', fingerprint: other }, { element: 'b', fingerprint: submit }])).toEqual({ element: 'b' });
    expect(bestMatch(submit, [{ element: 'a', fingerprint: submit }, { element: 'b', fingerprint: submit }])).toEqual({ status: 'ambiguous' });
    expect(bestMatch(submit, [{ element: 'a', fingerprint: other }])).toEqual({ status: 'missing' });
  });
});
