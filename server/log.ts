import pino from 'pino';

// API keys look like svc_operator_<env>_<key_id>_<secret> and console keys like
// svc_console_<key_id>_<secret>; logs keep the key id (useful for support) and mask the
// secret. Webhook secrets, session tokens (also as a subprotocol), escalation bearers and
// console sign-in tokens are masked whole. Applied to every string that reaches the logger.
const KEY_PATTERN = /\b(svc_(?:operator_(?:live|test)|console)_[a-z2-7]{12})_[A-Za-z0-9-]{43}\b/g;
const OTHER_SECRET_PATTERNS = [/\bwhsec_[A-Za-z0-9_-]+/g, /\b(svc\.token\.)[A-Za-z0-9_-]+/g, /\b(sestok_|esctok_|constok_)[A-Za-z0-9_-]+/g];

export function maskSecrets(text: string): string {
  let masked = text.replace(KEY_PATTERN, '$1_****');
  for (const pattern of OTHER_SECRET_PATTERNS) {
    masked = masked.replace(pattern, (match, prefix: unknown) => `${typeof prefix === 'string' ? prefix : match.slice(0, 6)}****`);
  }
  return masked;
}

/** JSON lines to stdout, or to `destination` (tests read what was logged). */
export function createLogger(level: string, destination?: pino.DestinationStream) {
  return pino({
    level,
    base: undefined,
    redact: {
      paths: ['req.headers.authorization', 'req.headers["sec-websocket-protocol"]', 'headers.authorization', '*.secret', '*.token', '*.session_token'],
      censor: '****',
    },
    hooks: {
      logMethod(args, method) {
        const maskedArgs = args.map((arg) => (typeof arg === 'string' ? maskSecrets(arg) : arg)) as Parameters<typeof method>;
        method.apply(this, maskedArgs);
      },
    },
  }, destination);
}

export type Logger = ReturnType<typeof createLogger>;
