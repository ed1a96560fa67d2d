import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { S3StoreConfig } from '../config/load-config.ts';
import { attachmentDisposition } from './download-name.ts';
import { checkObjectFolder, checkObjectKey } from './fs-object-store.ts';
import type { ObjectStore } from './object-store.ts';

/** S3 presigned links live at most a week. */
const maxPresignSeconds = 7 * 86_400;

function clientFor(config: S3StoreConfig, endpoint: string | undefined): S3Client {
  return new S3Client({
    region: config.region,
    forcePathStyle: config.forcePathStyle,
    ...(endpoint ? { endpoint } : {}),
    ...(config.accessKeyId && config.secretAccessKey
      ? { credentials: { accessKeyId: config.accessKeyId, secretAccessKey: config.secretAccessKey.reveal() } }
      : {}),
  });
}

/** Archived media in an S3-compatible bucket; download links are presigned GET URLs. */
export class S3ObjectStore implements ObjectStore {
  readonly kind = 's3' as const;
  private readonly client: S3Client;
  /** Signs the links (signing needs no network): for the public endpoint when the gateway reaches the bucket elsewhere. */
  private readonly signer: S3Client;

  constructor(private readonly config: S3StoreConfig) {
    this.client = clientFor(config, config.endpoint);
    this.signer = config.publicEndpoint ? clientFor(config, config.publicEndpoint) : this.client;
  }

  async put(key: string, bytes: Buffer, contentType: string): Promise<void> {
    await this.client.send(
      new PutObjectCommand({ Bucket: this.config.bucket, Key: this.keyOf(key), Body: bytes, ContentType: contentType }),
    );
  }

  async get(key: string): Promise<{ bytes: Buffer; contentType: string } | undefined> {
    try {
      const answer = await this.client.send(new GetObjectCommand({ Bucket: this.config.bucket, Key: this.keyOf(key) }));
      const bytes = Buffer.from(await answer.Body!.transformToByteArray());
      return { bytes, contentType: answer.ContentType ?? 'application/octet-stream' };
    } catch (error) {
      if (error instanceof S3ServiceException && (error.name === 'NoSuchKey' || error.$metadata.httpStatusCode === 404))
        return undefined;
      throw error;
    }
  }

  async delete(key: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.config.bucket, Key: this.keyOf(key) }));
  }

  /**
   * Lists the folder's objects a page at a time and deletes each: one request an object, as `delete` does (the batch
   * delete, DeleteObjects, is missing from some S3-compatible stores, or refuses the checksums the SDK sends).
   */
  async deleteFolder(folder: string): Promise<void> {
    checkObjectFolder(folder);
    const { bucket: Bucket, prefix } = this.config;
    let ContinuationToken: string | undefined;
    do {
      const page = await this.client.send(
        new ListObjectsV2Command({ Bucket, Prefix: `${prefix}${folder}`, ContinuationToken }),
      );
      await Promise.all(
        (page.Contents ?? []).map(({ Key }) => Key && this.client.send(new DeleteObjectCommand({ Bucket, Key }))),
      );
      ContinuationToken = page.IsTruncated === true ? page.NextContinuationToken : undefined;
    } while (ContinuationToken !== undefined);
  }

  /**
   * The download carries the same attachment disposition and file name as the filesystem store's downloads
   * (S3 answers with the signed `response-content-disposition`); its content type is the one stored by `put`.
   */
  async signedLink(key: string, expiresAt: Date): Promise<string> {
    const seconds = Math.min(maxPresignSeconds, Math.max(1, Math.ceil((expiresAt.getTime() - Date.now()) / 1000)));
    const command = new GetObjectCommand({
      Bucket: this.config.bucket,
      Key: this.keyOf(key),
      ResponseContentDisposition: attachmentDisposition(key),
    });
    return getSignedUrl(this.signer, command, { expiresIn: seconds });
  }

  async check(): Promise<void> {
    await this.client.send(new HeadBucketCommand({ Bucket: this.config.bucket }));
  }

  async close(): Promise<void> {
    this.client.destroy();
    this.signer.destroy();
  }

  private keyOf(key: string): string {
    checkObjectKey(key);
    return `${this.config.prefix}${key}`;
  }
}
