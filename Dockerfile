# syntax=docker/dockerfile:1
# temp-inbox in a container, in four stages so that an edit to a source file rebuilds
# only the build, never the install:
#   deps       the compiler and `npm ci` from the lockfile (only the manifests copied)
#   prod-deps  the same node_modules without the development dependencies
#   build      the sources, built with `npm run build`
#   runtime    production node_modules and the built files; no compiler, no npm
#              install, a non-root user, the data in the /data volume.
# See docs/deploy.md, "Containers".

FROM node:20-bookworm-slim AS deps
# better-sqlite3 compiles from source when no prebuilt binary fits.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
# `npm ci` needs every workspace's manifest; nothing else, so this layer and the
# install below are cached until the lockfile or a manifest changes.
COPY package.json package-lock.json ./
COPY packages/api/package.json packages/api/
COPY packages/server/package.json packages/server/
COPY packages/client/package.json packages/client/
COPY packages/web/package.json packages/web/
COPY bench/package.json bench/
# The npm cache outlives the layer (BuildKit): after a lockfile change only what changed is downloaded.
RUN --mount=type=cache,target=/root/.npm npm ci --no-audit --no-fund

FROM deps AS prod-deps
RUN npm prune --omit=dev --no-audit --no-fund

FROM deps AS build
COPY tsconfig.base.json ./
COPY packages/ packages/
RUN npm run build

FROM node:20-bookworm-slim AS runtime
ENV NODE_ENV=production \
    DATA_DIR=/data \
    HTTP_HOST=0.0.0.0 \
    HTTP_PORT=8080 \
    SMTP_HOST=0.0.0.0 \
    SMTP_PORT=2525
WORKDIR /app
# Owned by root: the service user can read the application, not change it. From
# prod-deps: the manifests and every node_modules folder npm laid out (the root's and
# any a workspace needed of its own); from build: only what was built.
COPY --from=prod-deps /app ./
COPY --from=build /app/packages/api/dist packages/api/dist/
COPY --from=build /app/packages/server/dist packages/server/dist/
COPY --from=build /app/packages/web/dist packages/web/dist/
COPY --from=build /app/packages/web/dist-admin packages/web/dist-admin/
# The service refuses a data directory others can read; the volume starts as the node user's.
RUN mkdir -m 0700 /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 8080 2525
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.HTTP_PORT || 8080) + '/health_check', { signal: AbortSignal.timeout(4000) }).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# The node flags of `npm start` (package.json), without npm as a parent process.
CMD ["node", "--min-semi-space-size=8", "--max-semi-space-size=8", "--heap-growing-percent=50", "packages/server/dist/main.js"]
