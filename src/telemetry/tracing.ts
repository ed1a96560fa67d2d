import { context, propagation, trace } from '@opentelemetry/api';
import type { FastifyPluginCallback } from 'fastify';
import type { TelemetryConfig } from '../config/load-config.ts';

export interface Tracing {
  /** Registered on the app before any route, so every request gets its span. */
  plugin: FastifyPluginCallback;
  /** Sends the spans still buffered, then stops. */
  shutdown(): Promise<void>;
}

/**
 * OpenTelemetry traces of every request (`@fastify/otel`) and of each upstream attempt, sent over OTLP/HTTP
 * to `telemetry.tracing.otlpEndpoint`. Off unless that is set: then nothing of the SDK is even loaded, and
 * the spans the gateway starts are the API's no-op ones.
 */
export async function startTracing(config: TelemetryConfig): Promise<Tracing | undefined> {
  if (!config.otlpEndpoint) return undefined;
  const [
    { NodeTracerProvider, BatchSpanProcessor },
    { OTLPTraceExporter },
    { resourceFromAttributes },
    { ATTR_SERVICE_NAME, ATTR_URL_PATH },
    { FastifyOtelInstrumentation },
  ] = await Promise.all([
    import('@opentelemetry/sdk-trace-node'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/semantic-conventions'),
    import('@fastify/otel'),
  ]);
  const exporter = new OTLPTraceExporter({ url: `${config.otlpEndpoint.replace(/\/+$/, '')}/v1/traces` });
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: config.serviceName }),
    spanProcessors: [new BatchSpanProcessor(exporter)],
  });
  provider.register();
  // The path without its query: a query may hold a credential (`?key=` of gamma clients) or a signed link's signature.
  const instrumentation = new FastifyOtelInstrumentation({
    requestHook: (span, request) => span.setAttribute(ATTR_URL_PATH, request.url.split('?')[0]!),
  });
  instrumentation.setTracerProvider(provider);
  return {
    plugin: instrumentation.plugin(),
    shutdown: async () => {
      await provider.shutdown();
      // The provider registered itself (and its context manager and propagator) for the whole process: they go
      // with it, so a gateway started later in this process registers its own.
      trace.disable();
      context.disable();
      propagation.disable();
    },
  };
}
