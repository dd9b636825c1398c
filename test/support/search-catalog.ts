// A generated catalog of search rows, one list per service instance, and queries over it: many
// shapes of names (dotted, snake_case, camelCase, digits), prose with placeholders, and words whose
// lower-casing is not one character for one (final sigma, dotted İ, ß, ligatures, the Kelvin sign,
// letters outside the BMP, combining marks). Deterministic for a seed.
import type { SearchRow } from '../../core/registry/search.ts';
import type { Risk } from '../../core/registry/types.ts';

const VERBS = ['list', 'get', 'create', 'update', 'delete', 'search', 'send', 'archive', 'post', 'download', 'refund', 'merge'];
const NOUNS = ['message', 'channel', 'issue', 'repo', 'file', 'user', 'invoice', 'ticket', 'event', 'contact', 'order', 'page'];
const UNICODE = ['Straße', 'Größe', 'naïve', 'café', 'ΟΔΟΣ', 'ΣΟΦΙΑ', 'İstanbul', 'DİL', 'e\u0301lan', '請求書', '作成', '𠀋', '𝒜lpha', 'ǅemal', 'ﬁle', '\u212Aelvin', 'Ⅻ', '١٢٣', 'x²', 'İİ'];
const SERVICES = ['café-ops', 'Δelta', 'straße', 'İzmir-crm', '東京-api', 'svc-𝒜', 'ΟΔΟΣ', 'shared', 'shared'];
const RISKS: Risk[] = ['read', 'write', 'delete'];
const AUTH = ['connected', 'needs_connection', 'needs_secret', 'none_required'];

/** A small seeded generator (mulberry32): the same catalog and queries on every run. */
export function randomSource(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const capital = (w: string) => (w[0] ?? '').toUpperCase() + w.slice(1);

export function generatedCatalog(opts: { services: number; actionsPerService: number; seed: number }): SearchRow[][] {
  const random = randomSource(opts.seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
  const names = [...SERVICES, ...Array.from({ length: Math.max(0, opts.services - SERVICES.length) }, (_, i) => (i % 4 === 0 ? `${pick(NOUNS)}-${i}` : `svc${i}`))];
  return names.map((service, s) => {
    const template = service.split('-')[0] || service;
    const rows: SearchRow[] = [];
    for (let i = 0; i < opts.actionsPerService; i++) {
      const verb = pick(VERBS);
      const noun = pick(NOUNS);
      const odd = pick(UNICODE);
      // `shared` appears twice with the same keys, and some keys repeat within a service: ties between rows.
      const n = service === 'shared' || i % 17 === 5 ? i % 7 : i;
      const action = [
        `${noun}s.${verb}${capital(noun)}${n}`,
        `${verb}_${noun}_${n}`,
        `${verb}${capital(noun)}`,
        `${noun}/${verb}`,
        `${verb}${capital(odd)}${n}`,
        `${odd}.${verb}`,
      ][(i + s) % 6]!;
      const summary = `${capital(verb)} a ${noun} in {workspace}[ for {user}]${random() < 0.3 ? ` (${odd})` : ''}`;
      const description = random() < 0.66 ? `Calls the ${service} API to ${verb} ${noun}s; returns the ${random() < 0.5 ? odd : noun} record.` : undefined;
      rows.push({
        service,
        template,
        action,
        summary,
        ...(description ? { description } : {}),
        risk: pick(RISKS),
        authStatus: pick(AUTH),
      });
    }
    return rows;
  });
}

/** Queries that stress the index: edge cases, then words, prefixes, inner pieces and phrases drawn from the catalog. */
export function generatedQueries(catalog: readonly SearchRow[][], count: number, seed: number): string[] {
  const random = randomSource(seed);
  const rows = catalog.flat();
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
  const vocabulary = [
    ...new Set(
      rows.flatMap((r) => [r.service, r.template, r.action, r.summary, r.description ?? ''].flatMap((t) => t.split(/[^\p{L}\p{N}]+/u))).filter((w) => w !== ''),
    ),
  ];
  const randomCase = (w: string) => [...w].map((c) => (random() < 0.3 ? c.toUpperCase() : c)).join('');
  const piece = (w: string) => {
    const start = Math.floor(random() * w.length);
    return w.slice(start, start + 1 + Math.floor(random() * (w.length - start)));
  };
  const fixed = [
    '', '   ', '.', '—', 'zzqx', 'σ', 'ς', 'ΟΔΟΣ', 'οδος', 'οδοσ', 'i', 'i\u0307', 'İ', 'ss', 'ß', 'STRASSE', 'k', '\u212A', 'ⅻ', 'é', 'e',
    '𝒜', '𠀋', '請求', '1', '12', 'x2', '²', 'a b c d e', 'createinvoice', 'svc1 svc1', '🚀', 'fi', 'ﬁ', 'shared', 'shared.get', 'issue', 'inv',
  ];
  const queries = [...fixed];
  while (queries.length < count) {
    const row = pick(rows);
    const word = pick(vocabulary);
    switch (Math.floor(random() * 8)) {
      case 0:
        queries.push(randomCase(word));
        break;
      case 1:
        queries.push(word.slice(0, 1 + Math.floor(random() * word.length))); // a prefix
        break;
      case 2:
        queries.push(piece(word));
        break;
      case 3:
        queries.push(`${pick(vocabulary)} ${pick(vocabulary)}`);
        break;
      case 4:
        queries.push(`${piece(pick(vocabulary))}, ${pick(vocabulary)}-${piece(pick(vocabulary))}`);
        break;
      case 5:
        queries.push(random() < 0.5 ? row.action : `${randomCase(row.service)}.${row.action}`);
        break;
      case 6:
        queries.push(` ${piece(row.action)} `);
        break;
      default:
        queries.push(`${word}zq`); // near a word, matching none
    }
  }
  return queries;
}
