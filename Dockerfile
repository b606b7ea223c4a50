# syntax=docker/dockerfile:1
# temp-inbox in a container: built with the same script `npm start` and `npm test`
# (and so CI) run, started as `npm start` starts it, as a non-root user, with its
# data in the /data volume. See docs/deploy.md.

FROM node:20-bookworm-slim AS build
# better-sqlite3 compiles from source when no prebuilt binary fits.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY . .
# Install and build everything (scripts/setup.mjs, the step CI runs first), then drop
# what only building and testing need.
RUN node scripts/setup.mjs --force \
 && npm prune --omit=dev --no-audit --no-fund \
 && rm -rf packages/*/test bench/results

FROM node:20-bookworm-slim
ENV NODE_ENV=production \
    DATA_DIR=/data \
    HTTP_HOST=0.0.0.0 \
    HTTP_PORT=8080 \
    SMTP_HOST=0.0.0.0 \
    SMTP_PORT=2525
WORKDIR /app
COPY --from=build --chown=root:root /app /app
# The service refuses a data directory others can read; the volume starts as the node user's.
RUN mkdir -m 0700 /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 8080 2525
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.HTTP_PORT || 8080) + '/health_check').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# The node flags of `npm start` (package.json), without npm as a parent process.
CMD ["node", "--min-semi-space-size=8", "--max-semi-space-size=8", "--heap-growing-percent=50", "packages/server/dist/main.js"]
