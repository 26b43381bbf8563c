import { z } from 'zod';
import { answerEscalation } from '../domain/console/answer-escalation';
import { escalationForOperator } from '../domain/console/operator-live';
import { PendingEscalationSchema, WaitingOrganizationSchema } from '../domain/console/operator-view-schemas';
import { pendingEscalations, waitingOrganizations } from '../domain/console/operator-views';
import { EscalationDetailSchema } from '../domain/escalations/escalation-detail';
import { AnswerValueSchema, ResolveEscalationResultSchema } from '../domain/escalations/resolve-escalation';
import { ANSWER_ACCESS_HEADER, resolveCaller } from '../http/resolve-caller';
import { consoleStepScreenshotUrls } from './console-artifact-urls';
import { OrgIdSchema } from './console-fields';
import { consoleProcedure, operatorProcedure } from './console-procedures';

// The escalation inbox, one escalation, and the answer (from the console or an answer link).

/** The escalations waiting for a person, of every organization or of one, oldest first (at most 100). */
export const listPendingEscalationsProcedure = operatorProcedure
  // The inbox's filter: one organization's escalations, or (absent) every organization's.
  .input(z.object({ org_id: OrgIdSchema.optional() }).optional())
  .output(z.array(PendingEscalationSchema))
  .query(({ ctx, input }) => pendingEscalations(ctx.services.db, { orgId: input?.org_id }));

/** The organizations with escalations waiting, with how many: the inbox's filter. */
export const listWaitingOrganizationsProcedure = operatorProcedure.output(z.array(WaitingOrganizationSchema)).query(({ ctx }) => waitingOrganizations(ctx.services.db));

/** One escalation of any organization with its task's prompt, status and steps, and its device (404 escalation_not_found). */
export const getEscalationProcedure = operatorProcedure
  .input(z.object({ id: z.string().max(200) }))
  .output(EscalationDetailSchema)
  .query(({ ctx, input }) => escalationForOperator(ctx.services.db, consoleStepScreenshotUrls, input.id));

/**
 * Answers an escalation from the console or from its answer page, the caller deciding.
 * With the access token an opened answer link was traded for (`x-svc-answer-access`), the
 * link answers its own escalation (`resolved_by: "answer_url"`; answer-links.ts's answerLinkProcedure
 * refusals), and the link stops working; otherwise the signed-in operator answers any
 * organization's (`resolved_by: "operator:<name>"`, 404 escalation_not_found). An answer
 * the escalation's `answer_schema` does not take is 400 with `param: "answer"`.
 */
export const answerEscalationProcedure = consoleProcedure
  .use(async ({ ctx, getRawInput, next }) => {
    const { escalation_id: subject } = (await getRawInput()) as { escalation_id?: unknown };
    const answerer =
      ctx.req.headers[ANSWER_ACCESS_HEADER] === undefined
        ? { operator: (await resolveCaller(ctx.services, ctx.req, ctx.res, { kind: 'operator', from: 'console_api' })).operator }
        : { link: (await resolveCaller(ctx.services, ctx.req, ctx.res, { kind: 'answer_link' }, { subject: typeof subject === 'string' ? subject : '' })).escalation };
    return next({ ctx: { answerer } });
  })
  // An empty text answer is none.
  .input(z.object({ escalation_id: z.string().max(200), answer: AnswerValueSchema, cleared: z.boolean() }))
  .output(ResolveEscalationResultSchema)
  .mutation(({ ctx, input: { escalation_id, ...answer } }) => answerEscalation(ctx.services, ctx.answerer, ctx.requestId, { id: escalation_id, ...answer }));
