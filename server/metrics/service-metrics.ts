import { collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { Db } from '../../db/client';
import { deviceStatuses, taskStatuses } from '../../db/schema';
import { loadOperationalCounts, loadPoolConnections } from '../domain/metrics/operational-counts';

export interface MetricSources {
  db: Db;
  /** This process's pool in pg_stat_activity (db/client.ts) and its configured size. */
  pool: { applicationName: string; size: number };
  hostId: string;
  /** Browsers of this host that count against its capacity (warm ones included), that capacity, and the warm ones ready for a create. */
  browsers: () => { inUse: number; capacity: number; warm: number };
  /** Live-view sockets this instance serves or relays. */
  liveViewSockets: () => number;
}

/** Latency buckets in seconds: API calls take milliseconds; a device create, up to seconds. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * The service's health in Prometheus text format (GET /metrics): request latency per route
 * and status, what the database holds by status, queues, browsers and sockets of this
 * host, the event loop and the database pool. Counts that live in PostgreSQL are read
 * once per scrape, not kept up to date by every change.
 */
export class ServiceMetrics {
  readonly #registry = new Registry();
  readonly #requestDuration: Histogram<'route' | 'status'>;
  readonly #devices: Gauge<'status'>;
  readonly #tasks: Gauge<'status'>;
  readonly #tasksWaiting: Gauge;
  readonly #deliveries: Gauge<'kind' | 'state'>;
  readonly #browsers: Gauge<'host'>;
  readonly #browserCapacity: Gauge<'host'>;
  readonly #warmBrowsers: Gauge<'host'>;
  readonly #liveViewSockets: Gauge;
  readonly #pool: Gauge<'state'>;
  readonly #poolSize: Gauge;

  constructor(private readonly sources: MetricSources) {
    const registers = [this.#registry];
    collectDefaultMetrics({ register: this.#registry });
    this.#requestDuration = new Histogram({ name: 'operator_http_request_duration_seconds', help: 'HTTP request latency by route and status.', labelNames: ['route', 'status'], buckets: LATENCY_BUCKETS, registers });
    this.#devices = new Gauge({ name: 'operator_devices', help: 'Devices by status (every instance sees the same database).', labelNames: ['status'], registers });
    this.#tasks = new Gauge({ name: 'operator_tasks', help: 'Tasks by status.', labelNames: ['status'], registers });
    this.#tasksWaiting = new Gauge({ name: 'operator_tasks_waiting_for_worker', help: 'Running tasks that no live worker lease holds.', registers });
    this.#deliveries = new Gauge({ name: 'operator_deliveries', help: 'Webhook and escalation deliveries pending, and pending after a failed attempt (failing).', labelNames: ['kind', 'state'], registers });
    this.#browsers = new Gauge({ name: 'operator_browsers_in_use', help: 'Browsers this host runs, starts or closes, warm ones included.', labelNames: ['host'], registers });
    this.#browserCapacity = new Gauge({ name: 'operator_browser_capacity', help: 'Browsers this host may run at once (OPERATOR_MAX_BROWSERS).', labelNames: ['host'], registers });
    this.#warmBrowsers = new Gauge({ name: 'operator_warm_browsers', help: 'Browsers this host keeps launched ahead, ready for a device create (OPERATOR_WARM_BROWSERS).', labelNames: ['host'], registers });
    this.#liveViewSockets = new Gauge({ name: 'operator_live_view_sockets', help: 'Live-view WebSockets this instance serves or relays.', registers });
    this.#pool = new Gauge({ name: 'operator_db_pool_connections', help: "This instance's database connections by state.", labelNames: ['state'], registers });
    this.#poolSize = new Gauge({ name: 'operator_db_pool_size', help: "This instance's database pool size (OPERATOR_DB_POOL_SIZE).", registers });
  }

  get contentType(): string {
    return this.#registry.contentType;
  }

  observeRequest(route: string, status: number, seconds: number): void {
    this.#requestDuration.observe({ route, status: String(status) }, seconds);
  }

  /** Reads the current counts, then renders every metric. */
  async render(): Promise<string> {
    const { db, pool, hostId } = this.sources;
    const [counts, connections] = await Promise.all([loadOperationalCounts(db), loadPoolConnections(db, pool.applicationName)]);
    for (const status of deviceStatuses) this.#devices.set({ status }, counts.devicesByStatus[status] ?? 0);
    for (const status of taskStatuses) this.#tasks.set({ status }, counts.tasksByStatus[status] ?? 0);
    this.#tasksWaiting.set(counts.tasksWaitingForWorker);
    for (const [kind, states] of [['webhook', counts.webhookDeliveries], ['escalation', counts.escalationDeliveries]] as const) {
      this.#deliveries.set({ kind, state: 'pending' }, states.pending);
      this.#deliveries.set({ kind, state: 'failing' }, states.failing);
    }
    const browsers = this.sources.browsers();
    this.#browsers.set({ host: hostId }, browsers.inUse);
    this.#browserCapacity.set({ host: hostId }, browsers.capacity);
    this.#warmBrowsers.set({ host: hostId }, browsers.warm);
    this.#liveViewSockets.set(this.sources.liveViewSockets());
    this.#pool.set({ state: 'active' }, connections.active);
    this.#pool.set({ state: 'idle' }, connections.idle);
    this.#poolSize.set(pool.size);
    return this.#registry.metrics();
  }
}
