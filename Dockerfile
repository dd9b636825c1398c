# The gateway image. One image, two roles: `serve --role api` and `serve --role worker`.
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build && npm prune --omit=dev

FROM node:24-bookworm-slim
ENV NODE_ENV=production
# Every interface inside the container (the port is published by the runtime); `npm run cluster` binds loopback.
ENV HOST=0.0.0.0
WORKDIR /app
RUN useradd --system --uid 10001 gateway
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/web/build ./web/build
COPY package.json ./
COPY server ./server
COPY workflows ./workflows
COPY activities ./activities
COPY core ./core
COPY cli ./cli
COPY services ./services
COPY migrations ./migrations
USER gateway
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --retries=6 CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
# V8 grows the young generation to 64 MB per semi-space under a steady request load, garbage it
# keeps until the process idles: 16 MB holds the gateway near 400 MB RSS for a little more
# scavenging (docs/decisions.md → Performance).
ENV NODE_OPTIONS="--max-semi-space-size=16 --max-old-space-size=512"
ENV MALLOC_ARENA_MAX=2
ENTRYPOINT ["node", "cli/gateway.ts"]
CMD ["serve"]
