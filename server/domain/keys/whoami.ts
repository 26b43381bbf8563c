import { z } from 'zod';
import type { Principal } from './principal';

export const WhoamiSchema = z.object({
  org_id: z.string(),
  product: z.literal('operator'),
  scopes: z.array(z.string()),
  service_account_id: z.string(),
  space_ids: z.array(z.string()),
});
export type Whoami = z.infer<typeof WhoamiSchema>;

export function whoami(principal: Principal): Whoami {
  return {
    org_id: principal.orgId,
    product: 'operator',
    scopes: [...principal.scopes].sort(),
    // A key is the service account in this preview: the key id names it.
    service_account_id: principal.keyId,
    space_ids: [...principal.spaceIds],
  };
}
