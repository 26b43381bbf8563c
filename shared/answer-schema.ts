/**
 * What answer an escalation expects, derived from its kind: the JSON Schema the API shows
 * as `answer_schema`, and the check every resolve goes through (the /v1 callback, the
 * console's answer, and any page that renders the question). Pure and dependency-free, so
 * a UI can import it to check an answer before sending it; `checkAnswer` accepts exactly
 * what `answerSchemaOf` describes (answer-schema.test.ts checks both against Ajv).
 */

export type AnswerKind = 'question' | 'choice' | 'confirm' | 'credentials' | 'takeover' | 'captcha' | 'login' | 'blocked';

/** The parts of an escalation its answer depends on. */
export interface AnswerShape {
  kind: AnswerKind;
  /** `choice`: the options offered. */
  options: readonly string[] | null;
  /** `choice`: whether several options may be picked. */
  multiple: boolean | null;
  /** `credentials`: the names of the fields to fill. */
  fields: readonly string[] | null;
}

export type JsonSchemaObject = { [keyword: string]: unknown };

/** Longest free-text answer, in characters. */
export const FREE_TEXT_MAX_CHARS = 20_000;
/** Longest value of one credentials field, in characters. */
export const CREDENTIAL_MAX_CHARS = 1_000;

/**
 * Kinds whose answer is free text and may be left out: resolving with no answer means
 * "done" (a takeover ended, a captcha solved). The others need an answer unless the
 * resolve says `cleared: false`.
 */
export function answerIsOptional(kind: AnswerKind): boolean {
  return kind !== 'choice' && kind !== 'confirm' && kind !== 'credentials';
}

/** The JSON Schema (draft 2020-12) of the answer an escalation takes. */
export function answerSchemaOf(shape: AnswerShape): JsonSchemaObject {
  switch (shape.kind) {
    case 'choice': {
      const option = { type: 'string', enum: [...(shape.options ?? [])] };
      return shape.multiple === true ? { type: 'array', items: option, minItems: 1, uniqueItems: true } : option;
    }
    case 'confirm':
      return { type: 'boolean', description: 'true to go ahead, false to stop the task.' };
    case 'credentials': {
      const fields = shape.fields ?? [];
      return {
        type: 'object',
        properties: Object.fromEntries(fields.map((field) => [field, { type: 'string', minLength: 1, maxLength: CREDENTIAL_MAX_CHARS, writeOnly: true }])),
        required: [...fields],
        additionalProperties: false,
      };
    }
    default:
      return { type: 'string', maxLength: FREE_TEXT_MAX_CHARS };
  }
}

export type AnswerCheck = { ok: true } | { ok: false; message: string };

/**
 * Whether `answer` (undefined or null for none) fits the escalation. `message` is one
 * sentence naming what is expected, never echoing the answer (it may be a secret).
 */
export function checkAnswer(shape: AnswerShape, answer: unknown): AnswerCheck {
  if (answer === undefined || answer === null) {
    return answerIsOptional(shape.kind) ? { ok: true } : refuse(`This ${shape.kind} escalation needs an answer.`);
  }
  switch (shape.kind) {
    case 'choice': {
      const options = shape.options ?? [];
      const isOption = (value: unknown) => typeof value === 'string' && options.includes(value);
      if (shape.multiple !== true) return isOption(answer) ? { ok: true } : refuse('The answer must be one of the options.');
      const fine = Array.isArray(answer) && answer.length > 0 && answer.every(isOption) && new Set(answer).size === answer.length;
      return fine ? { ok: true } : refuse('The answer must be a non-empty list of distinct options.');
    }
    case 'confirm':
      return typeof answer === 'boolean' ? { ok: true } : refuse('The answer must be true or false.');
    case 'credentials': {
      const fields = shape.fields ?? [];
      if (typeof answer !== 'object' || Array.isArray(answer)) return refuse('The answer must be an object with one string per field.');
      const entries = Object.entries(answer as Record<string, unknown>);
      const fine =
        entries.length === fields.length &&
        fields.every((field) => Object.hasOwn(answer, field)) &&
        entries.every(([, value]) => typeof value === 'string' && value.length >= 1 && value.length <= CREDENTIAL_MAX_CHARS);
      return fine ? { ok: true } : refuse(`The answer must fill exactly the fields ${fields.join(', ')}, each with 1 to ${CREDENTIAL_MAX_CHARS} characters.`);
    }
    default:
      return typeof answer === 'string' && answer.length <= FREE_TEXT_MAX_CHARS
        ? { ok: true }
        : refuse(`The answer must be text of at most ${FREE_TEXT_MAX_CHARS} characters.`);
  }
}

function refuse(message: string): AnswerCheck {
  return { ok: false, message };
}
