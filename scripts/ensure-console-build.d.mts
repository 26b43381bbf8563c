/** The environment every `next` command of the project runs with: telemetry off. */
export function nextEnvironment(): NodeJS.ProcessEnv;

/** Builds the Next.js console when there is no build yet or its sources are newer; throws if the build fails. */
export function ensureConsoleBuild(): void;
