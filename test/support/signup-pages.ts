import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * How `/signup` looks: `original` (an Email field, then a Subscribe button), `renamed`
 * (the button now says "Sign me up" and comes before the field), `input` (the button is
 * an `<input type="submit">` that still reads Subscribe) and `gone` (no form at all).
 */
export type SignupVariant = 'original' | 'renamed' | 'input' | 'gone';

export interface SignupPages {
  readonly base: string;
  variant: SignupVariant;
  close(): Promise<void>;
}

const FORMS: Record<SignupVariant, string> = {
  original: `<form action="/welcome" method="get">
      <label>Email <input name="email" type="email"></label>
      <button type="submit">Subscribe</button>
    </form>`,
  renamed: `<form action="/welcome" method="get">
      <p>Join the list</p>
      <button type="submit">Sign me up</button>
      <label>Email <input name="email" type="email"></label>
    </form>`,
  input: `<form action="/welcome" method="get">
      <label>Email <input name="email" type="email"></label>
      <input type="submit" value="Subscribe">
    </form>`,
  gone: '<p>Sign-ups are closed.</p>',
};

/**
 * A newsletter sign-up for the replay cache's tests, on 127.0.0.1: `/signup` in the current
 * variant, and `/welcome?email=...`, which greets the address in `#message`.
 */
export async function startSignupPages(): Promise<SignupPages> {
  const server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://127.0.0.1');
    response.setHeader('content-type', 'text/html; charset=utf-8');
    if (url.pathname === '/signup') {
      response.end(`<!doctype html><title>Newsletter</title><h1>Newsletter</h1>${FORMS[pages.variant]}`);
    } else if (url.pathname === '/welcome') {
      const email = (url.searchParams.get('email') ?? '').replace(/[<>&"]/g, '');
      response.end(`<!doctype html><title>Welcome</title><p id="message">Welcome, ${email}</p>`);
    } else {
      response.statusCode = 404;
      response.end('<!doctype html><title>Not found</title>');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const pages: SignupPages = {
    base: `http://127.0.0.1:${port}`,
    variant: 'original',
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return pages;
}
