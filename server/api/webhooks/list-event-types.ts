import { z } from 'zod';
import { EventTypeListSchema, listEventTypes } from '../../domain/webhooks/event-types';
import { authedProcedure } from '../../trpc/procedures';

export const listEventTypesProcedure = authedProcedure
  .meta({ openapi: { method: 'GET', path: '/event_types', tags: ['webhooks'], summary: 'List the event type catalogue' } })
  .input(z.strictObject({}))
  .output(EventTypeListSchema)
  .query(() => listEventTypes());
