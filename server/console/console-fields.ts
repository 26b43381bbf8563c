import { z } from 'zod';

// Fields several console inputs share.

/** The name of an organization or a Space, as an operator types it. */
export const DisplayNameSchema = z.string().trim().min(1).max(200);

export const OrgIdSchema = z.uuid();
