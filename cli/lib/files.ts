import { readFile } from 'node:fs/promises';

/** A file's text, or null when it does not exist (any other error is thrown). */
export async function readTextIfExists(file: string): Promise<string | null> {
  try {
    return await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}
