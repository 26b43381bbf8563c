/** Builds the Next.js console when there is no build yet or its sources are newer; throws if the build fails. */
export function ensureConsoleBuild(): void;
