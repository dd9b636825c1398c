// The few server-rendered pages of the authorization flow (sign-in, consent, errors). No scripts,
// no external resources; every interpolated value goes through `escapeHtml`.

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"'`]/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** Security headers for every page: no framing (clickjacking), nothing loaded from anywhere. */
export const PAGE_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'",
  'X-Frame-Options': 'DENY',
  // `same-origin`, not `no-referrer`: under no-referrer a browser sends `Origin: null` on the form
  // POST, which hides a same-site submission; same-origin keeps referrers off other sites.
  'Referrer-Policy': 'same-origin',
  'Cache-Control': 'no-store',
  'X-Content-Type-Options': 'nosniff',
};

const STYLE = `
  body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;background:#f4f5f7;color:#1f2328;margin:0}
  main{max-width:26rem;margin:4rem auto;background:#fff;border-radius:8px;box-shadow:0 1px 3px rgba(0,0,0,.15);padding:2rem}
  h1{font-size:1.3rem;margin:0 0 1rem}
  p{line-height:1.45}
  label{display:block;margin:.8rem 0 .3rem;font-weight:600}
  input[type=email],input[type=password],input[type=text]{width:100%;box-sizing:border-box;padding:.55rem;border:1px solid #c9ccd1;border-radius:4px;font-size:1rem}
  fieldset{border:1px solid #e1e4e8;border-radius:4px;margin:1rem 0;padding:.5rem 1rem}
  fieldset label{font-weight:400;display:flex;gap:.5rem;align-items:center}
  .actions{display:flex;gap:.6rem;margin-top:1.2rem}
  button{padding:.55rem 1.1rem;border-radius:4px;border:1px solid #c9ccd1;background:#fff;font-size:1rem;cursor:pointer}
  button.primary{background:#1f6feb;border-color:#1f6feb;color:#fff}
  .error{background:#ffebe9;border:1px solid #ff818266;padding:.6rem;border-radius:4px}
  .muted{color:#59636e;font-size:.9rem}
  code{background:#f4f5f7;padding:0 .2rem;border-radius:3px}`;

export function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · Agent Action Gateway</title>
<style>${STYLE}</style>
</head>
<body><main>
<h1>${escapeHtml(title)}</h1>
${body}
</main></body>
</html>`;
}

export function errorPage(title: string, message: string): string {
  return page(title, `<p class="error">${escapeHtml(message)}</p>
<p class="muted">Start again from the application that sent you here.</p>`);
}

export function signInPage(o: { action: string; csrf: string; clientName: string; email?: string; error?: string }): string {
  return page(
    'Sign in',
    `<p>Sign in to the gateway to connect <strong>${escapeHtml(o.clientName)}</strong>.</p>
${o.error ? `<p class="error" role="alert">${escapeHtml(o.error)}</p>` : ''}
<form method="post" action="${escapeHtml(o.action)}">
<input type="hidden" name="csrf" value="${escapeHtml(o.csrf)}">
<label for="email">Email</label>
<input id="email" name="email" type="email" autocomplete="username" required value="${escapeHtml(o.email ?? '')}">
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required>
<div class="actions"><button class="primary" type="submit">Sign in</button></div>
</form>`,
  );
}

export interface ConsentAgent {
  id: string;
  name: string;
}

export function consentPage(o: {
  action: string;
  csrf: string;
  clientName: string;
  clientId: string;
  redirectUri: string | undefined;
  userEmail: string;
  agents: readonly ConsentAgent[];
  defaultName: string;
  error?: string;
}): string {
  const existing = o.agents
    .map(
      (a) =>
        `<label><input type="radio" name="agent" value="${escapeHtml(a.id)}"> Use the existing agent <strong>${escapeHtml(a.name)}</strong></label>`,
    )
    .join('\n');
  return page(
    'Connect an application',
    `<p><strong>${escapeHtml(o.clientName)}</strong> wants to act through the gateway as one of your agents.
Everything it does is checked against that agent's permissions and may ask for your approval.</p>
<p class="muted">Signed in as ${escapeHtml(o.userEmail)}. Application id <code>${escapeHtml(o.clientId)}</code>${
      o.redirectUri ? `, returning to <code>${escapeHtml(o.redirectUri)}</code>` : ''
    }.</p>
${o.error ? `<p class="error" role="alert">${escapeHtml(o.error)}</p>` : ''}
<form method="post" action="${escapeHtml(o.action)}">
<input type="hidden" name="csrf" value="${escapeHtml(o.csrf)}">
<fieldset>
<legend>Agent</legend>
<label><input type="radio" name="agent" value="new" checked> Create a new agent named</label>
<input type="text" name="name" maxlength="200" value="${escapeHtml(o.defaultName)}" aria-label="New agent name">
${existing}
</fieldset>
<div class="actions">
<button class="primary" type="submit" name="decision" value="allow">Allow</button>
<button type="submit" name="decision" value="deny">Deny</button>
</div>
</form>`,
  );
}
