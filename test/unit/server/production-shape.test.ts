// docker-compose.yml and `npm run cluster` must describe the same production shape: what the
// cluster proves on this machine is what compose deploys.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { TEMPORAL_SERVER_VERSION, TEMPORAL_UI_VERSION } from '../../../server/cluster/binaries.ts';
import { GATEWAY_NODE_FLAGS, GATEWAY_PROCESS_ENV } from '../../../server/cluster/cluster.ts';
import { DYNAMIC_CONFIG_FILE, HISTORY_SHARDS, serverConfig, uiConfig } from '../../../server/cluster/temporal-server.ts';
import { READ_ONLY_UI_CONFIG } from '../../../server/embedded/read-only-ui.ts';
import { DYNAMIC_CONFIG, SEARCH_ATTRIBUTES } from '../../../server/embedded/temporal-dev-server.ts';

const root = path.resolve(import.meta.dirname, '..', '..', '..');
const compose = parse(readFileSync(path.join(root, 'docker-compose.yml'), 'utf8'), { merge: true }) as { services: Record<string, any> };
const dynamicConfig = parse(readFileSync(DYNAMIC_CONFIG_FILE, 'utf8')) as Record<string, Array<{ value: unknown }>>;

describe('the production shape', () => {
  it('runs the same Temporal server, SQL tool, CLI and UI versions', () => {
    const v = TEMPORAL_SERVER_VERSION.slice(1);
    expect(compose.services.temporal.image).toBe(`temporalio/server:${v}`);
    expect(compose.services['temporal-schema'].image).toMatch(new RegExp(`^temporalio/admin-tools:${v.replaceAll('.', '\\.')}-`));
    expect(compose.services['temporal-setup'].image).toBe(compose.services['temporal-schema'].image);
    expect(compose.services['temporal-ui'].image).toBe(`temporalio/ui:${TEMPORAL_UI_VERSION.slice(1)}`);
  });

  it('gives the server the same history shards, persistence plugin and dynamic config file', () => {
    const env = compose.services.temporal.environment;
    expect(env.DB).toBe('postgres12');
    expect(Number(env.NUM_HISTORY_SHARDS)).toBe(HISTORY_SHARDS);
    expect(HISTORY_SHARDS).toBeGreaterThan(1);
    const mount = (compose.services.temporal.volumes as string[]).find((v) => v.includes('temporal-dynamicconfig.yaml'))!;
    expect(path.resolve(root, mount.split(':')[0]!)).toBe(DYNAMIC_CONFIG_FILE);
    expect(mount.split(':')[1]).toBe(`/etc/temporal/${env.DYNAMIC_CONFIG_FILE_PATH}`);
    const cfg = serverConfig({
      ports: { frontend: 1, frontendHttp: 2, frontendMembership: 3, history: 4, historyMembership: 5, matching: 6, matchingMembership: 7, worker: 8, workerMembership: 9 },
      db: { host: 'h', port: 5432, user: 'u', password: 'p' },
      dynamicConfigFile: DYNAMIC_CONFIG_FILE,
    }) as any;
    expect(cfg.persistence.numHistoryShards).toBe(HISTORY_SHARDS);
    expect(cfg.persistence.datastores.default.sql).toMatchObject({ pluginName: 'postgres12', databaseName: 'temporal' });
    expect(cfg.persistence.datastores.visibility.sql).toMatchObject({ pluginName: 'postgres12', databaseName: 'temporal_visibility' });
  });

  it('uses the dynamic config of the embedded dev server, transfer-queue polling raised', () => {
    for (const kv of DYNAMIC_CONFIG) {
      const [key, raw] = kv.split('=') as [string, string];
      const value = raw === 'true' ? true : raw === 'false' ? false : Number.isNaN(Number(raw)) ? raw : Number(raw);
      expect(dynamicConfig[key], key).toEqual([{ value }]);
    }
    expect(dynamicConfig['history.transferProcessorMaxPollRPS']).toEqual([{ value: 1000 }]);
  });

  it('sets up schemas with the SQL tool and registers the namespace and every search attribute', () => {
    const schema = compose.services['temporal-schema'].command.join(' ');
    for (const step of ['create-database', 'setup-schema -v 0.0', 'update-schema --schema-name postgresql/v12/$$schema', 'temporal:temporal', 'temporal_visibility:visibility']) {
      expect(schema).toContain(step);
    }
    const setup = compose.services['temporal-setup'].command.join(' ');
    expect(setup).toContain('temporal operator namespace create --namespace default');
    expect(setup).toContain(`for a in ${Object.keys(SEARCH_ATTRIBUTES).join(' ')};`);
  });

  it('runs two API and two worker replicas of one image on one database, Temporal and public URL', () => {
    const gateways = Object.entries(compose.services).filter(([name]) => name.startsWith('gateway-'));
    const roles = gateways.map(([, s]) => s.command.join(' ')).sort();
    expect(roles).toEqual(['serve --role api', 'serve --role api', 'serve --role worker', 'serve --role worker']);
    const envs = gateways.map(([, s]) => s.environment);
    for (const key of ['DATABASE_URL', 'TEMPORAL_ADDRESS', 'TEMPORAL_NAMESPACE', 'PUBLIC_URL', 'GATEWAY_MASTER_KEY', 'NODE_ENV']) {
      expect(new Set(envs.map((e) => e[key])).size, key).toBe(1);
    }
    expect(envs[0].NODE_ENV).toBe('production');
    expect(new Set(gateways.map(([, s]) => s.image))).toEqual(new Set(['agent-gateway:latest']));
  });
});

