import { loadConfig } from './core/config';
import { startService, type StopMode } from './assembly/start-service';

// The one process: REST API, console, WebSocket gateway and workers on one port.
async function main(): Promise<void> {
  const config = loadConfig();
  const service = await startService(config);
  let stopping = false;
  const stop = (signal: string, mode: StopMode) => {
    if (stopping) return;
    stopping = true;
    service.services.log.info({ signal, browsers: mode === 'handover' ? 'kept for the next start' : 'closed' }, 'shutting down');
    service.close(mode).then(
      () => process.exit(0),
      (error: unknown) => {
        service.services.log.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  // SIGTERM is what a process manager sends on a deploy: the browsers are handed over to
  // the next start, unless this host is being retired. Ctrl-C closes everything, as a
  // developer at a terminal expects.
  process.on('SIGTERM', () => stop('SIGTERM', config.browser.retireOnStop ? 'shutdown' : 'handover'));
  process.on('SIGINT', () => stop('SIGINT', 'shutdown'));
}

main().catch((error: unknown) => {
  console.error(`Browser Device Operator Service failed to start: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
