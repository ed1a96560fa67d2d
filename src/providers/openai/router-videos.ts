import { GatewayError } from '../../domain/errors.ts';
import type { VideoGenerationRequest, VideoMediaSource, VideoTaskReport, VideoTaskState } from '../../domain/video.ts';
import {
  isRouterVideoJob,
  routerVideoPaths,
  type RouterVideoJob,
  type RouterVideoRequest,
  type RouterVideoStatus,
} from '../../protocols/router-video/videos.ts';
import type { CallOptions, VideoAdapter } from '../provider-adapter.ts';
import type { UpstreamHttp } from '../shared/upstream-http.ts';
import { refuseMaxTokens } from '../shared/video-checks.ts';
import { checked } from '../shared/wire-data.ts';

const states: Record<RouterVideoStatus, VideoTaskState> = {
  pending: 'queued',
  in_progress: 'running',
  completed: 'succeeded',
  failed: 'failed',
  cancelled: 'cancelled',
  expired: 'expired',
};

const urlOf = (source: VideoMediaSource) =>
  source.kind === 'url' ? source.url : `data:${source.mediaType};base64,${source.data}`;

/** The router's body: the prompt, frames by type, other images and videos as references, the fields it names. */
export function routerVideoBody(request: VideoGenerationRequest, upstreamModel: string): RouterVideoRequest {
  const body: RouterVideoRequest = { model: upstreamModel };
  const prompt = request.content.flatMap((item) => (item.type === 'text' ? [item.text] : [])).join('\n\n');
  if (prompt !== '') body.prompt = prompt;
  const frames: NonNullable<RouterVideoRequest['frame_images']> = [];
  const references: NonNullable<RouterVideoRequest['input_references']> = [];
  for (const item of request.content) {
    if (item.type === 'image' && item.role !== 'referenceImage')
      frames.push({
        type: 'image_url',
        image_url: { url: urlOf(item.source) },
        frame_type: item.role === 'firstFrame' ? 'first_frame' : 'last_frame',
      });
    else if (item.type === 'image') references.push({ type: 'image_url', image_url: { url: urlOf(item.source) } });
    else if (item.type === 'video') references.push({ type: 'video_url', video_url: { url: urlOf(item.source) } });
  }
  if (frames.length > 0) body.frame_images = frames;
  if (references.length > 0) body.input_references = references;
  if (request.duration !== undefined) body.duration = request.duration;
  if (request.resolution !== undefined) body.resolution = request.resolution;
  if (request.ratio !== undefined) body.aspect_ratio = request.ratio;
  if (request.seed !== undefined) body.seed = request.seed;
  if (request.generateAudio !== undefined) body.generate_audio = request.generateAudio;
  return body;
}

export function routerVideoReport(job: RouterVideoJob): VideoTaskReport {
  const report: VideoTaskReport = { state: states[job.status] };
  if (job.usage) report.providerUsage = job.usage;
  if (job.status === 'completed') {
    const url = job.unsigned_urls?.[0];
    if (url) Object.assign(report, { video: { kind: 'url', url }, videoNeedsCredentials: true });
  }
  if (job.status === 'failed' || job.status === 'cancelled' || job.status === 'expired')
    report.error = job.error ?? `the provider reports the video ${job.status}`;
  return report;
}

/**
 * The routing provider's video API, spoken by `openai`-protocol rows (routing providers are OpenAI-compatible):
 * one job created, then read until it ends; its content is read with the provider's key. The API has no
 * camera or watermark fields, and no cancel.
 */
export function routerVideoAdapter(http: UpstreamHttp): VideoAdapter {
  const auth = (options: CallOptions) => ({ authorization: options.target.apiKey.bearer() });
  return {
    check(request, modelId) {
      refuseMaxTokens(request, modelId);
      for (const field of ['cameraFixed', 'watermark'] as const) {
        if (request[field] !== undefined)
          throw new GatewayError(
            'GW_PARAMETER_UNSUPPORTED',
            `model "${modelId}" does not support parameter "${field}"`,
          );
      }
    },
    async createTask(request, upstreamModel, options) {
      const job = checked(
        await http.postForJson(options.target, {
          path: routerVideoPaths.create,
          headers: auth(options),
          body: routerVideoBody(request, upstreamModel),
          signal: options.signal,
        }),
        isRouterVideoJob,
        'a video job',
      );
      return job.id;
    },
    async poll(taskId, options) {
      return routerVideoReport(
        checked(
          await http.getForJson(options.target, {
            path: routerVideoPaths.job(taskId),
            headers: auth(options),
            signal: options.signal,
          }),
          isRouterVideoJob,
          'a video job',
        ),
      );
    },
    cancel: () => Promise.resolve(),
  };
}
