// The Helm chart (deploy/helm/agent-gateway) rendered with `helm template`, default and production
// values: the ports and probes the gateway serves, its environment, the Secret referenced (never a
// secret value inline), the hooks, the security context. CI builds helm (.ci/run exports HELM);
// without one on this machine the suite is skipped, saying so.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';

const ROOT = path.resolve(import.meta.dirname, '..', '..', '..');
const CHART = path.join(ROOT, 'deploy', 'helm', 'agent-gateway');
const PRODUCTION = path.join(ROOT, 'deploy', 'helm', 'values-production.yaml');

function findHelm(): string | null {
  const candidates = [process.env.HELM, path.join(process.env.XDG_CACHE_HOME ?? path.join(os.homedir(), '.cache'), 'agent-gateway', 'bin', 'helm')];
  for (const c of candidates) if (c && existsSync(c)) return c;
  const onPath = spawnSync('helm', ['version', '--short'], { encoding: 'utf8' });
  return onPath.status === 0 ? 'helm' : null;
}

const helm = findHelm();
if (!helm) console.warn('helm-chart.test.ts skipped: no helm here (set HELM, or build it as .ci/run does: GOBIN=~/.cache/agent-gateway/bin go install helm.sh/helm/v3/cmd/helm@v3.19.0)');

/** A rendered Kubernetes object, read loosely. */
type K8s = any;

function render(...args: string[]): K8s[] {
  const out = execFileSync(helm!, ['template', 'gw', CHART, ...args], { encoding: 'utf8' });
  return parseAllDocuments(out)
    .map((d) => d.toJS() as K8s)
    .filter(Boolean);
}

const of = (objs: K8s[], kind: string) => objs.filter((o) => o.kind === kind);
const named = (objs: K8s[], kind: string, suffix: string) => of(objs, kind).find((o) => o.metadata.name.endsWith(suffix));
const envOf = (container: K8s): Record<string, K8s> => Object.fromEntries(container.env.map((e: K8s) => [e.name, e]));

const SECRET_VARIABLES = ['GATEWAY_MASTER_KEY', 'DATABASE_URL', 'GATEWAY_ADMIN_PASSWORD'];

