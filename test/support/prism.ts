// Stoplight Prism in mock mode on loopback, validating every request against the document it
// serves (`--errors`: a request that violates the document is answered with a 4xx problem
// instead of a mock). Started from the package's own binary, stopped by its pid.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { freePort } from '../../server/embedded/processes.ts';
import { ROOT } from './cli.ts';

export interface Prism {
  url: string;
  stop(): Promise<void>;
}

export async function startPrism(documentFile: string, port?: number): Promise<Prism> {
  const listenPort = port ?? (await freePort());
  const bin = path.join(ROOT, 'node_modules', '.bin', 'prism');
  const child: ChildProcess = spawn(bin, ['mock', documentFile, '--host', '127.0.0.1', '--port', String(listenPort), '--errors', '--dynamic', 'false'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer): void => {
      output += chunk.toString();
      if (output.includes('Prism is listening')) resolve();
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`prism exited with ${code}: ${output.slice(-2000)}`)));
  });
  return {
    url: `http://127.0.0.1:${listenPort}`,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
