import { loadConfig } from './core/config';
import { startService } from './assembly/start-service';

// The one process: REST API, console, WebSocket gateway and workers on one port.
async function main(): Promise<void> {
  const config = loadConfig();
  const service = await startService(config);
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    service.services.log.info({ signal }, 'shutting down');
    service.close().then(
      () => process.exit(0),
      (error: unknown) => {
        service.services.log.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

main().catch((error: unknown) => {
  console.error(`Browser Device Operator Service failed to start: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
