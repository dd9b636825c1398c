// Response bodies of the vault routes: metadata only, never a value.
import { z } from 'zod';
import { timestamp, uuid } from '../http/openapi/common.ts';

export const Secret = z
  .strictObject({
    id: uuid,
    name: z.string(),
    description: z.string().nullable(),
    current_version: z.int(),
    scope: z.enum(['org', 'user']).describe('`user`: only its owner (and the owner’s agents) may use it.'),
    owner_id: uuid.nullable(),
    allowed_hosts: z.array(z.string()).nullable().describe('Hosts the secret may be sent to; null = the hosts of the services that name it.'),
    created_by: uuid.nullable(),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: 'Secret' });

export const SecretVersion = z
  .strictObject({
    version: z.int(),
    created_at: timestamp,
    created_by: uuid.nullable(),
    restored_from: z.int().nullable(),
    kek_id: z.string(),
  })
  .meta({ id: 'SecretVersion' });

export const SecretList = z.strictObject({ secrets: z.array(Secret) });
export const SecretVersionList = z.strictObject({ versions: z.array(SecretVersion) });
