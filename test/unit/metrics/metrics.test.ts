// The metrics module's own rules: label sets stay bounded whatever the counted values are.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { LabelCap } from '../../../server/metrics/label-cap.ts';
import { createMetrics } from '../../../server/metrics/metrics.ts';

describe('metric labels', () => {
  it('keeps the first pairs and folds every later new pair into other/other', () => {
    const cap = new LabelCap(2);
    expect(cap.pair('a', 'x')).toEqual(['a', 'x']);
    expect(cap.pair('b', 'y')).toEqual(['b', 'y']);
    expect(cap.pair('c', 'z')).toEqual(['other', 'other']);
    // A pair already kept stays itself.
    expect(cap.pair('a', 'x')).toEqual(['a', 'x']);
  });

  it('folds decisions and error codes outside their fixed sets', async () => {
    const m = createMetrics();
    m.approvalDecided('deny', 'slack', 12);
    m.approvalDecided('some free text from a client', 'api', 1);
    m.outboundError('upstream_timeout');
    m.outboundError('Error: connect ECONNREFUSED 127.0.0.1:1234');
    const text = await m.registry.metrics();
    expect(text).toContain('gateway_approvals_decided_total{decision="deny",channel="slack"} 1');
    expect(text).toContain('gateway_approvals_decided_total{decision="other",channel="api"} 1');
    expect(text).toContain('gateway_outbound_errors_total{kind="upstream_timeout"} 1');
    expect(text).toContain('gateway_outbound_errors_total{kind="other"} 1');
    expect(text).not.toContain('ECONNREFUSED');
  });

  it('keeps two gateways’ counts apart (one registry each, no global)', async () => {
    const [a, b] = [createMetrics(), createMetrics()];
    a.approvalRaised();
    expect(await a.registry.getSingleMetricAsString('gateway_approvals_raised_total')).toMatch(/ 1$/m);
    expect(await b.registry.getSingleMetricAsString('gateway_approvals_raised_total')).toMatch(/ 0$/m);
  });
});

describe('the metrics reference', () => {
  it('documents every gateway_ metric in docs/operators.md', async () => {
    const doc = readFileSync(path.resolve(import.meta.dirname, '..', '..', '..', 'docs', 'operators.md'), 'utf8');
    const names = (await createMetrics().registry.getMetricsAsJSON()).map((m) => m.name).filter((n) => !n.startsWith('gateway_process_'));
    expect(names.length).toBeGreaterThan(10);
    expect(names.filter((n) => !doc.includes(`\`${n}\``))).toEqual([]);
  });
});