describe('the V8 flags and environment of the gateway processes', () => {
  it('are the same in npm start / serve, the Docker image, the cluster and the benchmark', () => {
    const flags = GATEWAY_NODE_FLAGS.join(' ');
    const env = Object.entries(GATEWAY_PROCESS_ENV).map(([k, v]) => `${k}=${v}`);
    expect(env).toEqual(['MALLOC_ARENA_MAX=2']);
    const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    for (const script of [pkg.scripts.serve!, pkg.scripts.start!]) expect(script).toContain(`env ${env.join(' ')} node ${flags} cli/gateway.ts serve`);
    const dockerfile = readFileSync(path.join(root, 'Dockerfile'), 'utf8');
    expect(dockerfile).toContain(`ENV NODE_OPTIONS="${flags}"`);
    for (const kv of env) expect(dockerfile).toContain(`ENV ${kv}`);
    // The cluster and the benchmark spread the same constant into the processes they start.
    expect(readFileSync(path.join(root, 'server', 'cluster', 'cluster.ts'), 'utf8')).toContain('...GATEWAY_PROCESS_ENV,');
    expect(readFileSync(path.join(root, 'bench', 'targets.ts'), 'utf8')).toContain('...GATEWAY_PROCESS_ENV,');
  });
});

describe('the Temporal UI of the production shape', () => {
  const ui = compose.services['temporal-ui'];
  it('is read-only in compose, with every switch the UI server reads from its environment', () => {
    // temporalio/ui's config template: disableWriteActions ← TEMPORAL_DISABLE_WRITE_ACTIONS,
    // workflowTerminateDisabled ← TEMPORAL_WORKFLOW_TERMINATE_DISABLED, …
    for (const key of Object.keys(READ_ONLY_UI_CONFIG)) {
      const variable = key === 'disableWriteActions' ? 'TEMPORAL_DISABLE_WRITE_ACTIONS' : `TEMPORAL_${key.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase()}`;
      expect(ui.environment[variable], variable).toBe('true');
    }
  });

  it('is published on the loopback only in compose', () => {
    expect(ui.ports).toEqual(['127.0.0.1:8233:8080']);
  });

  it('is read-only in the cluster, behind the read-only proxy', () => {
    const cfg = uiConfig({ port: 1, publicPort: 2, temporalAddress: 't:1', namespace: 'default' });
    expect(cfg).toMatchObject(READ_ONLY_UI_CONFIG);
    expect(Object.keys(READ_ONLY_UI_CONFIG)).toEqual(expect.arrayContaining(['disableWriteActions', 'workflowSignalDisabled', 'workflowUpdateDisabled', 'workflowTerminateDisabled', 'workflowCancelDisabled']));
    expect(readFileSync(path.join(root, 'server', 'cluster', 'cluster.ts'), 'utf8')).toContain('startReadOnlyUi({ port: ports.ui');
  });
});

describe('the secrets of the compose file', () => {
  const text = readFileSync(path.join(root, 'docker-compose.yml'), 'utf8');
  it('requires GATEWAY_MASTER_KEY and POSTGRES_PASSWORD instead of defaulting them', () => {
    expect(text).not.toMatch(/\$\{(GATEWAY_MASTER_KEY|POSTGRES_PASSWORD):?-/);
    expect(text).not.toContain('change-me');
    const uses = [...text.matchAll(/\$\{(GATEWAY_MASTER_KEY|POSTGRES_PASSWORD)([^}]*)\}/g)];
    expect(uses.length).toBeGreaterThanOrEqual(5);
    for (const [whole, , rest] of uses) expect(rest, whole).toMatch(/^:\?./);
  });
});
