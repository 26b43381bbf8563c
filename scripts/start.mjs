// `npm start`: builds the console if needed, then runs the server (server/main.ts) in this
// same process through tsx, so signals reach it directly.
import { ensureConsoleBuild } from './ensure-console-build.mjs';

// Libraries (Next, tRPC, React) skip their development-only checks in production mode;
// whoami spends about 12% less CPU per request with it.
process.env.NODE_ENV ??= 'production';
// The console's Next.js server runs in this process: no telemetry from it either.
process.env.NEXT_TELEMETRY_DISABLED = '1';

try {
  ensureConsoleBuild();
} catch (error) {
  console.error(error.message);
  process.exit(1);
}
const { register } = await import('tsx/esm/api');
register();
await import('../server/main.ts');
