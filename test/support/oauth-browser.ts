// A headless "browser" for the gateway's sign-in and consent pages: a path-aware cookie jar,
// manual redirects that stop when they leave the gateway, and form submission with the CSRF field.
export interface Page {
  url: URL;
  status: number;
  html: string;
}
export type Step = { page: Page; redirect?: undefined } | { redirect: URL; page?: undefined };

interface StoredCookie {
  name: string;
  value: string;
  path: string;
}

export class Browser {
  private cookies: StoredCookie[] = [];
  private readonly origin: string;
  /** Origins that are this gateway (replicas behind one load balancer), where redirects are followed. */
  private readonly ours: Set<string>;
  constructor(origin: string, ours: Iterable<string> = []) {
    this.origin = origin;
    this.ours = new Set([origin, ...ours]);
  }

  /** The same browser (same cookie jar) talking to another replica of the deployment. */
  at(origin: string): Browser {
    const b = new Browser(origin, this.ours);
    b.cookies = this.cookies;
    return b;
  }

  cookie(name: string): string | undefined {
    return this.cookies.find((c) => c.name === name)?.value;
  }

  private store(res: Response, url: URL): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attrs] = line.split(';').map((s) => s.trim());
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq);
      const value = pair!.slice(eq + 1);
      let path = url.pathname.replace(/\/[^/]*$/, '') || '/';
      let expired = value === '';
      for (const attr of attrs) {
        const [k, v = ''] = attr.split('=');
        const key = k!.toLowerCase();
        if (key === 'path') path = v;
        if (key === 'max-age' && Number(v) <= 0) expired = true;
        if (key === 'expires' && Date.parse(v) < Date.now()) expired = true;
      }
      this.cookies = this.cookies.filter((c) => !(c.name === name && c.path === path));
      if (!expired) this.cookies.push({ name, value, path });
    }
  }

  async fetch(url: string | URL, init: RequestInit = {}): Promise<Response> {
    const u = new URL(url, this.origin);
    const sent = this.cookies.filter((c) => u.pathname === c.path || u.pathname.startsWith(c.path.endsWith('/') ? c.path : `${c.path}/`) || c.path === '/');
    const headers = new Headers(init.headers);
    if (sent.length) headers.set('cookie', sent.map((c) => `${c.name}=${c.value}`).join('; '));
    const res = await fetch(u, { ...init, headers, redirect: 'manual' });
    this.store(res, u);
    return res;
  }

  /** Follows the gateway's redirects; stops at a page, or at a redirect leaving the gateway. */
  async follow(start: string | URL, init?: RequestInit): Promise<Step> {
    let res = await this.fetch(start, init);
    let url = new URL(start, this.origin);
    for (let hops = 0; hops < 12; hops++) {
      if (res.status !== 302 && res.status !== 303) return { page: { url, status: res.status, html: await res.text() } };
      const location = new URL(res.headers.get('location')!, url);
      if (!this.ours.has(location.origin)) return { redirect: location };
      url = location;
      res = await this.fetch(location);
    }
    throw new Error('too many redirects');
  }

  async submit(page: Page, fields: Record<string, string>): Promise<Step> {
    const action = /<form method="post" action="([^"]+)"/.exec(page.html)?.[1];
    if (!action) throw new Error(`no form on ${page.url.pathname}: ${page.html.slice(0, 300)}`);
    return this.follow(action.replaceAll('&#47;', '/'), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrf: csrfOf(page), ...fields }).toString(),
    });
  }
}

/** The CSRF field of a gateway page's form. */
export function csrfOf(page: Page): string {
  return /name="csrf" value="([^"]+)"/.exec(page.html)?.[1] ?? '';
}

export function pageOf(step: Step): Page {
  if (!step.page) throw new Error(`expected a page, got a redirect to ${step.redirect.href}`);
  return step.page;
}

export function redirectOf(step: Step): URL {
  if (!step.redirect) throw new Error(`expected a redirect, got ${step.page.url.pathname} (${step.page.status}): ${step.page.html.slice(0, 400)}`);
  return step.redirect;
}

/** Signs in and consents (a new agent named `agentName`) for an authorization URL; returns the redirect back. */
export async function signInAndConsent(browser: Browser, authorizationUrl: string, who: { email: string; password: string }, agentName: string): Promise<URL> {
  const signIn = pageOf(await browser.follow(authorizationUrl));
  const consent = pageOf(await browser.submit(signIn, { email: who.email, password: who.password }));
  return redirectOf(await browser.submit(consent, { decision: 'allow', agent: 'new', name: agentName }));
}
