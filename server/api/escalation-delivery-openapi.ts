// The escalation delivery, as an OpenAPI 3.1 webhook: what the service POSTs to an
// organization's escalation URL (docs/api.md, "Escalations" and "Answer links").
export const escalationDeliveryWebhook = {
  post: {
    operationId: 'escalationDelivery',
    summary: 'An escalation, POSTed to the organization’s escalation URL',
    description:
      'Sent when a task parks at needs_human, signed like a webhook delivery (`X-Service-Signature: t=<unix>,v1=<hex>`, HMAC-SHA256 of `<t>.<raw body>` with the organization’s escalation signing secret). ' +
      'Answer with `POST resolve_url` and `Authorization: Bearer <token>`, or hand `answer_url` to a person: a one-time page of the service where they read the question, ' +
      'watch the device live, take it over and answer, without a console key or an API key. Its secret is only in the URL’s fragment (never sent to a server); the first visit ' +
      'opens it and every later visit is refused, and it stops working once the escalation is answered, expires or is canceled. Each attempt carries a fresh token and a fresh answer_url.',
    requestBody: {
      required: true,
      content: {
        'application/json': {
          schema: {
            type: 'object',
            required: ['escalation', 'resolve_url', 'token', 'answer_url'],
            properties: {
              escalation: { description: 'The Escalation as GET /v1/escalations/{id} returns it.', type: 'object' },
              resolve_url: { type: 'string', format: 'uri', description: '<OPERATOR_PUBLIC_URL>/v1/escalations/<id>/resolve' },
              token: { type: 'string', pattern: '^esctok_[A-Za-z0-9_-]{43}$', description: 'The resolve bearer of this attempt.' },
              answer_url: {
                type: 'string',
                format: 'uri',
                description: '<OPERATOR_PUBLIC_URL>/answer/<escalation id>#anslnk_<43 base64url>: the one-time answer page; the secret is the fragment.',
              },
            },
          },
        },
      },
    },
    responses: { '2XX': { description: 'Received; any other answer is retried on the webhook schedule while the escalation is pending.' } },
  },
} as const;
