// People's sessions from `gateway login`, one per profile, in one file (mode 0600, directory 0700):
// $GATEWAY_PROFILES, else the folder of the MCP credentials file (cli/mcp/credentials.ts:
// $GATEWAY_CONFIG's folder, $XDG_CONFIG_HOME/agent-gateway, ~/.config/agent-gateway) + profiles.json.
// The MCP credentials file itself is left to `gateway mcp login`.
import { chmod, mkdir, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { credentialsPath } from '../mcp/credentials.ts';
import { readTextIfExists } from './files.ts';
import { CliError } from './errors.ts';

export const DEFAULT_PROFILE = 'default';

const profileSchema = z.object({
  url: z.url(),
  /** A `gws_…` session token, or any bearer given to `gateway login --token`. */
  token: z.string().min(1).optional(),
  expires_at: z.string().optional(),
  email: z.string().optional(),
});
const fileSchema = z.object({ profiles: z.record(z.string(), profileSchema) });

export type Profile = z.infer<typeof profileSchema>;
type ProfilesFile = z.infer<typeof fileSchema>;

export function profilesPath(env: NodeJS.ProcessEnv = process.env): string {
  if (env.GATEWAY_PROFILES) return path.resolve(env.GATEWAY_PROFILES);
  return path.join(path.dirname(credentialsPath(env)), 'profiles.json');
}

export function checkProfileName(name: string): string {
  if (!/^[A-Za-z0-9_.-]{1,64}$/.test(name)) throw new CliError(`--profile must be 1-64 letters, digits, "_", "." or "-" (got ${JSON.stringify(name)})`);
  return name;
}

async function readAll(file: string): Promise<ProfilesFile> {
  const text = await readTextIfExists(file);
  if (text === null) return { profiles: {} };
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new CliError(`${file} is not valid JSON: delete it and run \`gateway login\` again`);
  }
  const parsed = fileSchema.safeParse(json);
  if (!parsed.success) throw new CliError(`${file} does not hold gateway profiles: delete it and run \`gateway login\` again`);
  return parsed.data;
}

export async function readProfile(name: string, file = profilesPath()): Promise<Profile | null> {
  return (await readAll(file)).profiles[name] ?? null;
}

/** Replaces one profile (null removes it); atomic write, 0600. */
export async function writeProfile(name: string, profile: Profile | null, file = profilesPath()): Promise<void> {
  const all = await readAll(file);
  if (profile) all.profiles[name] = profile;
  else delete all.profiles[name];
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.tmp`;
  await writeFile(tmp, JSON.stringify(all, null, 2) + '\n', { mode: 0o600 });
  await chmod(tmp, 0o600);
  await rename(tmp, file);
}
