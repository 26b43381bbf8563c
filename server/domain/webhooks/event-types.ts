import { z } from 'zod';
import { eventCatalogue } from '../events/catalogue';

export const EventTypeSchema = z.object({ type: z.string(), description: z.string(), deliverable: z.boolean() });
export const EventTypeListSchema = z.object({ data: z.array(EventTypeSchema) });
export type EventTypeList = z.infer<typeof EventTypeListSchema>;

/** GET /v1/event_types: the published catalogue, audit-only types marked `deliverable: false`. */
export function listEventTypes(): EventTypeList {
  return { data: eventCatalogue.map(({ type, description, deliverable }) => ({ type, description, deliverable })) };
}
