import { loadConfig } from './core/config';
import { startService, type StopMode } from './assembly/start-service';

// The one process: REST API, console, WebSocket gateway and workers on one port.
async function main(): Promise<void> {
  const config = loadConfig();
  const service = await startService(config);
  let stopping = false;
  // SIGTERM is what process managers send on a deploy: the work is handed to the next
  // service of this host. Ctrl-C in a terminal ends everything, as a developer expects.
  const stop = (signal: string, mode: StopMode) => {
    if (stopping) return;
    stopping = true;
    service.services.log.info({ signal, mode }, 'shutting down');
    service.close(mode).then(
      () => process.exit(0),
      (error: unknown) => {
        service.services.log.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM', 'handover'));
  process.on('SIGINT', () => stop('SIGINT', 'close'));
}

main().catch((error: unknown) => {
  console.error(`Browser Device Operator Service failed to start: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
