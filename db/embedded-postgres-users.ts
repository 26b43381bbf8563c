import postgres from 'postgres';

/**
 * The processes using one embedded PostgreSQL server (the service; the operator CLI run
 * beside it), so that the last to leave stops it, whoever started it. Each holds a
 * shared advisory lock on a connection of its own while it uses the server. A process
 * that dies, even by kill -9, loses its connection and so its lock: the server it
 * started is then stopped by the next process to use it and leave, not left running
 * with nobody to stop it.
 */
export interface ServerUse {
  /**
   * Gives up this process's use. When nobody else uses the server, `stopServer` runs
   * while this process holds the lock exclusively, so a process arriving meanwhile waits
   * for it, and fails on the stopped server rather than losing it unawares later.
   */
  leave(stopServer: () => Promise<void>): Promise<void>;
}

// Two int4 keys: advisory locks keyed so are apart from the service's bigint-keyed ones.
const USERS_LOCK_CLASS = 0x6f70;
const USERS_LOCK_ID = 1;
/** After losing its connection (the server restarted, its backend was ended), a user holds again. */
const HOLD_AGAIN_AFTER_MS = 1000;

export async function useServer(url: string): Promise<ServerUse> {
  let leaving = false;
  let holdAgain: NodeJS.Timeout | undefined;
  const holdAgainSoon = () => {
    if (leaving || holdAgain !== undefined) return;
    holdAgain = setTimeout(() => {
      holdAgain = undefined;
      if (!leaving) hold().catch(holdAgainSoon);
    }, HOLD_AGAIN_AFTER_MS);
    holdAgain.unref();
  };
  const connection = postgres(url, {
    max: 1,
    // Kept for as long as the process uses the server: the lock lives on it.
    max_lifetime: null,
    onnotice: () => {},
    onclose: holdAgainSoon,
    connection: { application_name: 'operator: embedded PostgreSQL user' },
  });
  const hold = () => connection`select pg_advisory_lock_shared(${USERS_LOCK_CLASS}, ${USERS_LOCK_ID})`;

  try {
    await hold();
  } catch (error) {
    leaving = true;
    clearTimeout(holdAgain);
    await connection.end({ timeout: 1 });
    throw error;
  }
  return {
    async leave(stopServer) {
      leaving = true;
      clearTimeout(holdAgain);
      try {
        await connection`select pg_advisory_unlock_shared(${USERS_LOCK_CLASS}, ${USERS_LOCK_ID})`;
        const [{ alone }] = await connection<[{ alone: boolean }]>`select pg_try_advisory_lock(${USERS_LOCK_CLASS}, ${USERS_LOCK_ID}) as alone`;
        if (alone) await stopServer();
      } finally {
        await connection.end({ timeout: 1 });
      }
    },
  };
}
