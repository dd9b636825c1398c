// Where `gateway mcp` finds its credentials: `GATEWAY_URL` + `GATEWAY_AGENT_KEY` in the
// environment, or the file `gateway mcp login` writes (mode 0600):
// `$GATEWAY_CONFIG`, else `$XDG_CONFIG_HOME/agent-gateway/credentials.json`, else
// `~/.config/agent-gateway/credentials.json`.
import { chmod, mkdir, rename, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { readTextIfExists } from '../lib/files.ts';

export const credentialsSchema = z.object({
  url: z.url(),
  client_id: z.string().min(1),
  /** The loopback redirect URI registered with client_id (reused by the next login when free). */
  redirect_uri: z.string().optional(),
  access_token: z.string().min(1),
  refresh_token: z.string().min(1).optional(),
  /** ISO 8601; absent when the server did not say. */
  expires_at: z.string().optional(),
});

export type StoredCredentials = z.infer<typeof credentialsSchema>;

export function credentialsPath(env: NodeJS.ProcessEnv = process.env): string {
  if (env.GATEWAY_CONFIG) return path.resolve(env.GATEWAY_CONFIG);
  const base = env.XDG_CONFIG_HOME || path.join(os.homedir(), '.config');
  return path.join(base, 'agent-gateway', 'credentials.json');
}

export class CredentialsError extends Error {
  override name = 'CredentialsError';
}

/** The stored credentials, or null when there is no file yet. */
export async function readCredentials(file: string): Promise<StoredCredentials | null> {
  const text = await readTextIfExists(file);
  if (text === null) return null;
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new CredentialsError(`${file} is not valid JSON; run \`gateway mcp login\` again`);
  }
  const parsed = credentialsSchema.safeParse(json);
  if (!parsed.success) throw new CredentialsError(`${file} does not hold gateway credentials; run \`gateway mcp login\` again`);
  return parsed.data;
}

/** Writes atomically with mode 0600 (the directory 0700): the file holds bearer tokens. */
export async function writeCredentials(file: string, creds: StoredCredentials): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.tmp`;
  await writeFile(tmp, JSON.stringify(creds, null, 2) + '\n', { mode: 0o600 });
  await chmod(tmp, 0o600);
  await rename(tmp, file);
}

export const normalizeBaseUrl = (url: string): string => url.trim().replace(/\/+$/, '');
