import { createHash, randomUUID } from 'node:crypto';
import { constants } from 'node:fs';
import { access, mkdir, open, readFile, readdir, rename, rm, stat, utimes } from 'node:fs/promises';
import path from 'node:path';
import type { EncryptionOptions } from '../security/encryption-keys.js';
import { RelayError } from '../shared/errors.js';
import { errorMessage } from '../shared/error-message.js';
import { sweepCutoff, toRetentionMs } from './payload-retention.js';
import { assertPayloadRef, createPayloadSealer, openOrRemoveDamaged, payloadNotFound } from './payload-sealer.js';
import type { SealedPayload } from './payload-sealer.js';
import type { PayloadRef, PayloadScope, PayloadStore, UnclosedRun } from './payload-store.js';
import { pageOfUnclosedRuns } from './unclosed-runs.js';

/** Options of `createFilePayloadStore`. */
export interface FilePayloadStoreOptions {
  /** The folder the store keeps its files in; created when missing. */
  directory: string;
  /** Keys to encrypt payloads with; they also key the addresses (see `PayloadRef`). */
  encryption?: EncryptionOptions;
  /**
   * How long a payload outlives the last run that used it, in milliseconds.
   * @default defaultPayloadRetentionMs (7 days)
   */
  retentionMs?: number;
  /**
   * Where the store reports a run file it cannot read (a damaged `run.json` or `closed`), which it then skips.
   * @default console
   */
  logger?: Pick<Console, 'warn'>;
}

type Logger = Pick<Console, 'warn'>;

/** The folders of one tenant (named by the SHA-256 of the tenant id, so no tenant id can name a path). */
interface TenantFolders {
  payloads: string;
  runs: string;
}

/** A run folder as a sweep sees it. */
interface StoredRun {
  folder: string;
  closedAt: Date | undefined;
  refs: string[];
}

const recordVersion = 1;
const temporaryPrefix = '.partial-';
const closedFileName = 'closed';
const runFileName = 'run.json';

/**
 * A payload store in a local folder, for the dev stack: one file per payload under a folder per tenant, beside a
 * folder per run that records which run it is, which payloads the run stored and when it closed. Every file with
 * content (a payload, `run.json`, `closed`) is written to a temporary name, flushed and then renamed into place, so a
 * crash mid-write leaves a stray temporary file, never a torn one. A use marker is created in place: it is empty, its
 * name is all it says, so there is nothing in it to tear. Listing unclosed runs reads every run folder: fine for the
 * dev stack it is made for.
 *
 *     <directory>/<sha256 of tenant id>/payloads/<address hex>
 *     <directory>/<sha256 of tenant id>/runs/<sha256 of run id>/run.json            (tenant, run, first stored at)
 *     <directory>/<sha256 of tenant id>/runs/<sha256 of run id>/uses/<address hex>   (empty)
 *     <directory>/<sha256 of tenant id>/runs/<sha256 of run id>/closed                (ISO time)
 */
