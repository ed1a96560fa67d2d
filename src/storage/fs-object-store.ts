import { randomBytes } from 'node:crypto';
import type { ReadStream } from 'node:fs';
import { type FileHandle, mkdir, open, readFile, rename, rm, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import type { KeyObject } from 'node:crypto';
import type { ObjectStore } from './object-store.ts';
import { signedFilePath } from './signed-links.ts';

const validKey = /^[a-z0-9][a-z0-9._-]*(\/[a-z0-9][a-z0-9._-]*)*$/;

/** Throws unless `key` is one the gateway makes: lower-case segments, no `..`, no leading slash. */
export function checkObjectKey(key: string): void {
  if (
    !validKey.test(key) ||
    key.split('/').some((segment) => segment === '..' || segment === '.') ||
    key.length > 512
  ) {
    throw new Error(`invalid object key "${key}"`);
  }
}

/** Throws unless `folder` is the start of keys the gateway makes: segments as in a key, ending in `/`. */
export function checkObjectFolder(folder: string): void {
  if (!folder.endsWith('/')) throw new Error(`invalid object folder "${folder}"`);
  checkObjectKey(folder.slice(0, -1));
}

/**
 * Archived media as files under a directory (`DATA_DIR/media`). Each object is its bytes plus a sidecar
 * `<file>.type` with its content type. Writes go to a temporary file that is synced and then renamed, so a
 * crash never leaves a half-written object under its key.
 */
export class FsObjectStore implements ObjectStore {
  readonly kind = 'fs' as const;

  constructor(
    private readonly root: string,
    private readonly linkKey: KeyObject,
  ) {}

  async put(key: string, bytes: Buffer, contentType: string): Promise<void> {
    const file = this.fileOf(key);
    await mkdir(path.dirname(file), { recursive: true });
    // Both files are written and synced at once; `get` needs both, so a crash between them leaves no object.
    await Promise.all([writeAtomically(`${file}.type`, Buffer.from(contentType)), writeAtomically(file, bytes)]);
  }

  async get(key: string): Promise<{ bytes: Buffer; contentType: string } | undefined> {
    const file = this.fileOf(key);
    try {
      const [bytes, contentType] = await Promise.all([readFile(file), readFile(`${file}.type`, 'utf8')]);
      return { bytes, contentType };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
  }

  /**
   * The object as a stream, with its size and type, for serving downloads without reading it whole. The file is
   * opened here, not when the stream is first read: a retention sweep deleting it once this answered cannot fail
   * the stream after the download's headers went out (an open file stays readable when its name is removed).
   */
  async open(
    key: string,
    range?: { start: number; end: number },
  ): Promise<{ stream: ReadStream; size: number; contentType: string } | undefined> {
    const file = this.fileOf(key);
    let handle: FileHandle | undefined;
    try {
      handle = await open(file, 'r');
      const [info, contentType] = await Promise.all([handle.stat(), readFile(`${file}.type`, 'utf8')]);
      return { stream: handle.createReadStream(range), size: info.size, contentType };
    } catch (error) {
      await handle?.close();
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
  }

  async size(key: string): Promise<{ size: number; contentType: string } | undefined> {
    const file = this.fileOf(key);
    try {
      const [info, contentType] = await Promise.all([stat(file), readFile(`${file}.type`, 'utf8')]);
      return { size: info.size, contentType };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
  }

  async delete(key: string): Promise<void> {
    const file = this.fileOf(key);
    await rm(file, { force: true });
    await rm(`${file}.type`, { force: true });
  }

  /** The folder's directory, with everything in it (an object's sidecar, a write's temporary file). */
  async deleteFolder(folder: string): Promise<void> {
    checkObjectFolder(folder);
    await rm(path.join(this.root, ...folder.slice(0, -1).split('/')), { recursive: true, force: true });
  }

  signedLink(key: string, expiresAt: Date): Promise<string> {
    checkObjectKey(key);
    return Promise.resolve(signedFilePath(this.linkKey, key, expiresAt));
  }

  async check(): Promise<void> {
    const key = `.health/${randomBytes(8).toString('hex')}`;
    const file = path.join(this.root, key);
    await mkdir(path.dirname(file), { recursive: true });
    await writeAtomically(file, Buffer.from('ok'));
    await readFile(file);
    await unlink(file);
  }

  async close(): Promise<void> {}

  private fileOf(key: string): string {
    checkObjectKey(key);
    return path.join(this.root, ...key.split('/'));
  }
}

async function writeAtomically(file: string, bytes: Buffer): Promise<void> {
  const temporary = `${file}.${randomBytes(6).toString('hex')}.tmp`;
  const handle = await open(temporary, 'w', 0o600);
  try {
    await handle.writeFile(bytes);
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await rename(temporary, file);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
}
