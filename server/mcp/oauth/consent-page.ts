import type { AuthorizationRequest } from '../../domain/mcp-oauth/authorization-request';
import { OAUTH_PATHS } from '../../domain/mcp-oauth/oauth-urls';

// The page of /oauth/authorize where a person approves an MCP client with an API key:
// server-rendered HTML with no script (its Content-Security-Policy allows none), in the
// console's look (indigo, system font, rounded cards). The key goes in the POST body,
// never in a URL; the form carries the authorization request and the CSRF token.

const STYLE = `
*{box-sizing:border-box}
body{margin:0;font-family:system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;background:#f8f9fa;color:#212529;line-height:1.55}
main{max-width:34rem;margin:3rem auto;padding:0 1rem}
.card{background:#fff;border:1px solid #dee2e6;border-radius:.5rem;padding:1.5rem;box-shadow:0 1px 3px rgba(0,0,0,.05)}
h1{font-size:1.375rem;font-weight:650;margin:0 0 1rem}
.brand{font-size:.875rem;font-weight:600;color:#3b5bdb;margin:0 0 .5rem;letter-spacing:.02em}
dl{margin:0 0 1rem}dt{font-size:.8125rem;color:#495057;font-weight:600;margin-top:.75rem}dd{margin:.125rem 0 0}
code{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.8125rem;background:#f1f3f5;border-radius:.25rem;padding:.0625rem .25rem;word-break:break-all}
ul{margin:.25rem 0 0;padding-left:1.25rem}
.note{font-size:.875rem;color:#495057}
label{display:block;font-weight:600;font-size:.875rem;margin:1rem 0 .25rem}
input[type=password]{width:100%;font:inherit;font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;padding:.5rem .75rem;border:1px solid #ced4da;border-radius:.5rem}
.actions{display:flex;gap:.75rem;margin-top:1.25rem}
button{font:inherit;font-weight:600;padding:.5rem 1.125rem;border-radius:.5rem;border:1px solid #3b5bdb;cursor:pointer}
button.approve{background:#3b5bdb;color:#fff}button.deny{background:#fff;color:#2c3e9e}
:focus-visible{outline:2px solid #3b5bdb;outline-offset:2px}
.alert{border:1px solid #ffa8a8;background:#fff5f5;color:#a61e1e;border-radius:.5rem;padding:.75rem 1rem;margin-bottom:1rem}
`;

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="referrer" content="no-referrer"><title>${escapeHtml(title)}</title><style>${STYLE}</style></head><body><main>${body}</main></body></html>`;
}

/** The consent form; `error` is shown above it after a refused attempt (a wrong key). */
export function consentPage(request: AuthorizationRequest, csrfToken: string, error: string | null): string {
  const redirect = new URL(request.redirectUri);
  const where = redirect.protocol === 'http:' || redirect.protocol === 'https:' ? redirect.host : redirect.protocol;
  const scopes = request.scopes === null ? '<li>every scope your key holds</li>' : request.scopes.map((scope) => `<li><code>${escapeHtml(scope)}</code></li>`).join('');
  const hidden = {
    response_type: 'code',
    client_id: request.client.clientId,
    redirect_uri: request.redirectUri,
    state: request.state,
    scope: request.scopes?.join(' ') ?? null,
    code_challenge: request.codeChallenge,
    code_challenge_method: 'S256',
    resource: request.resource,
    csrf_token: csrfToken,
  };
  const fields = Object.entries(hidden)
    .filter((entry): entry is [string, string] => entry[1] !== null)
    .map(([name, value]) => `<input type="hidden" name="${name}" value="${escapeHtml(value)}">`)
    .join('');
  return page(
    'Authorize an MCP client',
    `<div class="card">
<p class="brand">Browser Device Operator</p>
<h1>Allow <q>${escapeHtml(request.client.clientName)}</q> to use the operator?</h1>
${error === null ? '' : `<div class="alert" role="alert">${escapeHtml(error)}</div>`}
<dl>
<dt>Client</dt><dd>${escapeHtml(request.client.clientName)} <span class="note">(the name the client gave itself)</span></dd>
<dt>Sends you back to</dt><dd><strong>${escapeHtml(where)}</strong><br><code>${escapeHtml(request.redirectUri)}</code></dd>
<dt>Asks for</dt><dd><ul>${scopes}</ul></dd>
</dl>
<p class="note">Paste an API key of your organization. The key stays with the service: the client gets a token that acts with this key's scopes (those it asked for) and Spaces, through the MCP server only. It ends when the client revokes it or when the key is revoked.</p>
<form method="post" action="${OAUTH_PATHS.authorize}">
${fields}
<label for="api_key">API key</label>
<input id="api_key" name="api_key" type="password" autocomplete="off" spellcheck="false" required autofocus placeholder="svc_operator_live_...">
<div class="actions"><button class="approve" type="submit" name="decision" value="approve">Approve</button><button class="deny" type="submit" name="decision" value="deny" formnovalidate>Deny</button></div>
</form>
</div>`,
  );
}

/** A request the page cannot act on (unknown client, unregistered redirect URI): shown, never redirected. */
export function refusalPage(message: string): string {
  return page(
    'Cannot authorize this client',
    `<div class="card"><p class="brand">Browser Device Operator</p><h1>This authorization request cannot be used</h1><div class="alert" role="alert">${escapeHtml(message)}</div><p class="note">Go back to the application that sent you here and connect again.</p></div>`,
  );
}
