import { spawn } from 'node:child_process';
import path from 'node:path';
import { freePort } from './free-port';

const PRISM = path.resolve(import.meta.dirname, '..', '..', 'node_modules', '@stoplight', 'prism-cli', 'dist', 'index.js');

export interface PrismProxy {
  url: string;
  /** What Prism wrote, for a failing test to show. */
  output(): string;
  close(): Promise<void>;
}

/**
 * Stoplight Prism's validating proxy (`prism proxy <document> <upstream> --errors`) in
 * front of `upstream`: it forwards each request the document allows, checks the answer
 * against the document, and reports what does not match in an `sl-violations` header (and,
 * with `--errors`, answers a violating response 500 instead of passing it on). A request
 * the document does not allow is not forwarded: Prism answers it 401 or 422 itself.
 * Run with this Node (Prism 5.16 wants Node >= 24.18, the project's pinned one).
 */
export async function startPrismProxy(documentPath: string, upstream: string): Promise<PrismProxy> {
  const port = await freePort();
  const child = spawn(process.execPath, [PRISM, 'proxy', documentPath, upstream, '--errors', '--host', '127.0.0.1', '--port', String(port)], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Prism is listening')) resolve();
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    void exited.then(() => reject(new Error(`Prism exited before listening:\n${output}`)));
  });
  return {
    url: `http://127.0.0.1:${port}`,
    output: () => output,
    async close() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}
