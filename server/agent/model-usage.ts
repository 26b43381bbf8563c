/** Tokens one model request used, as the endpoint reported them (0 where it did not). */
export interface ModelCallUsage {
  inputTokens: number;
  outputTokens: number;
}
