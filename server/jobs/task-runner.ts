import path from 'node:path';
import { createModelPlanner } from '../agent/model-planner';
import { keepDownload } from '../artifacts/keep-download';
import { taskBytesKept } from '../domain/files/task-files';
import { createOfflinePlanner } from '../agent/offline-planner';
import type { AgentOutcome } from '../agent/outcome';
import type { Planner } from '../agent/planner';
import { runAgent } from '../agent/run-agent';
import type { NewStep } from '../agent/step';
import type { PageDriver } from '../browser';
import { systemActor } from '../domain/keys/principal';
import { claimTasks, failLostRunningTasks, handOverTask, renewLease, type RunningBrowsers } from '../domain/tasks/task-lease';
import type { TaskRow } from '../domain/tasks/task-resource';
import { appendStep, appendStepInTransaction, forgetStepScreenshot, stepScreenshotKey, taskHistory } from '../domain/tasks/task-steps';
import { cachingPlanner } from '../agent/replay/caching-planner';
import { cacheForRun, markHealed, storeTaskCache } from '../domain/task-caches/task-cache-runs';
import { StepScreenshots } from '../artifacts/step-screenshots';
import { addModelCall } from '../domain/tasks/task-usage';
import { endTask, lockTask, parkTask, type TaskEnd } from '../domain/tasks/task-transitions';
import { openEscalation } from '../domain/escalations/open-escalation';
import { takeCredentials } from '../domain/escalations/credential-seal';
import { taskVault } from '../domain/credentials/task-vault';
import { compileOutputSchema } from '../agent/output-schema';
import { failParkedTasksWithoutDevice } from '../domain/tasks/parked-task-sweep';
import type { Services } from '../services/services';
import { PeriodicTimer } from '../domain/periodic-timer';
import { QueueWorker } from './queue-worker';
import type { Worker } from './worker';
import { gatedPageDriver } from './gated-page-driver';
import { ActionError } from '../browser';

/** What the runner needs from the composition root. */
export type TaskRunnerDeps = Pick<Services, 'db' | 'log' | 'config' | 'instanceId' | 'hostId' | 'browserPool' | 'taskChannel' | 'recorder' | 'store' | 'writes' | 'databaseAvailability' | 'secrets'>;

// Fallback poll for work: notifications start tasks at once; this only covers a
// notification lost while the listener reconnected.
const POLL_INTERVAL_MS = 1_000;

// For a `download` to start and finish (the task's deadline permitting).
const DOWNLOAD_TIMEOUT_MS = 60_000;

// A hand-over lets the action in progress finish and be recorded, so the next service
// neither repeats nor loses it; past this the run stops anyway (the action is then
// carried out again by the next service, as after a crash).
const HANDOVER_WAIT_MS = 5_000;

// The run acts only while its lease surely holds by this process's own clock: the lease
// runs from before the renewal was sent, less a margin for the clocks' drift of at most
// this, and never more than a quarter of the lease (a short lease must leave time to act).
const LEASE_SAFETY_MS = 1_000;

// How often a run whose lease could not be confirmed asks again before its next action.
const LEASE_RETRY_MS = 500;

/**
 * Why a run stopped before the agent finished:
 * - `released`: the task is no longer this run's (canceled, parked by a takeover, or its
 *   lease taken over); whoever changed it has written its state, so the run writes nothing.
 * - `device_lost`: the device's browser died or the device left `active`.
 * - `handover`: this process is stopping and its browsers outlive it (a deploy): the task
 *   stays `running` for the next service of this host, which continues on the same page.
 * - `shutdown`: this process is stopping and closing its browsers (Ctrl-C, retiring the host).
 * - `database_unavailable`: the database stayed unreachable longer than
 *   OPERATOR_DATABASE_GRACE_SECS; the task fails with service_unavailable once it is back.
 */
type StopReason = 'released' | 'device_lost' | 'handover' | 'shutdown' | 'database_unavailable';

