import { router } from '../trpc/init';
import { listAuditEventsProcedure } from './audit';
import { createCdpSessionProcedure, deleteCdpSessionProcedure, getCdpSessionRecording, getCdpVersion } from './cdp';
import { createCredentialProcedure, deleteCredentialProcedure, getCredentialProcedure, listCredentialsProcedure, pushCredentialCodeProcedure, updateCredentialProcedure } from './credentials';
import { createDeviceProcedure, deleteDeviceProcedure, getDeviceProcedure, listDevicesProcedure, sleepDeviceProcedure, wakeDeviceProcedure } from './devices';
import type { RawEntryPoint } from './entry-point';
import { getEscalationProcedure, listEscalationsProcedure, resolveEscalationProcedure } from './escalations';
import { createSessionProcedure, getSessionProcedure, getSessionRecording, releaseProcedure, revokeSessionProcedure, takeOverProcedure } from './sessions';
import { deleteTaskCacheProcedure, getTaskCacheProcedure, listTaskCachesProcedure } from './task-caches';
import { cancelTaskProcedure, getStepScreenshot, getTaskFile, getTaskProcedure, getTaskRecording, listDeviceTasksProcedure, listTaskFilesProcedure, streamTaskEvents, submitTaskProcedure } from './tasks';
import { getUsageProcedure } from './usage';
import { createWebhookEndpointProcedure, deleteWebhookEndpointProcedure, getWebhookEndpointProcedure, listEventTypesProcedure, listWebhookEndpointsProcedure, updateWebhookEndpointProcedure } from './webhooks';
import { getWhoami } from './whoami';

// Every /v1 entry point, declared in one file per resource (devices.ts, tasks.ts, ...). The
// JSON operations: one procedure each, whose meta declares its method, path and caller
// (trpc/procedures.ts); the routes whose answer is bytes or a stream: one declaration each
// (entry-point.ts), in the same terms. Dispatch, 404/405,
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
