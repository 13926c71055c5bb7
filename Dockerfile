# Production image: Node 24 LTS, compiled JavaScript only, non-root.
FROM node:24-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
# The "node" devDependency (Node 24 for hosts that ship an older Node) is not needed inside a node:24 image.
RUN npm ci --no-audit --no-fund --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npx tsc -p tsconfig.build.json
# The malloc_trim addon (src/observability/native-memory.ts): a C compiler in this stage only.
RUN apt-get update && apt-get install -y --no-install-recommends gcc libc6-dev && rm -rf /var/lib/apt/lists/*
COPY native ./native
RUN native/build.sh dist/native/malloc-trim.node

FROM node:24-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund --ignore-scripts && npm cache clean --force
COPY --from=build /src/dist ./dist
COPY openapi ./openapi
USER node
EXPOSE 8443
# --max-semi-space-size=16: V8 would grow the young generation to 2 × 64 MB on a large host, ~100 MB of RSS
# that buys nothing here. --max-old-space-size=512: V8 sizes its heap from the host's memory, not the
# container's limit, and on a large host lets garbage pile up to 4 × the live heap between full collections
# (1.4 × with 512 MB); docs/operations.md, "Memory". test/controlplane/environment.ts starts the server alike.
ENTRYPOINT ["node", "--enable-source-maps", "--max-semi-space-size=16", "--max-old-space-size=512", "dist/src/main.js"]
CMD ["--secure-port=8443", "--tls-cert-file=/etc/hostclaim-apiserver/tls/tls.crt", "--tls-private-key-file=/etc/hostclaim-apiserver/tls/tls.key"]
