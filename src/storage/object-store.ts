/** Where generated media is archived: a directory under DATA_DIR, or an S3-compatible bucket. */
export interface ObjectStore {
  readonly kind: 'fs' | 's3';
  /** Writes (or overwrites) one object. Keys are made by the gateway: `[a-z0-9/._-]`, never `..`. */
  put(key: string, bytes: Buffer, contentType: string): Promise<void>;
  /** The object's bytes and type, or undefined when it does not exist. */
  get(key: string): Promise<{ bytes: Buffer; contentType: string } | undefined>;
  /** Deletes the object; deleting one that does not exist is no error. */
  delete(key: string): Promise<void>;
  /**
   * Deletes every object whose key begins with `folder` (`images/gen_1/`: segments as in keys, ending in `/`);
   * a folder that holds none is no error.
   */
  deleteFolder(folder: string): Promise<void>;
  /**
   * A link that downloads the object without any credential until `expiresAt`: a presigned URL (S3), or a
   * gateway path signed with HMAC (filesystem) that the caller makes absolute with the gateway's base URL.
   */
  signedLink(key: string, expiresAt: Date): Promise<string>;
  /** Throws when the store cannot be written or read (readiness). */
  check(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Deletes the outputs of a job that fails, which no asset row will name: best effort, as the job fails all the
 * same; one that cannot be deleted now is left behind.
 */
export async function discardOutputs(store: Pick<ObjectStore, 'delete'>, objectKeys: Iterable<string>): Promise<void> {
  await Promise.all([...objectKeys].map((objectKey) => store.delete(objectKey).catch(() => undefined)));
}

/** How long a folder's deletion may take before it is told as failed (it may still end later). */
const discardWithinMs = 30_000;

/**
 * Deletes every object under a folder of a job that fails: best effort as well (`discardOutputs`), but a failure is
 * told to `failed`, since it leaves objects no sweep will find (a store refusing the listing, or not answering).
 * Never rejects.
 */
export async function discardFolder(
  store: Pick<ObjectStore, 'deleteFolder'>,
  folder: string,
  failed: (error: unknown) => void,
): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<void>((resolve) => {
    timer = setTimeout(() => {
      failed(new Error(`the object store did not delete ${folder} within ${discardWithinMs / 1000} s`));
      resolve();
    }, discardWithinMs);
    timer.unref();
  });
  await Promise.race([store.deleteFolder(folder).catch(failed), late]);
  clearTimeout(timer);
}
