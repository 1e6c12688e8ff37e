import { DatabaseSync } from 'node:sqlite';

/** One side effect that really happened: a row in the ledger's `transfers` table. */
export interface LedgerTransfer {
  seq: number;
  key: string;
  toAccount: string;
  amount: number;
  pid: number;
}

/** One call of a tool's `execute`, whether or not it ended in a side effect. */
export interface LedgerAttempt {
  tool: string;
  key: string;
  pid: number;
  outcome: string;
}

/**
 * A bank ledger in a SQLite file outside Temporal, shared by worker processes that may be killed at any moment.
 * `transfers` has no unique constraint on the key on purpose: a broken idempotency check shows up as two rows.
 */
export class TransferLedger {
  private readonly db: DatabaseSync;

  constructor(file: string) {
    this.db = new DatabaseSync(file);
    this.db.exec(`
      PRAGMA journal_mode = WAL;
      PRAGMA busy_timeout = 10000;
      CREATE TABLE IF NOT EXISTS transfers (
        seq INTEGER PRIMARY KEY AUTOINCREMENT, key TEXT NOT NULL, to_account TEXT NOT NULL, amount REAL NOT NULL,
        pid INTEGER NOT NULL);
      CREATE TABLE IF NOT EXISTS attempts (
        seq INTEGER PRIMARY KEY AUTOINCREMENT, tool TEXT NOT NULL, key TEXT NOT NULL, pid INTEGER NOT NULL,
        outcome TEXT NOT NULL);
    `);
  }

  /**
   * Moves money once per idempotency key: the check and the write share one transaction, so a retry after a
   * crash at any point either finds the committed transfer or makes it. Returns whether this call made it.
   */
  transferOnce(key: string, toAccount: string, amount: number): 'transferred' | 'already_done' {
    this.db.exec('BEGIN IMMEDIATE');
    try {
      const done = this.db.prepare('SELECT seq FROM transfers WHERE key = ?').get(key);
      if (!done) {
        this.db
          .prepare('INSERT INTO transfers (key, to_account, amount, pid) VALUES (?, ?, ?, ?)')
          .run(key, toAccount, amount, process.pid);
      }
      this.db.exec('COMMIT');
      return done ? 'already_done' : 'transferred';
    } catch (error) {
      this.db.exec('ROLLBACK');
      throw error;
    }
  }

  recordAttempt(tool: string, key: string, outcome: string): void {
    this.db
      .prepare('INSERT INTO attempts (tool, key, pid, outcome) VALUES (?, ?, ?, ?)')
      .run(tool, key, process.pid, outcome);
  }

  transfers(): LedgerTransfer[] {
    return this.db
      .prepare('SELECT seq, key, to_account AS toAccount, amount, pid FROM transfers ORDER BY seq')
      .all() as unknown as LedgerTransfer[];
  }

  attempts(): LedgerAttempt[] {
    return this.db
      .prepare('SELECT tool, key, pid, outcome FROM attempts ORDER BY seq')
      .all() as unknown as LedgerAttempt[];
  }

  close(): void {
    this.db.close();
  }
}

/** What the ledger shows against the decisions: approved transfers missing or made twice, and unapproved ones. */
export interface LedgerAudit {
  /** The keys (`runId/toolCallId`) that were approved. */
  approved: string[];
  lost: string[];
  duplicated: string[];
  unapproved: string[];
}

/**
 * The `runId/toolCallId` a transfer's idempotency key names: runs key calls `runId/<first execution>/toolCallId`
 * (runs from before that change `runId/toolCallId`).
 */
export function callOfIdempotencyKey(key: string): string {
  const parts = key.split('/');
  return `${parts[0] ?? ''}/${parts.at(-1) ?? ''}`;
}

/** Checks the transfers made against the decisions sent, keyed `runId/toolCallId`. */
export function auditTransfers(
  transfers: readonly LedgerTransfer[],
  decisions: ReadonlyMap<string, 'approve' | 'reject'>,
): LedgerAudit {
  const madeByKey = new Map<string, number>();
  for (const { key } of transfers) {
    const call = callOfIdempotencyKey(key);
    madeByKey.set(call, (madeByKey.get(call) ?? 0) + 1);
  }
  const approved = [...decisions].filter(([, decision]) => decision === 'approve').map(([key]) => key);
  return {
    approved,
    lost: approved.filter((key) => !madeByKey.has(key)),
    duplicated: [...madeByKey].filter(([, count]) => count > 1).map(([key]) => key),
    unapproved: [...madeByKey.keys()].filter((key) => decisions.get(key) !== 'approve'),
  };
}

/** The audit's counts as the suites' result files record them. */
export function auditFigures(audit: LedgerAudit, transfersMade: number): Record<string, number> {
  return {
    approved: audit.approved.length,
    transfersMade,
    lost: audit.lost.length,
    duplicated: audit.duplicated.length,
    unapprovedExecuted: audit.unapproved.length,
  };
}
