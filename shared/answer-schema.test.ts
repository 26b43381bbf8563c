import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { answerSchemaOf, checkAnswer, type AnswerShape } from './answer-schema';

const shapes: AnswerShape[] = [
  { kind: 'question', options: null, multiple: null, fields: null },
  { kind: 'choice', options: ['Red', 'Blue'], multiple: false, fields: null },
  { kind: 'choice', options: ['Red', 'Blue'], multiple: true, fields: null },
  { kind: 'confirm', options: null, multiple: null, fields: null },
  { kind: 'credentials', options: null, multiple: null, fields: ['otp', 'pin'] },
  { kind: 'takeover', options: null, multiple: null, fields: null },
];
const answers: unknown[] = ['Red', 'Green', '', ['Red'], ['Red', 'Red'], [], ['Red', 'Blue'], true, false, { otp: '1', pin: '2' }, { otp: '1' }, { otp: '1', pin: '' }, { otp: '1', pin: '2', x: '3' }, 42, 'x'.repeat(20_001)];

describe('answer schema', () => {
  it('accepts exactly what the JSON Schema it publishes accepts (checked with Ajv)', () => {
    const ajv = new Ajv2020({ strict: false });
    for (const shape of shapes) {
      const validate = ajv.compile(answerSchemaOf(shape));
      for (const answer of answers) {
        expect(checkAnswer(shape, answer).ok, `${shape.kind}/${shape.multiple} ${JSON.stringify(answer).slice(0, 40)}`).toBe(validate(answer));
      }
    }
  });

  it('needs an answer for choice, confirm and credentials, not for the free-text kinds', () => {
    expect(shapes.map((shape) => [shape.kind, checkAnswer(shape, undefined).ok])).toEqual([
      ['question', true],
      ['choice', false],
      ['choice', false],
      ['confirm', false],
      ['credentials', false],
      ['takeover', true],
    ]);
  });

  it('never echoes the answer in its message', () => {
    const check = checkAnswer(shapes[4]!, { otp: 'hunter2' });
    expect(check.ok).toBe(false);
    expect(JSON.stringify(check)).not.toContain('hunter2');
  });
});
