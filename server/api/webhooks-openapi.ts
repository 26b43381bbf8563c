// The webhook deliveries, as OpenAPI 3.1 `webhooks`: one entry per deliverable event type
// of the catalogue, plus the escalation delivery (docs/webhooks.md).
import { eventCatalogue } from '../domain/events/catalogue';

const RESOURCE_OF_FAMILY: Record<string, string> = { device: 'Device', task: 'Task', session: 'Session', escalation: 'Escalation' };

export const webhookComponents = {
  EventEnvelope: {
    type: 'object',
    description: 'The signed body of every webhook delivery; `data.object` is the resource as the API returns it.',
    required: ['id', 'object', 'type', 'created_at', 'api_version', 'org_id', 'space_id', 'data'],
    properties: {
      id: { type: 'string', pattern: '^evt_', description: 'Deduplicate on this id.' },
      object: { const: 'event' },
      type: { type: 'string' },
      created_at: { type: 'string', format: 'date-time' },
      api_version: { type: 'string', const: '0.1.0' },
      org_id: { type: 'string' },
      space_id: { type: ['string', 'null'] },
      data: { type: 'object', required: ['object'], properties: { object: { type: 'object' } } },
    },
  },
  EscalationDelivery: {
    type: 'object',
    description:
      "POSTed to the organization's escalation URL; answer with `POST resolve_url` and `Authorization: Bearer <token>`, or hand `answer_url` to a person: " +
      'a one-time page of the service where they read the question, watch the device live, take it over and answer, without a console key or an API key. ' +
      'Its secret is only in the URL’s fragment (never sent to a server); the first visit opens it and every later visit is refused, and it stops working ' +
      'once the escalation is answered, expires or is canceled. Each attempt carries a fresh token and a fresh answer_url.',
    required: ['escalation', 'resolve_url', 'token', 'answer_url'],
    properties: {
      escalation: { $ref: '#/components/schemas/Escalation' },
      resolve_url: { type: 'string', format: 'uri', description: '<OPERATOR_PUBLIC_URL>/v1/escalations/<id>/resolve' },
      token: { type: 'string', pattern: '^esctok_[A-Za-z0-9_-]{43}$', description: 'The per-escalation bearer for the resolve callback (this attempt).' },
      answer_url: {
        type: 'string',
        format: 'uri',
        description: '<OPERATOR_PUBLIC_URL>/answer/<escalation id>#anslnk_<43 base64url>: the one-time answer page; the secret is the fragment.',
      },
    },
  },
};

const SIGNATURE_HEADERS = [
  {
    name: 'X-Service-Signature',
    in: 'header',
    required: true,
    description: '`t=<unix-seconds>,v1=<hex>`: lowercase hex HMAC-SHA256 of `<t>.<raw body>` keyed with the secret (`whsec_...`, prefix included). Verify with the SDK `webhooks.verify()`.',
    schema: { type: 'string', pattern: '^t=\\d+(,v1=[0-9a-f]{64})+$' },
  },
  { name: 'X-Service-Delivery', in: 'header', required: true, description: 'A UUID of this delivery attempt; not signed, for logs only.', schema: { type: 'string', format: 'uuid' } },
];

const RECEIVER_RESPONSES = {
  '2XX': { description: 'Any 2xx acknowledges the delivery. Anything else (3xx included) or no answer in 10 s is retried with backoff for up to 24 h.' },
};

function eventWebhook(type: string, description: string) {
  const family = type.split('.')[1]!;
  const resource = RESOURCE_OF_FAMILY[family];
  const schema = {
    allOf: [
      { $ref: '#/components/schemas/EventEnvelope' },
      {
        type: 'object',
        properties: {
          type: { const: type },
          data: { type: 'object', properties: { object: resource === undefined ? { type: 'object' } : { $ref: `#/components/schemas/${resource}` } } },
        },
      },
    ],
  };
  return {
    post: {
      operationId: `webhook_${type.replaceAll('.', '_')}`,
      summary: type,
      description,
      tags: ['webhooks'],
      security: [],
      parameters: [...SIGNATURE_HEADERS, { name: 'X-Service-Event', in: 'header', required: true, schema: { type: 'string', const: type } }],
      requestBody: { required: true, content: { 'application/json': { schema } } },
      responses: RECEIVER_RESPONSES,
    },
  };
}

export function webhooksOpenApi(): Record<string, unknown> {
  const webhooks: Record<string, unknown> = {};
  for (const entry of eventCatalogue) if (entry.deliverable) webhooks[entry.type] = eventWebhook(entry.type, entry.description);
  webhooks['escalation.delivery'] = {
    post: {
      operationId: 'webhook_escalation_delivery',
      summary: "Escalation delivery (to the organization's escalation URL)",
      description: "Signed like a webhook, with the organization's escalation signing secret.",
      tags: ['escalations'],
      security: [],
      parameters: SIGNATURE_HEADERS,
      requestBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/EscalationDelivery' } } } },
      responses: RECEIVER_RESPONSES,
    },
  };
  return webhooks;
}