export function createFilePayloadStore(options: FilePayloadStoreOptions): PayloadStore {
  const sealer = createPayloadSealer(options.encryption);
  const retentionMs = toRetentionMs(options.retentionMs);
  if (typeof options.directory !== 'string' || options.directory.trim() === '') {
    throw new RelayError('invalid_input', 'The file payload store needs a directory');
  }
  const directory = path.resolve(options.directory);
  const logger = options.logger ?? console;

  return {
    async put(scope, data) {
      const ref = sealer.address(scope.tenantId, data);
      const folders = tenantFolders(directory, scope.tenantId);
      const run = runFolder(folders, scope.runId);
      // The run is recorded before its use, so a run that used a payload can always be listed as unclosed.
      await recordRun(run, scope);
      await clearCloseMark(run);
      // The use is recorded before the payload is touched: a sweep that has not seen the use sees the fresh time.
      await recordUse(run, ref);
      const file = payloadFile(folders, ref);
      if (!(await touch(file))) {
        await mkdir(folders.payloads, { recursive: true, mode: 0o700 });
        await writeAtomically(file, encodeRecord(sealer.seal(scope.tenantId, ref, data)));
      }
      return ref;
    },
    async get(scope, ref) {
      assertPayloadRef(ref);
      const file = payloadFile(tenantFolders(directory, scope.tenantId), ref);
      const record = await readFile(file).catch((error: unknown) => {
        throw isMissing(error) ? payloadNotFound(scope, ref) : error;
      });
      return openOrRemoveDamaged(
        () => sealer.open(scope.tenantId, ref, decodeRecord(record, ref)),
        () => rm(file, { force: true }),
      );
    },
    async markRunClosed(scope, closedAt = new Date()) {
      const folder = runFolder(tenantFolders(directory, scope.tenantId), scope.runId);
      await mkdir(folder, { recursive: true, mode: 0o700 });
      await writeAtomically(path.join(folder, closedFileName), Buffer.from(closedAt.toISOString()));
    },
    async sweep(sweepOptions = {}) {
      const cutoff = sweepCutoff(sweepOptions, retentionMs);
      let deleted = 0;
      for (const tenant of await listFolder(directory)) {
        deleted += await sweepTenant(path.join(directory, tenant), cutoff, logger);
      }
      return deleted;
    },
    async listUnclosedRuns(query) {
      const runs: UnclosedRun[] = [];
      for (const tenant of await listFolder(directory))
        runs.push(...(await readUnclosedRuns(path.join(directory, tenant), logger)));
      return pageOfUnclosedRuns(runs, query);
    },
    async prepare() {
      await mkdir(directory, { recursive: true, mode: 0o700 });
      await access(directory, constants.R_OK | constants.W_OK | constants.X_OK);
    },
    async close() {},
  };
}

function tenantFolders(directory: string, tenantId: string): TenantFolders {
  const tenant = path.join(directory, sha256Hex(tenantId));
  return { payloads: path.join(tenant, 'payloads'), runs: path.join(tenant, 'runs') };
}

function runFolder(folders: TenantFolders, runId: string): string {
  return path.join(folders.runs, sha256Hex(runId));
}

function payloadFile(folders: TenantFolders, ref: PayloadRef): string {
  return path.join(folders.payloads, ref.slice('sha256:'.length));
}

/** Writes the run's record (who it is, when it first stored) unless it has one. */
async function recordRun(run: string, scope: PayloadScope): Promise<void> {
  const file = path.join(run, runFileName);
  if (await isPresent(file)) return;
  await mkdir(run, { recursive: true, mode: 0o700 });
  const record = { version: recordVersion, tenantId: scope.tenantId, runId: scope.runId, firstStoredAt: new Date() };
  await writeAtomically(file, Buffer.from(JSON.stringify(record)));
}

/**
 * Clears the run's close mark: a run that stores after its close is open again (a Temporal reset reopens a run under
 * its id), or is a late activity's, which the janitor lists again and marks closed again at its close time.
 */
async function clearCloseMark(run: string): Promise<void> {
  await rm(path.join(run, closedFileName), { force: true });
}

async function recordUse(run: string, ref: PayloadRef): Promise<void> {
  const uses = path.join(run, 'uses');
  await mkdir(uses, { recursive: true, mode: 0o700 });
  await (await open(path.join(uses, ref.slice('sha256:'.length)), 'a', 0o600)).close();
}

/** Marks a stored payload as put now; false when there is none. */
async function touch(file: string): Promise<boolean> {
  const now = new Date();
  return utimes(file, now, now).then(
    () => true,
    (error: unknown) => {
      if (isMissing(error)) return false;
      throw error;
    },
  );
}

