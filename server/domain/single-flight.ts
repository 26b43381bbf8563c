/**
 * Runs a job on demand, one run at a time, for work that catches up with whatever happened
 * before it started (claim what is due, read the steps after the last one sent). A wake while
 * idle starts a run; wakes while a run is going make exactly one more run after it, however
 * many came, since that one run sees everything they announced. A failed run is reported
 * and does not stop later ones.
 */
export class SingleFlight {
  #running = false;
  #wokenMeanwhile = false;
  #stopped = false;
  #run: Promise<void> = Promise.resolve();

  constructor(
    private readonly job: () => Promise<void>,
    private readonly onError: (error: unknown) => void,
  ) {}

  wake(): void {
    if (this.#stopped) return;
    this.#wokenMeanwhile = true;
    if (this.#running) return;
    // Set before the job starts: a job that wakes its own flight must not start a second run.
    this.#running = true;
    this.#run = this.#catchUp();
  }

  /** Refuses further wakes and waits for the run in progress, which is not run again. */
  async stop(): Promise<void> {
    this.#stopped = true;
    await this.#run;
  }

  async #catchUp(): Promise<void> {
    while (this.#wokenMeanwhile && !this.#stopped) {
      this.#wokenMeanwhile = false;
      try {
        await this.job();
      } catch (error) {
        this.onError(error);
      }
    }
    this.#running = false;
  }
}
