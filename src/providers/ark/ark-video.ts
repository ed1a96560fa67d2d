import type {
  VideoContentItem,
  VideoGenerationRequest,
  VideoImageRole,
  VideoMediaSource,
  VideoTaskReport,
} from '../../domain/video.ts';
import {
  isSeedanceCreateAnswer,
  isSeedanceTask,
  seedanceTaskPaths,
  type SeedanceContentItem,
  type SeedanceCreateRequest,
  type SeedanceTask,
} from '../../protocols/ark/video-tasks.ts';
import type { CallOptions, VideoAdapter } from '../provider-adapter.ts';
import type { UpstreamHttp } from '../shared/upstream-http.ts';
import { refuseMaxTokens } from '../shared/video-checks.ts';
import { checked } from '../shared/wire-data.ts';

const roles: Record<VideoImageRole, 'first_frame' | 'last_frame' | 'reference_image'> = {
  firstFrame: 'first_frame',
  lastFrame: 'last_frame',
  referenceImage: 'reference_image',
};

const urlOf = (source: VideoMediaSource) =>
  source.kind === 'url' ? source.url : `data:${source.mediaType};base64,${source.data}`;

function contentItem(item: VideoContentItem): SeedanceContentItem {
  switch (item.type) {
    case 'text':
      return { type: 'text', text: item.text };
    case 'image':
      // Seedance reads an image without a role as the first frame: the spec's default (a reference) is sent by name.
      return { type: 'image_url', image_url: { url: urlOf(item.source) }, role: roles[item.role] };
    case 'video':
      return { type: 'video_url', video_url: { url: urlOf(item.source) }, role: 'reference_video' };
  }
}

/** The Seedance create body: content in the request's order, and the generation fields under their wire names. */
export function seedanceBody(request: VideoGenerationRequest, upstreamModel: string): SeedanceCreateRequest {
  const body: SeedanceCreateRequest = { model: upstreamModel, content: request.content.map(contentItem) };
  if (request.ratio !== undefined) body.ratio = request.ratio;
  if (request.resolution !== undefined) body.resolution = request.resolution;
  if (request.duration !== undefined) body.duration = request.duration;
  if (request.seed !== undefined) body.seed = request.seed;
  if (request.cameraFixed !== undefined) body.camera_fixed = request.cameraFixed;
  if (request.watermark !== undefined) body.watermark = request.watermark;
  if (request.generateAudio !== undefined) body.generate_audio = request.generateAudio;
  return body;
}

export function seedanceReport(task: SeedanceTask): VideoTaskReport {
  const usage = task.usage ?? undefined;
  const report: VideoTaskReport = {
    state: task.status,
    ...(task.duration !== undefined ? { durationSeconds: task.duration } : {}),
    ...(task.resolution !== undefined ? { resolution: task.resolution } : {}),
    ...(usage?.completion_tokens !== undefined ? { completionTokens: usage.completion_tokens } : {}),
    ...(usage?.total_tokens !== undefined ? { totalTokens: usage.total_tokens } : {}),
    ...(usage ? { providerUsage: usage } : {}),
  };
  if (task.status === 'succeeded') {
    const url = task.content?.video_url;
    if (url) report.video = { kind: 'url', url };
  }
  if (task.status === 'failed' || task.status === 'expired' || task.status === 'cancelled') {
    const error = task.error ?? undefined;
    report.error =
      error?.message ??
      error?.code ??
      (task.status === 'expired'
        ? 'the task expired at the provider before it finished'
        : `the provider reports the task ${task.status}`);
  }
  return report;
}

/** BytePlus ModelArk Seedance: one task created, then read until it ends. */
export function arkVideoAdapter(http: UpstreamHttp): VideoAdapter {
  const auth = (options: CallOptions) => ({ authorization: options.target.apiKey.bearer() });
  return {
    check: refuseMaxTokens,
    async createTask(request, upstreamModel, options) {
      const answer = checked(
        await http.postForJson(options.target, {
          path: seedanceTaskPaths.create,
          headers: auth(options),
          body: seedanceBody(request, upstreamModel),
          signal: options.signal,
        }),
        isSeedanceCreateAnswer,
        'a task creation answer',
      );
      return answer.id;
    },
    async poll(taskId, options) {
      return seedanceReport(
        checked(
          await http.getForJson(options.target, {
            path: seedanceTaskPaths.task(taskId),
            headers: auth(options),
            signal: options.signal,
          }),
          isSeedanceTask,
          'a task',
        ),
      );
    },
    async cancel(taskId, options) {
      await http.delete(options.target, {
        path: seedanceTaskPaths.task(taskId),
        headers: auth(options),
        signal: options.signal,
      });
    },
  };
}