async function writeAtomically(file: string, bytes: Uint8Array): Promise<void> {
  const temporary = temporaryName(file);
  try {
    const handle = await open(temporary, 'wx', 0o600);
    try {
      await handle.writeFile(bytes);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temporary, file);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
}

/** A name beside `file` that reads never look at and sweeps delete once it is older than the retention period. */
function temporaryName(file: string): string {
  return path.join(path.dirname(file), `${temporaryPrefix}${path.basename(file)}-${randomUUID()}`);
}

/** A payload file: a JSON header line naming the record version and key, then the sealed bytes. */
function encodeRecord(sealed: SealedPayload): Buffer {
  const header = JSON.stringify({
    version: recordVersion,
    ...(sealed.keyId === undefined ? {} : { keyId: sealed.keyId }),
  });
  return Buffer.concat([Buffer.from(`${header}\n`), sealed.body]);
}

function decodeRecord(record: Buffer, ref: PayloadRef): SealedPayload {
  const newline = record.indexOf(0x0a);
  let header: { version?: unknown; keyId?: unknown } | undefined;
  try {
    header = newline < 0 ? undefined : (JSON.parse(record.subarray(0, newline).toString()) as typeof header);
  } catch {
    header = undefined;
  }
  if (header?.version !== recordVersion || !(header.keyId === undefined || typeof header.keyId === 'string')) {
    throw new RelayError('payload_corrupt', `The stored payload ${ref} has no readable header: the file was damaged`, {
      details: { ref },
    });
  }
  return { keyId: header.keyId, body: record.subarray(newline + 1) };
}

/**
 * Deletes a tenant's expired payloads, stray temporary files older than the cutoff, and the folders of runs closed
 * before it. A payload is kept while a run that stored it is open or closed after the cutoff.
 */
async function sweepTenant(tenant: string, cutoff: Date, logger: Logger): Promise<number> {
  const folders: TenantFolders = { payloads: path.join(tenant, 'payloads'), runs: path.join(tenant, 'runs') };
  const runs = await readRuns(folders.runs, logger);
  const inUse = new Set(runs.filter((run) => !(run.closedAt && run.closedAt < cutoff)).flatMap((run) => run.refs));
  let deleted = 0;
  for (const name of await listFolder(folders.payloads)) {
    const file = path.join(folders.payloads, name);
    if (name.startsWith(temporaryPrefix)) {
      if (await isOlder(file, cutoff)) await rm(file, { force: true });
    } else if (!inUse.has(name) && (await deletePayloadIfOlder(file, cutoff))) {
      deleted++;
    }
  }
  for (const run of runs) {
    if (run.closedAt && run.closedAt < cutoff) await rm(run.folder, { recursive: true, force: true });
  }
  return deleted;
}

async function readRuns(runs: string, logger: Logger): Promise<StoredRun[]> {
  return Promise.all(
    (await listFolder(runs)).map(async (name) => {
      const folder = path.join(runs, name);
      return {
        folder,
        closedAt: await readCloseMark(folder, logger),
        refs: await listFolder(path.join(folder, 'uses')),
      };
    }),
  );
}

/** A tenant's runs that have a readable record and no close. */
async function readUnclosedRuns(tenant: string, logger: Logger): Promise<UnclosedRun[]> {
  const runs = path.join(tenant, 'runs');
  const found = await Promise.all(
    (await listFolder(runs)).map(async (name) => {
      const folder = path.join(runs, name);
      if ((await readCloseMark(folder, logger)) !== undefined) return undefined;
      // A folder without a record is one a put began and never got to record a use in, or a close of a run that
      // stored nothing: neither holds a payload to expire.
      return readRunRecord(folder, logger);
    }),
  );
  return found.filter((run) => run !== undefined);
}

/**
 * When the run closed, or undefined when it has no close mark. A damaged mark counts as none: the run keeps its
 * payloads (it may be open again, after a reset) and is listed, so the janitor asks Temporal and writes a fresh mark.
 * Any guessed close would either keep them forever (now, at every read) or could delete a live run's (a past time).
 */
async function readCloseMark(folder: string, logger: Logger): Promise<Date | undefined> {
  return readRunFile(path.join(folder, closedFileName), decodeCloseMark, logger, {
    skipped: 'the run counts as open: its payloads are kept and a janitor asks Temporal about it again',
  });
}

/** The run's record, or undefined when it has none or it is damaged. */
async function readRunRecord(folder: string, logger: Logger): Promise<UnclosedRun | undefined> {
  return readRunFile(path.join(folder, runFileName), decodeRunRecord, logger, {
    skipped: 'no janitor lists the run, and its payloads are kept until the file is repaired or its folder removed',
  });
}

/**
 * A run file decoded, or undefined when it is missing or damaged (unreadable, or not what the store writes). Damage is
 * reported, naming the file, and skipped: one damaged run must not stop the listing or sweep of every other.
 */
async function readRunFile<T>(
  file: string,
  decode: (text: string) => T | undefined,
  logger: Logger,
  { skipped }: { skipped: string },
): Promise<T | undefined> {
  let problem = 'it does not hold what the store writes';
  try {
    const text = await readTextIfPresent(file);
    const decoded = text === undefined ? undefined : decode(text);
    if (text === undefined || decoded !== undefined) return decoded;
  } catch (error) {
    problem = errorMessage(error);
  }
  logger.warn(`Relay-E file payload store: the run file ${file} is damaged (${problem}); ${skipped}`);
  return undefined;
}

/** A close mark as `markRunClosed` writes it (an ISO time), or undefined. */
function decodeCloseMark(text: string): Date | undefined {
  const closedAt = new Date(text);
  return Number.isNaN(closedAt.getTime()) || closedAt.toISOString() !== text ? undefined : closedAt;
}

function decodeRunRecord(text: string): UnclosedRun | undefined {
  let record: { version?: unknown; tenantId?: unknown; runId?: unknown; firstStoredAt?: unknown } | undefined;
  try {
    record = JSON.parse(text) as typeof record;
  } catch {
    return undefined;
  }
  const firstStoredAt = typeof record?.firstStoredAt === 'string' ? new Date(record.firstStoredAt) : undefined;
  if (
    record?.version !== recordVersion ||
    typeof record.tenantId !== 'string' ||
    typeof record.runId !== 'string' ||
    firstStoredAt === undefined ||
    Number.isNaN(firstStoredAt.getTime())
  ) {
    return undefined;
  }
  return { tenantId: record.tenantId, runId: record.runId, firstStoredAt };
}

/**
 * Deletes a payload last put before the cutoff. It is renamed aside first and its time read again: a put that touched
 * it before the rename shows in that time (and the payload goes back), and a put after the rename finds no payload
 * and writes it anew, so a concurrent put never loses the payload it returns.
 */
async function deletePayloadIfOlder(file: string, cutoff: Date): Promise<boolean> {
  if (!(await isOlder(file, cutoff))) return false;
  const aside = temporaryName(file);
  try {
    await rename(file, aside);
  } catch (error) {
    if (isMissing(error)) return false;
    throw error;
  }
  if (await isOlder(aside, cutoff)) {
    await rm(aside, { force: true });
    return true;
  }
  await rename(aside, file);
  return false;
}

async function isPresent(file: string): Promise<boolean> {
  return stat(file).then(
    () => true,
    (error: unknown) => {
      if (isMissing(error)) return false;
      throw error;
    },
  );
}

/** Whether a file was last modified (put or touched) before the cutoff; false when it is gone. */
async function isOlder(file: string, cutoff: Date): Promise<boolean> {
  const info = await stat(file).catch((error: unknown) => {
    if (isMissing(error)) return undefined;
    throw error;
  });
  return info !== undefined && info.mtime < cutoff;
}

async function readTextIfPresent(file: string): Promise<string | undefined> {
  return readFile(file, 'utf8').catch((error: unknown) => {
    if (isMissing(error)) return undefined;
    throw error;
  });
}

async function listFolder(folder: string): Promise<string[]> {
  return readdir(folder).catch((error: unknown) => {
    if (isMissing(error)) return [];
    throw error;
  });
}

function sha256Hex(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

function isMissing(error: unknown): boolean {
  return (error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT';
}
