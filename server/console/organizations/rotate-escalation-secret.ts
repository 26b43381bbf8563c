import { RotatedEscalationSecretSchema } from '../../domain/orgs/operator-admin-results';
import { rotateEscalationSigningSecret } from '../../domain/orgs/operator-admin';
import { operatorProcedure } from '../console-procedures';
import { OrganizationInputSchema } from '../console-fields';

/** A new escalation signing secret for the organization, in this answer only (409 no_escalation_url without an escalation URL). */
export const rotateEscalationSecretProcedure = operatorProcedure
  .input(OrganizationInputSchema)
  .output(RotatedEscalationSecretSchema)
  .mutation(({ ctx, input }) => rotateEscalationSigningSecret(ctx.services.db, input.org_id, ctx.auditOrigin));
