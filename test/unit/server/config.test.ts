import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../server/config.ts';

const KEY_HEX = 'ab'.repeat(32);

function errorFor(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error('expected a ConfigError');
}

describe('configuration', () => {
  it('has sensible embedded defaults', () => {
    const c = loadConfig({});
    expect(c.port).toBe(8080);
    expect(c.publicUrl).toBe('http://localhost:8080');
    expect(c.dataDir).toMatch(/\/\.data$/);
    expect(c.databaseUrl).toBeUndefined();
    expect(c.temporal).toMatchObject({ address: undefined, namespace: 'default', port: 7233, uiPort: 8233 });
    expect(c.logLevel).toBe('info');
    expect(c.production).toBe(false);
    expect(c.serviceDirs).toHaveLength(1);
    expect(c.serviceDirs[0]).toMatch(/\/services$/);
  });

  it.each([
    [{ PORT: 'abc' }, 'PORT', /PORT must be a number \(got "abc"\)/],
    [{ PORT: '70000' }, 'PORT', /between 1 and 65535/],
    [{ METRICS_PORT: '-1' }, 'METRICS_PORT', /0 \(off\) or between 1 and 65535 \(got "-1"\)/],
    [{ METRICS_PORT: '9464.5' }, 'METRICS_PORT', /whole number/],
    [{ METRICS_PORT: 'on' }, 'METRICS_PORT', /must be a number/],
    [{ METRICS_HOST: 'not a host!' }, 'METRICS_HOST', /hostname or an IP address/],
    [{ LOG_FORMAT: 'yaml' }, 'LOG_FORMAT', /json or pretty/],
    [{ PUBLIC_URL: 'not a url' }, 'PUBLIC_URL', /absolute http/],
    [{ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL', /postgres:\/\//],
    [{ TEMPORAL_ADDRESS: 'http://x:1' }, 'TEMPORAL_ADDRESS', /host:port/],
    [{ TEMPORAL_WORKFLOW_BUNDLE: '/nonexistent/workflow-bundle.js' }, 'TEMPORAL_WORKFLOW_BUNDLE', /path of a workflow bundle file/],
    [{ TEMPORAL_WORKFLOW_BUNDLE: '/tmp' }, 'TEMPORAL_WORKFLOW_BUNDLE', /path of a workflow bundle file/],
    [{ GATEWAY_MASTER_KEY: 'short' }, 'GATEWAY_MASTER_KEY', /32 bytes/],
    [{ GATEWAY_ADMIN_EMAIL: 'nope' }, 'GATEWAY_ADMIN_EMAIL', /email/],
    [{ GATEWAY_ADMIN_PASSWORD: 'short' }, 'GATEWAY_ADMIN_PASSWORD', /at least 12/],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL', /LOG_LEVEL/],
    [{ NODE_ENV: 'staging' }, 'NODE_ENV', /NODE_ENV/],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' }, 'OTEL_EXPORTER_OTLP_ENDPOINT', /absolute http/],
    [{ OTEL_PROPAGATE_UPSTREAM: 'yes' }, 'OTEL_PROPAGATE_UPSTREAM', /OTEL_PROPAGATE_UPSTREAM/],
    [{ ALLOWED_HOSTS: 'https://gw.example.com' }, 'ALLOWED_HOSTS', /ALLOWED_HOSTS is invalid: "https:\/\/gw.example.com" is not a host name/],
    [{ ALLOWED_ORIGINS: 'gw.example.com' }, 'ALLOWED_ORIGINS', /ALLOWED_ORIGINS is invalid: "gw.example.com" is not an origin/],
  ])('rejects %j naming the variable', (env, variable, message) => {
    const err = errorFor(env);
    expect(err.variable).toBe(variable);
    expect(err.message).toMatch(message);
    expect(err.message.split('\n')).toHaveLength(1);
  });

  it('serves metrics on loopback port 9464 by default; METRICS_PORT=0 turns them off', () => {
    expect(loadConfig({}).metrics).toEqual({ port: 9464, host: '127.0.0.1' });
    expect(loadConfig({ METRICS_PORT: '0' }).metrics).toBeNull();
    expect(loadConfig({ METRICS_PORT: '9100', METRICS_HOST: '[::1]' }).metrics).toEqual({ port: 9100, host: '::1' });
    expect(loadConfig({}).logFormat).toBeUndefined();
    expect(loadConfig({ LOG_FORMAT: 'json' }).logFormat).toBe('json');
  });

  it('runs a prebuilt workflow bundle when TEMPORAL_WORKFLOW_BUNDLE names one, else bundles at start', () => {
    expect(loadConfig({}).temporal.workflowBundlePath).toBeUndefined();
    expect(loadConfig({ TEMPORAL_WORKFLOW_BUNDLE: '' }).temporal.workflowBundlePath).toBeUndefined();
    const file = fileURLToPath(import.meta.url); // any existing file: its content is the worker's concern
    expect(loadConfig({ TEMPORAL_WORKFLOW_BUNDLE: path.relative(process.cwd(), file) }).temporal.workflowBundlePath).toBe(file);
  });

  it('traces only with OTEL_EXPORTER_OTLP_ENDPOINT (service agent-gateway unless OTEL_SERVICE_NAME); traceparent upstream only when also asked', () => {
    expect(loadConfig({}).tracing).toBeNull();
    expect(loadConfig({ OTEL_PROPAGATE_UPSTREAM: 'true' }).outbound.propagateTrace).toBe(false);
    const on = loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' });
    expect(on.tracing).toEqual({ endpoint: 'http://collector:4318', serviceName: 'agent-gateway' });
    expect(on.outbound.propagateTrace).toBe(false);
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SERVICE_NAME: 'gw-eu' }).tracing?.serviceName).toBe('gw-eu');
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_PROPAGATE_UPSTREAM: '1' }).outbound.propagateTrace).toBe(true);
  });

  it('uses named prepared statements unless DATABASE_PREPARED_STATEMENTS turns them off', () => {
    expect(loadConfig({}).databasePreparedStatements).toBe(true);
    expect(loadConfig({ DATABASE_PREPARED_STATEMENTS: 'false' }).databasePreparedStatements).toBe(false);
    expect(loadConfig({ DATABASE_PREPARED_STATEMENTS: '0' }).databasePreparedStatements).toBe(false);
    expect(errorFor({ DATABASE_PREPARED_STATEMENTS: 'sometimes' }).message).toMatch(/DATABASE_PREPARED_STATEMENTS/);
  });

  it('requires a master key in production', () => {
    expect(errorFor({ NODE_ENV: 'production' }).variable).toBe('GATEWAY_MASTER_KEY');
    expect(loadConfig({ NODE_ENV: 'production', GATEWAY_MASTER_KEY: KEY_HEX }).masterKey).toEqual(Buffer.from(KEY_HEX, 'hex'));
  });

  it('accepts a base64 master key and trims the public URL', () => {
    const b64 = Buffer.alloc(32, 7).toString('base64');
    const c = loadConfig({ GATEWAY_MASTER_KEY: b64, PUBLIC_URL: 'https://gw.example.com/' });
    expect(c.masterKey).toEqual(Buffer.alloc(32, 7));
    expect(c.publicUrl).toBe('https://gw.example.com');
  });

  it('splits SERVICES_DIR on colons after the built-in folder', () => {
    const c = loadConfig({ SERVICES_DIR: '/a:/b/c::' });
    expect(c.serviceDirs.slice(1)).toEqual(['/a', '/b/c']);
  });

  it('treats empty values as unset', () => {
    expect(loadConfig({ DATABASE_URL: '', PUBLIC_URL: '' }).databaseUrl).toBeUndefined();
  });

  describe('secrets from files (<NAME>_FILE)', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'config-files-'));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));
    const file = (name: string, text: string) => {
      const p = path.join(dir, name);
      writeFileSync(p, text, { mode: 0o600 });
      return p;
    };

    it('reads GATEWAY_MASTER_KEY_FILE, DATABASE_URL_FILE and GATEWAY_ADMIN_PASSWORD_FILE, without the final newline', () => {
      const c = loadConfig({
        NODE_ENV: 'production',
        GATEWAY_MASTER_KEY_FILE: file('key', `${KEY_HEX}\n`),
        DATABASE_URL_FILE: file('db', 'postgres://gateway:s3cret@db:5432/gateway\n'),
        GATEWAY_ADMIN_PASSWORD_FILE: file('pw', 'a password from a file\r\n'),
      });
      expect(c.masterKey).toEqual(Buffer.from(KEY_HEX, 'hex'));
      expect(c.databaseUrl).toBe('postgres://gateway:s3cret@db:5432/gateway');
      expect(c.admin.password).toBe('a password from a file');
    });

    it('refuses a variable set both ways, naming both', () => {
      const err = errorFor({ GATEWAY_MASTER_KEY: KEY_HEX, GATEWAY_MASTER_KEY_FILE: file('key2', KEY_HEX) });
      expect(err.variable).toBe('GATEWAY_MASTER_KEY_FILE');
      expect(err.message).toBe('invalid configuration: GATEWAY_MASTER_KEY_FILE and GATEWAY_MASTER_KEY are both set: set only one of them');
    });

    it('names an unreadable file', () => {
      const err = errorFor({ DATABASE_URL_FILE: path.join(dir, 'missing') });
      expect(err.variable).toBe('DATABASE_URL_FILE');
      expect(err.message).toContain('cannot be read (ENOENT');
    });

    it('never repeats a secret in an error, from a file or not', () => {
      const fromFile = errorFor({ DATABASE_URL_FILE: file('bad-db', 'mysql://root:hunter2@db/x') });
      expect(fromFile.message).toBe('invalid configuration: DATABASE_URL must be a postgres:// URL (read from DATABASE_URL_FILE)');
      const direct = errorFor({ DATABASE_URL: 'mysql://root:hunter2@db/x' });
      expect(direct.message).not.toContain('hunter2');
      expect(errorFor({ GATEWAY_MASTER_KEY: 'not-a-key-hunter2' }).message).not.toContain('hunter2');
    });
  });
});
