/**
 * A tokenizer-free estimate of how many tokens a text costs a model: one per three
 * characters, rounded up. The endpoint may serve any model, each with its own tokenizer;
 * BPE tokenizers average about four characters per token on English prose and nearer three
 * on URLs, JSON and CSS selectors, so three over-counts for the text a planner sends and a
 * budget counted this way is not exceeded by the real count.
 */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / CHARS_PER_TOKEN);
}

/** The characters that fit in `tokens` by the same estimate. */
export function charsForTokens(tokens: number): number {
  return Math.max(0, tokens) * CHARS_PER_TOKEN;
}

const CHARS_PER_TOKEN = 3;
