# Relay-E worker and API image, built from a project: your own (a package.json that depends on @relay-e/engine, its
# lockfile and relay-e.config.ts: copy this file, .dockerignore and docker-compose.yml into it) or this repository,
# whose demo tools run when there is no config. `relay-e worker` and `relay-e serve` read the config at /app;
# a TypeScript config loads as it is (tsx is a runtime dependency of @relay-e/engine), so nothing is compiled for it.
FROM node:24-slim AS build
WORKDIR /app
COPY package.json package-lock.json* ./
RUN if [ -f package-lock.json ]; then npm ci --no-audit --no-fund; else npm install --no-audit --no-fund; fi
COPY . .
RUN npm run build --if-present && npm prune --omit=dev --no-audit --no-fund

FROM node:24-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /app ./
# The worker keeps its state under .relay-e (the payload store's files, the demo bank), and runs as node: the folder
# must be node's, and compose mounts a volume on it so the state outlives the container.
RUN mkdir -p .relay-e && chown node:node .relay-e
# The entry runs node itself, not npx: a supervisor's SIGTERM (docker stop, Kubernetes) must reach the worker for it to
# stop gracefully, and npm exec took it and exited, leaving node polling. /usr/local/bin/relay-e links to the CLI: a
# project's dependency's (node_modules/.bin/relay-e), else this repository's own build.
RUN main="$(readlink -f node_modules/.bin/relay-e || true)"; \
  if [ ! -f "$main" ]; then main=/app/dist/src/cli/main.js; fi; \
  test -f "$main" && ln -sf "$main" /usr/local/bin/relay-e
USER node
ENTRYPOINT ["node", "/usr/local/bin/relay-e"]
CMD ["worker"]
