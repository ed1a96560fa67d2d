import { readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export interface DataDirLock {
  release(): void;
}

export class DataDirInUseError extends Error {}

/** Lock files this process holds. */
const heldHere = new Set<string>();

/**
 * An embedded database belongs to exactly one process. A second process (a second server, or a CLI
 * command while the server runs) would corrupt it, so it is refused with a message saying who holds it.
 */
export function acquireDataDirLock(dataDir: string): DataDirLock {
  const file = path.join(dataDir, 'gateway.lock');
  // A lock file naming this process was left by an earlier process that had the same pid (a restarted
  // container's), unless this process holds it now.
  if (heldHere.has(path.resolve(file)))
    throw new DataDirInUseError(`the embedded database in ${dataDir} is already open in this process`);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(file, String(process.pid), { flag: 'wx' });
      heldHere.add(path.resolve(file));
      let released = false;
      return {
        release: () => {
          if (released) return;
          released = true;
          heldHere.delete(path.resolve(file));
          try {
            unlinkSync(file);
          } catch {
            // already gone
          }
        },
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = Number(readFileSync(file, 'utf8').trim());
      if (Number.isInteger(holder) && holder > 0 && holder !== process.pid && isAlive(holder)) {
        throw new DataDirInUseError(
          `the embedded database in ${dataDir} is in use by process ${holder}; stop it first, or use the admin API of the running gateway`,
        );
      }
      // Left behind by a process that died: take it over.
      unlinkSync(file);
    }
  }
  throw new DataDirInUseError(`cannot lock ${dataDir}`);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
