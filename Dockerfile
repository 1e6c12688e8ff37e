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
USER node
# npx finds relay-e in node_modules/.bin of a project, and this repository's own bin here.
ENTRYPOINT ["npx", "--no-install", "relay-e"]
CMD ["worker"]