describe.skipIf(!helm)('Helm chart', () => {
  describe.each([
    ['default values', [] as string[]],
    ['production values', ['-f', PRODUCTION]],
  ])('%s', (_label, args) => {
    // Rendered while the tests are collected (a skipped suite is collected too: nothing to render).
    const objs = helm ? render(...args) : [];
    const api = named(objs, 'Deployment', '-api');
    const worker = named(objs, 'Deployment', '-worker');

    it('runs the API and the worker from one image, each in its role, on its own port with probes', () => {
      for (const [d, role, port] of [
        [api, 'api', 8080],
        [worker, 'worker', 8090],
      ] as const) {
        const c = d.spec.template.spec.containers[0];
        expect(c.args).toEqual(['serve', '--role', role]);
        expect(envOf(c).PORT.value).toBe(String(port));
        expect(c.ports).toEqual(expect.arrayContaining([{ name: 'http', containerPort: port }, { name: 'metrics', containerPort: 9464 }]));
        expect(c.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'http' });
        expect(c.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'http' });
        expect(c.startupProbe.httpGet).toEqual({ path: '/healthz', port: 'http' });
        // Longer than the worker's drain: 10 s grace for activities + 15 s before a held task is given up.
        expect(d.spec.template.spec.terminationGracePeriodSeconds).toBeGreaterThan(25);
      }
      const service = of(objs, 'Service')[0];
      expect(service.spec.selector['app.kubernetes.io/component']).toBe('api');
      expect(service.spec.ports[0].targetPort).toBe('http');
    });

    it('reads every secret from the existing Secret as a file; no secret value is in any manifest', () => {
      expect(of(objs, 'Secret')).toEqual([]);
      const pods = [api, worker, named(objs, 'Job', '-migrate')].map((o) => o.spec.template.spec);
      for (const pod of pods) {
        const c = pod.containers[0];
        const env = envOf(c);
        for (const name of SECRET_VARIABLES) expect(env[name], name).toBeUndefined();
        expect(env.GATEWAY_MASTER_KEY_FILE.value).toBe('/var/run/secrets/agent-gateway/master-key');
        expect(env.DATABASE_URL_FILE.value).toBe('/var/run/secrets/agent-gateway/database-url');
        const secretVolume = pod.volumes.find((v: K8s) => v.secret);
        expect(secretVolume.secret.secretName).toBe('agent-gateway');
        expect(secretVolume.secret.items.map((i: K8s) => i.path)).toEqual(expect.arrayContaining(['master-key', 'database-url']));
        expect(c.volumeMounts).toEqual(expect.arrayContaining([expect.objectContaining({ name: secretVolume.name, mountPath: '/var/run/secrets/agent-gateway', readOnly: true })]));
      }
      const text = JSON.stringify(objs);
      expect(text).not.toMatch(/postgres(ql)?:\/\//);
    });

    it('runs non-root on a read-only root filesystem, with a writable /tmp', () => {
      for (const d of [api, worker]) {
        const pod = d.spec.template.spec;
        expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 10001 });
        expect(pod.containers[0].securityContext).toMatchObject({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } });
        expect(pod.containers[0].volumeMounts).toEqual(expect.arrayContaining([expect.objectContaining({ mountPath: '/tmp' })]));
      }
    });

    it('migrates and registers the search attributes in pre-install/pre-upgrade Jobs; the pods only check them', () => {
      const migrate = named(objs, 'Job', '-migrate');
      expect(migrate.metadata.annotations['helm.sh/hook']).toBe('pre-install,pre-upgrade');
      expect(migrate.spec.template.spec.containers[0].args).toEqual(['migrate']);
      const attributes = named(objs, 'Job', '-search-attributes');
      expect(attributes.metadata.annotations['helm.sh/hook']).toBe('pre-install,pre-upgrade');
      expect(attributes.spec.template.spec.containers[0].args[0]).toMatch(/search-attribute create[\s\S]*--type Keyword/);
      for (const name of ['GatewayOrg', 'GatewayAgent', 'GatewayService', 'GatewayAction', 'GatewayStatus']) expect(attributes.spec.template.spec.containers[0].args[0]).toContain(name);
      expect(envOf(api.spec.template.spec.containers[0]).TEMPORAL_REGISTER_SEARCH_ATTRIBUTES.value).toBe('false');
    });

    it('serves metrics on all interfaces of the pod, JSON logs, and has disruption budgets and network policies', () => {
      const env = envOf(api.spec.template.spec.containers[0]);
      expect(env.METRICS_PORT.value).toBe('9464');
      expect(env.METRICS_HOST.value).toBe('0.0.0.0');
      expect(env.LOG_FORMAT.value).toBe('json');
      // Traces are off unless an endpoint is set.
      expect(env.OTEL_EXPORTER_OTLP_ENDPOINT).toBeUndefined();
      expect(of(objs, 'PodDisruptionBudget')).toHaveLength(2);
      const policies = of(objs, 'NetworkPolicy');
      expect(policies.map((p) => p.metadata.name)).toEqual(expect.arrayContaining(['gw-agent-gateway-api', 'gw-agent-gateway-worker']));
    });
  });

  it('production values: HPAs replace fixed replicas, an Ingress with TLS, Temporal admitting only the gateway', () => {
    const objs = render('-f', PRODUCTION);
    expect(of(objs, 'HorizontalPodAutoscaler').map((h) => h.spec.scaleTargetRef.name).sort()).toEqual(['gw-agent-gateway-api', 'gw-agent-gateway-worker']);
    expect(named(objs, 'Deployment', '-api').spec.replicas).toBeUndefined();
    const ingress = of(objs, 'Ingress')[0];
    expect(ingress.spec.tls[0].secretName).toBe('gateway-example-test-tls');
    expect(ingress.spec.rules[0].http.paths[0].backend.service).toEqual({ name: 'gw-agent-gateway', port: { name: 'http' } });
    const temporal = named(objs, 'NetworkPolicy', '-temporal');
    expect(temporal.metadata.namespace).toBe('temporal');
    expect(temporal.spec.ingress).toEqual([
      {
        from: [{ podSelector: { matchLabels: { 'app.kubernetes.io/name': 'agent-gateway', 'app.kubernetes.io/instance': 'gw' } }, namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'agent-gateway' } } }],
        ports: [{ port: 7233 }],
      },
    ]);
  });

  it('tracing values set the OpenTelemetry variables in every gateway container', () => {
    const objs = render('--set', 'tracing.otlpEndpoint=http://otel-collector.observability:4318', '--set', 'tracing.propagateUpstream=true');
    for (const role of ['-api', '-worker']) {
      const env = envOf(named(objs, 'Deployment', role).spec.template.spec.containers[0]);
      expect(env.OTEL_EXPORTER_OTLP_ENDPOINT.value).toBe('http://otel-collector.observability:4318');
      expect(env.OTEL_SERVICE_NAME.value).toBe('agent-gateway');
      expect(env.OTEL_PROPAGATE_UPSTREAM.value).toBe('true');
    }
  });

  it('default values: fixed replicas, no Ingress, no HPA', () => {
    const objs = render();
    expect(named(objs, 'Deployment', '-api').spec.replicas).toBe(2);
    expect(of(objs, 'Ingress')).toEqual([]);
    expect(of(objs, 'HorizontalPodAutoscaler')).toEqual([]);
  });

  it('refuses a secret given as a plain value', () => {
    for (const name of SECRET_VARIABLES) {
      const r = spawnSync(helm!, ['template', 'gw', CHART, '--set', `env.${name}=inline-secret`], { encoding: 'utf8' });
      expect(r.status).not.toBe(0);
      expect(r.stderr).toContain(`env.${name}: secrets come from existingSecret`);
    }
  });
});
