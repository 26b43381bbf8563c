import type { TaskArtifactUrls } from '../domain/console/organization-activity';
import type { StepScreenshotUrls } from '../domain/tasks/task-steps';

/** Mount point of the console's byte routes (console-artifacts.ts) on the service's port. */
export const CONSOLE_ARTIFACTS_PREFIX = '/console/artifacts/';

// Paths, not absolute URLs: the console's pages are served from the same origin, and a
// path stays right behind a proxy whatever OPERATOR_PUBLIC_URL says.

/** A step's screenshot as the console's pages load it (the sign-in cookie, not an API key). */
export const consoleStepScreenshotUrls: StepScreenshotUrls = (taskPublicId, seq) => `${CONSOLE_ARTIFACTS_PREFIX}tasks/${encodeURIComponent(taskPublicId)}/steps/${seq}/screenshot`;

/** A task's recording as the console's pages load it. */
export function consoleTaskRecordingUrl(taskPublicId: string): string {
  return `${CONSOLE_ARTIFACTS_PREFIX}tasks/${encodeURIComponent(taskPublicId)}/recording`;
}

export const consoleTaskArtifactUrls: TaskArtifactUrls = { stepScreenshot: consoleStepScreenshotUrls, recording: consoleTaskRecordingUrl };
