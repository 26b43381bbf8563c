import { z } from 'zod';

// Fields several console inputs share.

/** The name of an organization or a Space, as an operator types it. */
export const DisplayNameSchema = z.string().trim().min(1).max(200);

export const OrgIdSchema = z.uuid();

/** An organization's escalation URL as the console's forms send it; empty is none. */
export const EscalationUrlSchema = z.string().trim().max(2048).nullable().transform((url) => (url === '' ? null : url));

/** The organization a call is about. */
export const OrganizationInputSchema = z.object({ org_id: OrgIdSchema });