interface Run {
  task: TaskRow;
  stop(reason: StopReason): void;
  /** Lets the action in progress finish, then stops before the next one (HANDOVER_WAIT_MS at most). */
  handOver(): void;
}

/** A task the runner leased, and when the claim was sent: its lease runs from no earlier. */
interface ClaimedTask {
  task: TaskRow;
  claimedAt: number;
}

/** The task worker; stop() ends its runs as the browsers close, handOver() leaves them to the next service. */
export interface TaskRunner extends Worker {
  handOver(): Promise<void>;
}

/**
 * The task worker of one server process: leases the running tasks of devices hosted
 * here (up to config.agent.workers at once), runs the agent on each, records its steps,
 * heartbeats the lease, and ends every task in one transaction with its slot released.
 * It also sweeps expired leases of any host: a task whose driver died is failed with
 * device_lost and its slot freed.
 */
export function taskRunner(deps: TaskRunnerDeps): TaskRunner {
  const { config, log, databaseAvailability } = deps;
  const runs = new Map<string, Run>();
  const heartbeatMs = Math.max(250, Math.floor(config.agent.leaseMs / 3));

  const planner: Planner =
    config.agent.model === null ? createOfflinePlanner() : createModelPlanner(config.agent.model);

  // Woken by submissions, resumes and ended runs; wake-ups during a claim make one more.
  const queue = new QueueWorker<ClaimedTask>({
    name: 'task-runner',
    concurrency: config.agent.workers,
    claim: async (limit) => {
      const claimedAt = Date.now();
      const claimed = await claimTasks(deps.db, deps.hostId, deps.instanceId, config.agent.leaseMs, limit, runningBrowsers(), [...runs.keys()]);
      return claimed.map((task) => ({ task, claimedAt }));
    },
    work: ({ task, claimedAt }) => runTask(task, claimedAt),
    pollMs: POLL_INTERVAL_MS,
    wakeOn: (wake) =>
      deps.taskChannel.subscribeAll((change) => {
        if (change !== 'step') wake();
      }),
    onError: databaseAvailability.reportingOthers((error) => log.error({ err: error }, 'task claim failed')),
    onItemError: ({ task }, error) => log.error({ err: error, taskId: task.id }, 'task run failed'),
  });
  const leaseSweep = new PeriodicTimer(heartbeatMs, sweep, databaseAvailability.reportingOthers((error) => log.error({ err: error }, 'task lease sweep failed')));

  /** Runs a claimed task until it ends or is stopped; `runs` holds it meanwhile. */
  async function runTask(task: TaskRow, claimedAt: number): Promise<void> {
    const controller = new AbortController();
    let reason: StopReason | null = null;
    let handingOver = false;
    const stop = (why: StopReason) => {
      if (reason !== null) return;
      reason = why;
      controller.abort();
    };
    const run: Run = {
      task,
      stop,
      handOver() {
        handingOver = true;
        setTimeout(() => stop('handover'), HANDOVER_WAIT_MS).unref();
      },
    };
    runs.set(task.id, run);
    try {
      await drive(task, { signal: controller.signal, stop, stopReason: () => reason, handingOver: () => handingOver, claimedAt });
    } finally {
      runs.delete(task.id);
    }
  }

  interface RunControl {
    signal: AbortSignal;
    stop: (why: StopReason) => void;
    stopReason: () => StopReason | null;
    handingOver: () => boolean;
    /** When the claim that leased the task was sent: its lease runs from no earlier. */
    claimedAt: number;
  }

  async function drive(task: TaskRow, control: RunControl): Promise<void> {
    const { stop, stopReason } = control;
    // Until when, by this process's clock, the lease surely holds.
    const safeLeaseMs = config.agent.leaseMs - Math.min(LEASE_SAFETY_MS, config.agent.leaseMs / 4);
    let leaseHeldUntil = control.claimedAt + safeLeaseMs;
    const checkLease = async () => {
      const sentAt = Date.now();
      const lease = await renewLease(deps.db, task, deps.instanceId, config.agent.leaseMs);
      if (!lease.held) stop('released');
      else if (!lease.deviceHeld) stop('device_lost');
      else leaseHeldUntil = Math.max(leaseHeldUntil, sentAt + safeLeaseMs);
    };
    // A missed heartbeat is survivable: the lease outlives three of them. While the
    // database cannot be reached the run keeps its page and waits (its writes retry), up
    // to the grace; past it the run stops, within one heartbeat.
    const heartbeatFailed = (error: unknown) => {
      if (!databaseAvailability.absorb(error)) log.warn({ err: error, taskId: task.id }, 'task heartbeat failed');
      else if (databaseAvailability.unreachableForMs() >= config.db.graceMs) stop('database_unavailable');
    };
    /**
     * Before every page action: a run being handed over stops here, and a run acts only
     * while its lease surely holds, so two services never drive one page at once (a
     * service cut off from the database stops acting before its lease can be taken over).
     */
    const beforeAction = async () => {
      for (;;) {
        if (control.handingOver()) stop('handover');
        if (stopReason() !== null) throw new ActionError('browser_gone', 'the run stopped');
        if (Date.now() < leaseHeldUntil) return;
        await checkLease().catch(async (error: unknown) => {
          heartbeatFailed(error);
          await new Promise((resolve) => setTimeout(resolve, LEASE_RETRY_MS));
        });
      }
    };
    // Someone else changed the task (cancel, park): check whether it is still ours.
    const unsubscribeTask = deps.taskChannel.subscribe(task.id, (change) => {
      if (change !== 'step') checkLease().catch(heartbeatFailed);
    });
    const heartbeat = new PeriodicTimer(heartbeatMs, checkLease, heartbeatFailed);
    // The end is written once the database answers, however long that takes (a stop gives up).
    const end = (outcome: AgentOutcome) => databaseAvailability.retryWhileUnreachable(() => finish(task, outcome));
    heartbeat.start();
    // Started alongside the run's first reads (the first step's picture needs its frames),
    // and stopped after the task's end is written: the video's encoding and the store's
    // write (a second or so on a quiet machine) are not the client's wait. A
    // client told the task ended and asking meanwhile is answered once they are stored
    // (stored-recording.ts, and the step pictures' route).
    const started = deps.recorder.start({ kind: 'task', id: task.id, orgId: task.orgId }, task.deviceId);
    // Each step's picture comes from the recording's frames, stored off the step's path;
    // the recording's stop lets the last ones arrive, and the end waits for them.
    const screenshots = new StepScreenshots({ writes: deps.writes, log, recording: started, forget: (key) => forgetStepScreenshot(deps.db, task.id, key) });
    const recording = {
      stop: async () => {
        // The run's end is its last step's next action: that step's effect is shown (its
        // frame in the recording) before the video ends, as before any other action.
        await screenshots.shownAll();
        await (await started).stop();
        await screenshots.settled();
      },
    };
    try {
      const outcome = await runOnDevice(task, control.signal, stop, beforeAction, screenshots);
      const reason = stopReason();
      if (reason === 'released') return;
      if (reason === 'handover') {
        await databaseAvailability.retryWhileUnreachable(() => handOverTask(deps.db, task.id, deps.instanceId));
        return;
      }
      await end(reason === null ? outcome : { status: 'failed', error: reason === 'database_unavailable' ? 'service_unavailable' : 'device_lost' });
    } catch (error) {
      // A read the run could not make once it was stopped past the grace is that outage, not a bug.
      if (stopReason() === 'database_unavailable' && databaseAvailability.absorb(error)) {
        await end({ status: 'failed', error: 'service_unavailable' });
        return;
      }
      log.error({ err: error, taskId: task.id }, 'agent run threw; task failed with internal_error');
      await end({ status: 'failed', error: 'internal_error' });
    } finally {
      unsubscribeTask();
      // Storing the video writes its row: a run stopped by an outage stores it once the database is back.
      await databaseAvailability.whenReachable();
      await recording.stop();
      await heartbeat.stop();
    }
  }

  async function runOnDevice(task: TaskRow, signal: AbortSignal, stop: (why: StopReason) => void, beforeAction: () => Promise<void>, screenshots: StepScreenshots): Promise<AgentOutcome> {
    const browser = deps.browserPool.get(task.deviceId);
    if (browser === undefined) return { status: 'failed', error: 'device_lost' };
    // A task continues only on the page it built: after a restart that relaunched the
    // browser (its machine rebooted, the browser was reaped), that page is gone. The
    // claim that first leased the task recorded the browser it found.
    if (task.browserIncarnation !== browser.incarnation) {
      log.warn({ taskId: task.id, deviceId: task.deviceId }, 'the browser that held the task\'s page is gone; task failed with device_lost');
      return { status: 'failed', error: 'device_lost' };
    }
    let driver: PageDriver;
    try {
      // An action starts once the run may act and the pictures of the steps before it end.
      driver = gatedPageDriver(await browser.page(), beforeAction, (effect) => screenshots.actionStarting(effect));
    } catch (error) {
      // The browser is there but cannot give a page: it is dying.
      log.warn({ err: error, taskId: task.id }, 'device browser gave no page');
      return { status: 'failed', error: 'device_lost' };
    }
    // Reads and writes of the run wait out an unreachable database; the heartbeat stops
    // the run (aborting `signal`) once the outage outlasts the grace.
    const untilWritten = <T>(write: () => Promise<T>) => databaseAvailability.retryWhileUnreachable(write, signal);
    // The run's reads at once. The first step's picture needs the screencast running
    // before it ends. A credentials answer leaves the database here and lives only in this
    // run's memory. A task with a cache key replays its entry, or records one (agent/replay/).
    const [history, , taken, cache] = await Promise.all([
      untilWritten(() => taskHistory(deps.db, task.id)),
      screenshots.recordingStarted(),
      untilWritten(() => takeCredentials(deps.db, task.id)),
      task.cacheKey === null ? null : untilWritten(() => cacheForRun(deps.db, task)),
    ]);
    let seq = history.lastSeq;
    const credentials = new Map(Object.entries(taken));
    // Checked at submit; compiled again here, once per run.
    const compiled = task.outputSchema === null ? null : compileOutputSchema(task.outputSchema);
    const taskPlanner = cache === null ? planner : cachingPlanner(planner, driver, task.allowedDomains, { ...cache, onHeal: () => untilWritten(() => markHealed(deps.db, task.id)) });
    return runAgent({
      task: {
        id: task.id,
        prompt: task.prompt,
        maxSteps: task.maxSteps,
        allowedDomains: task.allowedDomains,
        output: compiled === null || !compiled.ok ? null : { schema: task.outputSchema as object, validate: compiled.validate },
        confirmBefore: task.confirmBefore,
      },
      credentials,
      vault: taskVault({ db: deps.db, secrets: deps.secrets }, { id: task.id, orgId: task.orgId, spaceId: task.spaceId }),
      driver,
      planner: taskPlanner,
      history: history.steps,
      signal,
      deadline: task.deadlineAt.getTime(),
      recordStep: async (step: NewStep) => {
        seq += 1;
        // The page after the step: what painted after this moment (step-screenshots.ts),
        // once the page painted the step's effect; the step is written meanwhile.
        const doneAt = driver.painted().then(() => Date.now());
        const screenshotKey = stepScreenshotKey(task.id, seq);
        // The agent's next action waits until this step is recorded, not for its picture.
        const recorded = await untilWritten(() => appendStep(deps.db, task.id, task.orgId, seq, step, deps.instanceId, screenshotKey));
        if (recorded) screenshots.keep(screenshotKey, await doneAt, () => driver.screenshot(), driver.navigatedAt());
        else stop('released');
      },
      recordModelCall: (usage) => untilWritten(() => addModelCall(deps.db, task.id, usage)),
      downloads: {
        limits: async () => ({ maxBytes: await downloadBytesLeft(task.id), timeoutMs: DOWNLOAD_TIMEOUT_MS }),
        // Asked again once the file is there: another download of the task may have been kept meanwhile.
        keep: async (file) => keepDownload({ db: deps.db, store: deps.store, log, workDir: path.join(config.dataDir, 'downloads') }, task, file, await downloadBytesLeft(task.id)),
      },
    });
  }

  /** The browsers this host's pool runs, by device: a claim takes only their tasks. */
  function runningBrowsers(): RunningBrowsers {
    const running = new Map<string, string>();
    for (const deviceId of deps.browserPool.runningDeviceIds()) {
      const browser = deps.browserPool.get(deviceId);
      if (browser !== undefined) running.set(deviceId, browser.incarnation);
    }
    return running;
  }

  /** What the next file a task downloads may weigh: the per-file cap, or what the task's cap leaves. */
  async function downloadBytesLeft(taskId: string): Promise<number> {
    return Math.min(config.artifacts.downloadMaxFileBytes, config.artifacts.downloadMaxTaskBytes - (await taskBytesKept(deps.db, taskId)));
  }

  /** Writes how the run ended, only if the task is still running under this lease. */
  async function finish(task: TaskRow, outcome: AgentOutcome): Promise<void> {
    await deps.db.transaction(async (tx) => {
      const row = await lockTask(tx, task.id);
      if (row === null || row.status !== 'running' || row.leaseOwner !== deps.instanceId) return;
      const actor = systemActor(row.orgId);
      if (outcome.status === 'needs_human') {
        const { status: _status, question, ...help } = outcome;
        const parked = await parkTask(tx, row, actor, { kind: help.help, question });
        await openEscalation(tx, parked, { ...help, reason: question }, actor, config.escalations);
        return;
      }
      // A run ends `canceled` only when this worker aborted it; the reasons that reach
      // here (device lost, shutdown) both mean the browser is gone.
      const end: TaskEnd = outcome.status === 'canceled' ? { status: 'failed', error: 'device_lost' } : outcome;
      // A success is its cache key's entry from now on, in the transaction that ends the task.
      if (end.status === 'succeeded') {
        const notStored = await storeTaskCache(tx, row, config.agent.taskCache);
        if (notStored !== null) await appendStepInTransaction(tx, row, { type: 'observation', action: 'cache_not_stored', url: null, title: null, note: notStored });
      }
      await endTask(tx, row, end, actor);
    });
  }

  async function sweep(): Promise<void> {
    // This process's own runs are alive whatever their lease says (a heartbeat delayed by
    // a loaded machine): only the runs of others can be lost. After a database outage every
    // host's heartbeat is stale: the sweep waits until hosts have had time to write theirs.
    if (databaseAvailability.reachableForMs() >= config.agent.leaseMs) {
      const failed = await failLostRunningTasks(deps.db, config.browser.keepSecs * 1000, [...runs.keys()]);
      if (failed.length > 0) log.warn({ taskIds: failed }, 'running tasks whose device or host was lost were failed with device_lost');
    }
    const orphaned = await failParkedTasksWithoutDevice(deps.db);
    if (orphaned.length > 0) log.warn({ taskIds: orphaned }, 'parked tasks whose device or page was lost were failed with device_lost');
  }

  /** Stops claiming, then stops every run the way `how` says, and waits for them to end. */
  async function stopRuns(how: (run: Run) => void): Promise<void> {
    // A claim in flight may still start runs; they are stopped too, once it settled.
    await Promise.all([
      queue.stop(() => {
        for (const run of runs.values()) how(run);
      }),
      leaseSweep.stop(),
    ]);
  }

  return {
    name: 'task-runner',
    start() {
      deps.browserPool.onDeviceLost((deviceId) => {
        for (const run of runs.values()) if (run.task.deviceId === deviceId) run.stop('device_lost');
      });
      leaseSweep.start();
      queue.start();
    },
    stop: () => stopRuns((run) => run.stop('shutdown')),
    handOver: () => stopRuns((run) => run.handOver()),
  };
}
