// `npm start`: builds the console if needed, then runs the server (server/main.ts) in this
// same process through tsx, so signals reach it directly.
import { ensureConsoleBuild } from './ensure-console-build.mjs';

// Libraries (Next, tRPC, React) skip their development-only checks in production mode;
// whoami spends about 12% less CPU per request with it.
process.env.NODE_ENV ??= 'production';

try {
  ensureConsoleBuild();
} catch (error) {
  console.error(error.message);
  process.exit(1);
}
const { register } = await import('tsx/esm/api');
register();
await import('../server/main.ts');
