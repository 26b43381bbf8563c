import { router } from '../trpc/init';
import { listAuditEventsProcedure } from './audit/list-audit-events';
import { createCdpSessionProcedure } from './cdp/create-cdp-session';
import { deleteCdpSessionProcedure } from './cdp/delete-cdp-session';
import { createDeviceProcedure } from './devices/create-device';
import { deleteDeviceProcedure } from './devices/delete-device';
import { getDeviceProcedure } from './devices/get-device';
import { listDevicesProcedure } from './devices/list-devices';
import { sleepDeviceProcedure } from './devices/sleep-device';
import { wakeDeviceProcedure } from './devices/wake-device';
import { cancelTaskProcedure } from './tasks/cancel-task';
import { getTaskProcedure } from './tasks/get-task';
import { listDeviceTasksProcedure } from './tasks/list-device-tasks';
import { listTaskFilesProcedure } from './tasks/list-task-files';
import { submitTaskProcedure } from './tasks/submit-task';
import { getEscalationProcedure } from './escalations/get-escalation';
import { listEscalationsProcedure } from './escalations/list-escalations';
import { resolveEscalationProcedure } from './escalations/resolve-escalation';
import { createSessionProcedure } from './sessions/create-session';
import { getSessionProcedure } from './sessions/get-session';
import { releaseProcedure } from './sessions/release';
import { revokeSessionProcedure } from './sessions/revoke-session';
import { takeOverProcedure } from './sessions/take-over';
import { getUsageProcedure } from './usage/get-usage';
import { deleteTaskCacheProcedure } from './task-caches/delete-task-cache';
import { getTaskCacheProcedure } from './task-caches/get-task-cache';
import { listTaskCachesProcedure } from './task-caches/list-task-caches';
import { createWebhookEndpointProcedure } from './webhooks/create-webhook-endpoint';
import { deleteWebhookEndpointProcedure } from './webhooks/delete-webhook-endpoint';
import { getWebhookEndpointProcedure } from './webhooks/get-webhook-endpoint';
import { listEventTypesProcedure } from './webhooks/list-event-types';
import { listWebhookEndpointsProcedure } from './webhooks/list-webhook-endpoints';
import { updateWebhookEndpointProcedure } from './webhooks/update-webhook-endpoint';
import { getWhoami } from './whoami/get-whoami';
import { createCredentialProcedure } from './credentials/create-credential';
import { deleteCredentialProcedure } from './credentials/delete-credential';
import { getCredentialProcedure } from './credentials/get-credential';
import { listCredentialsProcedure } from './credentials/list-credentials';
import { pushCredentialCodeProcedure } from './credentials/push-credential-code';
import { updateCredentialProcedure } from './credentials/update-credential';
import { getCdpSessionRecording } from './cdp/get-cdp-session-recording';
import { getCdpVersion } from './cdp/get-cdp-version';
import type { RawEntryPoint } from './entry-point';
import { getSessionRecording } from './sessions/get-session-recording';
import { getStepScreenshot } from './tasks/get-step-screenshot';
import { getTaskFile } from './tasks/get-task-file';
import { getTaskRecording } from './tasks/get-task-recording';
import { streamTaskEvents } from './tasks/stream-task-events';

// Every /v1 entry point. The JSON operations: one procedure each, whose meta declares its
// method, path and caller (trpc/procedures.ts); the routes whose answer is bytes or a
// stream: one declaration each (entry-point.ts), in the same terms. Dispatch, 404/405,
// metrics labels, /v1/openapi.json and the MCP tools all read these two lists.
export const appRouter = router({
  whoami: getWhoami,
  listAuditEvents: listAuditEventsProcedure,
  createDevice: createDeviceProcedure,
  listDevices: listDevicesProcedure,
  getDevice: getDeviceProcedure,
  sleepDevice: sleepDeviceProcedure,
  wakeDevice: wakeDeviceProcedure,
  deleteDevice: deleteDeviceProcedure,
  submitTask: submitTaskProcedure,
  listDeviceTasks: listDeviceTasksProcedure,
  getTask: getTaskProcedure,
  cancelTask: cancelTaskProcedure,
  listTaskFiles: listTaskFilesProcedure,
  listTaskCaches: listTaskCachesProcedure,
  getTaskCache: getTaskCacheProcedure,
  deleteTaskCache: deleteTaskCacheProcedure,
  getUsage: getUsageProcedure,
  listEventTypes: listEventTypesProcedure,
  createWebhookEndpoint: createWebhookEndpointProcedure,
  listWebhookEndpoints: listWebhookEndpointsProcedure,
  getWebhookEndpoint: getWebhookEndpointProcedure,
  updateWebhookEndpoint: updateWebhookEndpointProcedure,
  deleteWebhookEndpoint: deleteWebhookEndpointProcedure,
  createSession: createSessionProcedure,
  getSession: getSessionProcedure,
  revokeSession: revokeSessionProcedure,
  takeOver: takeOverProcedure,
  release: releaseProcedure,
  createCdpSession: createCdpSessionProcedure,
  deleteCdpSession: deleteCdpSessionProcedure,
  listEscalations: listEscalationsProcedure,
  getEscalation: getEscalationProcedure,
  resolveEscalation: resolveEscalationProcedure,
  createCredential: createCredentialProcedure,
  listCredentials: listCredentialsProcedure,
  getCredential: getCredentialProcedure,
  updateCredential: updateCredentialProcedure,
  deleteCredential: deleteCredentialProcedure,
  pushCredentialCode: pushCredentialCodeProcedure,
});

export type AppRouter = typeof appRouter;

/** The /v1 routes whose answer is not one JSON body, in the document's order. */
export const rawEntryPoints: readonly RawEntryPoint[] = [
  streamTaskEvents(),
  getTaskRecording,
  getSessionRecording,
  getCdpSessionRecording,
  getStepScreenshot,
  getTaskFile,
  getCdpVersion,
];
